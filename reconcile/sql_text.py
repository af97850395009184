"""Text written into SQL: the one place that makes a value a string literal."""

from __future__ import annotations


def string_literal(text: object) -> str:
    """``text`` as a SQL string literal with its quotes doubled (``it's`` → ``'it''s'``), the same in
    DuckDB and Spark. For values the SQL cannot take as parameters (DDL, a COPY's path, a rendered check)."""
    return "'" + str(text).replace("'", "''") + "'"


def insert_rows(con, table: str, rows: list[list] | list[tuple]) -> None:
    """Insert ``rows`` (in the table's column order) by one statement.

    Not ``executemany``, which runs its statement once a row: 2,000 rows a batch of small files
    cost half a second there, a few milliseconds here. Not for money: a list of Python Decimals
    of different scales is bound as one type that need not be exact (insert money as text, cast).
    """
    if not rows:
        return
    columns = [list(column) for column in zip(*rows)]
    con.execute(f"insert into {table} select " + ", ".join(f"unnest(${n})" for n in range(1, len(columns) + 1)), columns)
