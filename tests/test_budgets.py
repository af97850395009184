"""Budgets from evidence: exact percentiles, recommendations, flags, snippets and alert rates."""

from __future__ import annotations

import ast
import math
import tomllib

import pytest

from journals import StepClock
from reconcile import store
from reconcile.analyses.resample import bootstrap_p99, quantile_cont
from reconcile.errors import ExitCode
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal


def test_quantile_cont_is_linear_interpolation_between_ranks():
    values = [1, 2, 3, 4, 10]
    assert quantile_cont(values, 0.5) == 3
    assert quantile_cont(values, 0.95) == pytest.approx(8.8)  # rank 3.8: 4 + 0.8 * (10 - 4)
    assert quantile_cont(values, 0.99) == pytest.approx(9.76)
    assert bootstrap_p99([float(v) for v in values]) == bootstrap_p99([float(v) for v in values])  # seeded


def night(path, succeeded_steps, cut=0, ceiling=30, repeating=False):
    """Succeeded runs of the given step counts, and ``cut`` runs stopped by max_steps at the ceiling.

    A cut run calls a different tool each step (still making progress) unless ``repeating``.
    """
    with Journal(path, clock=StepClock()) as journal:
        for number, steps in enumerate(succeeded_steps):
            run = journal.start_run(f"ok{number}", agent="small", limits={"max_steps": ceiling})
            for turn in range(steps):
                run.model_step(usage={"input_uncached": 100, "output": 10}, final=turn == steps - 1,
                               text="done" if turn == steps - 1 else None)
            run.end("model_finished")
        for number in range(cut):
            run = journal.start_run(f"cut{number}", agent="small", limits={"max_steps": ceiling},
                                    tools=[{"name": "read"}])
            for turn in range(ceiling):
                step = run.model_step(usage={"input_uncached": 100, "output": 10},
                                      tool_calls=[("read", {"page": 1 if repeating else turn})])
                run.tool_step(step.calls[0], result="text")
            run.end("max_steps")
    return path


def budgets_of(cli, tmp_path, *args, **kwargs):
    db = tmp_path / "b.duckdb"
    with store.connect(db) as con:
        ingest(con, [night(tmp_path / "night.jsonl", *args, **kwargs)])
    return cli("budgets", "--json", "--db", db).json()["groups"][0]


def test_percentiles_and_recommendation_match_a_hand_computation(cli, tmp_path):
    group = budgets_of(cli, tmp_path, [1, 2, 3, 4, 10])
    steps = group["metrics"]["steps"]
    assert (steps["p50"], round(steps["p95"], 6), round(steps["p99"], 6)) == (3.0, 8.8, 9.76)
    assert group["recommended"]["steps"] == 10 and group["configured"]["steps"] == 30
    assert group["recommendation"]["steps"]["at_least"] is False
    tokens = group["metrics"]["tokens"]  # 110 tokens a step
    assert round(tokens["p99"], 6) == round(9.76 * 110, 6)
    flags = {f["flag"]: f for f in group["flags"]}
    assert "no_budget" in flags and flags["small_sample"]["succeeded_runs"] == 5


def test_a_censored_sample_makes_the_recommendation_a_lower_bound(cli, tmp_path):
    # 20 succeeded runs of up to 8 steps; 4 more were cut at the 10-step ceiling while still making progress
    group = budgets_of(cli, tmp_path, [1 + n % 8 for n in range(20)], cut=4, ceiling=10)
    assert group["metrics"]["steps"]["p99"] < 10  # the naive p99, over the succeeded runs only
    recommendation = group["recommendation"]["steps"]
    assert recommendation["at_least"] is True and recommendation["value"] == 11  # never below, never equal
    assert "raise to at least 11 and observe a night" in recommendation["basis"]
    assert group["metrics"]["steps"]["censored"] == 4 and group["metrics"]["steps"]["cut_by_ceiling"] == 4
    assert {f["flag"] for f in group["flags"]} >= {"too_tight"}
    cost = group["recommendation"]["tokens"]  # no token ceiling: the bound is what the cut runs used, at least
    assert cost["at_least"] and cost["value"] >= 10 * 110
    out = cli("budgets", "--db", tmp_path / "b.duckdb").out
    assert "at least 11" in out and "max_tokens" in out and "max_wall_seconds" in out  # cost: unknown, no row


