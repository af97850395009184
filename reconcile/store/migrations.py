"""Ordered, named schema migrations of the canonical store.

Each migration is a SQL file, ``reconcile/store/sql/migrations/mNNN_what.sql``, whose header says what it
changes; ``apply_migrations`` runs the ones not yet recorded in ``_migrations``, each in its own
transaction, in the order of their names. A migration that has shipped is never edited: change the
schema by adding the next file.

Uniqueness (one row per run id, per (run id, step index)) is enforced by the loader rather than
by PRIMARY KEY constraints: DuckDB checks unique constraints eagerly inside a transaction, which
breaks the delete-then-reinsert a re-ingested file needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib import resources

import duckdb


@dataclass(frozen=True)
class Migration:
    name: str  # mNNN_what: its number places it
    sql: str


def _load() -> list[Migration]:
    folder = resources.files("reconcile.store") / "sql" / "migrations"
    found = sorted((entry.name.removesuffix(".sql"), entry.read_text(encoding="utf-8")) for entry in folder.iterdir()
                   if re.fullmatch(r"m\d{3}_\w+\.sql", entry.name))
    return [Migration(name, sql) for name, sql in found]


MIGRATIONS: list[Migration] = _load()


def applied_migrations(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Names of the migrations recorded in this store, oldest first."""
    con.execute(
        "create table if not exists _migrations (name varchar not null, applied_at timestamptz not null)"
    )
    return [row[0] for row in con.execute("select name from _migrations order by applied_at, name").fetchall()]


def apply_migrations(con: duckdb.DuckDBPyConnection, upto: str | None = None) -> list[str]:
    """Apply every migration not yet recorded (or those up to ``upto``); return their names."""
    done = set(applied_migrations(con))
    ran = []
    for migration in MIGRATIONS:
        name = migration.name
        if name not in done:
            con.execute("begin")
            try:
                con.execute(migration.sql)
                con.execute(
                    "insert into _migrations values (?, ?)", [name, datetime.now(timezone.utc)]
                )
                con.execute("commit")
            except Exception:
                con.execute("rollback")
                raise
            ran.append(name)
        if name == upto:
            break
    return ran
