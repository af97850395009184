"""How a replay reads: a table a row per candidate and group (or per run), and the lines under it."""

from __future__ import annotations

from typing import Any

from reconcile.money import NONE_COMPLETED, usd
from reconcile.sheets import MISSING_AS, Column, Sheet

TEXT_RUNS = 5  # successes lost named per group in text (--json names up to 50, --runs every run)

GROUP_COLUMNS = [
    Column("candidate", "candidate"), Column("key", "group"), Column("runs", "runs", "count"),
    Column("stopped_earlier", "stopped earlier", "count"), Column("successes_lost", "successes lost", "count"),
    Column("spend_saved_micros", "spend saved", "money"), Column("spend_lost_micros", "spend lost", "money"),
    Column("steps_saved", "steps saved", "count"), Column("minutes_saved", "minutes saved", "number"),
    Column("same_stop", "same stop", "count"), Column("runs_on", "ran on (unknown)", "count"),
    Column("not_judged_runs", "not judged", "count"),
    Column("cost_per_completed_task_before_micros", "$/completed now", "money4", "unknown"),
    Column("cost_per_completed_task_after_micros", "$/completed then", "money4", "unknown"),
    Column("no_task_completed_before", "none completed now", "bool", wide=True, export_only=True),
    Column("no_task_completed_after", "none completed then", "bool", wide=True, export_only=True),
]
DETECTOR_COLUMNS = [Column("loops_caught", "loops caught", "count"),
                    Column("false_positives", "false positives", "count"),
                    Column("steps_earlier", "steps earlier than the budgets", "count")]
RUN_COLUMNS = [
    Column("candidate", "candidate"), Column("group_key", "group"), Column("run_id", "run"),
    Column("status", "status"), Column("outcome", "outcome"), Column("cut_idx", "stopped before step", "count"),
    Column("calls_made", "charged calls made", "count"), Column("charged_calls", "charged calls", "count"),
    Column("ceiling", "ceiling"), Column("stop_reason_written", "stop reason"), Column("new_status", "new status"),
    Column("spend_micros", "spend", "money4"), Column("spend_saved_micros", "spend saved", "money4"),
    Column("ms_saved", "ms saved", "count"), Column("steps_saved", "steps saved", "count"),
    Column("not_judged", "not judged"),
]


def replay_sheet(report: dict[str, Any], runs: bool = False) -> Sheet:
    """A row per candidate and group (``runs``: per candidate and run), the same for a terminal and a file."""
    if runs:
        rows = [{**row, "candidate": c["name"]} for c in report["candidates"] for row in c.get("runs", [])]
        return Sheet(RUN_COLUMNS, rows, title="Each run under each candidate")
    detectors = any(c["detector"] for c in report["candidates"])
    rows = [_worded({**group, "candidate": c["name"]}) for c in report["candidates"] for group in c["groups"]]
    totals = [_worded({**c["total"], "candidate": c["name"]}) for c in report["candidates"] if len(c["groups"]) > 1]
    return Sheet(GROUP_COLUMNS + (DETECTOR_COLUMNS if detectors else []), rows, totals=totals,  # totals: table only
                 headline=("key", "successes_lost", "spend_saved_micros", "spend_lost_micros"),
                 title=f"If these limits had been on (by {report['by']}; spend saved on runs that did not succeed, "
                       "lost on successes cut)")


def _worded(group: dict[str, Any]) -> dict[str, Any]:
    """A group whose runs complete no task (now, or under the candidate): "none completed", not "unknown"."""
    words = {f"cost_per_completed_task_{side}_micros": NONE_COMPLETED for side in ("before", "after")
             if group.get(f"no_task_completed_{side}")}
    return {**group, MISSING_AS: words}


def text_lines(report: dict[str, Any]) -> list[str]:
    """What the table cannot say: each candidate, the successes it loses, the stop mix, what is unknown."""
    lines = []
    for candidate in report["candidates"]:
        lines.append(f"{candidate['name']}: {candidate['describe']} (from {candidate['origin']})")
        for group in candidate["groups"]:
            lines += [f"  {group['key']}: {line}" for line in _group_lines(group)]
    return lines


def _group_lines(group: dict[str, Any]) -> list[str]:
    said = []
    for run in group["successes_lost_runs"][:TEXT_RUNS]:
        said.append(f"success lost: {run['run_id']} stopped before step {run['step']} after {run['calls_made']} of "
                    f"{run['charged_calls']} charged calls ({run['stop_reason']})")
    if group["successes_lost"] > TEXT_RUNS:
        said.append(f"… and {group['successes_lost'] - TEXT_RUNS} more successes lost "
                    "(--json lists them by group, --runs every run)")
    before, after = group["stop_mix_before"], group["stop_mix_after"]
    if before != after:
        changes = [f"{status} {before.get(status, 0)} → {after.get(status, 0)}"
                   for status in sorted(set(before) | set(after)) if before.get(status, 0) != after.get(status, 0)]
        said.append("stop reasons: " + ", ".join(changes))
    if group["runs_on"]:
        said.append(f"{group['runs_on']} run(s) their own limits stopped would have run on: what they would then have done "
                    "is not in the journal")
    if group["not_judged_runs"]:
        said.append(f"{group['not_judged_runs']} run(s) not fully judged ({', '.join(group['not_judged_ceilings'])} "
                    "unknown before the stop): the candidate might have stopped them earlier")
    unknown = group["saving_unknown_runs"]
    if unknown:
        said.append(f"{unknown} stopped run(s) have calls with no known cost: the spend saved or lost is at least "
                    "the part priced, never that part alone")
    if group["wrap_up_micros"]:
        said.append(f"a wrap-up turn after each stop costs about {usd(group['wrap_up_micros'], places=4)} "
                    "(each priced as the call it replaces), counted in the cost per completed task")
    return said
