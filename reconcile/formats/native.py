"""The native journal, format v1 (``docs/journal-format.md``): JSON Lines a harness appends to.

Nothing is inferred: every fact the journal records is read as it is, and what a journal leaves
out stays NULL. Staging (``native.sql``) validates each line's fields, resolves repeated lines
(an exact repeat is skipped, a conflicting one rejected) and requires each run's ``run_start``
in the same file.
"""

from __future__ import annotations

from typing import ClassVar

from ..ingest.validate import Field
from ..journal import EVENTS, TOOL_STATUSES, USAGE_BUCKETS
from ..status import STATUSES
from .base import TranscriptFormat, sql_list

_IS_STEP = "{type} = 'step'"
_IS_MODEL = "{type} = 'step' and {kind} = 'model'"
_IS_TOOL = "{type} = 'step' and {kind} = 'tool'"
_IS_EVENT = "{type} = 'step' and {kind} = 'event'"
_IS_START = "{type} = 'run_start'"

FIELDS = [
    Field("v", "int", "true"),
    Field("type", "str", "true", ("run_start", "step", "run_end")),
    Field("run_id", "str", "true"),
    Field("ts", "ts", "true"),
    # run_start
    Field("agent", "str", _IS_START),
    *(Field(name, "str") for name in ("task_class", "model", "provider", "api_key_id", "workspace_id",
                                       "project_id", "predicted_stop_reason")),
    Field("limits", "object"),
    *(Field(f"limits.{name}", "index") for name in ("max_steps", "max_repeats", "result_bound_tokens")),
    *(Field(f"limits.{name}", "count") for name in ("max_tokens", "max_cost_micros")),
    Field("limits.max_wall_seconds", "seconds"),
    Field("limits.tool_timeout_seconds", "seconds"),
    Field("tools", "array", items=(("name", "str"), ("side_effect", "bool"), ("allow_repeat", "bool"),
                                   ("schema_tokens", "index"))),
    Field("catalogue_tokens", "index"),
    Field("labels", "object"),
    # steps
    Field("idx", "index", _IS_STEP),
    Field("kind", "str", _IS_STEP, ("model", "tool", "event")),
    Field("ms", "ms"),
    Field("agent_label", "str"),
    Field("error", "str"),
    Field("usage", "object", _IS_MODEL),
    *(Field(f"usage.{bucket}", "count") for bucket in USAGE_BUCKETS),
    *(Field(name, "str") for name in ("request_id", "response_id", "finish_reason", "text", "text_preview",
                                       "text_sha256", "input_hash")),
    Field("final", "bool"),
    Field("context_tokens", "count"),
    Field("attempt", "index"),
    Field("cost_micros", "count"),
    Field("tool_calls", "array", items=(("call_id", "str"), ("name", "str"), ("args", "any"))),
    Field("call_id", "str", _IS_TOOL),
    Field("tool", "str", _IS_TOOL),
    Field("args", "any"),
    *(Field(name, "str") for name in ("args_hash", "idempotency_key", "result_hash", "result_preview")),
    Field("status", "str", None, TOOL_STATUSES + STATUSES),
    Field("side_effect", "bool"),
    Field("bounded", "bool"),
    Field("result_tokens", "count"),
    Field("result_bytes", "count"),
    Field("event", "str", _IS_EVENT, EVENTS),
    Field("tokens_before", "count"),
    Field("tokens_after", "count"),
    Field("detail", "str"),
    # run_end
    Field("stop_reason", "str", "{type} = 'run_end'"),
    Field("final_output", "str"),
    Field("ledger", "object"),
    *(Field(f"ledger.{name}", "index") for name in ("steps", "tool_results")),
    *(Field(f"ledger.{name}", "count") for name in ("input_tokens", "output_tokens", "cost_micros")),
]


class NativeJournal(TranscriptFormat):
    name = "native"
    description = "reconcile native journal v1 (JSON Lines of run_start / step / run_end)"
    input = "lines"
    fields = FIELDS
    extra_line_checks = """when json_type(f[1]) in ('BIGINT', 'UBIGINT') and f[1] ->> '$' <> '1'
        then 'journal version ' || (f[1] ->> '$') || ' is not supported; this reconcile reads v1'"""
    extra_line_suspect = "j.v is distinct from 1"
    facts: ClassVar[dict[str, str]] = {
        "usage": "usage on each model step", "timestamps": "ts on every line",
        "tool_status": "status on each tool step", "result_size": "result_tokens / result_bytes",
        "bounded": "bounded on each tool step",
        "result_bound": "limits.result_bound_tokens", "limits": "limits on run_start", "loop_limit": "limits.max_repeats",
        "ledger": "ledger on run_end", "catalogue": "tools on run_start", "context_size": "context_tokens",
        "thread": "one conversation per run (agent_label names sub-agents)", "call_ids": "call_id on tool steps",
        "input_hash": "input_hash", "run_status": "status / stop_reason on run_end",
    }

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        return isinstance(first, dict) and "v" in first and first.get("type") in ("run_start", "step", "run_end")

    def sql_values(self) -> dict[str, str]:
        ended = [s for s in STATUSES if s != "running"]
        return {"tool_statuses": sql_list(TOOL_STATUSES), "tool_statuses_text": ", ".join(TOOL_STATUSES),
                "end_statuses": sql_list(ended), "end_statuses_text": ", ".join(ended)}


FORMAT = NativeJournal()
