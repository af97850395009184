"""Budgets from evidence: exact percentiles, recommendations, flags, snippets and alert rates."""

from __future__ import annotations

import ast
import math
import tomllib

import pytest

from journals import StepClock
from reconcile import store
from reconcile.budgets import bootstrap_p99, quantile_cont
from reconcile.errors import ExitCode
from reconcile.ingest import ingest
from reconcile.journal import Journal


def test_quantile_cont_is_linear_interpolation_between_ranks():
    values = [1, 2, 3, 4, 10]
    assert quantile_cont(values, 0.5) == 3
    assert quantile_cont(values, 0.95) == pytest.approx(8.8)  # rank 3.8: 4 + 0.8 * (10 - 4)
    assert quantile_cont(values, 0.99) == pytest.approx(9.76)
    assert bootstrap_p99([float(v) for v in values]) == bootstrap_p99([float(v) for v in values])  # seeded


@pytest.fixture
def small(tmp_path, db_path):
    """Five succeeded runs of 1, 2, 3, 4 and 10 model steps, and one stopped by the step budget."""
    path = tmp_path / "small.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        for number, steps in enumerate([1, 2, 3, 4, 10]):
            run = journal.start_run(f"ok{number}", agent="small", limits={"max_steps": 30})
            for turn in range(steps):
                run.model_step(usage={"input_uncached": 100, "output": 10}, final=turn == steps - 1,
                               text="done" if turn == steps - 1 else None)
            run.end("model_finished")
        run = journal.start_run("stopped", agent="small", limits={"max_steps": 30})
        for _ in range(3):
            run.model_step(usage={"input_uncached": 100, "output": 10})
        run.end("max_steps")
    with store.connect(db_path) as con:
        ingest(con, [path])
    return db_path


def test_percentiles_and_recommendation_match_a_hand_computation(cli, small):
    group = cli("budgets", "--json", "--db", small).json()["groups"][0]
    steps = group["metrics"]["steps"]
    assert (steps["p50"], round(steps["p95"], 6), round(steps["p99"], 6)) == (3.0, 8.8, 9.76)
    assert group["recommended"]["steps"] == 10 and group["configured"]["steps"] == 30
    tokens = group["metrics"]["tokens"]  # 110 tokens a step
    assert round(tokens["p99"], 6) == round(9.76 * 110, 6)
    flags = {f["flag"]: f for f in group["flags"]}
    assert "no_budget" in flags and flags["small_sample"]["succeeded_runs"] == 5
    assert "too_tight" in flags  # 1 of 6 runs stopped (above 5 %), and it was not repeating itself



def test_on_the_sample_night_max_steps_is_the_ceiling_of_the_exact_p99(cli, night_db):
    report = cli("budgets", "--by", "agent", "--json", "--db", night_db).json()
    rows = cli("sql", "select agent, ceil(quantile_cont(steps, 0.99)) as p99 from run_view "
                      "where status = 'succeeded' group by agent", "--json", "--db", night_db).json()
    expected = {row["agent"]: row["p99"] for row in rows}  # the one SQL query over run_view
    assert {g["key"]: g["recommended"]["steps"] for g in report["groups"]} == expected
    flags = {g["key"]: {f["flag"]: f for f in g["flags"]} for g in report["groups"]}
    assert "no_budget" in flags["coder"]  # max_steps 60 against a p99 of about 15
    assert "too_tight" in flags["researcher"]  # 12 of 80 stopped at 14 steps, most still progressing
    assert flags["triage"]["answered_then_kept_going"]["runs"] == ["8f3a"]
    assert flags["coder"]["small_sample"]["p99_steps_interval"][0] <= report["groups"][0]["metrics"]["steps"]["p99"]
    assert "small_sample" not in flags["triage"]  # 106 succeeded runs
    assert any(r["status"] == "budget_exceeded" for r in report["stop_reason_rates"])
    assert {r["kind"] for r in report["latency"]} == {"model", "tool", "event"}
    big = next(r for r in report["result_size"] if r["tool_name"] == "big_output")
    assert big["share_above_bound"] > 0  # the planted unbounded results


def test_emit_toml_yaml_and_python(cli, night_db):
    recommended = {g["key"]: g["recommended"] for g in cli("budgets", "--json", "--db", night_db).json()["groups"]}
    toml = tomllib.loads(cli("budgets", "--emit", "toml", "--db", night_db).out)
    assert toml["budgets"]["triage"]["max_steps"] == recommended["triage"]["steps"]
    assert math.isclose(toml["budgets"]["coder"]["max_wall_seconds"], recommended["coder"]["wall_seconds"], abs_tol=1e-3)
    python = cli("budgets", "--emit", "python", "--db", night_db).out
    budgets = ast.literal_eval(python.split("BUDGETS = ", 1)[1])
    assert budgets["researcher"]["max_steps"] == recommended["researcher"]["steps"]
    yaml = cli("budgets", "--emit", "yaml", "--db", night_db).out
    assert '  "coder":' in yaml and f"    max_steps: {recommended['coder']['steps']}" in yaml
    assert cli("budgets", "--emit", "ini", "--db", night_db).code == ExitCode.BAD_INPUT


def test_alert_on_a_rate_never_on_one_run(cli, night_db):
    alerted = cli("budgets", "--alert-rate", "budget_exceeded=0.10", "--json", "--db", night_db)
    assert alerted.code == ExitCode.FINDINGS
    assert [(a["group"], a["status"]) for a in alerted.json()["alerts"]] == [("researcher", "budget_exceeded")]
    assert cli("budgets", "--alert-rate", "budget_exceeded=0.5", "--db", night_db).code == ExitCode.OK
    assert cli("budgets", "--alert-rate", "exploded=0.1", "--db", night_db).code == ExitCode.BAD_INPUT
    assert cli("budgets", "--alert-rate", "failed=lots", "--db", night_db).code == ExitCode.BAD_INPUT
    assert cli("budgets", "--by", "planet", "--db", night_db).code == ExitCode.BAD_INPUT
