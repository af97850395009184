"""The documented SQL API: views users query and checks build on, one ``.sql`` file each.

Each view is the query in ``store/sql/views/<name>.sql`` (its header says what it holds; the
columns are documented in ``docs/sql-api.md``). Views hold no data, so they are (re)created on
every read-write open rather than by migrations: changing a view is a code change, not a schema
change. They are created in the order of ``VIEW_NAMES``: each reads only those before it.
"""

from __future__ import annotations

import hashlib
from importlib import resources

import duckdb

from reconcile.store.status import MACROS, install_status_macro, macro_sql

# in dependency order: each reads only those before it (and the tables)
VIEW_NAMES = ("wrap_up_turns", "step_view", "run_totals", "run_model_totals", "request_cost_hours", "run_roots", "run_view", "ledger_view",
              "run_costs", "chosen_costs", "open_calls", "journal_usage", "journal_usage_minutes", "provider_usage",
              "usage_reconciliation", "run_facts")
# Queries over step_view whose rows a store keeps as tables of the same names (store/kept_totals.py): everywhere
# else (an export read back, Spark) they are views like the others.
KEPT = ("run_totals", "run_model_totals", "request_cost_hours", "journal_usage_minutes")
# Bumped when the way the kept rows are keyed changes: a store's kept tables are then written again.
KEPT_VERSION = "2"
# the tables the kept rows' keys live in (store/kept_totals.py says what each holds)
KEPT_KEYS = {
    "kept_run_keys": "run_id varchar primary key, content_key varchar, priced_on date, revision bigint",
    "kept_run_prices": "run_id varchar not null, provider varchar, model varchar not null, day date not null",
    "kept_price_rows": "provider varchar, model varchar not null, day date, digest varchar not null",
}
# the order step_view's rows come in (its file's rows come in none: what a freeze materialises)
STEP_ORDER = "order by s.run_id, s.idx"
FORMAT_FACTS_COLUMNS = ("format varchar not null, fact varchar not null, recorded boolean not null, how varchar, "
                        "inferred boolean not null")


def view_query(name: str) -> str:
    """The query of view ``name``, as its file holds it."""
    return (resources.files("reconcile.store") / "sql" / "views" / f"{name}.sql").read_text()


def view_statement(name: str) -> str:
    """The statement that (re)creates view ``name``."""
    query = view_query(name)
    return f"create or replace view {name} as\n{query}{STEP_ORDER if name == 'step_view' else ''}\n"


VIEWS = {name: view_statement(name) for name in VIEW_NAMES}
STEP_ROWS = view_query("step_view")  # the priced steps in no order


def views_fingerprint() -> str:
    """A hash of the view definitions, so a read-only open can tell they are stale."""
    parts = [*VIEWS.values(), *(macro_sql(name) for name in MACROS), KEPT_VERSION]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def views_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the store already holds this version's views and macros: its recorded fingerprint is ours, and
    none was dropped since (a view dropped by hand is made again by the next open that writes)."""
    try:
        recorded = con.execute("select fingerprint from _views").fetchall()
    except duckdb.CatalogException:
        return False
    present = con.execute("select count(*) from duckdb_views() where not temporary and view_name in "
                          "(select unnest(?))", [[name for name in VIEWS if name not in KEPT]]).fetchall()[0][0]
    kept = con.execute("select count(*) from duckdb_tables() where not temporary and table_name in "
                       "(select unnest(?))", [list(KEPT)]).fetchall()[0][0]
    return recorded == [(views_fingerprint(),)] and present == len(VIEWS) - len(KEPT) and kept == len(KEPT)


def create_views(con: duckdb.DuckDBPyConnection, kept: bool = True) -> None:
    """(Re)create every documented view and macro and record which definitions are in place.

    With ``kept`` (a store) the queries of ``KEPT`` are tables, made again empty: every run's rows are then
    written by the next ``kept_totals.refresh`` (``store.connect`` calls it). Without (an export read back),
    they are views like the others.
    """
    install_status_macro(con, temporary=False)
    # What each format records: written by the ingest, which knows the formats (here only its shape).
    con.execute(f"create table if not exists format_facts ({FORMAT_FACTS_COLUMNS})")
    for name, sql in VIEWS.items():
        if kept and name in KEPT:
            if con.execute("select count(*) from duckdb_views() where not temporary and view_name = ?", [name]
                           ).fetchall()[0][0]:
                con.execute(f"drop view {name}")
            con.execute(f"create or replace table {name} as select * from ({view_query(name)}) limit 0")
            continue
        con.execute(sql)
    if kept:
        for name, columns in KEPT_KEYS.items():
            con.execute(f"create or replace table {name} ({columns})")
        # each writing of a run's kept rows numbered: what is kept from those rows (a signal's sums) names the number
        con.execute("create sequence if not exists kept_revision")
    con.execute("create or replace table _views (fingerprint varchar)")
    con.execute("insert into _views values (?)", [views_fingerprint()])
