"""Kept run totals: each run's priced totals, kept in the store and rewritten only where something changed.

``run_totals`` (a run's steps rolled up and priced: what ``run_view`` and ``run_costs`` add to its row) and
``run_model_totals`` (the same by the model each step was priced as: what a cost report adds over a group) are
queries over ``step_view`` (``store/sql/views/``). Pricing every step of the store for every listing made a
command's time grow with the history, so in a store they are tables holding those queries' rows, each run's
rows written when they could have changed:

- the run's **content**: the number of its latest landing (``run_loads``: the landing numbers each run it
  inserts, so a grown file's earlier runs, kept as they were by a tail read, keep theirs), else its owner file's
  name and digest — kept per run in ``kept_run_keys``;
- the **prices it reads**: the (provider, model, day) of each of its calls (``kept_run_prices``), against
  each ``model_prices`` row's digest when the totals were written (``kept_price_rows``): a price file,
  ``prices add`` or a new snapshot re-prices exactly the runs whose rows changed;
- **today**, for a run with a call of no time at all (``step_view`` prices it at today's prices): its day.

``refresh`` (the end of every ingest, a price change, any writing open) rewrites the stale runs' rows in one
transaction; ``cover`` (a read-only open) puts a stale run's fresh rows in temporary tables of the same
names, which the views read first, so a reader never sees a stale total (after an ingest that was killed,
say) and never writes. ``rebuild`` drops the kept rows and writes them all again (``reconcile rebuild``).
The definitions' fingerprint is the views': new definitions drop the tables (``views.create_views``).
"""

from __future__ import annotations

import duckdb

from reconcile import durability
from reconcile.engine import Engine
from reconcile.store.views import KEPT, KEPT_KEYS, STEP_ROWS, create_views, view_query

# what the kept rows of a run are computed from: the tables step_view reads that hold a run_id
SOURCES = ("steps", "runs", "tool_calls")
# A command that goes on reading the runs it refreshed (the morning: its checks, signals, budgets and replay read the
# night) keeps their rows and priced steps in temporary tables of these names (``refresh(..., cache=True)``) while
# nothing writes the steps; ``cached`` reads a run set's rows from them instead of copying and pricing them again.
CACHE = {name: f"_cached_{name}" for name in (*SOURCES, "step_view")}
CACHED_RUNS = "_cached_run_ids"

# a run's content: its latest landing's number (run_loads), else (a run landed before they were numbered) its file's
# name and digest, which change whenever the file's content does (the kept verdicts' keys read it too: checks.kept)
CONTENT = """select r.run_id, coalesce('load:' || l.load, 'file:' || r.source_file || chr(31) || f.sha256) as content_key
              from runs r left join run_loads l using (run_id) left join ingested_files f on f.path = r.source_file"""
# a reader's runs whose kept rows ``cover`` computed afresh (their kept revision is not what their rows are now)
COVERED = "_covered_runs"
_PRICES_NOW = "select provider, model, day, md5(mp::varchar) as digest from model_prices mp"


def kept_in(engine: Engine) -> bool:
    """Whether ``engine`` reads a store that keeps run totals (and so what is kept on their keys: a signal's sums, a
    run's fence peaks); an export read back or Spark keeps nothing."""
    if not engine.capabilities.transactions:
        return False
    return engine.rows("select count(*) from duckdb_tables() where schema_name = 'main' and not temporary "
                       "and table_name = 'kept_run_keys'")[0][0] == 1


def writable(engine: Engine) -> bool:
    """Whether ``engine``'s store may be written (else what is kept is computed into temporary tables)."""
    return engine.rows("select current_setting('access_mode')")[0][0].lower() != "read_only"


