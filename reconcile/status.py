"""The canonical status taxonomy and the mapping from harness stop reasons.

One ordered rule list serves both Python (``map_stop_reason``) and SQL (the ``canonical_status``
macro), so the store and the docs cannot disagree. The raw reason is always kept beside the
status. ``docs/status.md`` is generated from ``STOP_REASON_RULES``.
"""

from __future__ import annotations

import re

import duckdb

from .sql_text import string_literal

STATUSES = ("succeeded", "failed", "cancelled", "budget_exceeded", "timed_out", "stalled", "running")
"""Every canonical status. ``running`` means the run has no end record: crashed, or still going."""

# (pattern matched against the whole raw reason, case-insensitive; status; why)
STOP_REASON_RULES: list[tuple[str, str, str]] = [
    (r"succeeded|failed|cancelled|budget_exceeded|timed_out|stalled|running",
     "(itself)", "a canonical status recorded as the reason maps to itself"),
    (r"model_finished|end_turn|stop|complete|completed|finish|finished|done|final_answer|success",
     "succeeded", "the model ended the loop with an answer"),
    (r"submitted", "succeeded", "SWE-agent: the agent submitted its patch"),
    (r"submitted \((exit_cost|exit_context)\)", "budget_exceeded",
     "SWE-agent: auto-submitted after the cost or context budget ran out"),
    (r"submitted \((exit_command_timeout|exit_total_execution_time)\)", "timed_out",
     "SWE-agent: auto-submitted after a time limit"),
    (r"submitted \((exit_format|exit_api|exit_error)\)", "failed",
     "SWE-agent: auto-submitted after an error"),
    (r"submitted \(.*\)", "succeeded", "SWE-agent: submitted, with another note"),
    (r"limitsexceeded", "budget_exceeded", "mini-swe-agent: its step or cost limit was reached (LimitsExceeded)"),
    (r"max_steps|max_turns|max_iterations|step limit \(\d+\)|turn limit \(\d+\)", "budget_exceeded",
     "the step ceiling was reached"),
    (r"max_prompt_tokens|max_completion_tokens|max_tokens|token limit \(\d+\)|exit_context",
     "budget_exceeded", "a token ceiling was reached"),
    (r"max_cost|cost limit \(\$?[0-9.]+\)|exit_cost|budget_exceeded", "budget_exceeded",
     "the spend ceiling was reached"),
    (r"max_wall_seconds|time limit \([0-9.]+ ?s\)|timeout|timed out|exit_command_timeout|exit_total_execution_time",
     "timed_out", "a wall-clock or command time limit was reached"),
    (r"identical_tool_results|repeated_tool_calls|max_repeats|loop_detected|stall|stalled_loop",
     "stalled", "the harness saw the same calls or results repeat"),
    (r"cancel|canceled|user_cancelled|interrupted|keyboard_interrupt|aborted", "cancelled",
     "someone or something stopped the run"),
    (r"incomplete|error|exception|crash|exit_format|exit_api|exit_error|tool_error|fatal", "failed",
     "the run ended without completing its task"),
]

_COMPILED = [(re.compile(rf"^(?:{pattern})$", re.IGNORECASE), status) for pattern, status, _ in STOP_REASON_RULES]


def map_stop_reason(raw: str | None) -> str | None:
    """The canonical status for a raw stop reason, or None when no rule matches."""
    if raw is None:
        return None
    text = raw.strip()
    for pattern, status in _COMPILED:
        if pattern.match(text):
            return text.lower() if status == "(itself)" else status
    return None


def canonical_status_macro_sql() -> str:
    """SQL for the ``canonical_status(raw)`` macro, built from the same rules."""
    branches = []
    for pattern, status, _ in STOP_REASON_RULES:
        result = "lower(trim(raw))" if status == "(itself)" else string_literal(status)
        branches.append(f"when regexp_full_match(trim(raw), {string_literal('(?i)(?:' + pattern + ')')}) then {result}")
    return "create or replace macro canonical_status(raw) as case " + " ".join(branches) + " end"


def install_status_macro(con: duckdb.DuckDBPyConnection, temporary: bool = True) -> None:
    """Create the ``canonical_status`` macro: temporary (per connection), or stored in the file so
    checks that use it run in any DuckDB client."""
    sql = canonical_status_macro_sql()
    con.execute(sql.replace("create or replace macro", "create or replace temp macro") if temporary else sql)