def test_a_run_that_repeats_itself_is_not_censored(cli, tmp_path):
    group = budgets_of(cli, tmp_path, [1 + n % 8 for n in range(20)], cut=4, ceiling=10, repeating=True)
    assert group["metrics"]["steps"]["censored"] == 0 and not group["recommendation"]["steps"]["at_least"]


def test_few_cut_runs_give_a_robust_p99_and_every_recommendation_names_what_it_would_stop(cli, tmp_path):
    succeeded = [1 + n % 10 for n in range(299)] + [25]  # one long success above the p99
    group = budgets_of(cli, tmp_path, succeeded, cut=1, ceiling=30)
    steps, recommendation = group["metrics"]["steps"], group["recommendation"]["steps"]
    assert steps["censored"] == 1 and not recommendation["at_least"]
    assert recommendation["value"] >= math.ceil(steps["p99"])  # the cut run counted as needing more than any
    assert "counting the 1 run(s) cut while still making progress" in recommendation["basis"]
    assert recommendation["would_stop"] == {"count": 1, "runs": ["ok299"]}



def test_on_the_sample_night_max_steps_is_the_ceiling_of_the_exact_p99(cli, night_db):
    report = cli("budgets", "--by", "agent", "--json", "--db", night_db).json()
    # a step ceiling counts charged model calls: not the wrap-up turn, not a call the provider refused
    rows = cli("sql", "select agent, ceil(quantile_cont(charged_steps, 0.99)) as p99, "
                      "list(charged_steps order by charged_steps desc) as steps from run_view "
                      "where status = 'succeeded' group by agent", "--json", "--db", night_db).json()
    expected = {row["agent"]: row["p99"] for row in rows}  # the one SQL query over run_view
    recommended = {g["key"]: g["recommendation"]["steps"] for g in report["groups"]}
    assert recommended["coder"]["value"] == expected["coder"] and not recommended["coder"]["at_least"]
    above = [s for s in next(r["steps"] for r in rows if r["agent"] == "coder") if s > expected["coder"]]
    assert recommended["coder"]["would_stop"]["count"] == len(above)  # the successes the p99 leaves out
    # researcher is too tight: 10 runs cut at 14 steps while still progressing — never lower it
    assert recommended["researcher"]["at_least"] and recommended["researcher"]["value"] == 15 > expected["researcher"]
    researcher = next(g for g in report["groups"] if g["key"] == "researcher")
    assert all(researcher["recommendation"][m]["value"] >= researcher["configured"][m]
               for m in ("steps", "tokens", "wall_seconds", "cost_micros"))
    flags = {g["key"]: {f["flag"]: f for f in g["flags"]} for g in report["groups"]}
    assert "no_budget" in flags["coder"]  # max_steps 60 against a p99 of about 15
    assert "too_tight" in flags["researcher"]  # 12 of 80 stopped at 14 steps, most still progressing
    assert flags["triage"]["answered_then_kept_going"]["runs"] == ["8f3a"]
    assert flags["coder"]["small_sample"]["p99_steps_interval"][0] <= report["groups"][0]["metrics"]["steps"]["p99"]
    assert "small_sample" not in flags["triage"]  # 106 succeeded runs
    assert any(r["status"] == "budget_exceeded" for r in report["stop_reason_rates"])
    assert {r["kind"] for r in report["latency"]} == {"model", "tool"}  # an event is no call: no latency row
    big = next(r for r in report["result_size"] if r["tool_name"] == "big_output")
    assert big["share_above_bound"] > 0  # the planted unbounded results


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_emit_toml_yaml_and_python(cli, night_db):
    groups = {g["key"]: g for g in cli("budgets", "--json", "--db", night_db).json()["groups"]}
    toml_text = cli("budgets", "--emit", "toml", "--db", night_db).out
    toml = tomllib.loads(toml_text)
    python = cli("budgets", "--emit", "python", "--db", night_db).out
    budgets = ast.literal_eval(python.split("BUDGETS = ", 1)[1])
    yaml = cli("budgets", "--emit", "yaml", "--db", night_db).out
    names = {"steps": "max_steps", "tokens": "max_tokens", "wall_seconds": "max_wall_seconds", "cost_micros": "max_cost_usd"}
    applied = withheld = 0
    for key, group in groups.items():
        for metric, name in names.items():
            recommendation = group["recommendation"].get(metric)
            if recommendation is None:
                continue
            value = group["recommended"][metric] / 1_000_000 if metric == "cost_micros" else group["recommended"][metric]
            if recommendation["apply"]:  # written as a setting, in its unit (spend in dollars), in every style
                applied += 1
                assert math.isclose(toml["budgets"][key][name], value, abs_tol=1e-9), (key, name)
                assert math.isclose(budgets[key][name], value, abs_tol=1e-9), (key, name)
                assert f"    {name}: " in yaml
            else:  # it would have stopped a succeeded run: commented out, the runs named, in every style
                withheld += 1
                assert name not in toml["budgets"].get(key, {}) and name not in budgets.get(key, {}), (key, name)
                assert recommendation["would_stop"]["count"] > 0
                assert any(line.startswith(f"# {name} = ") and "do not apply as is" in line
                           and recommendation["would_stop"]["runs"][0] in line for line in toml_text.splitlines())
    assert applied and withheld  # the sample night has both
    assert "max_cost_micros" not in toml_text + python + yaml  # one name for the spend ceiling everywhere
    # the three styles say the same: a group whose every ceiling is withheld is an empty mapping, never null
    parsed = pytest.importorskip("yaml").safe_load(yaml)["budgets"]
    assert parsed == toml["budgets"] == budgets
    assert cli("budgets", "--emit", "ini", "--db", night_db).code == ExitCode.BAD_INPUT


