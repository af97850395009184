"""Stage a candidate's limits on every run and replay the fence over the steps (``fence.sql``).

Three statements a candidate, all set-based: ``_replay_limits`` (the limits each run in the window would
have had), the candidate's loop detector replayed over the transcripts (``loop_firings.sql``, the checks'
own replay of the seeds' detectors), and ``_replay_runs`` (``fence.sql``: one row a run — where the fence
would have stopped it, why, and what the steps after that point did and cost).
"""

from __future__ import annotations

from importlib import resources


from reconcile.config.settings import create_loop_firings, create_run_settings
from reconcile.formats.journal_spec import DETECTORS, WINDOW
from reconcile.analyses.replay.candidates import Candidate
from reconcile.engine import Engine

COLUMNS = {"max_steps": "bigint", "max_tokens": "bigint", "max_prompt_tokens": "bigint",
           "max_completion_tokens": "bigint", "max_wall_seconds": "double", "max_cost_micros": "bigint",
           "loop_detector": "varchar", "loop_limit": "bigint", "loop_window": "bigint", "wrap_up": "boolean"}
OWN = {"max_steps": "b.max_steps", "max_tokens": "b.max_tokens", "max_prompt_tokens": "b.max_prompt_tokens",
       "max_completion_tokens": "b.max_completion_tokens", "max_wall_seconds": "b.max_wall_seconds",
       "max_cost_micros": "b.max_cost_micros"}  # the budget owner's: the run, or the root sharing its limits


STEP_COLUMNS = ("run_id", "idx", "kind", "is_wrap_up", "provider_refused", "input_tokens", "output_tokens",
                "cost_micros", "harness_cost_micros", "started_at")


def prepare(engine: Engine, config, window: str, params: dict) -> None:
    """What every candidate reads, made once: each run's own detector settings (``run_settings``) and the steps of
    the runs in the window, priced (``_replay_steps``: the few columns of ``step_view`` the fence reads — pricing
    every column of every step would cost more than the replay itself)."""
    create_run_settings(engine, config)
    # only model calls have a price: the other steps come from the table, not through the pricing join
    engine.run(f"""create or replace temp table _replay_steps as
        select {", ".join(f"s.{c}" for c in STEP_COLUMNS)}
        from step_view s join runs r on r.run_id = s.run_id where s.kind = 'model' and {window}
        union all
        select s.run_id, s.idx, s.kind, false, false, null, null, null, null, s.started_at
        from steps s join runs r on r.run_id = s.run_id where s.kind <> 'model' and {window}""", params)


def replay_candidate(engine: Engine, candidate: Candidate, group_sql: str, window: str,
                     params: dict) -> None:
    """``_replay_runs`` for one candidate over the runs in ``window`` (needs ``prepare`` first)."""
    _stage_limits(engine, candidate, group_sql, window, params)
    create_loop_firings(engine, detectors="_replay_limits", into="_replay_loops")
    engine.run("create or replace temp table _replay_runs as\n"
               + (resources.files("reconcile.analyses.replay") / "fence.sql").read_text())


def _stage_limits(engine, candidate: Candidate, group_sql: str, window: str, params: dict) -> None:
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
    # limits, counted from the root's start over every run of the tree (its budget_key is the root)
    engine.run(
        f"""create or replace temp table _replay_limits as
        with candidate as ({table}),
        roots as (select * from run_roots),
        owners as (
            select x.run_id, case when o.budget_scope = 'tree' then o.run_id else x.run_id end as budget_key,
                   coalesce(o.budget_scope = 'tree', false) as tree
            from roots x join runs o on o.run_id = x.root_run_id
        )
        select r.run_id, {group_sql} as group_key, b.started_at, w.budget_key, w.tree,
               {", ".join(f"{chosen(name)} as {name}" for name in OWN)},
               {detector} as loop_detector,
               coalesce(g.loop_limit, a.loop_limit,
                        case when {named} is null then rs.loop_limit end,
                        case {detector} {seed_limit} end) as loop_limit,
               coalesce(g.loop_window, a.loop_window, case when {named} is null then rs.loop_window end,
                        {WINDOW}) as loop_window,
               coalesce(g.wrap_up, a.wrap_up, false) as wrap_up
        from runs r
        join owners w on w.run_id = r.run_id
        join runs b on b.run_id = w.budget_key  -- whose limits it spends
        left join run_settings rs on rs.run_id = r.run_id
        left join candidate g on g.key = {group_sql}
        left join candidate a on a.key is null
        where {window}""",
        {**params, **values},
    )
