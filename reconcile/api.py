"""For notebooks: the store as polars DataFrames.

    import reconcile
    rc = reconcile.connect("night.duckdb")
    rc.runs().filter(pl.col("status") == "budget_exceeded")
    rc.steps("8f3a")
    rc.costs(by="agent")          # one row per agent: spend, cache savings, catalogue tax, …
    rc.budgets()                  # p50 / p95 / p99 and recommended ceilings per agent
    rc.findings()                 # the latest check run's findings
    rc.sql("select … from step_view")
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from . import store
from .budgets import budget_report
from .costs import cost_report


class Reconcile:
    def __init__(self, path: str | Path):
        # Read-only: any number of notebooks and CLI readers share the store; a writer (ingest) waits for them.
        # A typo in the path is an error, not an empty store.
        self.con = store.connect(path, read_only=True, create=False)

    def sql(self, query: str, params: list | None = None) -> pl.DataFrame:
        """Any query over the documented views and tables, as a DataFrame."""
        return self.con.sql(query, params=params or None).pl()  # a relation, not execute(): DuckDB 2

    def runs(self) -> pl.DataFrame:
        return self.sql("select * from run_view order by started_at, run_id")

    def steps(self, run_id: str | None = None) -> pl.DataFrame:
        if run_id is None:
            return self.sql("select * from step_view")
        return self.sql("select * from step_view where run_id = ? order by idx", [run_id])

    def findings(self, latest: bool = True) -> pl.DataFrame:
        where = "where checked_at = (select max(checked_at) from findings)" if latest else ""
        return self.sql(f"select * from findings {where} order by check_name, run_id, step")

    def costs(self, by: str = "model") -> pl.DataFrame:
        report = cost_report(self.con, by)
        return pl.DataFrame([*report["groups"], report["total"]], infer_schema_length=None)

    def budgets(self, by: str = "agent") -> pl.DataFrame:
        rows = []
        for group in budget_report(self.con, by)["groups"]:
            row = {"key": group["key"], "runs": group["runs"], "success_rate": group["success_rate"],
                   "flags": [f["flag"] for f in group["flags"]]}
            for metric, values in group["metrics"].items():
                row.update({f"{metric}_{q}": v for q, v in values.items()})
                row[f"recommended_{metric}"] = group["recommended"].get(metric)
                row[f"configured_{metric}"] = group["configured"].get(metric)
            rows.append(row)
        return pl.DataFrame(rows, infer_schema_length=None)

    def close(self) -> None:
        self.con.close()


def connect(path: str | Path = store.DEFAULT_DB) -> Reconcile:
    """Open a store for exploring: ``reconcile.connect("night.duckdb").runs()``."""
    return Reconcile(path)
