"""The canonical status taxonomy and the mapping from a harness's own words.

A harness ends a run in its own vocabulary: a stop reason (``max_steps``, seed 001's
``token limit (200,000)``) and sometimes a status of its own (seed 001's ``complete`` /
``incomplete``, seed 003's ``budget_exceeded``). Both are kept raw beside the canonical status.
One ordered rule list serves Python (``map_stop_reason``, ``map_run_end``) and SQL (the
``canonical_status`` and ``run_end_status`` macros), so the store, the journal writer and the
docs cannot disagree. ``docs/status.md`` is generated from these rules.

Each stop-reason rule also says which limit the reason names (``steps``, ``tokens``,
``prompt_tokens``, ``completion_tokens``, ``cost_micros``, ``wall_seconds``, ``loop``), which is how
``reconcile budgets`` tells which ceiling cut a run.
"""

from __future__ import annotations

import re
from typing import NamedTuple

import duckdb

from reconcile.sql_text import string_literal

STATUSES = ("succeeded", "failed", "cancelled", "budget_exceeded", "timed_out", "stalled", "abandoned", "running")
"""Every canonical status. ``running`` means the run has no end record and was last heard from within its
wall-clock budget (or ``[ingest] abandoned_after_hours``, 24 by default) of the last ingest: still going, or
too recently silent to say. ``abandoned``: no end record, and silent for longer than that — it crashed or was
left, and will not end by itself: not running, not succeeded (reconcile's word, never a harness's)."""

ENDED = tuple(s for s in STATUSES if s not in ("running", "abandoned"))  # the statuses a harness may write

ABANDONED_AFTER_SECONDS = 24 * 3600  # silent this long with no end record and no wall-clock budget: abandoned

# One statement (DuckDB and the store's SQL): a run with no end record whose last journalled moment (its last
# step's end, else its start) is further back than its wall-clock budget, else $after seconds, from $now, is
# abandoned; one that was abandoned and has been heard from since (its file grew) is running again.
ABANDON_SQL = """
update runs set status = case when stale then 'abandoned' else 'running' end
from (select r.run_id,
             coalesce(max(s.started_at + to_milliseconds(coalesce(s.ms, 0))), r.started_at)
                 < $now - to_seconds(coalesce(r.max_wall_seconds, $after)) as stale
      from runs r left join steps s using (run_id)
      where r.status in ('running', 'abandoned') and r.ended_at is null and r.stop_reason is null
        and r.harness_status is null
      group by r.run_id, r.started_at, r.max_wall_seconds) w
where runs.run_id = w.run_id and w.stale is not null
  and runs.status <> case when w.stale then 'abandoned' else 'running' end"""

# Numbers as harnesses print them in their stop strings: "200,000", "1_000", "300.0", "$2.00", "300s".
# The spaces after the number are one \s* (the unit's own come with it): "\s*(?:unit)?\s*" splits a run of spaces
# between two stars every way before it fails, which is quadratic for Python's regular expressions (and Java's).
_NUMBER = r"\d[\d,_]*(?:\.\d+)?"
_MONEY = r"\s*(?:[$€£]\s*)?" + _NUMBER + r"\s*(?:(?:usd|dollars)\s*)?"
_DURATION = r"\s*" + _NUMBER + r"\s*(?:(?:ms|s|sec|secs|seconds|m|min|mins|minutes|h|hr|hrs|hours)\s*)?"
_COUNT = r"\s*" + _NUMBER + r"\s*(?:(?:tokens|steps|turns|calls|iterations)\s*)?"


class Rule(NamedTuple):
    pattern: str  # matched against the whole raw text, case-insensitive, surrounding spaces ignored
    status: str  # a canonical status, or "(itself)"
    why: str
    names: str | None = None  # the limit the reason names, if it names one


