"""For notebooks: the store as polars DataFrames.

    import reconcile
    rc = reconcile.connect("night.duckdb")
    rc.runs().filter(pl.col("status") == "budget_exceeded")
    rc.steps("8f3a")
    rc.costs(by="agent")          # one row per agent: spend, cache savings, catalogue tax, …
    rc.budgets()                  # p50 / p95 / p99 and recommended ceilings per agent
    rc.replay({"max_steps": 16})  # what that limit would have done: runs cut, successes lost, spend saved
    rc.findings()                 # the latest check run's findings
    rc.sql("select … from step_view")

    rc = reconcile.open_dataset("/data/agent-runs")                   # an export, in DuckDB
    rc = reconcile.open_dataset("/data/agent-runs", engine="spark",   # … or on a Spark cluster
                                master="spark://head:7077")
    rc.steps("8f3a")                                                  # the same answers, as DataFrames
"""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import polars as pl

from reconcile import store
from reconcile.engine import DuckDBEngine, Engine
from reconcile.analyses.budgets import budget_report
from reconcile.analyses.costs import cost_report
from reconcile.analyses.inspect import find_run
from reconcile.when import Window


class Reconcile:
    """The store, or an export read by an engine (DuckDB, Spark), answering in polars DataFrames."""

    def __init__(self, path: str | Path | None = None, *, dataset: str | Path | None = None,
                 engine: str = "duckdb", master: str | None = None, remote: str | None = None):
        self._open = ExitStack()
        if dataset is None:
            # Read-only: any number of notebooks and CLI readers share the store; a writer (ingest) waits for them.
            # A typo in the path is an error, not an empty store.
            self.engine: Engine = DuckDBEngine(store.connect(path, read_only=True, create=False), owned=True)
            self._open.callback(self.engine.close)
        else:
            from reconcile.engines.dataset import reading

            self.engine = self._open.enter_context(reading(Path(), Path(dataset), engine=engine, master=master,
                                                        remote=remote))

    def sql(self, query: str, params: list | None = None) -> pl.DataFrame:
        """Any query over the documented views and tables, as a DataFrame."""
        return pl.from_arrow(self.engine.execute(query, params))

    def runs(self) -> pl.DataFrame:
        return self.sql("select * from run_view order by started_at, run_id")

    def steps(self, run_id: str | None = None) -> pl.DataFrame:
        """Every step, or one run's (its id or an unambiguous prefix; an unknown id raises ``RunNotFound``, as the CLI)."""
        if run_id is None:
            return self.sql("select * from step_view")
        run_id = find_run(self.engine, run_id)["run_id"]
        return self.sql("select * from step_view where run_id = ? order by idx", [run_id])

    def findings(self, latest: bool = True) -> pl.DataFrame:
        """The findings the store recorded (an export carries none: run ``check`` over it)."""
        where = "where checked_at = (select max(checked_at) from findings)" if latest else ""
        return self.sql(f"select * from findings {where} order by check_name, run_id, step")

    def costs(self, by: str = "model") -> pl.DataFrame:
        report = cost_report(self.engine, by)
        return pl.DataFrame([*report["groups"], report["total"]], infer_schema_length=None)

    def cost_per_completed_task(self, source: str = "auto") -> pl.DataFrame:
        """A group's spend / its succeeded runs, by agent, task class, model and limits (as ``reconcile cost``)."""
        return pl.DataFrame(cost_report(self.engine, "agent", source=source)["cost_per_completed_task"],
                            infer_schema_length=None)

    def budgets(self, by: str = "agent") -> pl.DataFrame:
        rows = []
        for group in budget_report(self.engine, by)["groups"]:
            row = {"key": group["key"], "runs": group["runs"], "success_rate": group["success_rate"],
                   "flags": [f["flag"] for f in group["flags"]]}
            for metric, values in group["metrics"].items():
                row.update({f"{metric}_{q}": v for q, v in values.items()})
                row[f"recommended_{metric}"] = group["recommended"].get(metric)
                row[f"configured_{metric}"] = group["configured"].get(metric)
            rows.append(row)
        return pl.DataFrame(rows, infer_schema_length=None)

    def replay(self, sets: list[str] | dict | None = None, detector: str | list[str] | None = None,
               limits: str | Path | None = None, by: str = "agent", base: str = "own", runs: bool = False,
               since=None, until=None) -> pl.DataFrame:
        """What candidate limits would have done to these runs (``reconcile replay``): a row per candidate and
        group, or with ``runs=True`` per candidate and run. ``sets``: ``{"max_steps": 16}`` or
        ``["max_steps=16", "tight:max_steps=12"]``; ``detector``: ``"calls_window"``, ``"all"`` or a list; ``limits``:
        a file as ``budgets --emit`` writes it. Nothing given: the ceilings ``budgets`` recommends.

            rc.replay({"max_steps": 16, "max_cost_usd": 0.5}).select("key", "successes_lost", "spend_saved_micros")
        """
        from reconcile.analyses.replay import from_file, from_options, replay

        pairs = [f"{k}={v}" for k, v in sets.items()] if isinstance(sets, dict) else list(sets or [])
        detectors = [detector] if isinstance(detector, str) else list(detector or [])
        candidates = from_options(pairs, detectors, base) + ([from_file(Path(limits), base)] if limits else [])
        report = replay(self.engine, candidates or None, by, Window(since, until), runs=runs)
        if runs:
            rows = [{"candidate": c["name"], **row} for c in report["candidates"] for row in c["runs"]]
        else:
            listed = ("successes_lost_runs", "stopped_runs")  # lists of runs: runs=True gives every run
            rows = [{"candidate": c["name"], **{k: v for k, v in g.items() if k not in listed}}
                    for c in report["candidates"] for g in c["groups"]]
        return pl.DataFrame(rows, infer_schema_length=None)

    def close(self) -> None:
        self._open.close()

    def __enter__(self) -> "Reconcile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def connect(path: str | Path = store.DEFAULT_DB) -> Reconcile:
    """Open a store for exploring: ``reconcile.connect("night.duckdb").runs()``."""
    return Reconcile(path)


def open_dataset(folder: str | Path, engine: str = "duckdb", master: str | None = None,
                 remote: str | None = None) -> Reconcile:
    """Open an export (``reconcile export --to DIR``) for exploring, in DuckDB or, with ``engine="spark"``,
    on Spark (``master`` a cluster, ``remote`` a Spark Connect server): the same methods as ``connect``."""
    return Reconcile(dataset=folder, engine=engine, master=master, remote=remote)
