"""The store is created and upgraded by ordered, named migrations."""

from __future__ import annotations

import duckdb

from reconcile import store
from reconcile.store.migrations import MIGRATIONS, apply_migrations, applied_migrations


def test_blank_database_gets_every_migration_in_order(db_path):
    with store.connect(db_path) as con:
        assert applied_migrations(con) == [m.name for m in MIGRATIONS]
        tables = {r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()}
    assert {"runs", "steps", "run_tools", "tool_calls", "ingested_files", "rejects", "run_view", "step_view"} <= tables


def test_upgrade_from_the_oldest_schema_keeps_data(db_path):
    with duckdb.connect(str(db_path)) as con:
        assert apply_migrations(con, upto=MIGRATIONS[0].name) == [MIGRATIONS[0].name]
        con.execute("insert into runs (run_id, source_format, source_file, status, agent) "
                    "values ('old', 'native', '/x.jsonl', 'succeeded', 'a')")
    with store.connect(db_path) as con:
        assert applied_migrations(con) == [m.name for m in MIGRATIONS]
        assert con.execute("select run_id, status, steps from run_view").fetchall() == [("old", "succeeded", 0)]


def test_reopening_applies_nothing_twice(db_path):
    store.connect(db_path).close()
    with store.connect(db_path) as con:
        assert apply_migrations(con) == []
        assert con.execute("select count(*) from _migrations").fetchall()[0][0] == len(MIGRATIONS)


def test_read_only_open_upgrades_an_old_store_first(db_path):
    with duckdb.connect(str(db_path)) as con:
        apply_migrations(con, upto=MIGRATIONS[0].name)
    with store.connect(db_path, read_only=True) as con:
        assert con.execute("select count(*) from step_view").fetchall() == [(0,)]


def test_migration_names_are_ordered_and_numbered():
    names = [m.name for m in MIGRATIONS]
    assert names == sorted(names)
    assert all(name[0] == "m" and name[1:4].isdigit() for name in names)


def test_each_migration_is_a_sql_file_that_says_what_it_changes():
    assert len(MIGRATIONS) >= 16
    for migration in MIGRATIONS:
        first = migration.sql.lstrip().splitlines()[0]
        assert first.startswith("-- ") and len(first) > 20, migration.name  # its header: what it changes
        assert "create " in migration.sql or "alter " in migration.sql or "drop " in migration.sql, migration.name
