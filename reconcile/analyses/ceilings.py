"""Ceilings from evidence, censoring-aware: what ``reconcile budgets`` recommends, and why.

For each group and each ceiling (steps, tokens, wall seconds, cost):

- the exact p50 / p95 / p99 over the **succeeded** runs (DuckDB's ``quantile_cont``);
- the runs a budget or time limit stopped **while still making progress**: no final answer yet,
  no call repeated among their last ``PROGRESS_WINDOW`` tool calls, no tool among them hung past
  its timeout. They did not fail: they were cut, and would have needed at least what they had
  used — right-censored observations, in every measure (a run cut by its step ceiling would also
  have spent more). Leaving them out biases the p99 low: that is how a too-tight ceiling
  recommends itself lower still;
- with *n* = succeeded + cut runs and *k* cut ones, the p99 sits at position (n − 1) · 0.99 of
  the sorted sample. If k is no more than the places above that position, the p99 is bounded
  even if every cut run would have needed more than any succeeded one: it is computed with them
  placed at the top (robust, not a guess). If k is larger, the data cannot place the p99: the
  recommendation is a **lower bound** — "raise to at least N and observe a night" (N at least
  the ceiling plus one when the ceiling itself cut progressing runs), or "keep the ceiling and
  observe a night" when the bound is below it. It never lowers the ceiling on a bound, and a
  ceiling that cut progressing runs of a group flagged ``too_tight`` is never recommended lower;
- beside every recommended value, the succeeded runs it would have stopped (count and ids).

Which ceiling stopped a run is read from its raw stop reason: the limit its stop-reason rule names
(``reconcile.store.status.STOP_REASON_RULES``).
"""

from __future__ import annotations

import math
from typing import Any


from reconcile.analyses.fence import peaks
from reconcile.money import usd
from reconcile.sql_text import string_literal
from reconcile.store.status import STOP_REASON_RULES
from reconcile.engine import Engine

PROGRESS_WINDOW = 6  # calls looked at to decide a stopped run was still making progress
# A step ceiling counts charged model calls: a wrap-up turn and a call the provider refused are not charged.
METRIC_SQL = {"steps": "r.charged_steps", "tokens": "r.total_tokens", "prompt_tokens": "r.input_tokens",
              "completion_tokens": "r.output_tokens", "wall_seconds": "r.wall_seconds", "cost_micros": "r.cost_micros"}
CEILINGS = {"steps": "max_steps", "tokens": "max_tokens", "prompt_tokens": "max_prompt_tokens",
            "completion_tokens": "max_completion_tokens", "wall_seconds": "max_wall_seconds",
            "cost_micros": "max_cost_micros"}
OPTIONAL = ("prompt_tokens", "completion_tokens")  # seed 000's ceilings: recommended where the harness has them
UNITS = ("run", "tree")


def units_sql(unit: str) -> str:
    """One row a unit a budget is spent by: a run, or an agent tree (seed 001: one budget shared by the root and
    every sub-agent under it), with the columns ``stage_runs`` reads. A tree's limits, status and times are its
    root's; its steps, tokens and cost add up over its runs (its cost unknown when any run's is)."""
    if unit == "run":
        return """select r.run_id, r.agent, r.task_class, r.model, r.status, r.stop_reason, r.started_at,
                          r.tool_timeout_seconds, {limits}, v.charged_steps, v.total_tokens, v.input_tokens,
                          v.output_tokens, v.wall_seconds, v.has_final_answer, c.cost_micros
                   from runs r join run_view v using (run_id) join chosen_costs c using (run_id)
                   -- a compaction call (Claude Code's agent-acompact-*) is no agent's run: no ceiling is for it
                   where c.asked = $source and coalesce(r.task_class, '') <> 'context compaction'""".format(
            limits=", ".join(f"r.{column}" for column in CEILINGS.values()))
    root = "max(case when m.run_id = m.root_run_id then {0} end)"  # the root's own (max, not any_value: Spark reads it)
    return f"""select m.root_run_id as run_id, {", ".join(root.format(f"r.{c}") + f" as {c}" for c in (
                   "agent", "task_class", "model", "status", "stop_reason", "started_at", "tool_timeout_seconds",
                   *CEILINGS.values()))},
                   sum(m.charged_steps) as charged_steps, sum(m.total_tokens) as total_tokens,
                   sum(m.input_tokens) as input_tokens, sum(m.output_tokens) as output_tokens,
                   date_diff('millisecond', min(m.started_at), max(m.ended_at)) / 1000.0 as wall_seconds,
                   {root.format("m.has_final_answer")} as has_final_answer,
                   case when count(c.cost_micros) = count(*) then sum(c.cost_micros) end as cost_micros
               from run_view m join runs r on r.run_id = m.run_id
               join chosen_costs c on c.run_id = m.run_id and c.asked = $source
               group by m.root_run_id
               having count(*) filter (where m.run_id = m.root_run_id) = 1"""
