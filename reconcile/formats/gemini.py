"""Gemini CLI chat recordings (``~/.gemini/tmp/<project hash>/chats/session-*.json`` and ``*.jsonl``).

Two layouts of the same record, one format each: the legacy single JSON object
``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}`` and, since April 2026, JSON
Lines — a metadata line, then message records appended as they happen, ``{"$set": …}`` metadata
patches and ``{"$rewindTo": id}``. A message that changes is re-appended under the same id: the
last copy is the message (earlier copies are skipped, or their tokens would count twice).

Identity: one file is one run, its id the session's ``sessionId``. A resumed session is appended to
its own file — a legacy ``.json`` one is copied whole into ``<name>.jsonl`` first, so the same
session can sit in both: it is loaded once, from the fuller copy (the other file's records say so). A sub-agent's
recording (``kind: "subagent"``) sits in a folder named by its parent's session id: its
``parent_run_id``.

Each ``gemini`` message is one model response, with its ``tokens`` ``{input, output, cached,
thoughts, tool, total}``: ``cached`` is inside ``input``, ``tool`` (tool-use prompt) beside it,
``thoughts`` billed as output. So uncached = input − cached + tool, cache read = cached, output =
output + thoughts (reasoning = thoughts). A count the message leaves out leaves its bucket unknown
(NULL): uncached needs input, cached and tool; output needs output and thoughts. Gemini CLI writes
0 for each count the API's ``usageMetadata`` left out, so a message whose counts are all 0 was not
counted: its usage is unknown, not free. Google bills no cache writes (``zero_buckets``).
The model is per message and may change mid-session. Each ``toolCalls`` entry is a call of that
response *and* its result (recorded together, with ``status``: success ok, error and cancelled
error). A rewind keeps the rewound messages — they were answered, and billed — and is a compaction
event (the context after it is shorter), as is a ``$set`` that rewrites ``messages`` (Gemini CLI
syncing a compressed or masked history). Status is inferred from the last message.

One conversation per file (``thread``). Its input may shrink by the thoughts of earlier calls,
which Gemini keeps within a turn and leaves out after it: ``no_silent_truncation`` allows up to the
thoughts of the calls before. The two drops in the real recordings (tests/fixtures/realdata/gemini-cli:
40,914 -> 40,122 at "System: Please continue.", a new turn, after 1,341 thought tokens; 44,001 ->
41,734 after 3,442) are within them.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import ClassVar

from reconcile.ingest.validate import Field
from reconcile.formats.base import TranscriptFormat, _split_statements

FACTS: dict[str, str] = {
    "usage": "tokens of each gemini message (a count left out, or all counts 0, is unknown)",
    "timestamps": "timestamp of each message and tool call",
    "tool_status": "status of each tool call (success ok; error, cancelled error)",
    "result_size": "each tool call's result text",
    "context_size": "input + tool tokens of each response", "call_ids": "the tool call's own id",
    "thread": "one conversation per recording (a sub-agent has its own recording)",
    "run_status": "inferred from the last message",
}
ZERO_BUCKETS: dict[str, str] = {
    bucket: "Gemini's context caching as Gemini CLI uses it is implicit: Google bills cached reads at a discount "
            "and no cache writes — written 0 on every message whose tokens were counted"
    for bucket in ("cache_write_5m", "cache_write_1h")}
# Real recordings (tests/fixtures/realdata/gemini-cli) that show the facts.
_LEGACY = "gemini-cli/codemie__session-2025-12-01T21-45-5b959dae.json"
_LINES = "gemini-cli/VibeCodingTracker__tests__fixtures__sessions__gemini.jsonl"
_LEGACY_HEAD = re.compile(r'\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"')
_MESSAGE_TYPES = {"user", "gemini", "info", "error", "warning"}


class _Gemini(TranscriptFormat):
    facts: ClassVar[dict[str, str]] = FACTS
    inferred = frozenset({"run_status"})
    zero_buckets: ClassVar[dict[str, str]] = ZERO_BUCKETS
    layout: ClassVar[str]

    def staging_sql(self) -> list[str]:
        """This layout's reading of the messages, then the staging both layouts share (and, for a layout read on
        from a checkpoint, what its tail read needs)."""
        folder = resources.files(__package__)
        after = [f"gemini_{self.layout}_tail.sql"] if getattr(self, "continues", False) else []
        text = "\n".join(folder.joinpath(name).read_text(encoding="utf-8")
                         for name in (f"gemini_{self.layout}.sql", "gemini.sql", *after))
        return [statement for statement in _split_statements(self.render(text)) if statement]


class GeminiChat(_Gemini):
    name = "gemini_cli"
    description = "Gemini CLI chat recording (JSON: {sessionId, projectHash, messages})"
    input = "document"
    layout = "json"
    shape_sql = "json_type(j, '$.messages') = 'ARRAY' and json_type(j, '$.sessionId') = 'VARCHAR'"
    expected = 'a Gemini CLI chat recording ({"sessionId": …, "projectHash": …, "messages": [...]})'
    examples: ClassVar[dict[str, str]] = dict.fromkeys(FACTS, _LEGACY)

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, dict):
            return "sessionId" in first and "projectHash" in first and isinstance(first.get("messages"), list)
        return not values and _LEGACY_HEAD.match(text) is not None and '"messages"' in text


class GeminiJsonl(_Gemini):
    name = "gemini_cli_jsonl"
    description = "Gemini CLI chat recording (JSON Lines: metadata, messages, $set, $rewindTo)"
    input = "lines"
    continues = True  # a grown session is read from its last message on (gemini.sql: _tail_state)
    layout = "jsonl"
    examples: ClassVar[dict[str, str]] = dict.fromkeys(FACTS, _LINES)
    fields = [
        Field("sessionId", "str"), Field("projectHash", "str"), Field("startTime", "ts"),
        Field("id", "str"), Field("type", "str"), Field("timestamp", "ts"), Field("model", "str"),
        Field("content", "any"), Field("toolCalls", "any"),
        *(Field(f"tokens.{name}", "count") for name in ("input", "output", "cached", "thoughts", "tool", "total")),
    ]

    def sniff(self, values: list[object], text: str) -> bool:
        if not values or not isinstance(values[0], dict):
            return False
        first = values[0]
        return ("sessionId" in first and "projectHash" in first and "messages" not in first) or (
            all(isinstance(v, dict) and (v.get("type") in _MESSAGE_TYPES and "id" in v or "$set" in v or "$rewindTo" in v)
                for v in values) and any(isinstance(v, dict) and v.get("type") == "gemini" for v in values))


CHAT = GeminiChat()
JSONL = GeminiJsonl()
