"""For notebooks: the store as polars DataFrames, in the CLI's names and units.

    import reconcile
    rc = reconcile.connect("night.duckdb")
    rc.runs(since="2026-11-28").filter(pl.col("status") == "budget_exceeded")
    rc.steps("8f3a")
    rc.costs(by="agent")          # one row per agent: spend, cache savings, catalogue tax, …
    rc.cost_total()               # the total, apart: a frame's rows never include it
    rc.budgets()                  # a row per agent and ceiling: p50 / p95 / p99 and the recommendation
    rc.replay({"max_steps": 16})  # what that limit would have done: runs cut, successes lost, spend saved
    rc.findings()                 # the latest check run's findings
    rc.sql("select … from step_view")

    rc = reconcile.open_dataset("/data/agent-runs")                   # an export, in DuckDB
    rc = reconcile.open_dataset("/data/agent-runs", engine="spark",   # … or on a Spark cluster
                                master="spark://head:7077")
    rc.steps("8f3a")                                                  # the same answers, as DataFrames

Every frame is rows only (a total is its own call) and carries money as the CLI's ``--json`` and
``--csv`` do: exact dollars under ``*_usd`` (decimal(20, 6)), never float sums of micro-dollars —
except ``sql``, which answers a query as the store holds it. Every method that reads runs takes the
CLI's window: ``since`` / ``until`` (``"2026-11-28"``, ``"7d"``, ``"yesterday"`` or a datetime) and ``tz``.
"""

from __future__ import annotations

from contextlib import ExitStack
from datetime import date, datetime
from pathlib import Path

import polars as pl

from reconcile import store
from reconcile.engine import DuckDBEngine, Engine
from reconcile.analyses.budgets import budget_report
from reconcile.analyses.costs import cost_report
from reconcile.analyses.inspect import find_run
from reconcile.when import RUNS_IN_WINDOW, Window, use_zone, window

When = str | datetime | date | None


def in_usd(frame: pl.DataFrame) -> pl.DataFrame:
    """Money as the CLI's JSON and CSV carry it: each ``*_micros`` column as exact dollars under ``*_usd``,
    decimal(20, 6), in its place (a ``*_micros`` column whose ``*_usd`` is there already is left out)."""
    names = set(frame.columns)
    columns = []
    for name, dtype in frame.schema.items():
        target = f"{name.removesuffix('_micros')}_usd"
        if not name.endswith("_micros") or not (dtype.is_numeric() or dtype == pl.Null):
            columns.append(pl.col(name))
        elif target not in names:
            micros = pl.col(name).cast(pl.Int64).cast(pl.Decimal(38, 6))
            columns.append((micros / pl.lit(1_000_000).cast(pl.Decimal(38, 6))).cast(pl.Decimal(20, 6)).alias(target))
    return frame.select(columns)


