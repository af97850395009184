"""What a harness declares of its own policy is what reconcile judges and reports by: agent trees with one
shared budget, seed 000's prompt and completion ceilings, a loop detector named by configuration, and the
morning report's budget section and night-over-night comparison."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from journals import StepClock
from reconcile import store
from reconcile.analyses.budgets import budget_report, stop_reason_rates
from reconcile.checks import load_checks, run_checks, select_checks
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal
from reconcile.when import use_zone
from reconcile.engine import DuckDBEngine

def micros(dollars):
    """A --json amount (exact dollars, as --csv has it) back in micro-dollars, to compare with sums and ratios."""
    return None if dollars is None else round(dollars * 1_000_000)


USAGE = {"input_uncached": 1000, "output": 100}  # claude-haiku-4-5: 1,500 µ$ a call


def _run(journal, run_id, steps, parent=None, limits=None, status="model_finished", **start):
    run = journal.start_run(run_id, agent=start.pop("agent", "planner"), model="claude-haiku-4-5",
                            provider="anthropic", parent_run_id=parent, limits=limits or {}, **start)
    for n in range(steps):
        run.model_step(usage=USAGE, ms=100, final=n == steps - 1, text="done" if n == steps - 1 else None)
    run.end(status)
    return run


@pytest.fixture(scope="module")
def trees(tmp_path_factory):
    """Two agent trees sharing a budget (a root, two sub-agents, a grandchild) and a run on its own."""
    folder = tmp_path_factory.mktemp("trees")
    with Journal(folder / "night.jsonl", clock=StepClock()) as journal:
        _run(journal, "root", 2, limits={"max_steps": 10, "scope": "tree"})
        _run(journal, "child-a", 3, parent="root", agent="searcher")
        _run(journal, "child-b", 1, parent="root", agent="searcher")
        _run(journal, "grandchild", 2, parent="child-a", agent="reader")
        _run(journal, "root2", 1, limits={"max_steps": 10, "scope": "tree"})
        _run(journal, "child2", 4, parent="root2", agent="searcher")
        _run(journal, "alone", 2, limits={"max_steps": 10})
    with store.connect(folder / "night.duckdb") as con:
        ingest(con, [folder / "night.jsonl"])
    return folder / "night.duckdb"  # closed: the CLI opens it as a user's command would


def test_every_run_knows_the_root_of_its_tree(trees):
    with store.connect(trees) as con:
        roots = dict(con.execute("select run_id, root_run_id from run_view").fetchall())
    assert roots == {"root": "root", "child-a": "root", "child-b": "root", "grandchild": "root", "root2": "root2",
                     "child2": "root2", "alone": "alone"}


def test_runs_cost_and_budgets_report_per_tree(trees, cli):
    db = trees
    rows = {r["run_id"]: r for r in cli("runs", "--tree", "--json", "--db", db).json()}
    assert set(rows) == {"root", "root2", "alone"}
    assert (rows["root"]["steps"], rows["root"]["subagents"], micros(rows["root"]["cost_usd"])) == (8, 3, 8 * 1500)
    assert (rows["root2"]["steps"], rows["root2"]["subagents"]) == (5, 1)
    assert rows["root"]["agent"] == "planner"  # the tree's row is its root's
    groups = {g["key"]: g for g in cli("cost", "--by", "tree", "--json", "--db", db).json()["groups"]}
    assert {k: (g["model_calls"], micros(g["cost_usd"])) for k, g in groups.items()} == {
        "root": (8, 12_000), "root2": (5, 7_500), "alone": (2, 3_000)}
    report = cli("budgets", "--unit", "tree", "--json", "--db", db).json()
    assert report["unit"] == "tree"
    planner = next(g for g in report["groups"] if g["key"] == "planner")  # the roots' agent: three trees
    assert planner["runs"] == 3 and planner["metrics"]["steps"]["p50"] == 5  # trees of 8, 5 and 2 charged steps


def test_a_sub_agent_under_a_shared_budget_is_judged_with_its_tree(trees):
    with store.connect(trees) as con:
        report = run_checks(DuckDBEngine(con), select_checks(load_checks(), ["budgets_enforced"]), record=False)
    assert report.findings == [] and report.results[0].not_judged == []  # every run is under some budget


def test_prompt_and_completion_ceilings_are_recommended_where_the_harness_keeps_them(tmp_path):
    path = tmp_path / "seed000.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        for n in range(5):
            _run(journal, f"fenced{n}", 2 + n, agent="fenced",
                 limits={"max_steps": 12, "max_prompt_tokens": 60_000, "max_completion_tokens": 8_000})
            _run(journal, f"plain{n}", 2 + n, agent="plain", limits={"max_steps": 12})
    con = store.connect(tmp_path / "s.duckdb")
    ingest(con, [path])
    groups = {g["key"]: g for g in budget_report(DuckDBEngine(con), "agent")["groups"]}
    fenced, plain = groups["fenced"], groups["plain"]
    assert fenced["configured"]["prompt_tokens"] == 60_000 and fenced["configured"]["completion_tokens"] == 8_000
    # the succeeded runs used 2,000 to 6,000 prompt tokens: the p99 is 5,960, set at 6,000 (two figures, up)
    assert fenced["metrics"]["prompt_tokens"]["p99"] == pytest.approx(5_960)
    assert fenced["recommendation"]["prompt_tokens"]["value"] == 6_000
    assert fenced["recommendation"]["completion_tokens"]["value"] == 600  # p99 596
    assert "prompt_tokens" not in plain["recommendation"] and "completion_tokens" not in plain["recommendation"]
    steps = fenced["recommendation"]["steps"]
    assert steps["value"] == 6 and "allows 6 charged model calls, plus the tool-free wrap-up turn" in steps["allows"]


def _loop(journal, run_id, **start):
    """The same call four times, results differing, then another model call: past seed 003's detector."""
    run = journal.start_run(run_id, agent="looper", model="claude-haiku-4-5", tools=[{"name": "search"}], **start)
    for n in range(4):
        step = run.model_step(usage=USAGE, tool_calls=[("search", {"q": "same"})])
        run.tool_step(step.calls[0], result=f"page {n}")
    run.model_step(usage=USAGE, final=True, text="done")
    run.end("model_finished")


