"""What the store remembers about each ingested file, and how a file is forgotten.

A run kept in several files belongs to the first of them in path order — as a fresh ingest of
the same files would have it; the others skip its lines ("already loaded from …") and record the
deferral. When the owner goes (rewritten without the run, deleted, or outranked by a new file
earlier in order), the files that deferred to it are loaded again, so the run is never lost and
never counted twice.
"""

from __future__ import annotations

import duckdb


def forget_file(con: duckdb.DuckDBPyConnection, path: str) -> list[str]:
    """Delete everything loaded from ``path``; return the files that deferred runs to it (to reload)."""
    dependents = [row[0] for row in con.execute(
        "select distinct path from ingest_deferrals where owner = ? and path <> ? order by 1", [path, path]).fetchall()]
    owned = "select run_id from runs where source_file = $path"
    for table in ("steps", "tool_calls", "run_tools"):
        con.execute(f"delete from {table} where run_id in ({owned})", {"path": path})
    con.execute("delete from runs where source_file = $path", {"path": path})
    for table, column in (("rejects", "path"), ("usage_buckets", "source_file"), ("billed_costs", "source_file"),
                          ("ingested_files", "path")):
        con.execute(f"delete from {table} where {column} = ?", [path])
    con.execute("delete from ingest_deferrals where path = ? or owner = ?", [path, path])
    return dependents


def recorded(con: duckdb.DuckDBPyConnection, path: str) -> tuple[str, str] | None:
    """(sha256, format) of ``path`` as last ingested, or None."""
    rows = con.execute("select sha256, format from ingested_files where path = ?", [path]).fetchall()
    return rows[0] if rows else None
