"""The rules a fence declares decide a replay exactly at its limits (issue 47, items 6 and 12): seed 003's deadline
is reached only past it and checked first, its stop reason is its status; a stop that came long past the deadline
with nothing journalled is a late stop."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from reconcile import store
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal

T0 = datetime(2026, 11, 29, 1, 0, tzinfo=timezone.utc)
USAGE = {"input_uncached": 500, "output": 50}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fence-rules")
    with Journal(folder / "night.jsonl", clock=lambda: T0) as journal:
        for fence in ("seed003", "seed000"):  # one call exactly at a 10 s deadline, then an answer
            run = journal.start_run(f"at-deadline-{fence}", agent=fence, model="claude-sonnet-4-5",
                                    provider="anthropic", limits={"max_wall_seconds": 10}, fence=fence, ts=T0)
            run.model_step(usage=USAGE, ms=500, ts=T0 + timedelta(seconds=1), tool_calls=[("read", {"p": 1})])
            run.model_step(usage=USAGE, ms=500, ts=T0 + timedelta(seconds=10), final=True, text="done")
            run.end("succeeded" if fence == "seed003" else "model_finished",
                    status="succeeded" if fence == "seed003" else None, ts=T0 + timedelta(seconds=11))
        # seed 003 stopped after two steps (max 2) at 10.5 s of a 10 s wall clock: both reached — the deadline first
        both = journal.start_run("both-reached", agent="seed003", model="claude-sonnet-4-5", provider="anthropic",
                                 limits={"max_wall_seconds": 10, "max_steps": 2}, fence="seed003", ts=T0)
        for second in (1, 5):
            both.model_step(usage=USAGE, ms=500, ts=T0 + timedelta(seconds=second), tool_calls=[("read", {"p": second})])
        both.end("timed_out", status="timed_out", ts=T0 + timedelta(seconds=10.5))
        # a 300 s wall clock; the last step ends 40 s in; the stop is stamped at 900 s
        late = journal.start_run("stopped-late", agent="seed000", model="claude-sonnet-4-5", provider="anthropic",
                                 limits={"max_wall_seconds": 300}, fence="seed000", ts=T0)
        late.model_step(usage=USAGE, ms=1000, ts=T0 + timedelta(seconds=1), tool_calls=[("read", {"p": 1})])
        late.end("max_wall_seconds", ts=T0 + timedelta(seconds=900))
    path = folder / "store.duckdb"
    with store.connect(path) as con:
        ingest(con, [folder / "night.jsonl"])
    return path


def _as_run(cli, db) -> dict[str, dict]:
    data = cli("replay", "--as-run", "--runs", "--json", "--db", db).json()
    return {row["run_id"]: row for row in data["candidates"][0]["runs"]}


def test_a_call_exactly_at_the_deadline_is_allowed_under_seed_003_and_cut_under_seed_000(cli, db):
    rows = _as_run(cli, db)
    assert rows["at-deadline-seed003"]["outcome"] == "unchanged"  # Date.now() > deadline: not yet
    assert (rows["at-deadline-seed000"]["outcome"], rows["at-deadline-seed000"]["cut_idx"]) == ("cut", 1)
    found = cli("check", "--only", "budgets_enforced", "--json", "--exit-zero", "--db", db).json()["findings"]
    assert [(f["run_id"], f["step"]) for f in found if f["run_id"].startswith("at-deadline")] == [
        ("at-deadline-seed000", 1)]


def test_seed_003_checks_its_deadline_first_and_writes_its_status(cli, db):
    row = _as_run(cli, db)["both-reached"]
    assert (row["outcome"], row["ceiling"], row["new_status"]) == ("same_stop", "wall_seconds", "timed_out")
    assert row["stop_reason_written"] == "timed_out"  # its status, not seed 001's "time limit (10s)"
    other = cli("replay", "--set", "max_steps=1", "--runs", "--json", "--db", db).json()["candidates"][0]["runs"]
    cut = next(r for r in other if r["run_id"] == "both-reached")
    assert (cut["outcome"], cut["stop_reason_written"]) == ("cut", "budget_exceeded")


def test_a_stop_long_past_the_deadline_with_nothing_journalled_is_late(cli, db):
    row = _as_run(cli, db)["stopped-late"]
    # 900 s - max(300 s deadline, 2 s: the last step's end) = 600 s the journal cannot account for
    assert (row["outcome"], row["late_ms"], row["ms_saved"]) == ("late_stop", 600_000, 600_000)
    found = cli("check", "--only", "budgets_enforced", "--json", "--exit-zero", "--db", db).json()["findings"]
    late = [f for f in found if f["run_id"] == "stopped-late"]
    assert len(late) == 1 and "600.0 s past its wall clock of 300 s" in late[0]["detail"]
    relaxed = cli("check", "--only", "budgets_enforced", "--json", "--exit-zero", "--set", "fence_grace_seconds=700",
                  "--db", db).json()["findings"]
    assert not [f for f in relaxed if f["run_id"] == "stopped-late"]  # within the grace: not late