STOP_REASON_RULES: list[Rule] = [
    Rule(r"succeeded|failed|cancelled|budget_exceeded|timed_out|stalled|running",
         "(itself)", "a canonical status recorded as the reason maps to itself"),
    Rule(r"model_finished|end_turn|stop|complete|completed|finish|finished|done|final_answer|success",
         "succeeded", "the model ended the loop with an answer"),
    Rule(r"submitted", "succeeded", "SWE-agent: the agent submitted its patch"),
    Rule(r"submitted \(exit_context\)", "budget_exceeded",
         "SWE-agent: auto-submitted after the context budget ran out", "tokens"),
    Rule(r"submitted \(exit_cost\)", "budget_exceeded",
         "SWE-agent: auto-submitted after the cost budget ran out", "cost_micros"),
    Rule(r"submitted \(exit_total_execution_time\)", "timed_out",
         "SWE-agent: auto-submitted after its total time limit", "wall_seconds"),
    Rule(r"submitted \(exit_command_timeout\)", "timed_out", "SWE-agent: auto-submitted after a command timed out"),
    Rule(r"submitted \((exit_format|exit_api|exit_error)\)", "failed",
         "SWE-agent: auto-submitted after an error"),
    Rule(r"submitted \(.*\)", "succeeded", "SWE-agent: submitted, with another note"),
    Rule(r"limitsexceeded", "budget_exceeded", "mini-swe-agent: its step or cost limit was reached (LimitsExceeded)"),
    Rule(r"max_steps|max_turns|max_iterations|(?:step|turn|iteration) limit \(" + _COUNT + r"\)", "budget_exceeded",
         "the step ceiling was reached (seed 001: `step limit (20)`)", "steps"),
    Rule(r"max_prompt_tokens|max_input_tokens|(?:prompt|input) token limit \(" + _COUNT + r"\)", "budget_exceeded",
         "the prompt-token ceiling was reached (seed 000)", "prompt_tokens"),
    Rule(r"max_completion_tokens|max_output_tokens|(?:completion|output) token limit \(" + _COUNT + r"\)",
         "budget_exceeded", "the completion-token ceiling was reached (seed 000)", "completion_tokens"),
    Rule(r"max_tokens|token limit \(" + _COUNT + r"\)|exit_context", "budget_exceeded",
         "the token ceiling was reached (seed 001: `token limit (200,000)`)", "tokens"),
    Rule(r"max_cost|max_cost_micros|max_cost_usd|(?:cost|spend) limit \(" + _MONEY + r"\)|exit_cost", "budget_exceeded",
         "the spend ceiling was reached (seed 001: `cost limit ($2.00)`)", "cost_micros"),
    Rule(r"max_wall_seconds|max_seconds|(?:time|wall[- ]clock) limit \(" + _DURATION + r"\)|timeout|timed out"
         r"|exit_total_execution_time", "timed_out",
         "the wall-clock limit was reached (seed 001: `time limit (300.0s)`)", "wall_seconds"),
    Rule(r"exit_command_timeout", "timed_out", "a command's time limit was reached"),
    Rule(r"identical_tool_results|repeated_tool_calls|max_repeats|loop_detected|stall|stalled_loop|no_progress"
         r"|repeated the same tool calls \d+ times without progress", "stalled",
         "the harness's loop detector saw the same calls or results repeat "
         "(seed 000: `identical_tool_results`; seed 001: `repeated the same tool calls 3 times without progress`)",
         "loop"),
    Rule(r"cancel|canceled|user_cancelled|interrupted|keyboard_interrupt|aborted", "cancelled",
         "someone or something stopped the run"),
    Rule(r"incomplete|error|exception|crash|exit_format|exit_api|exit_error|tool_error|fatal", "failed",
         "the run ended without completing its task"),
]

# A status of the harness's own on a run_end line. "(by reason)": the stop reason says which status,
# and a stop reason that says nothing we know (or claims success) makes it "failed" — the harness
# itself said the task was not completed.
HARNESS_STATUS_RULES: list[Rule] = [
    Rule(r"succeeded|failed|cancelled|budget_exceeded|timed_out|stalled", "(itself)",
         "a canonical status maps to itself (seed 003's statuses)"),
    Rule(r"complete|completed|success|successful|ok|done|finished|resolved|passed", "succeeded",
         "the harness says the task was completed (seed 001: `complete`)"),
    Rule(r"incomplete|partial|stopped|exhausted|limited", "(by reason)",
         "the harness stopped before completing the task (seed 001: `incomplete`): the stop reason says why; "
         "a reason that names no stop is `failed`"),
    Rule(r"error|errored|failure|fail|crashed|exception", "failed", "the run failed"),
    Rule(r"canceled|aborted|interrupted", "cancelled", "someone or something stopped the run"),
    Rule(r"timeout|time_out|timedout", "timed_out", "a time limit stopped the run"),
    Rule(r"stuck|looping|no_progress", "stalled", "the harness saw the run repeating itself"),
]


