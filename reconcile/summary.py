"""A plain-text summary of what the store holds, rendered from ``reports/summary.txt.j2``.

Plain text on purpose: it reads the same in a terminal, a cron mail and a CI log.
"""

from __future__ import annotations

from typing import Any

import duckdb

from .store import records
import jinja2

from .resources import reports_dir
from .status import STATUSES


def store_summary(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Counts by agent and status, token totals, and the ingest bookkeeping."""
    by_agent = records(con,
        f"""select coalesce(agent, '(none)') as agent, count(*) as runs,
                {", ".join(f"count(*) filter (where status = '{s}') as {s}" for s in STATUSES)},
                sum(steps) as steps, sum(tool_results) as tool_results, sum(total_tokens) as tokens
            from run_view group by all order by agent"""
    )
    files = records(con,
        """select count(*) as files, coalesce(sum(lines), 0) as lines, coalesce(sum(loaded), 0) as loaded,
                  coalesce(sum(rejected), 0) as rejected, coalesce(sum(skipped), 0) as skipped,
                  min(ingested_at) as first_ingest, max(ingested_at) as last_ingest
           from ingested_files"""
    )[0]
    span = con.execute("select min(started_at), max(coalesce(ended_at, started_at)) from runs").fetchall()[0]
    rejects = records(con,
        "select path, line, reason from rejects order by path, line limit 10"
    )
    return {"by_agent": by_agent, "statuses": STATUSES, "files": files, "first_run": span[0],
            "last_run": span[1], "rejects": rejects,
            "total_runs": sum(row["runs"] for row in by_agent)}


def render_summary(con: duckdb.DuckDBPyConnection) -> str:
    environment = jinja2.Environment(loader=jinja2.FileSystemLoader(reports_dir()), autoescape=False,
                                     trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    return environment.get_template("summary.txt.j2").render(**store_summary(con))
