"""The canonical status taxonomy and the stop-reason mapping (Python and SQL agree)."""

from __future__ import annotations

import json

import duckdb
import pytest

from reconcile.store.status import STATUSES, install_status_macro, map_stop_reason

CASES = {
    "model_finished": "succeeded", "end_turn": "succeeded", "complete": "succeeded", "incomplete": "failed",
    "max_steps": "budget_exceeded", "max_prompt_tokens": "budget_exceeded",
    "max_completion_tokens": "budget_exceeded", "max_wall_seconds": "timed_out",
    "identical_tool_results": "stalled", "step limit (40)": "budget_exceeded",
    "token limit (200000)": "budget_exceeded", "time limit (600s)": "timed_out",
    "cost limit ($2.50)": "budget_exceeded", "submitted": "succeeded", "exit_cost": "budget_exceeded",
    "exit_context": "budget_exceeded", "exit_format": "failed", "exit_api": "failed", "exit_error": "failed",
    "exit_command_timeout": "timed_out", "exit_total_execution_time": "timed_out",
    "submitted (exit_cost)": "budget_exceeded", "submitted (exit_format)": "failed",
    "submitted (exit_command_timeout)": "timed_out", "cancelled": "cancelled", "Stalled": "stalled",
    "  END_TURN ": "succeeded", "tool_error": "failed",
}


@pytest.fixture(scope="module")
def sql():
    con = duckdb.connect()
    install_status_macro(con)
    return lambda raw: con.execute("select canonical_status(?)", [raw]).fetchall()[0][0]


@pytest.mark.parametrize("raw,status", sorted(CASES.items()))
def test_stop_reason_maps_to_status_in_python_and_sql(raw, status, sql):
    assert map_stop_reason(raw) == status
    assert sql(raw) == status


@pytest.mark.parametrize("raw", ["weird_reason", "step limit (many)", "", "max_steps_and_more"])
def test_unknown_reasons_map_to_nothing(raw, sql):
    assert map_stop_reason(raw) is None
    assert sql(raw) is None


def test_taxonomy_is_exactly_the_eight_statuses():
    assert STATUSES == ("succeeded", "failed", "cancelled", "budget_exceeded", "timed_out", "stalled", "abandoned",
                        "running")


def test_a_run_with_no_end_is_abandoned_once_silent_past_its_budget(tmp_path):
    """Issue 50: no end record and silent for longer than its wall-clock budget (else abandoned_after) as of the
    ingest: abandoned — and running again if its file grows with news of it."""
    from datetime import datetime, timedelta, timezone

    from journals import StepClock
    from reconcile import store
    from reconcile.ingest.driver import ingest
    from reconcile.journal import Journal

    start = datetime(2026, 11, 28, 23, 0, tzinfo=timezone.utc)
    path = tmp_path / "night.jsonl"
    with Journal(path, clock=StepClock(start)) as journal:
        budgeted = journal.start_run("budgeted", agent="a", limits={"max_wall_seconds": 60})
        budgeted.model_step(usage={"input_uncached": 10, "output": 1}, ms=1500)
        free = journal.start_run("free", agent="a")  # no wall-clock budget: abandoned_after decides
        free.model_step(usage={"input_uncached": 10, "output": 1}, ms=1500)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    last = {run: max(datetime.fromisoformat(l["ts"].replace("Z", "+00:00")) + timedelta(milliseconds=l.get("ms", 0))
                     for l in lines if l["run_id"] == run) for run in ("budgeted", "free")}
    con = store.connect(tmp_path / "s.duckdb")

    def statuses(now, after=3600.0):
        ingest(con, [path], now=now, abandoned_after=after)
        return dict(con.execute("select run_id, status from runs").fetchall())

    # exactly at the limit is not past it: the budget is a duration the run may use whole
    assert statuses(last["budgeted"] + timedelta(seconds=60)) == {"budgeted": "running", "free": "running"}
    assert statuses(last["budgeted"] + timedelta(seconds=61)) == {"budgeted": "abandoned", "free": "running"}
    assert statuses(last["free"] + timedelta(seconds=3601)) == {"budgeted": "abandoned", "free": "abandoned"}
    assert statuses(last["free"] + timedelta(seconds=3601), after=7200.0)["free"] == "running"  # the setting decides
    with open(path, "a") as handle:  # news of the budgeted run: its file grows, it is running again
        handle.write(json.dumps({"v": 1, "type": "step", "run_id": "budgeted", "idx": 1, "kind": "model",
                                 "ts": (last["free"] + timedelta(seconds=4000)).isoformat(),
                                 "usage": {"input_uncached": 5, "output": 1}}) + "\n")
    assert statuses(last["free"] + timedelta(seconds=4010))["budgeted"] == "running"
    con.close()


def test_abandoned_after_hours_is_read_and_checked(tmp_path):
    from reconcile.config import load_config
    from reconcile.errors import BadInput

    assert load_config(None).abandoned_after == 86400.0  # no file here: a day
    good = tmp_path / "reconcile.toml"
    good.write_text("[ingest]\nabandoned_after_hours = 2\n")
    assert load_config(good).abandoned_after == 7200.0
    for bad in ("0", "-1", '"a day"', "true", "100000"):
        good.write_text(f"[ingest]\nabandoned_after_hours = {bad}\n")
        with pytest.raises(BadInput, match="abandoned_after_hours"):
            load_config(good)
