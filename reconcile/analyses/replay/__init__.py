"""What a limit or a loop detector would have done to past runs: ``reconcile replay``.

Before anyone changes ``max_steps`` from 30 to 16 or switches on a loop detector: which runs would it
have stopped, at which step, with which stop reason, what would it have saved, and which successes
would it have cost? Every run in the window is walked as a fence walks it — the budgets checked
before each model call with the seeds' semantics (seed 001's four ceilings, seed 000's prompt and
completion ceilings and results fingerprint, seed 003's window detector with ``allow_repeat``) — in
set-based SQL over ``step_view`` (``fence.sql``), one candidate at a time.

Per group (agent, task class or model) and candidate:

- **stopped earlier**: runs the candidate cuts before their end; **successes lost**: succeeded runs
  among them (ids and the step); **spend saved** on the others (they failed, stalled or hit a budget
  anyway) and **spend lost** on the successes cut; steps and minutes saved; the stop-reason mix
  before and after; cost per completed task before and after (a wrap-up turn, if the candidate takes
  one, priced as the call it replaces);
- **same stop**: runs a fence stopped that the candidate stops at the same place;
- **ran on**: runs a fence stopped that the candidate would have let go on — what they would then
  have done is not in the journal, so nothing is claimed for them;
- **not judged**: runs where a ceiling could not be judged (a token count, a cost or a time the
  journal does not record) before the cut: the candidate might have stopped them earlier;
- for loop detectors: loops caught (runs that did not succeed), false positives (succeeded runs it
  would have called stalled), and how many charged steps earlier than the budgets alone it stopped.

Spend is each model call's cost by reconcile's prices, else the harness's own price for it; the fence
itself counts spend as the harness did (its own price first), because that is what it enforced.
"""

from __future__ import annotations

from typing import Any


from reconcile.analyses.budgets import GROUPS, budget_report
from reconcile.analyses.coverage import require_runs
from reconcile.errors import BadInput
from reconcile.money import cost_per_completed_task, none_completed
from reconcile.when import RUNS_IN_WINDOW, Window
from reconcile.analyses.replay.candidates import Candidate, as_run, from_budgets, from_file, from_options
from reconcile.analyses.fence import drop_staging
from reconcile.analyses.replay.fence import grace, prepare, replay_candidate
from reconcile.analyses.replay.summary import CUT_RUN_COLUMNS, GROUP_SQL, MIX_SQL
from reconcile.store.fences import stop_reason
from reconcile.engine import Engine

__all__ = ["Candidate", "as_run", "from_budgets", "from_file", "from_options", "replay", "stop_reason"]

SHOWN_RUNS = 50  # runs listed per group and candidate (the counts are always complete)


def replay(engine: Engine, candidates: list[Candidate] | None = None, by: str = "agent",
           window: Window | None = None, config=None, source: str = "auto", runs: bool = False) -> dict[str, Any]:
    """Replay each candidate over the runs in the window; with no candidate, the ceilings ``budgets``
    recommends. ``runs``: also every run's row (where it would stop, why, what that saved)."""
    from reconcile.config import Config

    if by not in GROUPS:
        raise BadInput(f"--by {by!r}: choose one of {', '.join(GROUPS)}")
    window = window or Window()
    params = window.params
    require_runs(engine, window)
    config = config or Config()
    if not candidates:
        candidates = [from_budgets(budget_report(engine, by, window, source, config=config))]
    prepare(engine, config, RUNS_IN_WINDOW, params)
    results = []
    for candidate in candidates:
        replay_candidate(engine, candidate, GROUPS[by], RUNS_IN_WINDOW, params, grace(config))
        results.append(_summarise(engine, candidate, runs))
    for table in ("_replay_runs", "_replay_judged", "loop_detectors"):
        engine.run(f"drop table if exists {table}")
    drop_staging(engine)
    return {"by": by, "since": window.since, "until": window.until, "candidates": results}