def test_a_run_that_declares_no_detector_is_judged_by_the_one_configuration_names(tmp_path):
    path = tmp_path / "loops.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        _loop(journal, "undeclared")
        _loop(journal, "declared", loop_detector="calls_window")
    con = store.connect(tmp_path / "s.duckdb")
    ingest(con, [path])
    check = select_checks(load_checks(), ["loop_stopped_at_limit"])
    plain = run_checks(DuckDBEngine(con), check, record=False)
    assert [(f.run_id, f.step) for f in plain.findings] == [("declared", 6)]  # the third call, within six
    assert "no loop detector" in plain.results[0].not_judged[0].reason
    configured = run_checks(DuckDBEngine(con), check, settings={"agent.looper.loop_detector": "calls_window"}, record=False)
    assert sorted(f.run_id for f in configured.findings) == ["declared", "undeclared"]
    assert configured.results[0].not_judged == []
    # seed 001's detector for the runs that declare none: the same calls a third time anywhere (step 4)
    seed001 = run_checks(DuckDBEngine(con), check, settings={"loop_detector": "calls_anywhere"}, record=False)
    assert sorted((f.run_id, f.step) for f in seed001.findings) == [("declared", 6), ("undeclared", 4)]
    # a configured limit is the threshold of every run that gives none: four calls never reach five
    assert run_checks(DuckDBEngine(con), check, settings={"loop_detector": "calls_anywhere", "loop_limit": "5"},
                      record=False).findings == []


def test_the_morning_report_compares_night_with_night_and_honours_the_cost_source(tmp_path):
    path = tmp_path / "nights.jsonl"
    starts = [datetime(2026, 11, 27, 23, 30, tzinfo=timezone.utc), datetime(2026, 11, 28, 1, 30, tzinfo=timezone.utc),
              datetime(2026, 11, 28, 23, 0, tzinfo=timezone.utc)]
    with Journal(path) as journal:
        for n, start in enumerate(starts):
            journal.clock = StepClock(start)
            _run(journal, f"r{n}", 1, agent="a", status="model_finished" if n != 1 else "max_steps")
    con = store.connect(tmp_path / "s.duckdb")
    ingest(con, [path])
    use_zone(DuckDBEngine(con), "UTC")
    nights = {(r["day"], r["status"]): r["runs"] for r in stop_reason_rates(DuckDBEngine(con), "agent", period="night")}
    # 23:30 and 01:30 are one night (noon to noon), not two days
    assert nights == {("2026-11-27", "succeeded"): 1, ("2026-11-27", "budget_exceeded"): 1,
                      ("2026-11-28", "succeeded"): 1}
    from reconcile.reports.reporting import morning_context
    checks = run_checks(DuckDBEngine(con), load_checks(), record=False)
    assert morning_context(DuckDBEngine(con), checks, source="harness")["budgets"]["cost_source"] == "harness"


def test_config_sql_lets_a_check_on_the_loop_replay_run_in_a_plain_duckdb_shell(tmp_path, cli):
    """`reconcile config --sql` prints what the runner sets up, loop_firings included, statement by statement."""
    import duckdb

    from conftest import ROOT

    path = tmp_path / "loops.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        _loop(journal, "declared", loop_detector="calls_window")
    with store.connect(tmp_path / "s.duckdb") as con:
        ingest(con, [path])
    statements = cli("config", "--sql", "--db", tmp_path / "s.duckdb").out
    shell = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    for statement in statements.split(";\n"):  # as a shell splits them: no ';' may end a line inside one
        if statement.strip():
            shell.execute(statement)
    rows = shell.execute((ROOT / "queries" / "loop_stopped_at_limit.sql").read_text()).fetchall()
    assert [(run, step) for run, step, _ in rows] == [("declared", 6)]
