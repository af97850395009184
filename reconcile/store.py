"""Opening the canonical store: path resolution, migrations, views, UTC."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from .errors import NoRuns, StoreError
from .migrations import MIGRATIONS, applied_migrations, apply_migrations
from .views import create_views, views_fingerprint

DEFAULT_DB = "reconcile.duckdb"


def default_db_path() -> Path:
    """``$RECONCILE_DB`` if set, else ``./reconcile.duckdb``."""
    return Path(os.environ.get("RECONCILE_DB") or DEFAULT_DB)


def db_path(given: str | Path | None = None, config=None) -> Path:
    """The store a command uses: ``--db`` (or ``$RECONCILE_DB``), else the configuration's ``db``, else the default."""
    if given is not None:
        return Path(given)
    if config is not None and config.db is not None:
        return Path(config.db.value)
    return default_db_path()


def connect(path: str | Path | None = None, read_only: bool = False, create: bool = True) -> duckdb.DuckDBPyConnection:
    """Open the store at ``path``, upgrading it as needed; ``":memory:"`` works too.

    Only a read-write open with ``create`` makes a new store (``ingest`` and ``morning``): every
    other command refuses a path where there is none, so a typo in ``--db`` is an error, never an
    empty store that "passes". A read-only open first upgrades the file through a short
    read-write open, so read-only commands work on a store written by an older version.
    """
    target = str(path if path is not None else default_db_path())
    if target != ":memory:" and not Path(target).exists() and (read_only or not create):
        raise StoreError(f"No store at {target}: nothing has been loaded there. Create it by loading runs: "
                         f"reconcile ingest PATH --db {target} (or check --db and $RECONCILE_DB for a typo)")
    if read_only and target != ":memory:" and _needs_upgrade(target):
        connect(target).close()
    try:
        con = duckdb.connect(target, read_only=read_only and target != ":memory:")
    except duckdb.Error as exc:
        raise StoreError(f"Cannot open the store {target}: {exc}. Is another process writing it?") from exc
    con.execute("set TimeZone = 'UTC'")
    if not read_only or target == ":memory:":
        apply_migrations(con)
        create_views(con)
    return con


def _needs_upgrade(target: str) -> bool:
    with duckdb.connect(target, read_only=True) as con:
        has_table = con.execute(
            "select count(*) from information_schema.tables where table_name = '_migrations'"
        ).fetchall()[0][0]
        if not has_table:
            return True
        done = {row[0] for row in con.execute("select name from _migrations").fetchall()}
        if any(m.__name__ not in done for m in MIGRATIONS):
            return True
        try:
            fingerprint = con.execute("select fingerprint from _views").fetchall()
        except duckdb.CatalogException:
            return True
    return fingerprint != [(views_fingerprint(),)]


def records(con: duckdb.DuckDBPyConnection, sql: str, params: list | dict | None = None) -> list[dict]:
    """Rows of a query as dicts keyed by column name."""
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def require_runs(con: duckdb.DuckDBPyConnection, where: str, since=None, until=None) -> int:
    """The number of runs (in the window); none is an error: an empty store must never pass for a clean one."""
    total = con.execute("select count(*) from runs").fetchall()[0][0]
    if not total:
        raise NoRuns(f"{where} holds no runs: there is nothing to check or report. Load the night's journals "
                     "or transcripts first: reconcile ingest PATH (reconcile ingest lists what it passed over).")
    within = con.execute("select count(*) from runs where ($since is null or started_at >= $since) "
                         "and ($until is null or started_at < $until)", {"since": since, "until": until}).fetchall()[0][0]
    if not within:
        span = con.execute("select min(started_at), max(started_at) from runs").fetchall()[0]
        raise NoRuns(f"no run of {where} started in the window --since {since or '…'} --until {until or '…'}; "
                     f"its {total} run(s) started between {span[0]} and {span[1]}. Widen the window.")
    return within


__all__ = ["connect", "db_path", "records", "require_runs", "default_db_path", "applied_migrations", "DEFAULT_DB"]
