"""Saving to the store: a write counts only once it is in the store file itself, and a failed one leaves no trace.

DuckDB makes a commit durable in its write-ahead log (``STORE.wal``) and copies the log into the
store file later, at a checkpoint (on close, or when the log grows). On a full disk the commit
can succeed — the log still fits — while that copy fails: DuckDB then gives up on the database
silently at close, the command would say "loaded", and every later open replays a log that can
never be written back. So each unit of work is checkpointed right after its commit, and checked:

- before the unit, the log holds nothing of ours (``begin`` checkpoints what an earlier process
  left, and refuses to start if even that cannot be written);
- after the commit, ``save`` checkpoints; if the disk or the file system refuses, the database is
  closed and the log is cut back to its length before the unit: the store file still has its old
  header (DuckDB writes it last), so the store is exactly as it was before the unit. Then a
  ``StoreError`` says that nothing of the unit was saved.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from reconcile.errors import StoreError

ADVICE = "Free disk space (or give --db on a larger disk), then run the command again."


def wal_path(con: duckdb.DuckDBPyConnection) -> str | None:
    """The write-ahead log of ``con``'s store, or None for a store in memory."""
    rows = con.execute("select path from duckdb_databases() where database_name = current_database()").fetchall()
    path = rows[0][0] if rows else None
    return f"{path}.wal" if path else None


Mark = tuple[str | None, int]  # the log's path and its length before a unit of work


def mark(con: duckdb.DuckDBPyConnection) -> Mark:
    """Where the log ends now (read before the unit: a database DuckDB gave up answers no query)."""
    path = wal_path(con)
    try:
        return path, os.path.getsize(path) if path else 0
    except OSError:
        return path, 0


def begin(con: duckdb.DuckDBPyConnection, what: str) -> Mark:
    """Checkpoint what the log holds before ``what`` starts; where it ends, to cut back to if ``what`` fails."""
    try:
        con.execute("checkpoint")
    except duckdb.Error as exc:
        if refused_by_disk(exc):
            raise StoreError(f"Writing the store failed before {what} started ({first_line(exc)}): nothing was "
                             f"changed. {ADVICE}") from exc
        # else another transaction is open (a notebook's): the log is not ours to judge
    return mark(con)


def save(con: duckdb.DuckDBPyConnection, what: str, before: Mark) -> None:
    """Checkpoint the unit just committed; if the disk refuses, undo the unit whole and raise ``StoreError``."""
    try:
        con.execute("checkpoint")
    except duckdb.Error as exc:
        if not refused_by_disk(exc):
            return  # another open transaction: the commit is safe in the log, copied at the next checkpoint
        undo(con, before)
        raise StoreError(f"Writing the store failed while saving {what}: {first_line(exc)}. Nothing from {what} was "
                         f"saved: the store is exactly as it was before. {ADVICE}") from exc


@contextmanager
def unit(con: duckdb.DuckDBPyConnection, what: str) -> Iterator[None]:
    """The block as one transaction, saved (``save``) once committed; rolled back whole if it fails."""
    before = mark(con)
    con.execute("begin")
    try:
        yield
        con.execute("commit")
    except BaseException:
        try:
            con.execute("rollback")
        except duckdb.Error:
            pass  # the failure already ended the transaction (or the database): nothing was committed
        raise
    save(con, what, before)


def undo(con: duckdb.DuckDBPyConnection, before: Mark) -> None:
    """Close ``con`` (DuckDB has given it up) and cut its log back to where it ended before the unit."""
    try:
        con.close()
    except duckdb.Error:
        pass
    path, size = before
    if path and os.path.exists(path) and os.path.getsize(path) > size:
        os.truncate(path, size)


def refused_by_disk(exc: duckdb.Error) -> bool:
    """The file system refused a write (full, read-only, I/O error), or DuckDB gave the database up after one."""
    if isinstance(exc, (duckdb.IOException, duckdb.FatalException)):
        return True
    text = str(exc).lower()
    return any(words in text for words in ("no space left", "could not write", "failed to create checkpoint",
                                           "database has been invalidated", "read-only file system"))


_INNER = re.compile(r'"exception_message":"((?:[^"\\]|\\.)*)"')


def first_line(exc: BaseException) -> str:
    """The first line of an error; for DuckDB's wrapped I/O errors (a JSON blob), the message inside."""
    text = str(exc).strip()
    inner = _INNER.search(text)
    if inner:
        return json.loads(f'"{inner.group(1)}"')
    return text.splitlines()[0] if text else type(exc).__name__