def present(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether this store keeps totals (every kept table and key table is there, as tables)."""
    names = [*KEPT, *KEPT_KEYS]
    return con.execute("select count(*) from duckdb_tables() where schema_name = 'main' and not temporary "
                       "and table_name in (select unnest(?))", [names]).fetchall()[0][0] == len(names)


def _all_current(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether every kept row is current, in one statement (the common case of an open: nothing to do)."""
    return not con.execute(f"""select exists (
            with now_keys as ({CONTENT})
            select 1 from now_keys c left join main.kept_run_keys k using (run_id)
            where k.run_id is null or c.content_key is null or k.content_key is distinct from c.content_key
               or k.priced_on is not null and k.priced_on <> current_date)
        or exists (select 1 from main.kept_run_keys k anti join runs r using (run_id))
        or exists (select * from ({_PRICES_NOW}) except select * from main.kept_price_rows)
        or exists (select * from main.kept_price_rows except select * from ({_PRICES_NOW}))""").fetchall()[0][0]


def _find_stale(con: duckdb.DuckDBPyConnection) -> int:
    """``_stale_runs``: the runs whose kept rows may not be their definitions' rows now; returns how many."""
    con.execute(f"create or replace temp table _prices_now as {_PRICES_NOW}")
    con.execute("""create or replace temp table _prices_changed as
                   (select provider, model, day from (select * from _prices_now except select * from main.kept_price_rows))
                   union
                   (select provider, model, day from (select * from main.kept_price_rows except select * from _prices_now))""")
    con.execute(f"""create or replace temp table _stale_runs as
        with now_keys as ({CONTENT})
        select c.run_id from now_keys c left join main.kept_run_keys k using (run_id)
        where k.run_id is null or c.content_key is null or k.content_key is distinct from c.content_key
           or k.priced_on is not null and k.priced_on <> current_date
        union
        select p.run_id from main.kept_run_prices p join _prices_changed x
            on x.provider is not distinct from p.provider and x.model = p.model and x.day is not distinct from p.day""")
    return con.execute("select count(*) from _stale_runs").fetchall()[0][0]


def _gone(con: duckdb.DuckDBPyConnection) -> int:
    """How many runs the kept keys name that the store no longer holds."""
    return con.execute("select count(*) from main.kept_run_keys where run_id not in (select run_id from runs)"
                       ).fetchall()[0][0]


def cached(con: duckdb.DuckDBPyConnection, name: str, runs: str) -> str:
    """SQL: the rows of ``name`` (a table of ``SOURCES``, or ``step_view`` priced) of the runs in the table ``runs``:
    from the cache (``CACHE``) where it holds every one of them, else from the store (for ``step_view``: priced over
    whatever ``steps``, ``runs`` and ``tool_calls`` the caller made first)."""
    if _temp_exists(con, CACHED_RUNS) and _temp_exists(con, CACHE[name]) and not con.execute(
            f"select exists (select run_id from {runs} except select run_id from {CACHED_RUNS})").fetchall()[0][0]:
        return f"select * from {CACHE[name]} where run_id in (select run_id from {runs})"
    if name == "step_view":
        return STEP_ROWS
    return f"select * from main.{name} where run_id in (select run_id from {runs})"


def cached_whole(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the cache's priced steps are the whole store's (most of it was stale: they were priced whole, not
    over copies cut down to the stale runs)."""
    return _temp_exists(con, CACHE["step_view"]) and not _temp_exists(con, CACHE["steps"])


def drop_cache(con: duckdb.DuckDBPyConnection) -> None:
    for name in (CACHED_RUNS, *CACHE.values()):
        con.execute(f"drop table if exists temp.{name}")


def _compute_stale(con: duckdb.DuckDBPyConnection, stale: int, cache: bool = False) -> None:
    """``_fresh_<name>`` for each kept table, and ``_fresh_keys`` / ``_fresh_prices``: the stale runs' rows now.

    The definitions are run over temporary copies of the tables they read, cut down to the stale runs (found
    before the store's tables, as ``kept.restricted`` relies on): DuckDB would price every step of the store to
    filter a view's rows afterwards.
    """
    runs = con.execute("select count(*) from runs").fetchall()[0][0]
    # above half the runs, copying them costs more than filtering the definitions' rows afterwards
    frozen = not _temp_exists(con, "step_view")  # (a command's frozen_views has priced them all already)
    outer = any(_temp_exists(con, name) for name in SOURCES)  # a caller's own copies, cut down to its runs
    shadowed = [name for name in SOURCES if not _temp_exists(con, name)] if frozen and 2 * stale < runs else []
    try:
        for name in shadowed:
            con.execute(f"create temp table {name} as {cached(con, name, '_stale_runs')}")
        if frozen:  # priced once for both definitions, not once each
            con.execute(f"create temp table step_view as {cached(con, 'step_view', '_stale_runs')}")
        for name in KEPT:
            con.execute(f"create or replace temp table _fresh_{name} as select * from ({view_query(name)}) "
                        "where run_id in (select run_id from _stale_runs)")
        # the prices each run's calls read, and the day an undated call is priced at (step_view's and resolve's rule)
        con.execute("""create or replace temp table _fresh_prices as
            select distinct s.run_id, coalesce(s.provider, r.provider) as provider, coalesce(s.model, r.model) as model,
                   coalesce(s.started_at, r.started_at, now())::date as day
            from steps s join runs r using (run_id)
            where s.kind = 'model' and coalesce(s.model, r.model) is not null
              and s.run_id in (select run_id from _stale_runs)""")
        con.execute(f"""create or replace temp table _fresh_keys as
            with now_keys as ({CONTENT}),
            undated as (select distinct s.run_id from steps s join runs r using (run_id)
                        where coalesce(s.started_at, r.started_at) is null)
            select c.run_id, c.content_key, case when u.run_id is not null then current_date end as priced_on,
                   null::bigint as revision
            from now_keys c left join undated u using (run_id) where c.run_id in (select run_id from _stale_runs)""")
    finally:
        # the stale runs' priced steps (and their rows, where they were copied) kept for the command; the steps of
        # the whole store where most of it was stale (a night in a fresh store): priced once for the command too
        if cache and frozen and not outer and shadowed in (list(SOURCES), []):
            drop_cache(con)
            for name in (*shadowed, "step_view"):
                con.execute(f"alter table temp.{name} rename to {CACHE[name]}")
            con.execute(f"create temp table {CACHED_RUNS} as select run_id from _stale_runs")
            shadowed, frozen = [], False
        if frozen:
            con.execute("drop table if exists temp.step_view")
        for name in shadowed:
            con.execute(f"drop table if exists temp.{name}")


def _temp_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    return con.execute("select count(*) from duckdb_tables() where temporary and table_name = ?", [name]
                       ).fetchall()[0][0] > 0


def refresh(con: duckdb.DuckDBPyConnection, everything: bool = False, cache: bool = False) -> int:
    """Rewrite the kept rows of every stale run (every run with ``everything``) in one transaction; the runs
    rewritten. The rows written are those the definitions give now: the store then equals a rebuild. With
    ``cache``, the stale runs' priced steps (and their rows, where they were copied: fewer than half the runs) are
    left in the temporary tables ``CACHE`` for the caller to read through ``cached`` and drop (``drop_cache``)."""
    if not present(con):
        return 0
    drop_cover(con)
    if not everything and _all_current(con):
        return 0
    if everything:
        con.execute("create or replace temp table _prices_now as " + _PRICES_NOW)
        con.execute("create or replace temp table _stale_runs as select run_id from runs")
        stale = con.execute("select count(*) from _stale_runs").fetchall()[0][0]
    else:
        stale = _find_stale(con)
    if not stale and not everything and not _gone(con) and not _prices_moved(con):
        return 0
    with durability.unit(con, "the kept run totals"):
        _compute_stale(con, stale, cache)
        for name in (*KEPT, "kept_run_keys", "kept_run_prices"):
            if everything:
                con.execute(f"delete from main.{name}")
            else:
                con.execute(f"delete from main.{name} where run_id in (select run_id from _stale_runs) "
                            "or run_id not in (select run_id from runs)")
        for name in KEPT:
            con.execute(f"insert into main.{name} select * from _fresh_{name}")
        con.execute("insert into main.kept_run_keys select run_id, content_key, priced_on, nextval('kept_revision') "
                    "from _fresh_keys")
        con.execute("insert into main.kept_run_prices select * from _fresh_prices")
        con.execute("delete from main.kept_price_rows")
        con.execute("insert into main.kept_price_rows select * from _prices_now")
    return stale


def _prices_moved(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether ``model_prices`` differs from the rows the kept totals were priced with (even where no run reads
    the difference: the kept copy is brought up to date, so the next look finds nothing)."""
    return con.execute("select count(*) from _prices_changed").fetchall()[0][0] > 0


def rebuild(con: duckdb.DuckDBPyConnection) -> int:
    """Drop the kept tables and write every run's rows again; the runs written."""
    drop_cover(con)
    create_views(con)  # the kept tables made again, empty (and every view with them)
    return refresh(con, everything=True)


def cover(con: duckdb.DuckDBPyConnection) -> int:
    """For a reader that may not write: the kept tables as they should be, in temporary tables of the same names
    (read before the store's), wherever a run's kept rows are stale; the runs covered (0: nothing made)."""
    if not present(con):
        return 0
    drop_cover(con)
    if _all_current(con):
        return 0
    stale = _find_stale(con)
    if not stale:
        return 0
    _compute_stale(con, stale)
    for name in KEPT:
        con.execute(f"create temp table {name} as select * from main.{name} "
                    "where run_id not in (select run_id from _stale_runs) union all by name "
                    f"select * from _fresh_{name}")
    con.execute(f"create temp table {COVERED} as select run_id from _stale_runs")
    return stale


def drop_cover(con: duckdb.DuckDBPyConnection) -> None:
    """Drop a reader's temporary kept tables (a writer makes the store's current instead)."""
    for name in (*KEPT, COVERED):
        con.execute(f"drop table if exists temp.{name}")
