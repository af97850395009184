"""Text written into SQL: the one place that makes a value a string literal."""

from __future__ import annotations


def string_literal(text: object) -> str:
    """``text`` as a SQL string literal with its quotes doubled (``it's`` → ``'it''s'``), the same in
    DuckDB and Spark. For values the SQL cannot take as parameters (DDL, a COPY's path, a rendered check)."""
    return "'" + str(text).replace("'", "''") + "'"
