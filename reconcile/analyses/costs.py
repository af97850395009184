"""What the runs cost, and why: ``reconcile cost``.

All money is integer micro-dollars summed in SQL (exact; no float sums). Per group: the cost (by
the chosen source, below), what reconcile's own prices make of the same calls, the uncached
counterfactual (every input token at the input price) and the savings the cache made, the cache
hit rate (cache reads / all input), the catalogue tax (tool schemas re-sent on every call, billed
as each call billed them) and its share, the harness's own cost beside ours, and what could not
be priced. Beside the groups: cost per *completed* task (a group's spend / its succeeded runs,
``money.cost_per_completed_task``) by agent, task class, model and limits, and the spend on runs
that failed, stalled or hit a budget.

Cost sources (``--cost-source``, like ccusage's ``--mode``): ``ours`` prices every call from
its tokens; ``harness`` takes what the harness recorded (its ledger, else its steps' own costs:
the native ledger, SWE-agent's model stats, Langfuse cost details); ``auto`` (the default) uses
ours for runs we can price completely and the harness's figure for the others, and says which
runs took it. Unknown money is never $0: a group with nothing known has cost ``None``, and a
partial sum says what it leaves out (unpriced tokens, calls without usage, runs without a cost).
"""

from __future__ import annotations

import copy
from enum import StrEnum
from typing import Any


from reconcile.analyses.coverage import Coverage
from reconcile.errors import BadInput
from reconcile.money import cost_per_completed_task, none_completed, plural
from reconcile.store import frozen_views
from reconcile.when import RUNS_IN_WINDOW, TIME_GROUPS, Window, bucket
from reconcile.engine import Engine


class CostSource(StrEnum):
    """Whose figure a run's cost is (``--cost-source``): see ``SOURCE_TEXT``."""

    AUTO = "auto"
    OURS = "ours"
    HARNESS = "harness"


SOURCES = tuple(source.value for source in CostSource)


def cost_source(value: str) -> str:
    """``value`` as a cost source; the one place an unknown one is refused, for the CLI and the API alike."""
    try:
        return CostSource(value).value
    except ValueError:
        raise BadInput(f"--cost-source {value!r}: choose one of {', '.join(SOURCES)}") from None


SOURCE_TEXT = {"auto": "reconcile's prices where every call could be priced, else the harness's own record",
               "ours": "reconcile's prices of every call", "harness": "the harness's own record"}
GROUPS = {  # (key over a run's kept rows by model (run_model_totals s) and its run, key over a run alone); days,
    # weeks and months in the chosen zone: a run's start, else (a run with no start of its own) each step's
    **{period: (f"coalesce({bucket('coalesce(r.started_at, s.step_started_at)', period)}, '(no date)')",
                f"coalesce({bucket('r.started_at', period)}, '(no date)')") for period in TIME_GROUPS},
    "agent": ("coalesce(r.agent, '(none)')", "coalesce(r.agent, '(none)')"),
    "model": ("coalesce(s.price_model, '(none)')", "coalesce(r.model, '(none)')"),
    "task_class": ("coalesce(r.task_class, '(none)')", "coalesce(r.task_class, '(none)')"),
    "run": ("r.run_id", "r.run_id"),
    # an agent tree (seed 001's shared budget): the root of each run's tree
    "tree": ("(select v.root_run_id from run_view v where v.run_id = r.run_id)",
             "(select v.root_run_id from run_view v where v.run_id = r.run_id)"),
}
# The limits a run declared, those it declared only ("steps=60 spend=$5.00"); none: "no limits recorded".
LIMITS = ("coalesce(nullif(concat_ws(' ', 'steps=' || r.max_steps::varchar, 'tokens=' || r.max_tokens::varchar, "
          "'wall=' || r.max_wall_seconds::varchar || 's', 'spend=$' || printf('%.2f', r.max_cost_micros / 1000000)), ''), "
          "'no limits recorded')")
