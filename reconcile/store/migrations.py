"""Ordered, named schema migrations of the canonical store.

Each migration is a function ``mNNN_what(con)`` (in ``reconcile.store.migration_steps``);
``apply_migrations`` runs the ones not yet recorded in ``_migrations``, each in its own
transaction. A migration that has shipped is never edited: change the schema by adding the next one.

Uniqueness (one row per run id, per (run id, step index)) is enforced by the loader rather than
by PRIMARY KEY constraints: DuckDB checks unique constraints eagerly inside a transaction, which
breaks the delete-then-reinsert a re-ingested file needs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timezone

import duckdb

from reconcile.store import migration_steps

Migration = Callable[[duckdb.DuckDBPyConnection], None]

# the steps in order: their names say it (m001_…, m002_…)
MIGRATIONS: list[Migration] = [getattr(migration_steps, name) for name in sorted(vars(migration_steps))
                               if re.fullmatch(r"m\d{3}_\w+", name)]


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
        name = migration.__name__
        if name not in done:
            con.execute("begin")
            try:
                migration(con)
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
