"""One answer on both engines over a dataset built to tell them apart (issue 31, part 2).

The sample night, made hostile to a translation: every run's and step's time carries microseconds
(a millisecond difference counted two ways differs here), a third of the runs have no ledger cost
and a quarter of the steps no harness cost (unknown money must stay unknown, never "$null"), some
model calls have no output count (their cost unknown), and the user's regular-expression settings
(global and per agent) decide what counts as a tool error and a transport error. Every check, every
cost grouping and source, budgets, stop reasons, latency, the three-way usage match, a replay, and
the finance and morning reports are computed in DuckDB and in Spark and compared exactly (floats to
the last bits, as test_spark does).

Marked ``spark`` (run by ``.ci/run`` with ``pytest -m spark``); its own Spark session, opened once.
"""

from __future__ import annotations

import re
import shutil

import pytest

from reconcile import store
from reconcile.analyses.budgets import budget_report, latency_and_size, stop_reason_rates
from reconcile.analyses.costs import cost_report
from reconcile.analyses.usage import usage_report
from reconcile.checks import Scope, load_checks, run_checks
from reconcile.config import load_config
from reconcile.engine import DuckDBEngine
from reconcile.engines.dataset import open_dataset
from reconcile.engines.export import export
from reconcile.reports.reporting import write_finance, write_morning
from reconcile.when import Window, use_zone
from test_spark import require_spark, same

pytestmark = pytest.mark.spark

SETTINGS = r"""
[settings]
tool_error_pattern = '(?i)\b(traceback|exception|permission denied)\b'
transport_error_pattern = '(?i)(rate.?limit|overloaded|\b5\d\d\b|timed? ?out)'

[agents.coder.settings]
tool_error_pattern = '^(Error|FAIL(ED)?)[: ]'
"""


@pytest.fixture(scope="module")
def hostile(night_db, tmp_path_factory):
    """The sample night with microsecond times, unknown money and unknown output counts, exported."""
    folder = tmp_path_factory.mktemp("portable")
    db = folder / "night.duckdb"
    shutil.copy(night_db, db)
    with store.connect(db) as con:
        con.execute("update runs set started_at = started_at + to_microseconds((hash(run_id) % 999983)::bigint), "
                    "ended_at = ended_at + to_microseconds((hash('end', run_id) % 999983)::bigint)")
        con.execute("update steps set started_at = started_at + to_microseconds((hash(run_id, idx) % 999983)::bigint)")
        con.execute("update runs set ledger_cost_micros = null where hash(run_id) % 3 = 0")
        con.execute("update steps set harness_cost_micros = null where hash(run_id, idx) % 4 = 0")
        con.execute("update steps set output_tokens = null, reasoning_tokens = null "
                    "where kind = 'model' and hash(run_id, idx, 'out') % 11 = 0")
        odd = con.execute("select count(*) from runs where microsecond(started_at) % 1000 <> 0").fetchall()[0][0]
        assert odd > 250  # the times really carry microseconds
    export(db, folder / "dataset")
    (folder / "reconcile.toml").write_text(SETTINGS)
    return folder


@pytest.fixture(scope="module")
def config(hostile):
    return load_config(hostile / "reconcile.toml")


@pytest.fixture(scope="module")
def engines(hostile):
    require_spark()
    from reconcile.engines.spark_dataset import open_spark_dataset

    spark = open_spark_dataset(hostile / "dataset", master="local[2]")
    with open_dataset(hostile / "dataset") as con:
        duck = DuckDBEngine(con)
        for engine in (duck, spark):
            use_zone(engine, "UTC")
        yield duck, spark
    spark.close()


def test_every_check_under_user_patterns_finds_the_same(engines, config):
    duck, spark = engines
    checks = load_checks(None)
    ours = run_checks(duck, checks, Scope(), config=config, record=False).to_json()
    theirs = run_checks(spark, checks, Scope(), config=config, record=False).to_json()
    patterned = {c["name"] for c in ours["checks"]} & {"tool_errors_flagged", "retries_within_limit",
                                                       "retries_mutate_context"}
    assert sum(c["failures"] for c in ours["checks"]) > 0 and len(patterned) == 3
    for mine, yours in zip(ours["checks"], theirs["checks"]):
        assert mine == yours, mine["name"]
    assert theirs["findings"] == ours["findings"]


def test_the_user_patterns_change_what_is_found(engines, config):
    """The settings are not decoration: without them the same engine finds something else."""
    duck, _ = engines
    checks = load_checks(None)
    plain = run_checks(duck, checks, Scope(), record=False).to_json()
    patterned = run_checks(duck, checks, Scope(), config=config, record=False).to_json()
    assert plain["findings"] != patterned["findings"]


@pytest.mark.parametrize("by, source", [(by, "auto") for by in ("model", "day", "agent", "tree", "task_class")]
                         + [("run", source) for source in ("auto", "ours", "harness")])
def test_costs_with_unknown_money_are_the_same(engines, by, source):
    duck, spark = engines
    ours = cost_report(duck, by, None, source)
    same(ours, cost_report(spark, by, None, source))


def test_some_money_is_unknown_and_said_so(engines):
    duck, _ = engines
    by_run = cost_report(duck, "run", None, "ours")["groups"]
    assert any(not group["cost_complete"] for group in by_run), "no unknown cost to compare"
    assert any(group["calls_with_unknown_buckets"] for group in by_run)
    harness = cost_report(duck, "model", None, "harness")["groups"]  # steps without one are priced by us instead
    assert any(group["harness_sourced_runs"] < group["runs"] for group in harness)


def test_budgets_stop_reasons_and_latency_with_microsecond_times_are_the_same(engines, config):
    duck, spark = engines
    for tree in ("run", "tree"):
        same(budget_report(duck, "agent", None, "auto", tree), budget_report(spark, "agent", None, "auto", tree))
    same(budget_report(duck, "task_class", Window(), "harness"), budget_report(spark, "task_class", Window(), "harness"))
    same(stop_reason_rates(duck, "agent", None), stop_reason_rates(spark, "agent", None))
    same(latency_and_size(duck, config), latency_and_size(spark, config))


@pytest.mark.parametrize("by", ["model", "day"])
def test_the_usage_match_is_the_same(engines, by):
    duck, spark = engines
    same(usage_report(duck, by, Window()), usage_report(spark, by, Window()))


def test_a_replay_is_the_same(engines):
    from reconcile.analyses.replay import as_run, from_options, replay

    duck, spark = engines
    candidates = [as_run(), *from_options(["max_steps=8", "max_cost_usd=0.05", "tight:max_wall_seconds=60"], ["all"])]
    same(replay(duck, candidates, runs=True), replay(spark, candidates, runs=True))


_STAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")


@pytest.mark.parametrize("kind", ["finance", "morning"])
def test_the_reports_are_the_same(engines, config, tmp_path, kind):
    duck, spark = engines
    pages = []
    for name, engine in (("duckdb", duck), ("spark", spark)):
        out = tmp_path / f"{kind}-{name}.html"
        if kind == "finance":
            write_finance(engine, out, Window())
        else:
            write_morning(engine, out, config=config)
        pages.append(_STAMP.sub("…", out.read_text()))
    assert "unknown" in pages[0] and pages[0] == pages[1]
