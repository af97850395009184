"""Engines: where the logical tables live and the SQL runs — DuckDB built in, Apache Spark optional.

An engine does four things: connect, bind a logical table (``runs``, ``steps`` …) to a source (a
folder of Parquet partitions, or one Parquet file), execute a statement (the result as Arrow, or
as rows for the check runner), and close. The checks, views and reports are written once, in
DuckDB's dialect; the Spark engine renders each statement for Spark (``spark_sql.render``).

The check runner and the reports talk to a DuckDB connection; an engine offers the small part of
its interface they use (``execute(sql, params)`` → an object with ``fetchall()`` and
``description``), so the same runner drives either.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import duckdb


class EngineError(duckdb.Error):
    """A statement failed in an engine other than DuckDB (a subclass of duckdb.Error, so the code
    that reports a failing check treats both alike)."""


class Result(Protocol):
    description: list[tuple]

    def fetchall(self) -> list[tuple]: ...


class Engine(Protocol):
    """connect (the constructor), bind, execute, close."""

    name: str

    def bind(self, table: str, source: Path, partitioned: bool) -> None: ...

    def execute(self, sql: str, params: Any = None) -> Result: ...

    def arrow(self, sql: str, params: Any = None) -> Any: ...

    def close(self) -> None: ...