def _window(since: When, until: When, tz: str | None) -> Window:
    """The window ``--since/--until/--tz`` would name (the same parsing: an ISO date or time, ``7d``, ``today``)."""
    def text(value: When) -> str | None:
        return value.isoformat() if isinstance(value, (datetime, date)) else value

    return window(text(since), text(until), tz)


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

    def sql(self, query: str, params: list | dict | None = None) -> pl.DataFrame:
        """Any query over the documented views and tables, as a DataFrame, its values as the store holds them
        (money in integer micro-dollars: sum them, then divide)."""
        return pl.from_arrow(self.engine.execute(query, params))

    def runs(self, since: When = None, until: When = None, tz: str | None = None, fold_subagents: bool = True,
             cost_source: str = "auto") -> pl.DataFrame:
        """One row a run started in the window, by start — the rows of ``reconcile runs --json`` (status, stop
        reason, start, wall seconds, steps, tokens, ``cost_usd`` by ``cost_source``, model): Claude Code subagents
        folded into their sessions, as the CLI does; ``fold_subagents=False`` gives every run its own row (as
        ``runs --no-fold-subagents``). A run whose start nobody recorded is in no bounded window. ``run_view``
        (``sql``) has every column."""
        from reconcile.analyses.runs import list_runs
        from reconcile.sheets import sheet_arrow

        scope = _window(since, until, tz)
        use_zone(self.engine, scope.zone)
        sheet = list_runs(self.engine, scope, fold_subagents=fold_subagents, cost_source=cost_source)
        return pl.from_arrow(sheet_arrow(sheet))

    def steps(self, run_id: str | None = None, since: When = None, until: When = None,
              tz: str | None = None) -> pl.DataFrame:
        """Every step (``step_view``) of the runs started in the window, or one run's (its id or an unambiguous
        prefix; an unknown id raises ``RunNotFound``, as the CLI), in order, with cost (``cost_usd``) and time."""
        if run_id is not None:
            run_id = find_run(self.engine, run_id)["run_id"]
            return in_usd(self.sql("select * from step_view where run_id = ? order by idx", [run_id]))
        scope = _window(since, until, tz)
        if scope.since is None and scope.until is None:
            return in_usd(self.sql("select * from step_view"))
        return in_usd(self.sql(f"select * from step_view where run_id in (select r.run_id from runs r where "
                               f"{RUNS_IN_WINDOW})", scope.params))

    def findings(self, latest: bool = True, since: When = None, until: When = None,
                 tz: str | None = None) -> pl.DataFrame:
        """The findings the store recorded (``reconcile morning`` records them; an export carries none: run
        ``check`` over it): the latest check run's, or every one kept; in a bounded window, those on its runs."""
        scope = _window(since, until, tz)
        where = ["checked_at = (select max(checked_at) from findings)"] if latest else []
        if scope.since is not None or scope.until is not None:
            where.append(f"run_id in (select r.run_id from runs r where {RUNS_IN_WINDOW})")
        clause = f"where {' and '.join(where)}" if where else ""
        return self.sql(f"select * from findings {clause} order by check_name, run_id, step",
                        scope.params if "$since" in clause else None)

    def costs(self, by: str = "model", since: When = None, until: When = None, tz: str | None = None,
              source: str = "auto") -> pl.DataFrame:
        """What the runs started in the window cost, a row per group (``by`` day, week, month, agent, model,
        task_class, run or tree), as ``reconcile cost --json``'s rows: spend, cache savings, catalogue tax, the
        harness's figure beside ours. Rows only: the total is :meth:`cost_total`."""
        return in_usd(pl.DataFrame(self._cost_report(by, since, until, tz, source)["groups"], infer_schema_length=None))

    def cost_total(self, by: str = "model", since: When = None, until: When = None, tz: str | None = None,
                   source: str = "auto") -> pl.DataFrame:
        """The total of :meth:`costs` as a one-row frame (``reconcile cost --json``'s ``total``)."""
        return in_usd(pl.DataFrame([self._cost_report(by, since, until, tz, source)["total"]], infer_schema_length=None))

    def cost_per_completed_task(self, since: When = None, until: When = None, tz: str | None = None,
                                source: str = "auto") -> pl.DataFrame:
        """A group's spend / its succeeded runs, by agent, task class, model and limits (as ``reconcile cost``)."""
        report = self._cost_report("agent", since, until, tz, source)
        return in_usd(pl.DataFrame(report["cost_per_completed_task"], infer_schema_length=None))

    def _cost_report(self, by: str, since: When, until: When, tz: str | None, source: str) -> dict:
        scope = _window(since, until, tz)
        use_zone(self.engine, scope.zone)  # days, weeks and months of the zone, as the CLI's --tz
        return cost_report(self.engine, by, scope, source=source)

    def budgets(self, by: str = "agent", since: When = None, until: When = None, tz: str | None = None,
                source: str = "auto", unit: str = "run") -> pl.DataFrame:
        """The ceilings ``reconcile budgets`` recommends: a row per group and ceiling (``max_steps``, ``max_tokens``,
        ``max_wall_seconds``, ``max_cost_usd`` in dollars), with the succeeded runs' p50 / p95 / p99, the
        configured and recommended values and the successes it would stop — the rows of ``--csv`` and ``--parquet``."""
        from reconcile.analyses.ceiling_sheet import ceilings_sheet
        from reconcile.sheets import sheet_arrow

        scope = _window(since, until, tz)
        use_zone(self.engine, scope.zone)
        return pl.from_arrow(sheet_arrow(ceilings_sheet(budget_report(self.engine, by, scope, source, unit))))

    def replay(self, sets: list[str] | dict | None = None, detector: str | list[str] | None = None,
               limits: str | Path | None = None, by: str = "agent", base: str = "own", runs: bool = False,
               since: When = None, until: When = None, tz: str | None = None) -> pl.DataFrame:
        """What candidate limits would have done to these runs (``reconcile replay``): a row per candidate and
        group, or with ``runs=True`` per candidate and run. ``sets``: ``{"max_steps": 16}`` or
        ``["max_steps=16", "tight:max_steps=12"]``; ``detector``: ``"calls_window"``, ``"all"`` or a list; ``limits``:
        a file as ``budgets --emit`` writes it. Nothing given: the ceilings ``budgets`` recommends.

            rc.replay({"max_steps": 16, "max_cost_usd": 0.5}).select("key", "successes_lost", "spend_saved_usd")
        """
        from reconcile.analyses.replay import from_file, from_options, replay

        pairs = [f"{k}={v}" for k, v in sets.items()] if isinstance(sets, dict) else list(sets or [])
        detectors = [detector] if isinstance(detector, str) else list(detector or [])
        candidates = from_options(pairs, detectors, base) + ([from_file(Path(limits), base)] if limits else [])
        report = replay(self.engine, candidates or None, by, _window(since, until, tz), runs=runs)
        if runs:
            rows = [{"candidate": c["name"], **row} for c in report["candidates"] for row in c["runs"]]
        else:
            listed = ("successes_lost_runs", "stopped_runs")  # lists of runs: runs=True gives every run
            rows = [{"candidate": c["name"], **{k: v for k, v in g.items() if k not in listed}}
                    for c in report["candidates"] for g in c["groups"]]
        return in_usd(pl.DataFrame(rows, infer_schema_length=None))

    def close(self) -> None:
        """Let the store (or the export's engine) go: a writer waiting on it goes ahead."""
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
