"""The engine interface: where the logical tables live and a statement runs.

Every analysis, check and report asks its questions of an :class:`Engine`, never of a DuckDB
connection: ``execute`` gives a query's result as Arrow, ``rows`` and ``records`` as Python values
(what the sheets and the check runner read), ``run`` a statement whose result is not wanted
(``create temp table``, ``set variable``), ``columns`` a query's column names without computing it.
What only some engines can do is declared in :class:`Capabilities` and asked before it is used,
as harlequin's adapters declare theirs.

Statements arrive in DuckDB's dialect with ``?`` or ``$name`` parameters. :class:`DuckDBEngine` is
here, beside the interface, because the store and an export read in memory are both DuckDB; the
Spark engine (``engines/spark.py``) renders each statement for Spark. ``engines/dataset.py`` chooses
the engine, in one place.
"""

from __future__ import annotations

import itertools
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import duckdb

if TYPE_CHECKING:  # DuckDB imports pyarrow itself when a result is asked for as Arrow; a listing never is
    import pyarrow

from reconcile.errors import BadInput
from reconcile.sql_text import insert_statement

Params = list | tuple | dict | None


class EngineError(duckdb.Error):
    """A statement failed in an engine other than DuckDB (a subclass of duckdb.Error, so the code that
    reports a failing check treats both alike)."""


@dataclass(frozen=True)
class Capabilities:
    """What an engine can do beyond answering queries."""

    transactions: bool  # begin/commit: it can record check results and keep verdicts in a store
    temp_tables_hide_views: bool  # a temp table named like a view is read instead of it (views priced once)
    parses_statements: bool  # splits SQL into statements and names their kind (the read-only `sql` guard)


class Engine(ABC):
    """A place the logical tables (``runs``, ``steps``, ``step_view`` …) can be queried."""

    name: ClassVar[str]
    capabilities: ClassVar[Capabilities]

    @abstractmethod
    def execute(self, sql: str, params: Params = None) -> pyarrow.Table:
        """A query's result as an Arrow table."""

    @abstractmethod
    def rows(self, sql: str, params: Params = None) -> list[tuple]:
        """A query's result as tuples of Python values."""

    @abstractmethod
    def columns(self, sql: str) -> list[str]:
        """The names of a query's columns, without computing its rows."""

    @abstractmethod
    def run(self, sql: str, params: Params = None) -> None:
        """A statement whose result is not wanted (DDL, ``set variable``)."""

    def close(self) -> None:
        """Release what the engine holds (a connection it opened, a session it started)."""

    def records(self, sql: str, params: Params = None) -> list[dict[str, Any]]:
        """A query's rows as dicts keyed by column name."""
        names, rows = self.described(sql, params)
        return [dict(zip(names, row)) for row in rows]

    def value(self, sql: str, params: Params = None) -> Any:
        """The first column of a query's first row (a count, a bound)."""
        return self.rows(sql, params)[0][0]

    def run_all(self, statements: list[str]) -> None:
        for statement in statements:
            self.run(statement)

    def insert(self, table: str, rows: list[list] | list[tuple]) -> None:
        """``rows`` (in the table's column order) into ``table``, by one statement."""
        if rows:
            self.run(*insert_statement(table, rows))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """The block's statements commit together, or not at all (where ``capabilities.transactions``)."""
        if not self.capabilities.transactions:
            raise NotImplementedError(f"the {self.name} engine has no transactions")
        self.run("begin")
        try:
            yield
        except BaseException:
            self.run("rollback")
            raise
        self.run("commit")

    def write_parquet(self, sql: str, folder: Path, name: str) -> None:
        """Add the rows of ``sql`` to the Parquet table in ``folder`` as files of their own (named after ``name``
        where the engine lets us), written where the engine computes them, never through Python."""
        raise NotImplementedError(f"the {self.name} engine does not write Parquet")

    def per_group(self, sql: str, key: str, task: Callable[[pyarrow.Table], dict], schema: str) -> list[dict]:
        """``task`` on the rows of ``sql`` of each value of ``key`` (an Arrow table per group); the dicts it
        returns (``schema``: their columns as Spark DDL), in no particular order. Here, in this process;
        an engine with executors runs it on them."""
        table = self.execute(sql).sort_by(key)
        # the groups' sizes in key order (a sorted table, read by one thread: first appearance is key order)
        sizes = table.group_by(key, use_threads=False).aggregate([([], "count_all")]).column("count_all").to_pylist()
        starts = [0, *itertools.accumulate(sizes)]
        return [task(table.slice(start, size)) for start, size in zip(starts, sizes)]

    def statement_kinds(self, sql: str) -> list[str]:
        """The kind of each statement in ``sql`` (SELECT, INSERT, EXPLAIN …), where ``parses_statements``."""
        raise NotImplementedError(f"the {self.name} engine does not parse statements")

    @abstractmethod
    def described(self, sql: str, params: Params = None) -> tuple[list[str], list[tuple]]:
        """A query's column names and rows, computed once."""