def _summarise(engine: Engine, candidate: Candidate, with_runs: bool) -> dict[str, Any]:
    groups = engine.records(GROUP_SQL)
    mix: dict[str, dict[str, dict[str, int]]] = {}
    for row in engine.records(MIX_SQL):
        mix.setdefault(row["key"], {}).setdefault(row["side"], {})[row["status"]] = row["runs"]
    cut = engine.records(f"""select {CUT_RUN_COLUMNS} from (
        select *, row_number() over (partition by group_key order by status = 'succeeded' desc,
                                     spend_saved_micros desc nulls last, run_id) as rank
        from _replay_runs where outcome = 'cut') as ranked
        where rank <= {SHOWN_RUNS} order by group_key, rank""")
    listed: dict[str, list[dict]] = {}
    for row in cut:
        row["stop_reason"] = stop_reason(row)
        listed.setdefault(row["key"], []).append(row)
    for group in groups:
        group["not_judged_ceilings"] = sorted(group["not_judged_ceilings"] or [])  # no list is an empty one
        _derive(group)
        group["stop_mix_before"] = mix.get(group["key"], {}).get("before", {})
        group["stop_mix_after"] = mix.get(group["key"], {}).get("after", {})
        shown = listed.get(group["key"], [])
        group["successes_lost_runs"] = [r for r in shown if r["status"] == "succeeded"]
        group["stopped_runs"] = [r for r in shown if r["status"] != "succeeded"]
    total = _total(groups)
    result = {"name": candidate.name, "limits": {("*" if k is None else k): v for k, v in candidate.limits.items()},
              "describe": candidate.describe(), "base": candidate.base, "origin": candidate.origin,
              "detector": any("loop_detector" in v for v in candidate.limits.values()),
              "groups": groups, "total": total}
    if with_runs:
        result["runs"] = engine.records("select * from _replay_runs order by group_key, run_id")
        for row in result["runs"]:
            row["stop_reason_written"] = stop_reason(row) if row["outcome"] in ("cut", "same_stop", "late_stop") else None
    return result


def _derive(group: dict[str, Any]) -> None:
    """Cost per completed task before and after: spend / completed tasks — succeeded root runs, a run and its
    sub-agents being one task — (unknown when any spend is)."""
    known = not group["spend_unknown_runs"] and not group["saving_unknown_runs"] and not group["wrap_up_unknown_runs"]
    group["cost_per_completed_task_before_micros"] = (
        cost_per_completed_task(group["spend_micros"], group["completed_tasks"]) if not group["spend_unknown_runs"] else None)
    after = (group["spend_micros"] - group["spend_saved_micros"] - group["spend_lost_micros"]
             + group["wrap_up_micros"]) if known else None
    # at least: the known spend less the most that could have been saved is no floor (the saving's unknown part may
    # be large), so an inexact "after" has no bounds of its own
    group["spend_after_low_micros"] = after
    group["spend_after_micros"] = after
    group["succeeded_after"] = group["succeeded"] - group["successes_lost"]
    group["completed_tasks_after"] = group["completed_tasks"] - group["completed_tasks_lost"]
    group["cost_per_completed_task_after_micros"] = cost_per_completed_task(after, group["completed_tasks_after"])
    # every task paid for and none completed: unbounded, the worst — not unknown
    group["no_task_completed_before"] = none_completed(group["tasks"], group["completed_tasks"])
    group["no_task_completed_after"] = none_completed(group["tasks"], group["completed_tasks_after"])
    group["minutes_saved"] = round(group["ms_saved"] / 60_000, 2)  # summed in whole milliseconds: no float drift


_ADDED = ("runs", "succeeded", "tasks", "completed_tasks", "completed_tasks_lost", "stopped_earlier", "same_stop", "stopped_late", "runs_on", "successes_lost", "spend_saved_micros",
          "spend_lost_micros", "saving_unknown_runs", "wrap_up_micros", "wrap_up_unknown_runs", "steps_saved",
          "tool_steps_saved", "ms_saved", "seconds_unknown_runs", "not_judged_runs", "spend_micros",
          "spend_unknown_runs", "loops_caught", "false_positives", "steps_earlier", "spend_low_micros",
          "spend_saved_low_micros", "spend_lost_low_micros", "wrap_up_low_micros")
# money: a total is exact only where every group's is (else None; its *_low_micros is the floor)
_EXACT_MONEY = ("spend_micros", "spend_saved_micros", "spend_lost_micros", "wrap_up_micros")


def _total(groups: list[dict[str, Any]]) -> dict[str, Any]:
    total: dict[str, Any] = {"key": "total"}
    for name in _ADDED:
        values = [g[name] for g in groups]
        total[name] = None if name in _EXACT_MONEY and None in values else sum(v or 0 for v in values)
    for side in ("before", "after"):
        mix: dict[str, int] = {}
        for g in groups:
            for status, n in g[f"stop_mix_{side}"].items():
                mix[status] = mix.get(status, 0) + n
        total[f"stop_mix_{side}"] = mix
    _derive(total)
    return total