SHOWN_IDS = 20  # ids listed per recommendation in JSON (the count is always complete)


def stage_runs(engine: Engine, group_sql: str, window: str, params: dict, unit: str = "run") -> None:
    """``_budget_runs``: one row per run (or agent tree, ``unit``) in the window — its group, whether it succeeded
    or was cut while progressing (and by which ceiling), and its steps, tokens, wall seconds and cost."""
    # the rules tried in order, as the status mapping tries them: the first match names the limit (or none)
    cut_by = "case " + " ".join(
        f"when regexp_full_match(lower(trim(r.stop_reason)), {string_literal('(?:' + rule.pattern + ')')}) then "
        + (string_literal(rule.names) if rule.names in CEILINGS else "null") for rule in STOP_REASON_RULES) + " end"
    engine.run(
        f"""create or replace temp table _budget_runs as
        with units as ({units_sql(unit)}),
        stopped as (select r.run_id from units r where r.status in ('budget_exceeded', 'timed_out') and {window}),
        last_calls as (
            select q.run_id, q.tool_name || ':' || coalesce(q.args_hash, '') as call_hash,
                   row_number() over (partition by q.run_id order by q.step_idx desc, q.call_position desc) as back
            from tool_calls q join stopped using (run_id)
        ),
        progress as (select run_id, count(*) = count(distinct call_hash) as progressing
                     from last_calls where back <= {PROGRESS_WINDOW} group by run_id),
        hung as (  -- a tool that timed out, or ran past its timeout, among the run's last steps: stuck, not progressing
            select distinct s.run_id from stopped x
            join (select *, row_number() over (partition by run_id order by idx desc) as back from steps where kind = 'tool') s
                using (run_id)
            join units r using (run_id)
            where s.back <= {PROGRESS_WINDOW}
              and (s.tool_status = 'timeout' or s.ms > 1000 * r.tool_timeout_seconds)
        )
        select {group_sql} as key, r.run_id, r.status, r.status = 'succeeded' as succeeded, r.has_final_answer as answered,
               r.status in ('budget_exceeded', 'timed_out') and coalesce(p.progressing, true)
                   and not r.has_final_answer and h.run_id is null as censored,
               {cut_by} as cut_by,
               {", ".join(f"{sql}::double as {name}" for name, sql in METRIC_SQL.items())},
               {", ".join(f"r.{column}::double as configured_{name}" for name, column in CEILINGS.items())}
        from units r
        left join progress p using (run_id)
        left join hung h using (run_id)
        where {window}""",
        params,
    )


def measured(engine: Engine) -> list[str]:
    """The measures ``_budget_runs`` is judged on: every one, but seed 000's prompt and completion ceilings only
    where some run keeps them (each measure is a pass over the runs: on Spark, seconds)."""
    kept = engine.rows("select " + ", ".join(f"count(configured_{name})" for name in OPTIONAL)
                       + " from _budget_runs")[0]
    return [name for name in METRIC_SQL if name not in OPTIONAL or kept[OPTIONAL.index(name)]]


def _long_measures(metrics: list[str], with_run: bool = False) -> str:
    """One row per run and measure of ``_budget_runs`` (a union, not UNPIVOT: it reads the same in Spark)."""
    run = "run_id, " if with_run else ""
    return " union all ".join(f"select key, {run}succeeded, censored, cut_by, '{name}' as metric, {name} as value "
                              "from _budget_runs" for name in metrics)


