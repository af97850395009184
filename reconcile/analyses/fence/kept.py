"""Kept peaks: each run's ledger at its last checked call (``peaks``), kept while nothing it depends on changes.

``reconcile budgets`` (and the morning report's budgets, over every run of the store) asks, for each recommended
ceiling, which succeeded runs a fence holding it would have stopped: each run's peaks, from the fence walk over its
steps. With each run its own budget (``unit = "run"``, the default), a run's peaks depend only on its own steps
(``kept_run_keys.revision``, which changes when it is landed again or its calls' prices change), its status and end
(``_fence_owners``), the rules of its agent tree's root (``run_settings``: the configuration and the root's harness)
and the fence rules themselves. Those make its key; ``fence_peaks`` keeps the peaks under it, and only the runs
whose key changed are walked again — by the same walk and the same ``peaks`` query, so ``budgets``, ``replay`` and
``budgets_enforced`` cannot disagree. A store that may not be written walks them into a temporary table; an engine
that keeps nothing (an export, Spark) walks every run, as before.
"""

from __future__ import annotations

import hashlib

from reconcile.analyses import fence
from reconcile.engine import Engine
from reconcile.store import kept_totals
from reconcile.store.fences import rules_sql

def usable(engine: Engine) -> bool:
    return kept_totals.kept_in(engine)


def peaks_relation(engine: Engine) -> str:
    """The peaks of every run, each its own budget, up to date: the name of a relation with ``peaks``' columns
    (``budget_key`` the run). Needs ``run_settings``. Walks only the runs whose key changed."""
    rules = hashlib.sha256((rules_sql() + fence._sql("ledger")).encode()).hexdigest()[:16]
    writable = kept_totals.writable(engine)
    present = engine.rows("select count(*) from duckdb_tables() where schema_name = 'main' and not temporary "
                          "and table_name = 'fence_peaks'")[0][0] == 1
    engine.run("drop table if exists temp.fence_peaks")
    # a run's key: its rows (revision), its status and end, its tree's root and the root's rules, the walk's own SQL
    engine.run(f"""create or replace temp table _peak_keys as
        select r.run_id, md5(concat_ws(chr(31), '{rules}', k.revision::varchar, r.status, r.ended_at::varchar,
                                       t.root_run_id, md5(rs::varchar))) as run_key
        from runs r join main.kept_run_keys k using (run_id) join run_roots t using (run_id)
        left join run_settings rs on rs.run_id = t.root_run_id""")
    kept = "main.fence_peaks" if present else f"(select * from (select null::varchar as run_id, null::varchar as run_key) where false)"
    engine.run(f"""create or replace temp table _peak_stale as
        select k.run_id from _peak_keys k left join {kept} p on p.run_id = k.run_id and p.run_key = k.run_key
        where p.run_id is null""")
    stale = engine.rows("select count(*) from _peak_stale")[0][0]
    gone = present and engine.rows("""select count(*) from main.fence_peaks p left join _peak_keys k
                                      on k.run_id = p.run_id and k.run_key = p.run_key where k.run_id is null""")[0][0]
    if not stale and not gone:
        return "main.fence_peaks"
    fence.stage_steps(engine, "r.run_id in (select run_id from _peak_stale)")
    fence.stage_ledger(engine, "run")
    engine.run(f"""create or replace temp table _fresh_peaks as
        select p.budget_key as run_id, k.run_key, p.* from ({fence.peaks()}) p join _peak_keys k on k.run_id = p.budget_key""")
    fence.drop_staging(engine)
    if writable:
        if not present:  # shaped as the peaks query's rows, whatever their types
            engine.run("create table if not exists main.fence_peaks as select * from _fresh_peaks limit 0")
        with engine.transaction():
            engine.run("""delete from main.fence_peaks p where not exists (select 1 from _peak_keys k
                          where k.run_id = p.run_id and k.run_key = p.run_key)""")
            engine.run("insert into main.fence_peaks select * from _fresh_peaks")
        return "main.fence_peaks"
    keep = ("select p.* from main.fence_peaks p join _peak_keys k on k.run_id = p.run_id and k.run_key = p.run_key "
            "union all " if present else "")
    engine.run(f"create temp table fence_peaks as {keep}select * from _fresh_peaks")
    return "temp.fence_peaks"
