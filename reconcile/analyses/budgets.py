"""Budgets from evidence: ``reconcile budgets``.

"Set the ceiling at roughly the 99th percentile of steps taken by runs that succeeded, not at a
round number." Per group (agent, task class or model): runs, success rate, and the p50 / p95 / p99
of steps, total tokens, wall seconds and cost over the *succeeded* runs; the recommended ceilings,
which count the runs a ceiling cut while they were still making progress and never lower a
ceiling the evidence cannot clear (``reconcile.analyses.ceilings``), each with the succeeded runs it would
have stopped; the ceiling the journals say the harness ran with; and flags:

- ``no_budget``: the configured step ceiling is above twice the p99 — set high enough to be none;
- ``too_tight``: at least ``TOO_TIGHT_SHARE`` of the runs were stopped by a budget, and most of
  those were still making progress (no call repeated in their last calls) when stopped;
- ``answered_then_kept_going``: runs that had answered and ran on (``final_answer_not_overwritten``);
- ``small_sample``: fewer than 100 succeeded runs — the p99 comes with a bootstrap interval.

Quantiles are exact: DuckDB's ``quantile_cont`` (linear interpolation between the two nearest
ranks, like numpy's default), never an approximation; the bootstrap uses the same interpolation.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from reconcile.analyses import ceilings, fence
from reconcile.analyses.fence import kept as kept_peaks
from reconcile.analyses.ceilings import CEILINGS
from reconcile.analyses.resample import P99_INTERVAL, p99_interval
from reconcile.analyses.costs import cost_source
from reconcile.config.settings import create_run_settings
from reconcile.errors import BadInput
from reconcile.money import plural, usd
from reconcile.sheets import shown
from reconcile.when import RUNS_IN_WINDOW, Window, bucket, night_sql
from reconcile.engine import Engine

GROUPS = {"agent": "coalesce(r.agent, '(none)')", "task_class": "coalesce(r.task_class, '(none)')",
          "model": "coalesce(r.model, '(none)')"}
SMALL_SAMPLE = 100
TOO_TIGHT_SHARE = 0.05  # of a group's runs stopped by a budget before it can be "too tight"
def budget_report(engine: Engine, by: str = "agent", window: Window | None = None,
                  source: str = "auto", unit: str = "run", config=None) -> dict[str, Any]:
    """Per group: runs (or agent trees, ``unit="tree"``: seed 001's one budget for the root and its sub-agents),
    success rate, and for each ceiling the evidence and the recommendation, with the succeeded runs a fence
    holding it would have stopped (``config``: whose rules each run's fence follows, ``reconcile.toml``'s)."""
    from reconcile.config import Config

    if by not in GROUPS:
        raise BadInput(f"--by {by!r}: choose one of {', '.join(GROUPS)}")
    if unit not in ceilings.UNITS:
        raise BadInput(f"--unit {unit!r}: choose one of {', '.join(ceilings.UNITS)}")
    source = cost_source(source)
    params = (window or Window()).params
    ceilings.stage_runs(engine, GROUPS[by], RUNS_IN_WINDOW, {**params, "source": source}, unit)
    groups = engine.records(f"""
        select key, count(*) as runs, count(*) filter (where succeeded) as succeeded,
               count(*) filter (where status = 'budget_exceeded') as budget_stopped,
               count(*) filter (where censored) as progressing,
               list(distinct cut_by order by cut_by) filter (where censored and cut_by is not null) as cut_by,
               {", ".join(f"mode(configured_{name}) as configured_{name}" for name in CEILINGS)}
        from _budget_runs group by 1 order by 1""")
    # a small sample's p99 interval, computed where its rows are (on Spark, the executors): only the interval returns
    intervals = {r["key"]: r for r in engine.per_group(
        f"""select key, run_id, steps from _budget_runs where succeeded and key in
            (select key from _budget_runs group by key having count(*) filter (where succeeded) < {SMALL_SAMPLE})""",
        "key", p99_interval, P99_INTERVAL)}
    metrics = ceilings.measured(engine)
    found = ceilings.evidence(engine, metrics)
    kept_going = {}
    for key, run_id in engine.rows("""select key, run_id from _budget_runs where answered
                                      and status in ('budget_exceeded', 'timed_out', 'stalled') order by 1, 2"""):
        kept_going.setdefault(key, []).append(run_id)
    report = [_group(row, found, kept_going.get(row["key"], []), intervals.get(row["key"])) for row in groups]
    # the fence walk (each run, or each tree as one budget) the checks and reconcile replay read too
    create_run_settings(engine, config or Config())
    recommended = {(g["key"], m): r["value"] for g in report for m, r in g["recommendation"].items()
                   if r["value"] is not None}
    if unit == "run" and kept_peaks.usable(engine):  # each run's peaks kept: only the runs changed are walked
        stops = ceilings.would_stop(engine, recommended, metrics, kept_peaks.peaks_relation(engine))
    else:
        fence.stage_steps(engine, RUNS_IN_WINDOW, params)
        fence.stage_ledger(engine, unit)
        stops = ceilings.would_stop(engine, recommended, metrics)
        fence.drop_staging(engine)
    for g in report:
        for metric, recommendation in g["recommendation"].items():
            stopped = stops.get((g["key"], metric), {"count": 0, "runs": []})
            recommendation["would_stop"] = stopped
            # a ceiling that would have stopped a run known to succeed is not one to apply as it is: said, and
            # left out of --emit's snippet (commented, with the reason)
            recommendation["apply"] = stopped["count"] == 0
            if stopped["count"]:
                recommendation["not_applied"] = (
                    f"do not apply as is: {emitted_name(metric)} = {_shown_value(metric, recommendation['value'])} would "
                    f"have stopped {stopped['count']} succeeded run(s) ({', '.join(stopped['runs'][:3])}"
                    f"{' …' if stopped['count'] > 3 else ''}); reconcile replay shows where")
    engine.run("drop table _budget_runs")
    return {"by": by, "unit": unit, "cost_source": source, "groups": report}


def _group(row: dict[str, Any], found: dict, kept_going: list[str], interval: dict | None) -> dict[str, Any]:
    group = {"key": row["key"], "runs": row["runs"], "succeeded": row["succeeded"],
             "success_rate": row["succeeded"] / row["runs"] if row["runs"] else None, "metrics": {},
             "recommended": {}, "recommendation": {}, "configured": {}, "flags": []}
    stopped, progressing = row["budget_stopped"], row["progressing"]
    too_tight = bool(row["runs"] and stopped / row["runs"] >= TOO_TIGHT_SHARE and progressing > stopped / 2)
    for name in CEILINGS:
        evidence = found.get((row["key"], name))
        q = (evidence or {}).get("naive") or [None, None, None]
        configured = row[f"configured_{name}"]
        configured = (int(configured) if configured is not None and name != "wall_seconds" else configured)
        group["metrics"][name] = {"p50": q[0], "p95": q[1], "p99": q[2],
                                  "censored": (evidence or {}).get("censored", 0),
                                  "succeeded_runs": (evidence or {}).get("succeeded", 0),
                                  "cut_by_ceiling": (evidence or {}).get("cut_by_ceiling", 0)}
        group["configured"][name] = configured
        if name in ceilings.OPTIONAL and configured is None:
            continue  # seed 000's prompt and completion ceilings: recommended where the harness keeps them
        recommendation = ceilings.recommend(name, evidence, configured, too_tight)
        if recommendation is not None and name == "steps" and recommendation["value"] is not None:
            recommendation["allows"] = (f"max_steps = {recommendation['value']} allows {recommendation['value']} charged "
                                        "model calls, plus the tool-free wrap-up turn of a harness that takes one")
        if recommendation is not None:
            group["recommendation"][name] = recommendation
            group["recommended"][name] = recommendation["value"]
    p99_steps, ceiling = group["metrics"]["steps"]["p99"], group["configured"]["steps"]
    if p99_steps is not None and ceiling is not None and ceiling > 2 * p99_steps:
        group["flags"].append({"flag": "no_budget", "detail": f"max_steps {ceiling} is above twice the p99 "
                                                              f"({shown(p99_steps, 'count')}): set high enough to be no budget"})
    if too_tight:
        named = ", ".join(CEILINGS[c] for c in row["cut_by"] or []) or "a budget"
        group["flags"].append({"flag": "too_tight", "ceilings": [CEILINGS[c] for c in row["cut_by"] or []],
                               "detail": f"{stopped} of {plural(row['runs'], 'run')} stopped by a budget, {progressing} of them "
                                         f"still making progress (cut by {named})"})
    if kept_going:
        group["flags"].append({"flag": "answered_then_kept_going", "runs": kept_going,
                               "detail": f"{len(kept_going)} run(s) answered, then ran on until a stop"})
    if row["succeeded"] < SMALL_SAMPLE:
        bounds = (interval["low"], interval["high"]) if interval and interval["low"] is not None else None
        group["flags"].append({"flag": "small_sample", "succeeded_runs": row["succeeded"], "p99_steps_interval": bounds,
                               "detail": f"only {row['succeeded']} succeeded runs: the p99 is uncertain"
                                         + (f" (95 % interval {bounds[0]:.1f} to {bounds[1]:.1f} steps)" if bounds else "")})
    return group


def emit(report: dict[str, Any], style: str, replayed: dict[str, dict] | None = None) -> str:
    """A ready-to-paste limits snippet of the recommended ceilings; a lower bound says so in a comment, and
    ``replayed`` (per group, ``reconcile replay`` of these ceilings) what each group's would have done."""
    groups = [g for g in report["groups"] if g["recommended"]]
    header = "recommended ceilings: p99 of succeeded runs, counting runs cut while progressing (reconcile budgets)"
    if report.get("unit") == "tree":
        header += "; each an agent tree's shared budget (limits.scope = tree)"
    header += f"; groups by {report['by']}"
    said_of = {g["key"]: consequence(replayed[g["key"]]) for g in groups if replayed and g["key"] in replayed}

    def note(g, k, mark):
        return f"  {mark} " + "; ".join(evidence_notes(g, k))

    def entry(g, k, v, pattern):
        """One ceiling's line; one that would stop a known success is written commented out, with the reason."""
        line = pattern.format(name=emitted_name(k), value=emitted_value(k, v)) + note(g, k, "#")
        recommendation = g["recommendation"][k]
        return line if recommendation.get("apply", True) else f"# {line}; {recommendation['not_applied']}"

    if style == "toml":
        blocks = []
        for g in groups:
            lines = [f'[budgets."{g["key"]}"]', *_said(said_of, g, "")] + [entry(g, k, v, "{name} = {value}")
                                                                            for k, v in g["recommended"].items()]
            blocks.append("\n".join(lines))
        return f"# {header}\n" + "\n\n".join(blocks) + "\n"
    if style == "yaml":
        lines = [f"# {header}", "budgets:" if groups else "budgets: {}"]
        for g in groups:
            entries = ["    " + entry(g, k, v, "{name}: {value}") for k, v in g["recommended"].items()]
            # a group whose every ceiling is commented out is an empty mapping, as TOML and Python write it (YAML
            # reads a key with nothing under it as null)
            empty = all(line.lstrip().startswith("#") for line in entries)
            lines += [f'  "{g["key"]}":' + (" {}" if empty else ""), *_said(said_of, g, "    "), *entries]
        return "\n".join(lines) + "\n"
    if style == "python":
        body = "\n".join("".join(f"{line}\n" for line in _said(said_of, g, "    "))
                         + f'    "{g["key"]}": {{\n' + "".join("        " + entry(g, k, v, '"{name}": {value},') + "\n"
                                                              for k, v in g["recommended"].items()) + "    },"
                         for g in groups)
        return f"# {header}\nBUDGETS = {{\n" + body + "\n}\n"
    raise BadInput(f"--emit {style!r}: choose toml, yaml or python")


def evidence_notes(group: dict[str, Any], metric: str) -> list[str]:
    """What an emitted value rests on: its sample (succeeded runs), the runs cut while progressing, and the
    flags that bear on it — so ``max_steps = 2`` from one run never reads like a measured ceiling."""
    measured = group["metrics"][metric]
    sample = measured.get("succeeded_runs", group["succeeded"])
    said = [f"from {sample} succeeded run{'' if sample == 1 else 's'}"]
    if measured["censored"]:
        said.append(f"{measured['censored']} cut while progressing")
    if group["recommendation"][metric]["at_least"]:
        said.append("at least: observe a night before trusting it")
    for flag in group["flags"]:
        name = flag["flag"]
        if name == "small_sample":
            said.append(f"small_sample (under {SMALL_SAMPLE}: the p99 is uncertain)")
        elif name == "too_tight" and CEILINGS[metric] in flag.get("ceilings", []):
            said.append("too_tight")
        elif name == "no_budget" and metric == "steps":
            said.append("no_budget (the configured max_steps is above twice the p99)")
        elif name == "answered_then_kept_going":
            said.append(f"answered_then_kept_going ({len(flag['runs'])} run(s))")
    if metric == "steps":
        said.append("charged model calls; a wrap-up turn comes on top")
    return said


def consequence(group: dict[str, Any]) -> str:
    """One comment line: what a group's recommended ceilings would have done to these runs (reconcile replay)."""
    said = (f"replayed on these {plural(group['runs'], 'run')}: {group['stopped_earlier']} stopped earlier, "
            f"{group['successes_lost']} success(es) lost, {usd(group['spend_saved_micros'])} saved on runs that "
            f"did not succeed, {usd(group['spend_lost_micros'])} lost with the successes cut")
    if group["runs_on"]:
        said += f"; {plural(group['runs_on'], 'run')} its own limits stopped would run on"
    return said


def _said(said_of: dict[str, str], group: dict[str, Any], indent: str) -> list[str]:
    return [f"{indent}# {said_of[group['key']]}"] if group["key"] in said_of else []


def _number(value: float | int) -> str:
    return str(value) if isinstance(value, int) else f"{value:g}"


def emitted_name(metric: str) -> str:
    """A ceiling's name as people set it: ``max_cost_usd`` in dollars (the table, JSON and --emit alike), else its own."""
    return "max_cost_usd" if metric == "cost_micros" else CEILINGS[metric]


def emitted_value(metric: str, value: float | int) -> str:
    """A ceiling's value in the unit :func:`emitted_name` names: dollars for spend (``2.4``), else as it is."""
    if metric == "cost_micros":
        return format((Decimal(int(value)) / 1_000_000).normalize(), "f")
    return _number(value)


def _shown_value(metric: str, value: float | int) -> str:
    if metric == "cost_micros":
        return usd(int(value))
    return f"{value:,.1f}" if metric == "wall_seconds" else f"{int(value):,}"


def stop_reason_rates(engine: Engine, by: str = "agent", window: Window | None = None,
                      period: str = "day") -> list[dict[str, Any]]:
    """Per group and day (or ``night``: noon to noon) of the zone ``use_zone`` set, each status's share and its
    change from the period before. A night is the unit of an overnight loop: days would compare its two halves."""
    when = night_sql("r.started_at") if period == "night" else bucket("r.started_at", period)
    return engine.records(f"""
        with counts as (
            select {GROUPS[by]} as key, {when} as day, r.status, count(*) as runs
            from runs r where {RUNS_IN_WINDOW} group by all
        ),
        shares as (
            select *, runs / sum(runs) over (partition by key, day) as share from counts
        )
        select *, share - lag(share) over (partition by key, status order by day) as change
        from shares order by key, day, status""", (window or Window()).params)


def latency_and_size(engine: Engine, config=None,
                     window: Window | None = None) -> dict[str, list[dict[str, Any]]]:
    """p50 / p95 / p99 of step time per kind, model and tool; p99 of tool result size per tool.

    Model calls and tool calls only: an event (a compaction, a note) is not a call and takes no time of its own.

    Over the steps of the runs started in ``window``, as every other section of ``budgets``
    (a run without a start time is in no window, only in the unbounded one). The share above the bound counts only the results whose run has a bound (its own, configured,
    or its harness's documented one); with none known it is NULL, not 0.
    """
    from reconcile.config.settings import create_run_settings
    from reconcile.config import Config

    create_run_settings(engine, config or Config())
    window = window or Window()
    params: dict | None = window.params
    steps_in = f"run_id in (select r.run_id from runs r where {RUNS_IN_WINDOW})"
    if window.since is None and window.until is None:
        steps_in, params = "run_id is not null", None  # every step, runs without a start time included
    latency = engine.records(f"""
        select kind, coalesce(case when kind = 'tool' then tool_name else price_model end, kind) as what, count(*) as steps,
               quantile_cont(ms, [0.5, 0.95, 0.99]) as ms_quantiles
        from step_view where ms is not null and kind <> 'event' and {steps_in} group by all order by 1, 2""", params)
    sizes = engine.records(f"""
        select s.tool_name, count(*) as results, quantile_cont(s.result_tokens, 0.99) as p99_result_tokens,
               count(*) filter (where s.result_tokens > b.result_bound_tokens)
                   / nullif(count(*) filter (where b.result_bound_tokens is not null), 0) as share_above_bound
        from steps s join run_settings b using (run_id)
        where s.kind = 'tool' and s.result_tokens is not null and s.{steps_in}
        group by 1 order by 1""", params)
    return {"latency": latency, "result_size": sizes}
