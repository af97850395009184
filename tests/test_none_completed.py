"""Runs paid for and no task completed: the cost per completed task is unbounded — the worst a configuration can do —
and reads so ("none completed", ``no_task_completed``), never "unknown" as a missing price does (issue 47, item 8)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from reconcile import store
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal

START = datetime(2026, 11, 28, 23, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Agent "doomed": three runs that spend and fail; agent "fine": two runs that succeed in two calls each."""
    folder = tmp_path_factory.mktemp("none-completed")
    clock = iter(START + timedelta(seconds=n) for n in range(10_000))
    with Journal(folder / "night.jsonl", clock=lambda: next(clock)) as journal:
        for n in range(3):
            run = journal.start_run(f"doomed-{n}", agent="doomed", model="claude-sonnet-4-5", provider="anthropic",
                                    limits={"max_steps": 5})
            run.model_step(usage={"input_uncached": 1000, "output": 200}, ms=500)
            run.end("tool_error", status="failed")
        for n in range(2):
            run = journal.start_run(f"fine-{n}", agent="fine", model="claude-sonnet-4-5", provider="anthropic",
                                    limits={"max_steps": 5})
            run.model_step(usage={"input_uncached": 1000, "output": 200}, ms=500)
            run.model_step(usage={"input_uncached": 1200, "output": 100}, ms=500, final=True, text="done")
            run.end("model_finished")
    path = folder / "store.duckdb"
    with store.connect(path) as con:
        ingest(con, [folder / "night.jsonl"])
    return path


def test_cost_says_none_completed_where_no_task_was(cli, db):
    data = cli("cost", "--by", "agent", "--json", "--db", db).json()
    groups = {g["key"]: g for g in data["groups"]}
    doomed, fine = groups["doomed"], groups["fine"]
    assert doomed["cost_usd"] > 0 and doomed["cost_per_completed_task_usd"] is None
    assert doomed["no_task_completed"] is True  # not unknown: spent, and nothing completed
    assert fine["no_task_completed"] is False and fine["cost_per_completed_task_usd"] == pytest.approx(
        fine["cost_usd"] / 2, abs=1e-6)
    assert data["total"]["no_task_completed"] is False
    tasks = {t["agent"]: t for t in data["cost_per_completed_task"]}
    assert tasks["doomed"]["no_task_completed"] is True and tasks["doomed"]["cost_per_completed_task_usd"] is None
    text = cli("cost", "--by", "agent", "--wide", "--db", db).out
    doomed_lines = [line for line in text.splitlines() if "doomed" in line]
    assert doomed_lines and all("none completed" in line for line in doomed_lines)


def test_replay_says_none_completed_for_a_candidate_that_cuts_every_success(cli, db):
    data = cli("replay", "--set", "max_steps=1", "--json", "--db", db).json()
    fine = next(g for g in data["candidates"][0]["groups"] if g["key"] == "fine")
    assert fine["successes_lost"] == 2 and fine["no_task_completed_after"] is True
    assert fine["no_task_completed_before"] is False and fine["cost_per_completed_task_after_usd"] is None
    text = cli("replay", "--set", "max_steps=1", "--db", db).out
    assert "none completed" in text


def test_the_finance_report_says_none_completed(cli, db, tmp_path):
    out = tmp_path / "finance.html"
    assert cli("report", "finance", "--out", out, "--db", db).code == 0
    html = out.read_text()
    assert "none completed" in html