def evidence(engine: Engine, metrics: list[str]) -> dict[tuple[str, str], dict[str, Any]]:
    """Per (group, ceiling): the naive quantiles, the cut runs, and the p99 counting them (robust, or a lower bound)."""
    rows = engine.rows(
        f"""with long as ({_long_measures(metrics)}),
        sample as (select * from long where (succeeded or censored) and value is not null),
        sizes as (
            select key, metric, count(*) as n, count(*) filter (where censored) as k,
                   (count(*) - 1) * 0.99 as position,
                   quantile_cont(value, [0.5, 0.95, 0.99]) filter (where succeeded) as naive,
                   quantile_cont(value, 0.99) as observed_p99,
                   count(*) filter (where censored and cut_by = metric) as cut_by_ceiling,
                   count(*) filter (where succeeded) as succeeded
            from sample group by all
        ),
        uncensored as (select key, metric, value, row_number() over (partition by key, metric order by value) - 1 as rank
                       from sample where succeeded)
        select z.key, z.metric, z.naive, z.k, z.cut_by_ceiling, z.observed_p99, z.succeeded,
               -- the cut runs placed above every succeeded run: the p99 still falls among succeeded ones
               case when z.k > 0 and z.k <= z.n - 1 - ceil(z.position) then
                   max(u.value) filter (where u.rank = floor(z.position))
                   + (z.position - floor(z.position))
                     * (max(u.value) filter (where u.rank = ceil(z.position)) - max(u.value) filter (where u.rank = floor(z.position)))
               end as robust_p99
        from sizes z left join uncensored u using (key, metric)
        group by z.key, z.metric, z.naive, z.k, z.cut_by_ceiling, z.observed_p99, z.succeeded, z.n, z.position"""
    )
    # shown: money in whole micro-dollars; recommend rounds the p99 as computed up to a ceiling itself
    return {(key, metric): {"naive": [_micros(q) for q in naive] if metric == "cost_micros" and naive else naive,
                            "p99": naive[2] if naive else None, "censored": k, "cut_by_ceiling": cut,
                            "observed_p99": observed, "robust_p99": robust, "succeeded": succeeded}
            for key, metric, naive, k, cut, observed, succeeded, robust in rows}


def recommend(metric: str, found: dict[str, Any] | None, configured: float | None, too_tight: bool) -> dict[str, Any] | None:
    """The recommended ceiling for one measure, with the basis for it (see the module doc)."""
    if not found or (found["naive"] is None and not found["censored"]):
        return None
    p99, censored = found["p99"], found["censored"]
    if not censored:
        result = {"value": _round_up(metric, p99), "at_least": False,
                  "basis": f"the p99 of the succeeded runs ({_shown(metric, p99)}), rounded up"}
    elif found["robust_p99"] is not None:
        result = {"value": _round_up(metric, found["robust_p99"]), "at_least": False,
                  "basis": f"the p99 counting the {censored} run(s) cut while still making progress as needing more "
                           "than any succeeded run"}
    else:
        bound = _round_up(metric, found["observed_p99"])
        if found["cut_by_ceiling"] and configured is not None:
            bound = max(bound, _next(metric, configured))
        if configured is not None and bound <= configured:
            result = {"value": _as_number(metric, configured), "at_least": True, "lower_bound": bound,
                      "basis": f"{censored} run(s) were cut while still making progress, too many to place the p99: "
                               f"it is at least {_shown(metric, bound)}, and nothing shows a lower ceiling is safe — "
                               f"keep {_shown(metric, configured)} and observe a night"}
        else:
            result = {"value": bound, "at_least": True, "lower_bound": bound,
                      "basis": f"{censored} run(s) were cut while still making progress ({found['cut_by_ceiling']} "
                               "by this ceiling), too many to place the p99: it is above what was observed — raise "
                               f"to at least {_shown(metric, bound)} and observe a night"}
    if too_tight and found["cut_by_ceiling"] and configured is not None and result["value"] <= configured:
        result.update(value=_next(metric, configured), at_least=True,
                      basis=f"this ceiling is too tight ({found['cut_by_ceiling']} progressing run(s) cut): raise to "
                            f"at least {_shown(metric, _next(metric, configured))} and observe a night")
    return result


# each ceiling's ledger at a run's last checked call (reconcile.analyses.fence.peaks)
PEAKS = {"steps": "peak_steps", "tokens": "peak_tokens", "prompt_tokens": "peak_prompt",
         "completion_tokens": "peak_completion", "cost_micros": "peak_cost", "wall_seconds": "peak_at_us"}


