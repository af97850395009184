"""A plain-text summary of what the store holds, rendered from ``reports/summary.txt.j2``.

The agents' table is laid out by the same table code as every other command.

Plain text on purpose: it reads the same in a terminal, a cron mail and a CI log.
"""

from __future__ import annotations

from typing import Any, Callable

import jinja2

from reconcile.resources import reports_dir
from reconcile.analyses.costs import RUN_SUMS
from reconcile.sheets import Column, Sheet, every_key
from reconcile.store.status import STATUSES
from reconcile.engine import Engine


def store_summary(engine: Engine) -> dict[str, Any]:
    """Counts by agent and status, token totals, cost, and the ingest bookkeeping."""
    by_agent = engine.records(f"""  -- the cost as --cost-source auto takes it
            select coalesce(agent, '(none)') as agent, count(*) as runs,
                {", ".join(f"count(*) filter (where status = '{s}') as {s}" for s in STATUSES)},
                sum(steps)::bigint as steps, sum(tool_results)::bigint as tool_results,
                sum(total_tokens)::bigint as tokens, {RUN_SUMS}
            from run_view join chosen_costs c using (run_id) where c.asked = 'auto' group by all order by agent"""
    )
    for row in by_agent:
        row.pop("complete")
    files = engine.records("""select count(*) as files, coalesce(sum(lines), 0) as lines, coalesce(sum(loaded), 0) as loaded,
                  coalesce(sum(rejected), 0) as rejected, coalesce(sum(skipped), 0) as skipped,
                  count(*) filter (where status <> 'loaded') as not_loaded,
                  min(ingested_at) as first_ingest, max(ingested_at) as last_ingest
           from ingested_files"""
    )[0]
    span = engine.rows("select min(started_at), max(coalesce(ended_at, started_at)), "
                       "count(*) filter (where started_at is null), "
                       "count(*) - count(distinct case when source_format = 'claude_code' and parent_run_id "
                       "is not null then parent_run_id else run_id end) from runs")[0]
    rejects = engine.records("select path, line, reason from rejects order by path, line limit 10"
    )
    return {"by_agent": by_agent, "statuses": STATUSES, "files": files, "first_run": span[0],
            "last_run": span[1], "rejects": rejects,
            "total_runs": sum(row["runs"] for row in by_agent), "undated_runs": span[2],
            # `reconcile runs` folds these into their sessions by default: say so, or its count looks wrong
            "folded_subagents": span[3]}


def agents_sheet(by_agent: list[dict[str, Any]]) -> Sheet:
    """Runs by agent and status, with steps, tokens and cost (reconcile's prices, else the harness's record)."""
    columns = [Column("agent", "agent"), Column("runs", "runs", "count"),
               *[Column(s, s, "count") for s in STATUSES],
               # on a narrow terminal: every status but the first, summed (the columns still add up to runs)
               Column("other_statuses", "other statuses", "count", wide=True, table_only=True),
               Column("steps", "steps", "count"),
               Column("tokens", "tokens", "count"), Column("cost_micros", "cost", "money"),
               # a range or "at least" in the cost column: how many runs it is not exact for
               Column("runs_not_exact", "runs not priced exactly", "count")]
    rows = [{**row, "other_statuses": sum(row.get(s) or 0 for s in STATUSES[1:])} for row in by_agent]
    return Sheet(every_key(columns, rows), rows, headline=("runs", "cost_micros"),
                 parts=(tuple(STATUSES), "other_statuses"))


def render_summary(engine: Engine, render_table: Callable[[Sheet], str]) -> str:
    """The summary as text; ``render_table`` lays out the agents' table (the CLI's table code)."""
    data = store_summary(engine)
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(reports_dir()), autoescape=False,
                                     trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    return environment.get_template("summary.txt.j2").render(**data, agents_table=render_table(agents_sheet(data["by_agent"])))
