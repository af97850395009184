"""The native journal's rules, declared once: the writer refuses what the loader would reject.

``FIELDS`` declares every field of format v1 (its JSON type, range, allowed values and the lines
that require it). The loader turns them into set-based SQL (``ingest.validate``, over a whole
file at once); ``record_problem`` reads the same declarations in Python for one record, which is
what ``reconcile.journal`` calls before it writes a line — so a harness hears about a bad field
when it writes it, not the next morning as a rejected line. The rules that span fields (a tool
step's status, how a run ended) are written twice, here and in ``formats/native.sql``, with the
same wording; ``tests/test_journal_writer.py`` holds the two to the same verdicts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from reconcile.ingest.ranges import COUNT, EARLIEST, INDEX, LATEST, MILLISECONDS, SECONDS, TIMESTAMP_SHAPE
from reconcile.ingest.validate import Field, expected_text
from reconcile.store.status import ENDED, map_run_end
from reconcile.store.fences import NAMES as FENCE_NAMES

USAGE_BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output", "reasoning")
# not_run: the harness asked for it but chose not to run it (a loop detector or a budget stopped the run first)
TOOL_STATUSES = ("ok", "error", "timeout", "unknown_tool", "invalid_args", "not_run", "started")
OUTCOMES = TOOL_STATUSES[:-1]  # "started" is not an outcome: the call is in flight
EVENTS = ("compaction", "retry", "fallback", "cancel", "wrap_up")
ERROR_CLASSES = ("transport", "rate_limit", "invalid_output")  # seed 003's classes of a failed model call
BUDGET_SCOPES = ("run", "tree")  # "tree": the limits are shared by the run and every sub-agent under it
# The loop detectors of the seeds, and each one's threshold when the journal gives none:
# results_in_a_row (seed 000) stops when identical tool results in a row exceed max_repeats (2);
# calls_anywhere (seed 001) stops when one step's calls are seen repeat_limit (3) times anywhere;
# calls_window (seed 003) stops when 3 of the last 6 calls are one call, or they go A B A B.
DETECTORS = {"results_in_a_row": 2, "calls_anywhere": 3, "calls_window": 3}
WINDOW = 6  # calls_window's window when the journal gives none


class When(str):
    """A ``required_when`` condition: SQL for the loader, and a test of one record for the writer."""

    def __new__(cls, line_type: str | None = None, kind: str | None = None):
        sql = " and ".join([*([f"{{type}} = '{line_type}'"] if line_type else []),
                            *([f"{{kind}} = '{kind}'"] if kind else [])]) or "true"
        condition = super().__new__(cls, sql)
        condition.line_type, condition.kind = line_type, kind
        return condition

    def applies(self, record: Mapping[str, Any]) -> bool:
        return ((self.line_type is None or record.get("type") == self.line_type)
                and (self.kind is None or record.get("kind") == self.kind))


ALWAYS, START, STEP, END = When(), When("run_start"), When("step"), When("run_end")
MODEL, TOOL, EVENT = When("step", "model"), When("step", "tool"), When("step", "event")

FIELDS = [
    Field("v", "int", ALWAYS),
    Field("type", "str", ALWAYS, ("run_start", "step", "run_end")),
    Field("run_id", "str", ALWAYS),
    Field("ts", "ts", ALWAYS),
    # run_start
    Field("agent", "str", START),
    *(Field(name, "str") for name in ("task_class", "model", "provider", "api_key_id", "workspace_id",
                                       "project_id", "predicted_stop_reason", "parent_run_id", "fallback_model")),
    Field("limits", "object"),
    *(Field(f"limits.{name}", "index") for name in ("max_steps", "max_repeats", "result_bound_tokens", "max_retries")),
    *(Field(f"limits.{name}", "count") for name in ("max_tokens", "max_prompt_tokens", "max_completion_tokens",
                                                     "max_cost_micros")),
    Field("limits.max_wall_seconds", "seconds"),
    Field("limits.tool_timeout_seconds", "seconds"),
    Field("limits.scope", "str", None, BUDGET_SCOPES),
    Field("fence", "str", None, FENCE_NAMES),
    Field("loop_detector", "object"),
    Field("loop_detector.kind", "str", None, tuple(DETECTORS)),
    Field("loop_detector.limit", "index"),
    Field("loop_detector.window", "index"),
    Field("tools", "array", items=(("name", "str"), ("side_effect", "bool"), ("allow_repeat", "bool"),
                                   ("schema_tokens", "index"))),
    Field("catalogue_tokens", "index"),
    Field("labels", "object"),
    # steps
    Field("idx", "index", STEP),
    Field("kind", "str", STEP, ("model", "tool", "event")),
    Field("ms", "ms"),
    Field("agent_label", "str"),
    Field("error", "str"),
    Field("error_class", "str", None, ERROR_CLASSES),
    Field("usage", "object", MODEL),
    *(Field(f"usage.{bucket}", "count") for bucket in USAGE_BUCKETS),
    *(Field(name, "str") for name in ("request_id", "response_id", "finish_reason", "text", "text_preview",
                                       "text_sha256", "input_hash")),
    Field("final", "bool"),
    Field("context_tokens", "count"),
    Field("attempt", "index"),
    Field("cost_micros", "count"),
    Field("tool_calls", "array", items=(("call_id", "str"), ("name", "str"), ("args", "any"))),
    Field("call_id", "str", TOOL),
    Field("tool", "str", TOOL),
    Field("args", "any"),
    *(Field(name, "str") for name in ("args_hash", "idempotency_key", "result_hash", "result_preview",
                                      "result_schema")),
    Field("status", "str"),  # a tool step's outcome, or the harness's own word for how a run ended
    Field("side_effect", "bool"),
    Field("bounded", "bool"),
    Field("result_tokens", "count"),
    Field("result_bytes", "count"),
    Field("event", "str", EVENT, EVENTS),
    Field("tokens_before", "count"),
    Field("tokens_after", "count"),
    Field("detail", "str"),
    # run_end: a stop reason, a status of the harness's own, or both (the line rules below)
    Field("stop_reason", "str"),
    Field("final_output", "str"),
    Field("ledger", "object"),
    *(Field(f"ledger.{name}", "index") for name in ("steps", "tool_results")),
    *(Field(f"ledger.{name}", "count") for name in ("input_tokens", "output_tokens", "tokens", "cost_micros")),
]

# The messages of the rules across fields; formats/native.sql writes the same words.
END_UNKNOWN = ('run_end says neither a status nor a stop reason reconcile knows (status {status}, stop_reason '
               '{reason}); give "status" as one of ' + ", ".join(ENDED) + " or a stop reason of docs/status.md")
END_MISSING = 'missing field "stop_reason" (or "status") on a run_end line'
TOOL_STATUS = 'field "status" is "{status}" on a tool step; expected one of ' + ", ".join(TOOL_STATUSES)
CALL_ENTRY = 'every entry of "tool_calls" needs a string "call_id" and "name"'
TOOL_ENTRY = 'every entry of "tools" needs a string "name"'


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _in_range(value: Any, rng, integral: bool) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (integral and not isinstance(value, int)):
        return False
    return rng.low <= value <= rng.high and value == value  # NaN is never in range


def _timestamp_ok(value: Any) -> bool:
    if not isinstance(value, str) or not re.fullmatch(TIMESTAMP_SHAPE, value):
        return False
    try:
        moment = datetime.fromisoformat(value.replace("z", "Z").replace("t", "T"))
    except ValueError:
        return False
    moment = moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)
    return datetime(EARLIEST.year, EARLIEST.month, EARLIEST.day, tzinfo=timezone.utc) <= moment \
        < datetime(LATEST.year, LATEST.month, LATEST.day, tzinfo=timezone.utc)


_KIND_OK = {
    "int": _is_int, "count": lambda v: _in_range(v, COUNT, True), "index": lambda v: _in_range(v, INDEX, True),
    "ms": lambda v: _in_range(v, MILLISECONDS, False), "seconds": lambda v: _in_range(v, SECONDS, False),
    "str": lambda v: isinstance(v, str), "bool": lambda v: isinstance(v, bool), "ts": _timestamp_ok,
    "object": lambda v: isinstance(v, dict), "array": lambda v: isinstance(v, list), "any": lambda v: True,
}
_ABSENT = object()


def _at(record: Mapping[str, Any], path: str) -> Any:
    node: Any = record
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node or node[part] is None:
            return _ABSENT
        node = node[part]
    return node


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)[:80]


def _field_problem(field: Field, record: Mapping[str, Any]) -> str | None:
    value = _at(record, field.path)
    if value is _ABSENT:
        applies = isinstance(field.required_when, When) and field.required_when.applies(record)
        return f'missing field "{field.path}" on a {record.get("type", "?")} line' if applies else None
    if not _KIND_OK[field.kind](value):
        return f'field "{field.path}" is {_shown(value)}; expected {expected_text(field.kind)}'
    for position, item in enumerate(value if field.items else (), 1):
        if not isinstance(item, dict):
            return f'field "{field.path}[{position}]" is {_shown(item)}; expected an object'
        for key, kind in field.items:
            if item.get(key) is not None and not _KIND_OK[kind](item[key]):
                return f'field "{field.path}[{position}].{key}" is {_shown(item[key])}; expected {expected_text(kind)}'
    if field.one_of and value not in field.one_of:
        return f'field "{field.path}" is {_shown(value)}; expected one of {", ".join(field.one_of)}'
    return None


def record_problem(record: Mapping[str, Any]) -> str | None:
    """Why the loader would reject this record as a line, or None when it would load it.

    The same verdicts as ingest (``formats/native.sql`` over ``FIELDS``); the wording of a type
    problem may differ (the loader quotes the value as DuckDB prints it).
    """
    if not isinstance(record, Mapping):
        return f"expected a JSON object, got {type(record).__name__}"
    if _is_int(record.get("v")) and record["v"] != 1:
        return f"journal version {record['v']} is not supported; this reconcile reads v1"
    for field in FIELDS:
        problem = _field_problem(field, record)
        if problem:
            return problem
    if record.get("type") == "step" and record.get("kind") == "tool" and record.get("status") is not None \
            and record["status"] not in TOOL_STATUSES:
        return TOOL_STATUS.format(status=record["status"])
    if record.get("type") == "run_end":
        status, reason = record.get("status"), record.get("stop_reason")
        if status is None and reason is None:
            return END_MISSING
        if map_run_end(status, reason) is None:
            return END_UNKNOWN.format(status=_quoted(status), reason=_quoted(reason))
    if any(not isinstance(c, dict) or not isinstance(c.get("call_id"), str) or not isinstance(c.get("name"), str)
           for c in record.get("tool_calls") or []):
        return CALL_ENTRY
    if any(not isinstance(t, dict) or not isinstance(t.get("name"), str) for t in record.get("tools") or []):
        return TOOL_ENTRY
    return None


def _quoted(text: str | None) -> str:
    return "(none)" if text is None else '"' + text + '"'