def _compiled(rules: list[Rule]) -> list[tuple[re.Pattern, Rule]]:
    return [(re.compile(rf"^(?:{rule.pattern})$", re.IGNORECASE), rule) for rule in rules]


_REASONS = _compiled(STOP_REASON_RULES)
_HARNESS = _compiled(HARNESS_STATUS_RULES)


def _first(compiled: list[tuple[re.Pattern, Rule]], raw: str | None) -> Rule | None:
    if raw is None:
        return None
    text = raw.strip()
    return next((rule for pattern, rule in compiled if pattern.match(text)), None)


def map_stop_reason(raw: str | None) -> str | None:
    """The canonical status for a raw stop reason, or None when no rule matches."""
    rule = _first(_REASONS, raw)
    if rule is None:
        return None
    return raw.strip().lower() if rule.status == "(itself)" else rule.status


def named_limit(raw: str | None) -> str | None:
    """The limit a raw stop reason names (``steps``, ``tokens``, ``cost_micros``, ``loop`` …), if any."""
    rule = _first(_REASONS, raw)
    return rule.names if rule else None


def map_run_end(status: str | None, stop_reason: str | None) -> str | None:
    """The canonical status of a run_end line from the harness's own status and stop reason; None when
    neither says anything known (the line is then refused: reconcile cannot tell how the run ended)."""
    rule = _first(_HARNESS, status)
    by_reason = map_stop_reason(stop_reason)
    if rule is None:
        return by_reason
    if rule.status == "(itself)":
        return status.strip().lower()
    if rule.status == "(by reason)":
        return by_reason if by_reason not in (None, "succeeded", "running") else "failed"
    return rule.status


def _case(rules: list[Rule], raw: str, itself: str, by_reason: str | None = None) -> str:
    branches = []
    for rule in rules:
        result = {"(itself)": itself, "(by reason)": by_reason}.get(rule.status) or string_literal(rule.status)
        branches.append(f"when regexp_full_match(trim({raw}), {string_literal('(?i)(?:' + rule.pattern + ')')}) "
                        f"then {result}")
    return "case " + " ".join(branches)


def _canonical_status_body() -> str:
    return _case(STOP_REASON_RULES, "raw", "lower(trim(raw))") + " end"


def _run_end_status_body() -> str:
    by_reason = "case when canonical_status(reason) in ('succeeded', 'running') then 'failed' " \
                "else coalesce(canonical_status(reason), 'failed') end"
    return _case(HARNESS_STATUS_RULES, "status", "lower(trim(status))", by_reason) + " else canonical_status(reason) end"


# name → (parameters, body): the macros the store installs, built from the same rules as ``map_status`` and
# ``map_run_end``; an engine without macros expands each call into its body (``engines/spark_sql.py``)
MACROS: dict[str, tuple[tuple[str, ...], str]] = {
    "canonical_status": (("raw",), _canonical_status_body()),
    "run_end_status": (("status", "reason"), _run_end_status_body()),
}


def macro_sql(name: str, temporary: bool = False) -> str:
    """The statement creating macro ``name`` (per connection when ``temporary``)."""
    parameters, body = MACROS[name]
    return f"create or replace {'temp ' if temporary else ''}macro {name}({', '.join(parameters)}) as {body}"


def install_status_macro(con: duckdb.DuckDBPyConnection, temporary: bool = True) -> None:
    """Create the ``canonical_status`` and ``run_end_status`` macros: temporary (per connection), or stored in
    the file so checks that use them run in any DuckDB client."""
    for name in MACROS:
        con.execute(macro_sql(name, temporary))
