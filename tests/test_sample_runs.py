"""The committed sample night: reproducible, within size, and what the issue promised."""

from __future__ import annotations

import filecmp
import json
import subprocess
import sys

import pytest

from conftest import SAMPLE_NIGHT, SAMPLE_RUNS
from reconcile import store
from reconcile.ingest.driver import ingest
from reconcile.store.status import STATUSES


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("night") / "night.duckdb")
    ingest(con, [SAMPLE_RUNS])
    yield con
    con.close()


def test_the_generator_reproduces_the_committed_night(tmp_path):
    subprocess.run([sys.executable, str(SAMPLE_RUNS / "generate.py"), "--out", str(tmp_path)], check=True)
    for name in ("planted.json", "PLANTED.md"):
        assert filecmp.cmp(tmp_path / name, SAMPLE_RUNS / name, shallow=False), name
    for journal in SAMPLE_NIGHT.glob("*.jsonl"):
        assert filecmp.cmp(tmp_path / SAMPLE_NIGHT.name / journal.name, journal, shallow=False), journal.name


def test_the_night_is_small_enough_to_commit():
    assert sum(p.stat().st_size for p in SAMPLE_NIGHT.iterdir()) < 5_000_000


def test_three_agents_a_few_hundred_runs_every_status(night):
    agents = night.execute("select count(distinct agent), count(*) from runs").fetchall()[0]
    assert agents[0] == 3 and 200 <= agents[1] <= 500
    statuses = {r[0] for r in night.execute("select distinct status from runs").fetchall()}
    # every status; the runs the harness crashed in are abandoned now (silent for days past a 15-minute budget)
    assert statuses == set(STATUSES) - {"running"}
    assert night.execute("select count(*) from rejects").fetchall() == [(0,)]


def test_succeeded_step_p99_differs_from_the_configured_ceiling(night):
    rows = night.execute("""select agent, any_value(max_steps), quantile_cont(steps, 0.99)
                            from run_view where status = 'succeeded' group by agent""").fetchall()
    # never the p99 itself: the researcher's ceiling is too tight (its successes bunch up just under it), the
    # others are well clear of it
    assert all(abs(ceiling - p99) >= 0.5 for _, ceiling, p99 in rows)
    assert any(ceiling > 2 * p99 for _, ceiling, p99 in rows)  # one agent's ceiling is no budget at all


def test_every_planted_row_points_at_a_real_run_and_step(night):
    planted = json.loads((SAMPLE_RUNS / "planted.json").read_text())
    assert {p["check"] for p in planted} >= {"final_answer_not_overwritten", "ledger_matches_transcript",
                                             "tool_calls_paired", "side_effects_once", "stalled_runs_detected",
                                             "budgets_enforced"}
    for p in planted:
        if p["run_id"] is None:  # a provider bucket's finding names no run
            assert p["step"] is None and p["check"] in {"tokens_match_provider", "costs_match_provider"}
            continue
        assert night.execute("select count(*) from runs where run_id = ?", [p["run_id"]]).fetchall() == [(1,)]
        if p["step"] is not None:
            assert night.execute("select count(*) from steps where run_id = ? and idx = ?",
                                 [p["run_id"], p["step"]]).fetchall() == [(1,)]


def test_the_answered_then_kept_going_run(night):
    run = night.execute("select status, stop_reason, charged_steps, max_steps, final_answer_step from run_view "
                        "where run_id = '8f3a'").fetchall()[0]
    assert run[:4] == ("budget_exceeded", "max_steps", 12, 12)  # 12 charged calls, then the wrap-up turn
    ninth_model_step = night.execute("select idx from steps where run_id = '8f3a' and kind = 'model' "
                                     "order by idx limit 1 offset 8").fetchall()[0][0]
    assert run[4] == ninth_model_step


def test_the_step_view_question_on_a_sample_run(night):
    rows = night.execute("select idx, kind, tool_name, cost_micros, ms, error from step_view where run_id = '8f3a'").fetchall()
    assert len(rows) > 12 and rows[0][:2] == (0, "model") and all(r[4] is not None for r in rows)


def test_ingesting_the_sample_folder_twice_loads_nothing_the_second_time(cli, db_path):
    first = cli("ingest", SAMPLE_RUNS, "--json", "--db", db_path).json()
    view_counts = "select (select count(*) from run_view) as runs, (select count(*) from step_view) as steps"
    before = cli("sql", view_counts, "--json", "--db", db_path).json()
    second = cli("ingest", SAMPLE_RUNS, "--json", "--db", db_path).json()
    assert first["totals"]["loaded"] > 4000 and len(first["passed_over"]) == 7
    assert second["totals"]["loaded"] == 0 and {f["status"] for f in second["files"]} == {"unchanged"}
    assert cli("sql", view_counts, "--json", "--db", db_path).json() == before


def test_a_damaged_copy_of_a_sample_journal_rejects_exactly_the_two_bad_lines(cli, tmp_path, db_path):
    lines = (SAMPLE_NIGHT / "triage.jsonl").read_text().splitlines(keepends=True)
    middle = len(lines) // 2
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("".join(lines[:middle]) + "\x00garbage{{{\n" + "".join(lines[middle:-1]) + lines[-1][:40])
    result = cli("ingest", damaged, "--json", "--db", db_path)
    file = result.json()["files"][0]
    assert (file["lines"], file["rejected"]) == (len(lines) + 1, 2)
    assert file["loaded"] + file["rejected"] + file["skipped"] == file["lines"]
    rejects = cli("sql", "select path, line, reason from rejects order by line", "--json", "--db", db_path).json()
    assert [(r["line"], r["reason"]) for r in rejects] == [
        (middle + 1, "not valid JSON"),
        (len(lines) + 1, "truncated last line: no newline and not valid JSON (the writer stopped mid-line)")]
    assert all(r["path"] == str(damaged) for r in rejects)
    runs = cli("sql", "select count(*) as n from runs", "--json", "--db", db_path).json()[0]["n"]
    assert runs == 120  # the truncated run_end leaves its run 'running', it is not lost
