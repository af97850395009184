"""Text written into SQL: the one place that makes a value a string literal."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any


def string_literal(text: object) -> str:
    """``text`` as a SQL string literal with its quotes doubled (``it's`` → ``'it''s'``), the same in
    DuckDB and Spark. For values the SQL cannot take as parameters (DDL, a COPY's path, a rendered check)."""
    return "'" + str(text).replace("'", "''") + "'"


def value_literal(value: Any, decimal_type: str | None = None) -> str:
    """A Python value as a SQL literal of its type: NULL, a boolean, a number, a UTC timestamp, a date, a
    list, else a string. ``decimal_type`` casts a Decimal to that type (exact, where a bare number would be
    typed by its digits)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal) and decimal_type:
        return f"cast({value} as {decimal_type})"
    if isinstance(value, (int, Decimal)):
        return str(value)
    if isinstance(value, float):  # typed: a bare 1.5 is a DECIMAL; the text form also carries NaN and infinities
        return f"cast('{value!r}' as double)"
    if isinstance(value, dt.datetime):
        return f"timestamptz '{value.astimezone(dt.timezone.utc).isoformat()}'"
    if isinstance(value, dt.date):
        return f"date '{value.isoformat()}'"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(value_literal(v, decimal_type) for v in value) + "]"
    return string_literal(value)


def typed_literal(value: Any, sql_type: str) -> str:
    """``value`` as a literal of ``sql_type`` (a typed NULL when it is None)."""
    return f"null::{sql_type}" if value is None else f"cast({string_literal(value)} as {sql_type})"


def identifier(name: str) -> str:
    """``name`` as a quoted SQL identifier (a table's or a column's, whatever characters it holds)."""
    return '"' + str(name).replace('"', '""') + '"'


def insert_rows(con, table: str, rows: list[list] | list[tuple]) -> None:
    """Insert ``rows`` (in the table's column order) by one statement (:func:`insert_statement`)."""
    if rows:
        con.execute(*insert_statement(table, rows))


def insert_statement(table: str, rows: list[list] | list[tuple]) -> tuple[str, list[list]]:
    """One statement and its parameters inserting ``rows`` (at least one) into ``table``, column by column.

    Not ``executemany``, which runs its statement once a row: 2,000 rows a batch of small files
    cost half a second there, a few milliseconds here. Not for money: a list of Python Decimals
    of different scales is bound as one type that need not be exact (insert money as text, cast).
    """
    columns = [list(column) for column in zip(*rows)]
    return f"insert into {table} select " + ", ".join(f"unnest(${n})" for n in range(1, len(columns) + 1)), columns
