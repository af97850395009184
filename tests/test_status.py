"""The canonical status taxonomy and the stop-reason mapping (Python and SQL agree)."""

from __future__ import annotations

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


def test_taxonomy_is_exactly_the_seven_statuses():
    assert STATUSES == ("succeeded", "failed", "cancelled", "budget_exceeded", "timed_out", "stalled", "running")