def would_stop(engine: Engine, recommended: dict[tuple[str, str], float], metrics: list[str],
               kept_peaks: str | None = None) -> dict[tuple[str, str], dict]:
    """For each (group, ceiling) recommendation, the succeeded runs (or trees) a fence holding it would have stopped:
    those whose ledger before some call had reached it — by the fence walk ``reconcile replay`` and
    ``budgets_enforced`` read (``reconcile.analyses.fence``, staged for the unit), never by run totals: the last
    call may cross a ceiling, and the wall clock counts to the last call's start, not to the run's end. A ledger
    that is only a lower bound stops a run it already passes, no other. ``kept_peaks``: a relation of the same
    ``peaks`` of every run, each its own budget (``fence.kept``), read instead of the staged walk."""
    if not recommended:
        return {}
    # the recommendations as a VALUES list and the ranking by a window: both read the same in Spark
    values = ", ".join(["(?, ?, ?)"] * len(recommended))
    peak = "case r.metric " + " ".join(f"when '{m}' then p.{PEAKS[m]}" for m in metrics) + " end"
    rows = engine.rows(
        f"""with peaks as ({f"select * from {kept_peaks}" if kept_peaks else peaks()}),
        over as (
            select b.key, r.metric, b.run_id,
                   row_number() over (partition by b.key, r.metric order by {peak} desc, b.run_id) as rank
            from _budget_runs b join peaks p on p.budget_key = b.run_id
            join (select * from (values {values}) as v(key, metric, value)) r on r.key = b.key
            where b.succeeded and case when r.metric = 'wall_seconds'
                                       then p.peak_at_us > round(r.value * 1000000)
                                            or (p.peak_at_us = round(r.value * 1000000) and p.wall_at_limit)
                                       else {peak} >= r.value end
        )
        select key, metric, count(*), list(run_id order by rank) filter (where rank <= {SHOWN_IDS})
        from over group by key, metric""",
        [item for (k, m), v in recommended.items() for item in (k, m, float(v))],
    )
    return {(key, metric): {"count": count, "runs": runs} for key, metric, count, runs in rows}


def _round_up(metric: str, value: float | None):
    """``value`` up to the round figure a ceiling is set at (:func:`round_figure`)."""
    if value is None:
        return None
    # A quantile of whole numbers has a real fraction of a hundredth at the finest (it sits (n - 1) · 0.99 of the way
    # through the sorted sample); the engines' noise is far below a thousandth, but above any fixed epsilon once the
    # two values it falls between are dollars apart: round to the thousandth, then up.
    return round_figure(metric, round(value, 3))


# The unit a ceiling is set in: whole steps and tokens, whole seconds, whole cents (of micro-dollars).
SET_IN = {"cost_micros": 10_000, "wall_seconds": 1}


def round_figure(metric: str, value: float):
    """``value`` rounded **up** to a figure people set a ceiling at: a whole number of the unit it is set in
    (steps, tokens, seconds, cents), and from 100 of them on, two significant figures — 164 steps -> 170,
    3,700,069 tokens -> 3,800,000, 83,956.5 s -> 84,000 s, $2.3107 -> $2.40. Never lower than ``value``: a
    rounded ceiling stops no run the exact one lets through."""
    unit = SET_IN.get(metric, 1)
    whole = math.ceil(value / unit - 1e-9)
    if whole >= 100:
        step = 10 ** (len(str(whole)) - 2)
        whole = -(-whole // step) * step
    return float(whole * unit) if metric == "wall_seconds" else whole * unit


def _micros(value: float | None) -> int | None:
    """A quantile of money in whole micro-dollars, half up as every amount is, so DuckDB and Spark show the same
    digits: their doubles differ in the last bits (97954.99999999999 and 97955.0), so the thousandths go first."""
    return None if value is None else math.floor(round(value, 3) + 0.5)


def _next(metric: str, configured: float):
    """The round figure above a ceiling that cut progressing runs."""
    return round_figure(metric, _as_number(metric, configured) + 1)


def _as_number(metric: str, value: float):
    return float(value) if metric == "wall_seconds" else int(value)


def _shown(metric: str, value: float) -> str:
    if metric == "cost_micros":  # micro-dollars in the store; dollars for whoever reads the basis
        return usd(round(value), places=4)
    return f"{value:,.1f} s" if metric == "wall_seconds" else f"{int(value):,}"
