"""What the store remembers about each ingested file, and how a file is forgotten.

A run kept in several files belongs to the first of them in path order — as a fresh ingest of
the same files would have it; the others skip its lines ("already loaded from …") and record the
deferral. When the owner goes (rewritten without the run, deleted, or outranked by a new file
earlier in order), the files that deferred to it are loaded again, so the run is never lost and
never counted twice: they are written to ``pending_reloads`` in the transaction that forgets the owner
and taken out in the one that loads them, so an ingest killed in between leaves them to the next.
"""

from __future__ import annotations

import os

import duckdb

from reconcile.ingest.files import stored_name


def forget_file(con: duckdb.DuckDBPyConnection, path: str) -> list[str]:
    """Delete everything loaded from ``path``; return the files that deferred runs to it (to reload)."""
    dependents = [row[0] for row in con.execute(
        "select distinct path from ingest_deferrals where owner = ? and path <> ? order by 1", [path, path]).fetchall()]
    owned = "select run_id from runs where source_file = $path"
    for table in ("steps", "tool_calls", "run_tools", "run_loads"):
        con.execute(f"delete from {table} where run_id in ({owned})", {"path": path})
    con.execute("delete from runs where source_file = $path", {"path": path})
    for table, column in (("rejects", "path"), ("usage_buckets", "source_file"), ("billed_costs", "source_file"),
                          ("ingested_files", "path"), ("file_checkpoints", "path")):
        con.execute(f"delete from {table} where {column} = ?", [path])
    con.execute("delete from ingest_deferrals where path = ? or owner = ?", [path, path])
    # the files deferring to it are loaded again: recorded here, in the forgetting transaction, so that an ingest
    # stopped before they are still has them to load (``pending_reloads``); their own loads delete the rows
    con.execute("delete from pending_reloads where path = ?", [path])
    con.execute("insert into pending_reloads select unnest($files) except select path from pending_reloads",
                {"files": dependents})
    return dependents


def pending_reloads(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Files a forgotten owner's runs are to be loaded from again, left by an ingest that stopped first."""
    return [path for (path,) in con.execute("select path from pending_reloads order by path").fetchall()]


def recorded(con: duckdb.DuckDBPyConnection, path: str) -> tuple[str, str] | None:
    """(sha256, format) of ``path`` as last ingested, or None; a file that failed has no SHA-256 to match: it is tried again."""
    return recorded_many(con, [path]).get(path)


def recorded_many(con: duckdb.DuckDBPyConnection, paths: list[str]) -> dict[str, tuple[str, str]]:
    """:func:`recorded` for many files in one query (a query a file cost ~1 ms of a small file's load)."""
    rows = con.execute("select path, case when status = 'loaded' then sha256 else '' end, format from ingested_files "
                       "where path in (select unnest($paths))", {"paths": paths}).fetchall()
    return {path: (sha256, fmt) for path, sha256, fmt in rows}


def stamps(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[int, int | None, str]]:
    """(size, modification time, format) of every ingested file, read once for a whole ingest."""
    return {path: (size, mtime, fmt) for path, size, mtime, fmt in
            con.execute("select path, size_bytes, mtime_ns, format from ingested_files").fetchall()}


def unchanged_by_stamp(known: dict[str, tuple[int, int | None, str]], path: str, format_name: str | None) -> str | None:
    """``path``'s format if it is as last ingested by its size and modification time alone (no read at all).

    Only a trusted stamp counts (``files.stamp``), and only for the same format when one is forced.
    """
    size, mtime, fmt = known.get(stored_name(path), (None, None, None))
    if mtime is None or (format_name is not None and fmt != format_name):
        return None
    try:
        status = os.stat(path)
    except OSError:
        return None
    return fmt if (status.st_size, status.st_mtime_ns) == (size, mtime) else None