WASTE_STATUSES = ("failed", "stalled", "budget_exceeded", "timed_out")
# spent on runs a person stopped or left unfinished: not waste a rule could have saved, named beside it
UNFINISHED_STATUSES = ("cancelled", "abandoned")
WINDOW = RUNS_IN_WINDOW
# A group of runs' chosen costs (``chosen_costs`` as ``c``) by the one rule: exact where every run's is, a range where
# every run is bounded, else at least the floor -- the runs' unrounded figures added and rounded once.
RUN_SUMS = """case when bool_and(c.complete) then round(sum(c.cost_low_unrounded)) end::bigint as cost_micros,
               round(coalesce(sum(c.cost_low_unrounded), 0))::bigint as cost_low_micros,
               case when count(c.cost_high_unrounded) = count(*) then round(coalesce(sum(c.cost_high_unrounded), 0))
                    end::bigint as cost_high_micros,
               coalesce(bool_and(c.complete), true) as complete,
               count(*) filter (where not c.complete) as runs_not_exact"""

BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")


def _bucket_sum(bucket: str) -> str:
    """A token bucket summed over a group's kept rows (``s``: run_model_totals; ``rv`` their runs' ``run_view`` rows):
    unknown (NULL, never 0) where a call leaves the bucket out although it records usage, or where the run's own total
    of it is unknown (``run_view``: a call leaves it out, or the run records no usage at all, as SWE-agent's)."""
    unknown = f"case when rv.{bucket} is null then s.{bucket}_missing else s.{bucket}_left_out end"
    return f"case when coalesce(sum({unknown}), 0) = 0 then coalesce(sum(s.{bucket}), 0) end::bigint as {bucket}"


_TOKENS = f"""
    count(distinct r.run_id) as runs,
    -- a success is credited where the run answered (the final answer, else its last model call: run_model_totals'
    -- credited): under --by model a run that fell back counts as a run of both models and a success of the one that
    -- finished it, never of both
    count(distinct r.run_id) filter (where r.status = 'succeeded' and s.credited) as succeeded,
    -- a task is an agent tree: its root run (a sub-agent's run is part of its root's task, never one of its own)
    count(distinct r.run_id) filter (where rv.root_run_id = r.run_id) as tasks,
    count(distinct r.run_id) filter (where rv.root_run_id = r.run_id and r.status = 'succeeded' and s.credited)
        as completed_tasks,
    coalesce(sum(s.model_steps), 0)::bigint as model_calls,
    {", ".join(_bucket_sum(bucket) for bucket in BUCKETS)},
    -- reconcile's own prices of the group's calls, by the one rule: exact, a range, or at least (summed unrounded)
    case when coalesce(sum(s.model_steps - s.exact_steps), 0) = 0
         then round(sum(s.cost_low_unrounded)) end::bigint as priced_micros,
    round(coalesce(sum(s.cost_low_unrounded), 0))::bigint as priced_low_micros,
    case when coalesce(sum(s.model_steps - s.bounded_steps), 0) = 0
         then round(coalesce(sum(s.cost_high_unrounded), 0)) end::bigint as priced_high_micros,
    -- the same calls with no cache: exact where every call's is known, else at least what is known
    case when coalesce(sum(s.uncached_unknown_steps), 0) = 0
         then coalesce(sum(s.uncached_cost_micros), 0) end::bigint as uncached_cost_micros,
    coalesce(sum(s.uncached_cost_micros), 0)::bigint as uncached_cost_low_micros,
    sum(s.catalogue_tax_tokens)::bigint as catalogue_tax_tokens,  -- NULL: no run here records its catalogue
    case when coalesce(sum(s.catalogue_tax_unknown_steps), 0) = 0
         then sum(s.catalogue_tax_micros) end::bigint as catalogue_tax_micros,
    sum(s.catalogue_tax_micros)::bigint as catalogue_tax_low_micros,
    sum(s.harness_cost_micros)::bigint as harness_cost_micros,
    -- over the calls that have both figures (named so: "difference from the harness's own figure")
    sum(s.harness_difference_micros)::bigint as harness_difference_micros,
    -- a call whose model nobody recorded is unpriced too: it is named, never a NULL in the list
    list(distinct coalesce(s.price_model, '(model not recorded)')
         order by coalesce(s.price_model, '(model not recorded)')) filter (where s.unpriced_steps > 0) as unpriced_models
"""

