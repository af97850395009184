"""Opening the canonical store: path resolution, migrations, views, UTC."""

from __future__ import annotations

import os
from pathlib import Path

import duckdb

from .errors import StoreError
from .migrations import MIGRATIONS, applied_migrations, apply_migrations
from .checks.settings import install_defaults
from .views import create_views, views_fingerprint

DEFAULT_DB = "reconcile.duckdb"


def default_db_path() -> Path:
    """``$RECONCILE_DB`` if set, else ``./reconcile.duckdb``."""
    return Path(os.environ.get("RECONCILE_DB") or DEFAULT_DB)


def connect(path: str | Path | None = None, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """Open (creating and upgrading as needed) the store at ``path``; ``":memory:"`` works too.

    A read-only open first upgrades the file through a short read-write open, so read-only
    commands work on a store written by an older version.
    """
    target = str(path if path is not None else default_db_path())
    if read_only and target != ":memory:":
        if not Path(target).exists():
            raise StoreError(
                f"No store at {target}. Load some runs first: reconcile ingest PATH --db {target}"
            )
        if _needs_upgrade(target):
            connect(target).close()
    try:
        con = duckdb.connect(target, read_only=read_only and target != ":memory:")
    except duckdb.Error as exc:
        raise StoreError(f"Cannot open the store {target}: {exc}. Is another process writing it?") from exc
    con.execute("set TimeZone = 'UTC'")
    if not read_only or target == ":memory:":
        apply_migrations(con)
        create_views(con)
        install_defaults(con)
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


__all__ = ["connect", "records", "default_db_path", "applied_migrations", "DEFAULT_DB"]