class DuckDBEngine(Engine):
    """DuckDB: the store on disk, or an export bound in memory. ``connection`` is the DuckDB
    connection, for what the capabilities say only this engine does (transactions, statement parsing)."""

    name = "duckdb"
    capabilities = Capabilities(transactions=True, temp_tables_hide_views=True, parses_statements=True)

    def __init__(self, connection: duckdb.DuckDBPyConnection, owned: bool = False,
                 files: tuple[str, str, str] | None = None):
        """``files``: (the folder the connection reads files under, the name the user gave it, the option
        that gave it) — a file that cannot be read is then named as the user knows it."""
        self.connection = connection
        self._owned = owned
        self._files = files

    def execute(self, sql: str, params: Params = None) -> pyarrow.Table:
        # a relation, not execute(): its result converts to Arrow and polars whole (DuckDB 2)
        with self.naming_unreadable_files():
            return self.connection.sql(sql, params=params or None).to_arrow_table()

    def rows(self, sql: str, params: Params = None) -> list[tuple]:
        with self.naming_unreadable_files():
            return self.connection.execute(sql, params or []).fetchall()

    def described(self, sql: str, params: Params = None) -> tuple[list[str], list[tuple]]:
        with self.naming_unreadable_files():
            cursor = self.connection.execute(sql, params or [])
            return [d[0] for d in cursor.description], cursor.fetchall()

    def columns(self, sql: str) -> list[str]:
        with self.naming_unreadable_files():
            return [d[0] for d in self.connection.execute(f"select * from (\n{sql}\n) limit 0").description]

    def run(self, sql: str, params: Params = None) -> None:
        with self.naming_unreadable_files():
            self.connection.execute(sql, params or [])

    def write_parquet(self, sql: str, folder: Path, name: str) -> None:
        """Streamed in batches through pyarrow's writer: the connection itself may not touch the file system
        (a store is opened with external access off), and memory stays bounded whatever the count."""
        import pyarrow.parquet as pq

        folder.mkdir(parents=True, exist_ok=True)
        with self.naming_unreadable_files():
            batches = self.connection.sql(sql).to_arrow_reader(65536)
            with pq.ParquetWriter(folder / f"{name}.parquet", batches.schema, compression="zstd") as writer:
                for batch in batches:
                    writer.write_batch(batch)

    @contextmanager
    def naming_unreadable_files(self) -> Iterator[None]:
        """A file under the folder read that is corrupt or gone: the user's error, named by the user's path."""
        try:
            yield
        except (duckdb.IOException, duckdb.InvalidInputException) as exc:
            inner, shown, option = self._files or ("", "", "")
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if not inner or inner not in text:
                raise
            raise BadInput(f"{option} {shown}: a file of it cannot be read — {text.replace(inner, shown)}. Write "
                           f"it again (reconcile export --to {shown}) or restore the file.") from None

    def statement_kinds(self, sql: str) -> list[str]:
        return [statement.type.name for statement in self.connection.extract_statements(sql)]

    def close(self) -> None:
        if self._owned:
            self.connection.close()
