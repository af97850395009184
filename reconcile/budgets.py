"""Budgets from evidence: ``reconcile budgets``.

"Set the ceiling at roughly the 99th percentile of steps taken by runs that succeeded, not at a
round number." Per group (agent, task class or model): runs, success rate, and the p50 / p95 / p99
of steps, total tokens, wall seconds and cost over the *succeeded* runs; the recommended ceilings
(the p99, steps rounded up to a whole step); the ceiling the journals say the harness ran with;
and flags:

- ``no_budget``: the configured step ceiling is above twice the p99 — set high enough to be none;
- ``too_tight``: at least ``TOO_TIGHT_SHARE`` of the runs were stopped by a budget, and most of
  those were still making progress (no call repeated in their last calls) when stopped;
- ``answered_then_kept_going``: runs that had answered and ran on (``final_answer_not_overwritten``);
- ``small_sample``: fewer than 100 succeeded runs — the p99 comes with a bootstrap interval.

Quantiles are exact: DuckDB's ``quantile_cont`` (linear interpolation between the two nearest
ranks, like numpy's default), never an approximation; the bootstrap uses the same interpolation.
"""

from __future__ import annotations

import math
import random
from typing import Any

import duckdb

from .errors import BadInput
from .store import records

GROUPS = {"agent": "coalesce(r.agent, '(none)')", "task_class": "coalesce(r.task_class, '(none)')",
          "model": "coalesce(r.model, '(none)')"}
METRICS = {"steps": "v.steps", "tokens": "v.total_tokens", "wall_seconds": "v.wall_seconds",
           "cost_micros": "coalesce(v.cost_micros, v.harness_step_cost_micros)"}
CEILINGS = {"steps": "max_steps", "tokens": "max_tokens", "wall_seconds": "max_wall_seconds", "cost_micros": "max_cost_micros"}
SMALL_SAMPLE = 100
TOO_TIGHT_SHARE = 0.05  # of a group's runs stopped by a budget before it can be "too tight"
PROGRESS_WINDOW = 6  # calls looked at to decide a stopped run was still making progress
BOOTSTRAP_RESAMPLES = 1000