_COST = """
    -- the one rule: exact where every line is, else low .. high where every line is bounded, else at least low
    case when coalesce(sum(exact), 0) = coalesce(sum(lines), 0) then round(coalesce(sum(low), 0)) end::bigint
        as cost_micros,
    round(coalesce(sum(low), 0))::bigint as cost_low_micros,
    case when coalesce(sum(bounded), 0) = coalesce(sum(lines), 0) then round(coalesce(sum(high), 0)) end::bigint
        as cost_high_micros,
    coalesce(sum(unsplit), 0)::bigint as calls_with_unknown_split,
    sum(harness_micros)::bigint as harness_sourced_micros,
    count(distinct run_id) filter (where harness_micros is not null) as harness_sourced_runs,
    coalesce(sum(unpriced), 0)::bigint as unpriced_steps,
    coalesce(sum(unpriced_tokens), 0)::bigint as unpriced_tokens,
    coalesce(sum(no_usage), 0)::bigint as calls_without_usage,
    coalesce(sum(partial_usage), 0)::bigint as calls_with_unknown_buckets,
    coalesce(sum(no_cost), 0)::bigint as runs_without_cost,
    count(distinct run_id) filter (where below_floor) as harness_below_floor_runs
"""


def _lines(by: str) -> str:
    """Cost lines: a run's model calls of one key, costed by our prices (``run_model_totals``: how many calls, how
    many exact and bounded, their floor and ceiling unrounded), or a whole run costed by its harness (one line); a
    group adds them and rounds once."""
    step_key, run_key = GROUPS[by]
    return f"""lines as (
    select s.run_id, {step_key} as key, s.model_steps as lines, s.exact_steps as exact, s.bounded_steps as bounded,
           s.cost_low_unrounded as low, s.cost_high_unrounded as high, s.unsplit_steps as unsplit,
           null::bigint as harness_micros, s.unpriced_steps as unpriced, s.unpriced_tokens,
           s.calls_without_usage as no_usage, s.calls_with_unknown_buckets as partial_usage, 0 as no_cost,
           c.harness_below_floor as below_floor
    from run_model_totals s join runs r using (run_id) join chosen_costs c using (run_id)
    where c.asked = $source and c.source = 'ours' and s.model_steps > 0 and {WINDOW}
    union all
    select r.run_id, {run_key}, 1, (c.harness_micros is not null)::int, (c.cost_high_unrounded is not null)::int,
           c.cost_low_unrounded, c.cost_high_unrounded, 0, c.harness_micros, 0, 0, 0, 0,
           (c.harness_micros is null)::int, c.harness_below_floor
    from runs r join chosen_costs c using (run_id) where c.asked = $source and c.source = 'harness' and {WINDOW}
)"""


def cost_report(engine: Engine, by: str = "model", window: Window | None = None,
                source: str = "auto") -> dict[str, Any]:
    """The cost of the runs started in ``window`` (all runs without one), grouped ``by`` day, agent, model,
    task_class or run."""
    return cost_reports(engine, [by], window, source)[by]


def cost_reports(engine: Engine, bys: list[str], window: Window | None = None,
                 source: str = "auto") -> dict[str, dict[str, Any]]:
    """``cost_report`` for each grouping in ``bys``, the parts no grouping changes (the total, the cost per
    completed task, the spend by status, the price lists) computed once for all of them (the finance report
    asks for four groupings: each would otherwise scan the priced steps for the same total again)."""
    unknown = [by for by in bys if by not in GROUPS]
    if unknown:
        raise BadInput(f"--by {unknown[0]!r}: choose one of {', '.join(GROUPS)}")
    source = cost_source(source)
    window = window or Window()
    with frozen_views(engine, steps=False):  # a dozen questions to the runs' kept totals: their views once
        shared = _shared(engine, bys[0], window, source)
        return {by: {"by": by, "cost_source": source, "groups": _groups(engine, by, window, source),
                     **copy.deepcopy(shared)} for by in bys}  # (a copy each: a reader may change its report)


def _base(window: Window) -> str:
    return f"from run_model_totals s join runs r using (run_id) join run_view rv using (run_id) where {WINDOW}"


# Runs with no step at all (a sample cancelled before its first call): in no step's group, yet runs of the window,
# each costing exactly nothing -- counted under their own key, never left out of the report.
_STEPLESS = """count(*) as runs, count(*) filter (where r.status = 'succeeded') as succeeded,
    count(*) filter (where rv.root_run_id = r.run_id) as tasks,
    count(*) filter (where rv.root_run_id = r.run_id and r.status = 'succeeded') as completed_tasks"""


