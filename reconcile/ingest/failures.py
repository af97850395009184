"""When a file cannot be loaded: that file's failure, recorded; when the store cannot be written: the command's end.

The blast radius of a bad file is that file. Whatever goes wrong while one file loads — a line
shape a format's SQL does not handle (a constraint), a cast, a parse, the input's own I/O error,
more memory than the limit allows — the file's transaction is rolled back, the file is recorded
in ``ingested_files`` as ``failed`` (or ``unreadable``, when it could not even be read) with the
reason, and the ingest goes on with the next file. A failed file's lines count as rejected, so
loaded + rejected + skipped = lines still holds; none of its rows is in the store. A file that
loaded before and fails now keeps its earlier rows and record (a failure never deletes data: a
mistyped ``--format`` must not cost a loaded night); the report says they were kept.

The store is different: a disk that is full or refuses writes ends the command (``StoreError``),
since every later file would fail the same way; what was saved before it stays saved.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone

import duckdb

from reconcile import durability
from reconcile.errors import BadInput, InternalError, StoreError
from reconcile.ingest.bookkeeping import forget_file
from reconcile.ingest.files import FileFailed, Source
from reconcile.ingest.result import FileResult


FILE_FAILURES = (FileFailed, InternalError, BadInput, OSError, UnicodeError, RecursionError)


def reason(exc: BaseException) -> str:
    """Why a file failed, in one paragraph (a DuckDB message's first line; the fix where it is known)."""
    return str(exc) if isinstance(exc, (FileFailed, BadInput, InternalError)) else durability.first_line(exc)


def load_failure(exc: duckdb.Error, fmt_name: str) -> FileFailed:
    """A DuckDB error while loading one file as ``fmt_name``, told as that file's failure."""
    text = durability.first_line(exc)
    if isinstance(exc, duckdb.OutOfMemoryException):
        return FileFailed(f"loading it as {fmt_name} needed more memory than the limit ({text}); nothing from it was "
                          "loaded. Raise RECONCILE_MEMORY_LIMIT (e.g. 4GB) and ingest it again.")
    return FileFailed(f"reconcile could not load it as {fmt_name} ({text}); nothing from it was loaded. This is a "
                      "shape of the format reconcile does not handle yet: please report it with the file.")


def record_failure(con: duckdb.DuckDBPyConnection, source: Source, fmt_name: str, status: str,
                   why: str) -> tuple[FileResult, list[str]]:
    """Record ``source`` as ``failed`` or ``unreadable`` (no rows of it in the store); the files to load again.

    A file that loaded before keeps its rows and its record: a failure never deletes what the store
    has (a mistyped ``--format``, a file made unreadable by a permission change). The report says so.
    """
    path = source.name
    kept = con.execute("select ingested_at from ingested_files where path = ? and status = 'loaded'",
                       [path]).fetchall()
    if kept:
        why += f" Its rows from the ingest of {kept[0][0]:%Y-%m-%d %H:%M} UTC are kept as they were."
        return FileResult(path, fmt_name, status, source.lines, 0, source.lines, 0, [why]), []
    with durability.unit(con, f"the record of {path}"):
        reloads = forget_file(con, path)  # its earlier rows (if it loaded before) go: a fresh ingest has none
        con.execute("insert into ingested_files by name select ? as path, ? as sha256, ? as format, ? as size_bytes, "
                    "? as lines, 0 as loaded, ? as rejected, 0 as skipped, ? as ingested_at, null as mtime_ns, "
                    "? as status, ? as reason",
                    [path, source.sha256, fmt_name, source.size, source.lines, source.lines,
                     datetime.now(timezone.utc), status, why])
    return FileResult(path, fmt_name, status, source.lines, 0, source.lines, 0, [why]), reloads


def store_failure(exc: duckdb.Error, inputs: list[str] | None = None) -> bool:
    """Whether DuckDB failed on the store itself (its disk), not on the data it was reading.

    An I/O error naming one of ``inputs`` (the aliases' folder, or a file read by its own path) is the file's.
    """
    if isinstance(exc, duckdb.IOException) and inputs and any(name in str(exc) for name in inputs):
        return False
    if isinstance(exc, (duckdb.IOException, duckdb.FatalException)):
        return True
    return isinstance(exc, duckdb.TransactionException) and "Failed to commit" in str(exc)


@contextmanager
def store_failures(where, inputs: list[str] | None = None) -> Iterator[None]:
    """A store that cannot be written (disk full, an I/O error) is a StoreError that ends the command."""
    try:
        yield
    except duckdb.Error as exc:
        if not store_failure(exc, inputs):
            raise
        raise StoreError(f"Writing the store failed while loading {where}: {durability.first_line(exc)}. Nothing "
                         f"from {where} was saved: the store is as it was before. {durability.ADVICE}") from exc
