"""``reconcile runs``: one row a run — which failed, which cost most, which ran longest.

With ``fold_subagents`` (the default) a Claude Code session's subagent transcripts are folded
into the session that started them, as ccusage's session report does: one row a session, its
steps, tokens and cost summed over the session and its subagents, its status and wall time the
session's own. With ``trees``, every run is folded so into the root of its agent tree, whatever its
format (seed 001: one budget for the whole tree); otherwise runs of other formats are never folded. A cost is the chosen source's (``--cost-source``); a session of which some part has no
known cost shows a range or "at least" its floor (``cost_complete`` false), never its known part alone.
"""

from __future__ import annotations

from typing import Any


from reconcile.analyses.costs import cost_source as checked_source
from reconcile.analyses.coverage import Coverage
from reconcile.errors import BadInput
from reconcile.sheets import Column, Sheet
from reconcile.store.status import STATUSES
from reconcile.when import Window
from reconcile.engine import Engine

SORTS = {"started": "started_at, run_id", "cost": "coalesce(cost_micros, cost_low_micros) desc nulls last, run_id",
         "steps": "steps desc nulls last, run_id", "wall": "wall_seconds desc nulls last, run_id",
         "tokens": "total_tokens desc nulls last, run_id"}

COLUMNS = [
    Column("run_id", "run"), Column("agent", "agent"), Column("status", "status"),
    Column("stop_reason", "stop reason"), Column("started_at", "started", "time"),
    Column("wall_seconds", "wall s", "seconds"), Column("steps", "steps", "count"),
    Column("total_tokens", "tokens", "count"), Column("cost_micros", "cost", "money"),
    Column("cost_complete", "cost complete", "bool"),
    Column("cost_low_micros", "cost at least", "money", wide=True, export_only=True),
    Column("cost_high_micros", "cost at most", "money", wide=True, export_only=True), Column("subagents", "subagents", "count"),
    Column("task_class", "task class", wide=True), Column("model", "model"),
]


def _one(field: str) -> str:
    """The session's own value of ``field``, else (no session transcript) any of its parts'."""
    return f"coalesce(any_value({field}) filter (where root), any_value({field}))"


def list_runs(engine: Engine, window: Window | None = None, statuses: list[str] | None = None,
              agents: list[str] | None = None, sort: str = "started", limit: int | None = None,
              fold_subagents: bool = True, cost_source: str = "auto", trees: bool = False) -> Sheet:
    """The runs started in ``window``, filtered, sorted (started, cost, steps, wall, tokens) and cut to ``limit``."""
    window = window or Window()
    if sort not in SORTS:
        raise BadInput(f"--sort {sort!r}: sort by {', '.join(SORTS)}")
    unknown = [s for s in statuses or [] if s not in STATUSES]
    if unknown:
        raise BadInput(f"--status {unknown[0]!r} is not a status; statuses: {', '.join(STATUSES)}")
    cost_source = checked_source(cost_source)
    if limit is not None and limit < 1:
        raise BadInput(f"-n {limit}: give how many runs to show, 1 or more")
    rows = engine.records(f"""
        with parts as (
            select r.*, c.cost_micros as part_cost, c.complete as part_complete, c.cost_low_unrounded as part_low,
                   c.cost_high_unrounded as part_high,
                   case when $trees then r.root_run_id
                        when $fold and r.source_format = 'claude_code' and r.parent_run_id is not null
                        then r.parent_run_id else r.run_id end as session,
                   case when $trees then r.root_run_id = r.run_id
                        else not ($fold and r.source_format = 'claude_code' and r.parent_run_id is not null) end as root
            from run_view r join chosen_costs c using (run_id) where c.asked = $source
        ),
        sessions as (
            select session as run_id, {_one('agent')} as agent, {_one('status')} as status,
                   {_one('stop_reason')} as stop_reason,
                   -- the session's own start and wall time, as `show` gives them (the earliest part's without one)
                   coalesce(any_value(started_at) filter (where root), min(started_at)) as started_at,
                   {_one('wall_seconds')} as wall_seconds, sum(steps)::bigint as steps,
                   sum(total_tokens)::bigint as total_tokens,
                   -- the one rule: exact where every part is, else low .. high, else at least low (summed unrounded)
                   case when bool_and(part_complete) then round(sum(part_low)) end::bigint as cost_micros,
                   bool_and(part_complete) as cost_complete,
                   round(sum(part_low))::bigint as cost_low_micros,
                   case when count(part_high) = count(*) then round(sum(part_high)) end::bigint as cost_high_micros,
                   count(*) filter (where not root) as subagents, {_one('task_class')} as task_class,
                   {_one('model')} as model
            from parts group by session
        )
        select * from sessions
        where ($since is null or started_at >= $since) and ($until is null or started_at < $until)
          and (len($statuses) = 0 or list_contains($statuses, status))
          and (len($agents) = 0 or list_contains($agents, agent))
        order by {SORTS[sort]}
        {f'limit {int(limit)}' if limit else ''}""",
        {"source": cost_source, "fold": fold_subagents, "trees": trees, "since": window.since, "until": window.until,
         "statuses": statuses or [], "agents": agents or []})
    fold_subagents = fold_subagents or trees
    columns = COLUMNS if fold_subagents else [c for c in COLUMNS if c.key != "subagents"]
    if not fold_subagents:
        rows = [{k: v for k, v in row.items() if k != "subagents"} for row in rows]
    folded = ", sub-agents folded into the root of their tree" if trees else ", subagents folded into their sessions"
    title = f"Runs ({window.describe()}, {window.zone})" + (folded if fold_subagents and any(r["subagents"] for r in rows)
                                                           else "")
    return Sheet(columns, rows, title=title, zone=window.zone, drop_first=RUNS_DROP_FIRST)


# A narrow terminal keeps what a run is (id, status, start, steps, cost) and leaves out the rest in this order.
RUNS_DROP_FIRST = ("cost_complete", "subagents", "task_class", "model", "total_tokens", "wall_seconds", "agent",
                   "stop_reason")


def runs_summary(rows: list[dict[str, Any]], found: Coverage | None = None) -> list[str]:
    """The lines under the table: how many runs by status, what was folded, and the runs no window holds."""
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"] or "(none)"] = counts.get(row["status"] or "(none)", 0) + 1
    line = f"{len(rows)} run(s): " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items(), key=lambda i: -i[1]))
    folded = sum(row.get("subagents") or 0 for row in rows)
    if folded:
        line += (f"; {folded:,} sub-agent run(s) folded into them ({len(rows) + folded:,} runs in all; "
                 "--no-fold-subagents lists each)")
    undated = found.undated_line() if found else None
    return [line, *([undated] if undated else [])]