def test_alert_on_a_rate_never_on_one_run(cli, night_db):
    alerted = cli("budgets", "--alert-rate", "budget_exceeded=0.10", "--json", "--db", night_db)
    assert alerted.code == ExitCode.FINDINGS
    assert [(a["group"], a["status"]) for a in alerted.json()["alerts"]] == [("researcher", "budget_exceeded")]
    assert cli("budgets", "--alert-rate", "budget_exceeded=0.5", "--db", night_db).code == ExitCode.OK
    assert cli("budgets", "--alert-rate", "exploded=0.1", "--db", night_db).code == ExitCode.BAD_INPUT
    assert cli("budgets", "--alert-rate", "failed=lots", "--db", night_db).code == ExitCode.BAD_INPUT
    assert cli("budgets", "--by", "planet", "--db", night_db).code == ExitCode.BAD_INPUT


@pytest.mark.parametrize("by", ["agent", "task_class", "model"])
def test_the_ceilings_table_and_the_replay_of_its_ceilings_stop_the_same_successes(night_db, by):
    """Issue 47: "succeeded runs it would stop" is the fence walk's answer (what was spent before each call), the one
    `reconcile replay` (and `budgets --emit`'s comment) gives for the recommended ceilings — not run totals."""
    from reconcile.analyses.budgets import budget_report
    from reconcile.analyses.replay import from_budgets, replay
    from reconcile.engine import DuckDBEngine

    with store.connect(night_db, read_only=True) as con:
        engine = DuckDBEngine(con)
        report = budget_report(engine, by)
        candidate = from_budgets(report, every=True)  # withheld ones too: the table's figures are for each
        replayed = replay(engine, [candidate], by, runs=True)["candidates"][0]
        applied = replay(engine, [from_budgets(report)], by, runs=True)["candidates"][0]
    # what budgets emits and replay tries by default stops no run known to succeed
    assert not [row for row in applied["runs"] if row["outcome"] == "cut" and row["status"] == "succeeded"]
    stopped = {(g["key"], run_id) for g in report["groups"] for r in g["recommendation"].values()
               if r["value"] is not None for run_id in r["would_stop"]["runs"]}
    assert all(r["would_stop"]["count"] <= 20 for g in report["groups"] for r in g["recommendation"].values())
    lost = {(row["group_key"], row["run_id"]) for row in replayed["runs"]
            if row["outcome"] == "cut" and row["status"] == "succeeded"}
    assert lost == stopped and lost  # the sample night's ceilings do stop some successes: not a vacuous match
    assert sum(g["successes_lost"] for g in replayed["groups"]) == len(lost)
