"""OpenAI Codex CLI session rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}``: ``session_meta`` (the session's id, client
and version), ``turn_context`` (the model for the requests that follow), ``response_item`` (the
model-visible history: messages, reasoning, function and custom tool calls and their outputs),
``event_msg`` (UI events, among them ``token_count``) and ``compacted``. One file is one run, its
id the session's; an archived copy of the same session (``archived_sessions/``) is the same run.

Tokens are only in ``event_msg/token_count``: ``info.total_token_usage`` is cumulative for the
session and ``info.last_token_usage`` the latest request. Some client versions write every
``token_count`` twice, so per-call usage is the *difference of the cumulative totals*, and a
count whose totals equal the one before is a repeat (skipped, counted). ``info`` can be null (a
rate-limit snapshot only): skipped. OpenAI's buckets overlap — cached input is inside input,
reasoning inside output — so uncached input = input − cached; reasoning stays a part of output.
Codex records no cache writes (OpenAI does not bill them): they are 0.

A model step is one new cumulative total; the calls, reasoning and text written since the step
before belong to it. Tool steps are the calls' outputs, paired by ``call_id``. The model is the
latest ``turn_context``'s. Status is inferred: ``succeeded`` when the last task ended with
``task_complete``, ``cancelled`` when it was aborted (``turn_aborted``), else ``running``.
"""

from __future__ import annotations

from typing import ClassVar

from ..ingest.validate import Field
from .base import TranscriptFormat

USAGE = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")

# Only what staging reads is typed (a field of another event, typed here, would reject lines for nothing).
FIELDS = [
    Field("type", "str", "true"),
    Field("timestamp", "ts", "true"),
    Field("payload", "object", "true"),
    Field("payload.type", "str"),
    Field("payload.id", "str", "{type} = 'session_meta'"),
    Field("payload.model_provider", "str"),
    Field("payload.model", "str"),
    Field("payload.role", "str"),
    Field("payload.content", "any"),
    Field("payload.name", "str"),
    Field("payload.call_id", "str"),
    Field("payload.arguments", "any"),
    Field("payload.input", "any"),
    Field("payload.output", "any"),
    *(Field(f"payload.info.{total}.{name}", "count") for total in ("total_token_usage", "last_token_usage")
      for name in USAGE),
]

LINE_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")


class Codex(TranscriptFormat):
    name = "codex"
    description = "OpenAI Codex CLI session rollout (JSON Lines of timestamp, type, payload)"
    input = "lines"
    fields = FIELDS
    facts: ClassVar[dict[str, str]] = {
        "usage": "differences of token_count's cumulative total_token_usage", "timestamps": "timestamp on every line",
        "result_size": "the call output's text (tokens estimated as bytes / 4)",
        "context_size": "the input tokens of each request", "call_ids": "call_id of each call and its output",
        "run_status": "inferred from task_complete / turn_aborted",
    }
    inferred = frozenset({"run_status"})

    def sniff(self, values: list[object], text: str) -> bool:
        return any(isinstance(v, dict) and v.get("type") in LINE_TYPES and isinstance(v.get("payload"), dict)
                   and "timestamp" in v for v in values)


FORMAT = Codex()