def _stepless(engine: Engine, key: str, window: Window) -> dict[str, dict[str, Any]]:
    return {row["key"]: row for row in engine.records(
        f"""select {key} as key, {_STEPLESS} from runs r join run_view rv using (run_id)
            where not exists (select 1 from run_model_totals s where s.run_id = r.run_id) and {WINDOW} group by 1""",
        window.params)}


def _with_stepless(tokens: dict[str, dict], stepless: dict[str, dict]) -> dict[str, dict]:
    for key, row in stepless.items():
        if key in tokens:
            for name in ("runs", "succeeded", "tasks", "completed_tasks"):
                tokens[key][name] = (tokens[key][name] or 0) + row[name]
        else:  # no call: no tokens, nothing priced, no catalogue recorded
            tokens[key] = {**row, "model_calls": 0, **dict.fromkeys(BUCKETS, 0), "priced_micros": 0,
                           "priced_low_micros": 0, "priced_high_micros": 0, "uncached_cost_micros": 0,
                           "uncached_cost_low_micros": 0, "catalogue_tax_tokens": None, "catalogue_tax_micros": None,
                           "catalogue_tax_low_micros": None, "harness_cost_micros": None,
                           "harness_difference_micros": None, "unpriced_models": []}
    return tokens


def _groups(engine: Engine, by: str, window: Window, source: str) -> list[dict[str, Any]]:
    params = {**window.params, "source": source}
    tokens = {row["key"]: row for row in engine.records(
        f"select {GROUPS[by][0]} as key, {_TOKENS} {_base(window)} group by 1", window.params)}
    tokens = _with_stepless(tokens, _stepless(engine, GROUPS[by][1], window))
    costs = {row["key"]: row for row in engine.records(
        f"with {_lines(by)} select key, {_COST} from lines group by 1", params)}
    return [_derive(key, tokens.get(key), costs.get(key), source) for key in sorted(set(tokens) | set(costs))]


def _shared(engine: Engine, by: str, window: Window, source: str) -> dict[str, Any]:
    """What a cost report holds whatever it is grouped by (``by`` only names the lines summed whole for the total)."""
    params = {**window.params, "source": source}
    counted = _with_stepless({"total": engine.records(f"select {_TOKENS} {_base(window)}", window.params)[0]},
                             _stepless(engine, "'total'", window))["total"]
    total = _derive("total", counted, engine.records(f"with {_lines(by)} select {_COST} from lines", params)[0], source)
    # A task is an agent tree (a run and every sub-agent under it: Claude Code's subagents, seed 001's tree): its
    # root counts once, under the root's agent, class, model and limits, and the tree's spend is the task's.
    per_task = engine.records(f"""
        select coalesce(r.agent, '(none)') as agent, coalesce(r.task_class, '(none)') as task_class,
               coalesce(r.model, '(none)') as model, {LIMITS} as limits,
               count(*) filter (where m.run_id = r.run_id) as runs,
               count(*) filter (where m.run_id = r.run_id and r.status = 'succeeded') as succeeded,
               {RUN_SUMS},
               sum(case when c.source = 'ours' then c.calls_with_unknown_split else 0 end)::bigint
                   as calls_with_unknown_split,
               count(*) filter (where c.source = 'harness') as harness_sourced_runs
        from runs m join chosen_costs c on c.run_id = m.run_id join run_roots t on t.run_id = m.run_id
        join runs r on r.run_id = t.root_run_id
        where c.asked = $source and {WINDOW}
        group by 1, 2, 3, 4 order by 1, 2, 3, 4""", params)
    for row in per_task:
        row["success_rate"] = row["succeeded"] / row["runs"] if row["runs"] else None
        row.update(per_completed_task(row, row["succeeded"]))
        row["no_task_completed"] = none_completed(row["runs"], row["succeeded"])
    waste = engine.records(f"""
        select r.status, count(*) as runs, {RUN_SUMS}
        from runs r join chosen_costs c using (run_id) where c.asked = $source and {WINDOW} group by 1 order by 1""",
        params)
    wasted_rows = [row for row in waste if row["status"] in WASTE_STATUSES]
    other_rows = [row for row in waste if row["status"] not in WASTE_STATUSES]
    wasted, other = summed(wasted_rows), summed(other_rows)
    everything = summed(waste)
    unfinished_rows = [row for row in waste if row["status"] in UNFINISHED_STATUSES]
    unfinished = summed(unfinished_rows)
    unfinished_rest = summed([row for row in waste if row["status"] not in UNFINISHED_STATUSES])
    for row in waste:
        row["share"] = share_of(row, summed([r for r in waste if r is not row]))
    return {"total": total, "cost_per_completed_task": per_task, "spend_by_status": waste,
            "spend_on_failed_stalled_budget_stopped": {
                **wasted, "share": share_of(wasted, other), **{f"share_{k}": v for k, v in share_bounds(wasted, other).items()},
                "spent": everything, "runs": sum(r["runs"] for r in wasted_rows)},
            "spend_on_cancelled_abandoned": {
                **unfinished, "share": share_of(unfinished, unfinished_rest),
                **{f"share_{k}": v for k, v in share_bounds(unfinished, unfinished_rest).items()},
                "runs": sum(r["runs"] for r in unfinished_rows)},
            "prices": price_sources(engine)}


