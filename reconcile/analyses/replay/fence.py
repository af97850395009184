"""Stage a candidate's limits on every run and replay its fence over the steps (``fence.sql``).

The walk itself is ``reconcile.analyses.fence`` — the one ``budgets_enforced`` reads: the steps and the ledger at
each check are made once (``prepare``); per candidate, three set-based statements: ``_fence_limits`` (the limits
each run in the window would have had, and the rules its fence follows), the candidate's loop detector replayed
over the transcripts (``loop_firings.sql``, the checks' own replay of the seeds' detectors) into ``_fence_loops``,
the judgement (``judge.sql``) and ``_replay_runs`` (``fence.sql``: one row a run — where the fence would have
stopped it, why, and what the steps after that point did and cost).
"""

from __future__ import annotations

from importlib import resources


from reconcile.analyses import fence
from reconcile.config.settings import create_loop_firings, create_run_settings
from reconcile.formats.journal_spec import DETECTORS, WINDOW
from reconcile.analyses.replay.candidates import Candidate, as_run as as_run_candidate
from reconcile.engine import Engine

COLUMNS = {"max_steps": "bigint", "max_tokens": "bigint", "max_prompt_tokens": "bigint",
           "max_completion_tokens": "bigint", "max_wall_seconds": "double", "max_cost_micros": "bigint",
           "loop_detector": "varchar", "loop_limit": "bigint", "loop_window": "bigint", "wrap_up": "boolean"}
OWN = {"max_steps": "b.max_steps", "max_tokens": "b.max_tokens", "max_prompt_tokens": "b.max_prompt_tokens",
       "max_completion_tokens": "b.max_completion_tokens", "max_wall_seconds": "b.max_wall_seconds",
       "max_cost_micros": "b.max_cost_micros"}  # the budget owner's: the run, or the root sharing its limits


def prepare(engine: Engine, config, window: str, params: dict) -> None:
    """What every candidate reads, made once: each run's own detector settings and fence rules (``run_settings``),
    the steps of the runs in the window (``_fence_steps``) and the fence's ledger at each check (``_fence_points``)."""
    create_run_settings(engine, config)
    fence.stage_steps(engine, window, params)
    fence.stage_ledger(engine, "declared")


def as_run(engine: Engine, config, into: str = "fence_as_run") -> None:
    """``into`` (``fence_as_run``): every run judged by ``reconcile replay --as-run`` — its own limits, loop detector
    and fence rules — which is what ``budgets_enforced`` reads, so the check and the replay cannot disagree."""
    prepare(engine, config, "true", {})
    _stage_limits(engine, as_run_candidate(), "null", "true", {}, grace(config))
    create_loop_firings(engine, detectors="_fence_limits", into="_fence_loops")
    fence.judge(engine, into)
    fence.drop_staging(engine)


def grace(config) -> float:
    """How long past its deadline, with nothing journalled, a fence-stopped run may take (``fence_grace_seconds``)."""
    return float(config.setting("fence_grace_seconds").value)


def replay_candidate(engine: Engine, candidate: Candidate, group_sql: str, window: str, params: dict,
                     grace_seconds: float) -> None:
    """``_replay_runs`` for one candidate over the runs in ``window`` (needs ``prepare`` first)."""
    _stage_limits(engine, candidate, group_sql, window, params, grace_seconds)
    create_loop_firings(engine, detectors="_fence_limits", into="_fence_loops")
    fence.judge(engine, "_replay_judged")
    engine.run("create or replace temp table _replay_runs as\n"
               + (resources.files("reconcile.analyses.replay") / "fence.sql").read_text())


def _stage_limits(engine, candidate: Candidate, group_sql: str, window: str, params: dict,
                  grace_seconds: float) -> None:
    rows, values = [], {}
    for row, (key, limits) in enumerate(candidate.limits.items()):  # named parameters, as the window's are
        cells = {"key": ("varchar", key), **{name: (kind, limits.get(name)) for name, kind in COLUMNS.items()}}
        rows.append("(" + ", ".join(f"cast($c{row}_{name} as {kind})" for name, (kind, _) in cells.items()) + ")")
        values.update({f"c{row}_{name}": value for name, (_, value) in cells.items()})
    names = ", ".join(["key", *COLUMNS])
    empty = ", ".join(["null::varchar", *(f"null::{kind}" for kind in COLUMNS.values())])
    table = (f"select * from (values {', '.join(rows)}) as t({names})" if rows
             else f"select * from (select {empty}) as t({names}) where false")
    own = candidate.base == "own"

    def chosen(name: str) -> str:  # the group's own value, else the every-group value, else the run's own
        return f"coalesce(g.{name}, a.{name}{', ' + OWN[name] if own and name in OWN else ''})"

    # a detector the candidate names takes its limit and window from the candidate, else from its seed; the
    # run's own limit and window go only with the run's own detector
    named = "coalesce(g.loop_detector, a.loop_detector)"
    detector = f"nullif(coalesce({named}{', rs.loop_detector' if own else ''}), 'none')"
    seed_limit = " ".join(f"when '{kind}' then {limit}" for kind, limit in DETECTORS.items())
    # seed 001's one budget for the agent tree: a run under a root whose limits have scope "tree" spends the root's
    # limits (its budget_key, _fence_owners), under the rules the root's fence follows
    engine.run(
        f"""create or replace temp table _fence_limits as
        with candidate as ({table})
        select r.run_id, {group_sql} as group_key, w.budget_key, w.tree,
               coalesce(os.fence, 'default') as fence, {round(grace_seconds * 1_000_000)} as grace_us,
               {", ".join(f"{chosen(name)} as {name}" for name in OWN)},
               {detector} as loop_detector,
               coalesce(g.loop_limit, a.loop_limit,
                        case when {named} is null then rs.loop_limit end,
                        case {detector} {seed_limit} end) as loop_limit,
               coalesce(g.loop_window, a.loop_window, case when {named} is null then rs.loop_window end,
                        {WINDOW}) as loop_window,
               coalesce(g.wrap_up, a.wrap_up, false) as wrap_up
        from runs r
        join _fence_owners w on w.run_id = r.run_id
        join runs b on b.run_id = w.budget_key  -- whose limits it spends
        left join run_settings rs on rs.run_id = r.run_id
        left join run_settings os on os.run_id = w.budget_key  -- whose rules
        left join candidate g on g.key = {group_sql}
        left join candidate a on a.key is null
        where {window}""",
        {**params, **values},
    )