def quantile_cont(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between the nearest ranks — what DuckDB's quantile_cont computes."""
    position = (len(sorted_values) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return sorted_values[low] + (position - low) * (sorted_values[high] - sorted_values[low])


def bootstrap_p99(values: list[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """A 95 % interval for the p99 by resampling the runs with replacement (seeded: reproducible)."""
    rng = random.Random(seed)
    estimates = sorted(quantile_cont(sorted(rng.choices(values, k=len(values))), 0.99) for _ in range(resamples))
    return quantile_cont(estimates, 0.025), quantile_cont(estimates, 0.975)


def budget_report(con: duckdb.DuckDBPyConnection, by: str = "agent", since=None, until=None) -> dict[str, Any]:
    if by not in GROUPS:
        raise BadInput(f"--by {by!r}: choose one of {', '.join(GROUPS)}")
    window = "($since is null or r.started_at >= $since) and ($until is null or r.started_at < $until)"
    params = {"since": since, "until": until}
    quantiles = ", ".join(
        f"quantile_cont({expr}, [0.5, 0.95, 0.99]) filter (where r.status = 'succeeded') as {name}_q"
        for name, expr in METRICS.items())
    configured = ", ".join(f"mode(r.{column}) as configured_{name}" for name, column in CEILINGS.items())
    groups = records(con, f"""
        select {GROUPS[by]} as key, count(*) as runs, count(*) filter (where r.status = 'succeeded') as succeeded,
               count(*) filter (where r.status = 'budget_exceeded') as budget_stopped, {quantiles}, {configured},
               list(v.steps order by r.run_id) filter (where r.status = 'succeeded') as succeeded_steps
        from runs r join run_view v using (run_id) where {window} group by 1 order by 1""", params)
    progressing = dict(con.execute(f"""
        with stopped as (select r.run_id, {GROUPS[by]} as key from runs r where r.status = 'budget_exceeded' and {window}),
        last_calls as (
            select q.run_id, q.tool_name || ':' || coalesce(q.args_hash, '') as call_hash,
                   row_number() over (partition by q.run_id order by q.step_idx desc, q.call_position desc) as back
            from tool_calls q join stopped using (run_id)
        ),
        progress as (
            select run_id, count(*) = count(distinct call_hash) as progressing
            from last_calls where back <= {PROGRESS_WINDOW} group by run_id
        )
        select s.key, count(*) filter (where coalesce(p.progressing, true)) from stopped s left join progress p using (run_id)
        group by s.key""", params).fetchall())
    kept_going = {}
    for key, run_id in con.execute(f"""
            select {GROUPS[by]}, r.run_id from runs r join run_view v using (run_id)
            where {window} and r.status in ('budget_exceeded', 'timed_out', 'stalled') and v.has_final_answer
            order by 1, 2""", params).fetchall():
        kept_going.setdefault(key, []).append(run_id)
    return {"by": by, "groups": [_group(row, progressing.get(row["key"], 0), kept_going.get(row["key"], []))
                                 for row in groups]}


def _group(row: dict[str, Any], progressing: int, kept_going: list[str]) -> dict[str, Any]:
    group = {"key": row["key"], "runs": row["runs"], "succeeded": row["succeeded"],
             "success_rate": row["succeeded"] / row["runs"] if row["runs"] else None, "metrics": {},
             "recommended": {}, "configured": {}, "flags": []}
    for name in METRICS:
        q = row[f"{name}_q"] or [None, None, None]
        group["metrics"][name] = {"p50": q[0], "p95": q[1], "p99": q[2]}
        if q[2] is not None:
            group["recommended"][name] = math.ceil(q[2]) if name in ("steps", "tokens", "cost_micros") else q[2]
        group["configured"][name] = row[f"configured_{name}"]
    p99_steps, ceiling = group["metrics"]["steps"]["p99"], group["configured"]["steps"]
    if p99_steps is not None and ceiling is not None and ceiling > 2 * p99_steps:
        group["flags"].append({"flag": "no_budget", "detail": f"max_steps {ceiling} is above twice the p99 "
                                                              f"({p99_steps:g}): set high enough to be no budget"})
    stopped = row["budget_stopped"]
    if row["runs"] and stopped / row["runs"] >= TOO_TIGHT_SHARE and progressing > stopped / 2:
        group["flags"].append({"flag": "too_tight", "detail": f"{stopped} of {row['runs']} runs stopped by a budget, "
                                                              f"{progressing} of them still making progress"})
    if kept_going:
        group["flags"].append({"flag": "answered_then_kept_going", "runs": kept_going,
                               "detail": f"{len(kept_going)} run(s) answered, then ran on until a stop"})
    steps = row["succeeded_steps"] or []
    if len(steps) < SMALL_SAMPLE:
        interval = bootstrap_p99([float(s) for s in steps]) if len(steps) >= 2 else None
        group["flags"].append({"flag": "small_sample", "succeeded_runs": len(steps), "p99_steps_interval": interval,
                               "detail": f"only {len(steps)} succeeded runs: the p99 is uncertain"
                                         + (f" (95 % interval {interval[0]:.1f} to {interval[1]:.1f} steps)" if interval else "")})
    return group


def emit(report: dict[str, Any], style: str) -> str:
    """A ready-to-paste limits snippet of the recommended ceilings."""
    names = {"steps": "max_steps", "tokens": "max_tokens", "wall_seconds": "max_wall_seconds", "cost_micros": "max_cost_micros"}
    groups = [g for g in report["groups"] if g["recommended"]]
    if style == "toml":
        blocks = []
        for g in groups:
            lines = [f'[budgets."{g["key"]}"]'] + [f"{names[k]} = {_number(v)}" for k, v in g["recommended"].items()]
            blocks.append("\n".join(lines))
        return "# recommended ceilings: p99 of succeeded runs (reconcile budgets)\n" + "\n\n".join(blocks) + "\n"
    if style == "yaml":
        lines = ["# recommended ceilings: p99 of succeeded runs (reconcile budgets)", "budgets:"]
        for g in groups:
            lines.append(f'  "{g["key"]}":')
            lines += [f"    {names[k]}: {_number(v)}" for k, v in g["recommended"].items()]
        return "\n".join(lines) + "\n"
    if style == "python":
        body = ",\n".join(f'    "{g["key"]}": {{' + ", ".join(f'"{names[k]}": {_number(v)}' for k, v in g["recommended"].items())
                          + "}" for g in groups)
        return "# recommended ceilings: p99 of succeeded runs (reconcile budgets)\nBUDGETS = {\n" + body + ",\n}\n"
    raise BadInput(f"--emit {style!r}: choose toml, yaml or python")


def _number(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:.3f}"


def stop_reason_rates(con: duckdb.DuckDBPyConnection, by: str = "agent", since=None, until=None) -> list[dict[str, Any]]:
    """Per group and day, the share of each status, and its change from the group's previous day."""
    window = "($since is null or r.started_at >= $since) and ($until is null or r.started_at < $until)"
    return records(con, f"""
        with counts as (
            select {GROUPS[by]} as key, strftime(r.started_at, '%Y-%m-%d') as day, r.status, count(*) as runs
            from runs r where {window} group by all
        ),
        shares as (
            select *, runs / sum(runs) over (partition by key, day) as share from counts
        )
        select *, share - lag(share) over (partition by key, status order by day) as change
        from shares order by key, day, status""", {"since": since, "until": until})


def latency_and_size(con: duckdb.DuckDBPyConnection, config=None) -> dict[str, list[dict[str, Any]]]:
    """p50 / p95 / p99 of step time per kind, model and tool; p99 of tool result size per tool.

    The share above the bound counts only the results whose run has a bound (its own, configured,
    or its harness's documented one); with none known it is NULL, not 0.
    """
    from .checks.settings import create_run_settings
    from .config import Config

    create_run_settings(con, config or Config())
    latency = records(con, """
        select kind, coalesce(case when kind = 'tool' then tool_name else price_model end, kind) as what, count(*) as steps,
               quantile_cont(ms, [0.5, 0.95, 0.99]) as ms_quantiles
        from step_view where ms is not null group by all order by 1, 2""")
    sizes = records(con, """
        select s.tool_name, count(*) as results, quantile_cont(s.result_tokens, 0.99) as p99_result_tokens,
               count(*) filter (where s.result_tokens > b.result_bound_tokens)
                   / nullif(count(*) filter (where b.result_bound_tokens is not null), 0) as share_above_bound
        from steps s join run_settings b using (run_id) where s.kind = 'tool' and s.result_tokens is not null
        group by 1 order by 1""")
    return {"latency": latency, "result_size": sizes}