def summed(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Figures of several rows added by the one rule: exact if every one is, bounded if every one is, else at least."""
    lows = [row["cost_low_micros"] for row in rows]
    highs = [row["cost_high_micros"] for row in rows]
    exact = all(row["cost_micros"] is not None for row in rows)
    return {"cost_micros": sum(row["cost_micros"] for row in rows) if exact else None,
            "cost_low_micros": sum(lows), "cost_high_micros": None if None in highs else sum(highs), "complete": exact}


def share_bounds(part: dict[str, Any], rest: dict[str, Any]) -> dict[str, float | None]:
    """The share ``part`` is of ``part`` + ``rest``, as bounds: it grows with the part and shrinks with the rest, so
    the least is the part's floor over it and the rest's ceiling (0 where the rest is unbounded), the most the
    part's ceiling over it and the rest's floor (1 where the part is unbounded)."""
    def ratio(a, b):
        return a / (a + b) if a is not None and b is not None and a + b else (0.0 if a == 0 else None)
    low = ratio(part["cost_low_micros"], rest["cost_high_micros"]) if rest["cost_high_micros"] is not None else 0.0
    high = ratio(part["cost_high_micros"], rest["cost_low_micros"]) if part["cost_high_micros"] is not None else 1.0
    return {"low": low, "high": high}


def share_of(part: dict[str, Any], rest: dict[str, Any]) -> float | None:
    """The share ``part`` is of ``part`` + ``rest`` where both are exact (else None: see ``share_bounds``)."""
    if part["cost_micros"] is None or rest["cost_micros"] is None or not part["cost_micros"] + rest["cost_micros"]:
        return None
    return part["cost_micros"] / (part["cost_micros"] + rest["cost_micros"])


def per_completed_task(row: dict[str, Any], completed: int | None) -> dict[str, Any]:
    """A group's cost per completed task by the one rule: its spend's figure, or bounds, each over the tasks
    completed (None where none was)."""
    return {"cost_per_completed_task_micros": cost_per_completed_task(row.get("cost_micros"), completed),
            "cost_per_completed_task_low_micros": cost_per_completed_task(row.get("cost_low_micros"), completed),
            "cost_per_completed_task_high_micros": cost_per_completed_task(row.get("cost_high_micros"), completed)}


def costliest_runs(engine: Engine, window: Window | None = None, source: str = "auto",
                   limit: int = 10) -> list[dict[str, Any]]:
    """The runs that cost most under ``source`` (a range or a floor by its floor), with where each figure came from."""
    return engine.records(f"""
        select r.run_id, r.agent, r.task_class, r.status, v.steps, c.cost_micros, c.cost_low_micros,
               c.cost_high_micros, c.source, c.complete, c.harness_basis,
               -- what our prices leave out matters only where our prices are the figure
               case when c.source = 'ours' then c.unpriced_tokens else 0 end as unpriced_tokens,
               case when c.source = 'ours' then c.calls_without_usage else 0 end as calls_without_usage,
               case when c.source = 'ours' then c.calls_with_unknown_buckets else 0 end as calls_with_unknown_buckets,
               case when c.source = 'ours' then c.calls_with_unknown_split else 0 end as calls_with_unknown_split
        from runs r join run_view v using (run_id) join chosen_costs c using (run_id)
        where c.asked = $source and c.cost_low_micros > 0 and {WINDOW}
        order by c.cost_low_micros desc, r.run_id limit {int(limit)}""", {**(window or Window()).params, "source": source})


def _derive(key: str, tokens: dict[str, Any] | None, cost: dict[str, Any] | None, source: str) -> dict[str, Any]:
    row = {"key": key, **(tokens or {}), **(cost or {})}
    row["key"] = key
    for name in ("runs", "succeeded", "tasks", "completed_tasks", "model_calls", "unpriced_steps", "unpriced_tokens", "calls_without_usage",
                 "calls_with_unknown_buckets", "calls_with_unknown_split", "runs_without_cost", "harness_sourced_runs",
                 "harness_below_floor_runs"):
        row[name] = row.get(name) or 0
    if tokens is None:  # no step of the group's runs at all: no tokens
        row.update(dict.fromkeys(BUCKETS, 0))
    if cost is None:  # no cost line: no model call was made (and no run's harness figure stands in): exactly $0
        row.update(cost_micros=0, cost_low_micros=0, cost_high_micros=0)
    for name in ("priced", "uncached_cost"):  # no call: exactly nothing
        if not row["model_calls"] and row.get(f"{name}_micros") is None:
            row[f"{name}_micros"] = 0
    inputs = [row[name] for name in BUCKETS[:4]]
    all_input = None if None in inputs else sum(inputs)
    row["cost_source"] = source
    row["cost_complete"] = row["cost_micros"] is not None
    row.update(_savings(row))
    row["success_rate"] = row["completed_tasks"] / row["tasks"] if row["tasks"] else None
    row["cache_hit_rate"] = row["cache_read"] / all_input if all_input else None  # all_input None: unknown
    # a task is an agent tree (tasks, completed_tasks): a session and its subagents are one task, one success; a
    # group of sub-agents' runs only has spend, no task to divide it by
    row.update(per_completed_task(row, row["completed_tasks"] if row["tasks"] else None))
    row["no_task_completed"] = none_completed(row["tasks"], row["completed_tasks"])  # not unknown: unbounded
    priced, tax = row.get("priced_micros"), row.get("catalogue_tax_micros")
    row["catalogue_tax_share"] = tax / priced if priced and tax is not None else None
    row["unpriced_models"] = row.get("unpriced_models") or []
    row["catalogue_recorded"] = row.get("catalogue_tax_tokens") is not None  # False: no run here records its catalogue
    return row


def _savings(row: dict[str, Any]) -> dict[str, Any]:
    """What the cache saved (the uncached counterfactual less our cost of the same calls), by the one rule: exact
    where both are, a range where the counterfactual is exact and our cost bounded, else unknown."""
    uncached, priced = row.get("uncached_cost_micros"), row.get("priced_micros")
    low, high = row.get("priced_low_micros"), row.get("priced_high_micros")
    if uncached is None:
        return {"savings_micros": None, "savings_low_micros": None, "savings_high_micros": None}
    if priced is not None:
        return {"savings_micros": uncached - priced, "savings_low_micros": uncached - priced,
                "savings_high_micros": uncached - priced}
    return {"savings_micros": None, "savings_low_micros": None if high is None else uncached - high,
            "savings_high_micros": None if high is None else uncached - low}


def price_sources(engine: Engine) -> list[dict[str, Any]]:
    """Which price lists priced the steps: the genai-prices snapshot version, override files."""
    # genai-prices records no data date; the newest price change its snapshot knows of dates it
    return engine.records("""select m.source, m.source_version, count(*) as models,
                                  (select max(effective_from) from prices p where p.source = m.source) as newest_price_change
                           from model_prices m where m.source is not null group by all order by 1""")


def run_count_lines(report: dict[str, Any], by: str, found: Coverage) -> list[str]:
    """Why the runs counted here differ from ``reconcile runs``' count, in a line each (none when they agree)."""
    total, listed = report["total"]["runs"], sum(group["runs"] for group in report["groups"])
    lines = []
    if listed > total:
        lines.append(f"{plural(total, 'run')} in all; a run is counted under each {by} it used ({listed:,} in the rows)")
    if found.folded:
        lines.append(f"{found.folded:,} of them are Claude Code sub-agent runs, which reconcile runs folds into "
                     "their sessions")
    undated = found.undated_line()
    return [*lines, *([undated] if undated else [])]
