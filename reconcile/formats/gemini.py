"""Gemini CLI chat recordings (``~/.gemini/tmp/<project hash>/chats/session-*.json`` and ``*.jsonl``).

Two layouts of the same record, one format each: the legacy single JSON object
``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}`` and, since April 2026, JSON
Lines — a metadata line, then message records appended as they happen, ``{"$set": …}`` metadata
patches and ``{"$rewindTo": id}``. A message that changes is re-appended under the same id: the
last copy is the message (earlier copies are skipped, or their tokens would count twice).

One file is one run, its id the session's. Each ``gemini`` message is one model response, with
its ``tokens`` ``{input, output, cached, thoughts, tool, total}``: ``cached`` is inside ``input``,
``tool`` (tool-use prompt) beside it, ``thoughts`` billed as output. So uncached = input − cached +
tool, cache read = cached, output = output + thoughts (reasoning = thoughts); no cache writes.
The model is per message and may change mid-session. Each ``toolCalls`` entry is a call of that
response *and* its result (recorded together, with ``status``). A rewind keeps the rewound
messages: they were answered, and billed. Status is inferred from the last message.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import ClassVar

from ..ingest.validate import Field
from .base import TranscriptFormat, _split_statements

FACTS: dict[str, str] = {
    "usage": "tokens of each gemini message", "timestamps": "timestamp of each message and tool call",
    "tool_status": "status of each tool call", "result_size": "each tool call's result text",
    "context_size": "the input tokens of each response", "call_ids": "the tool call's own id",
    "run_status": "inferred from the last message",
}
_LEGACY_HEAD = re.compile(r'\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,\s*"projectHash"')
_MESSAGE_TYPES = {"user", "gemini", "info", "error", "warning"}


class _Gemini(TranscriptFormat):
    facts: ClassVar[dict[str, str]] = FACTS
    inferred = frozenset({"run_status"})
    layout: ClassVar[str]

    def staging_sql(self) -> list[str]:
        """This layout's reading of the messages, then the staging both layouts share."""
        folder = resources.files(__package__)
        text = "\n".join(folder.joinpath(name).read_text(encoding="utf-8")
                         for name in (f"gemini_{self.layout}.sql", "gemini.sql"))
        return [statement for statement in _split_statements(self.render(text)) if statement]


class GeminiChat(_Gemini):
    name = "gemini_cli"
    description = "Gemini CLI chat recording (JSON: {sessionId, projectHash, messages})"
    input = "document"
    layout = "json"
    shape_sql = "json_type(j, '$.messages') = 'ARRAY' and json_type(j, '$.sessionId') = 'VARCHAR'"
    expected = 'a Gemini CLI chat recording ({"sessionId": …, "projectHash": …, "messages": [...]})'

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, dict):
            return "sessionId" in first and "projectHash" in first and isinstance(first.get("messages"), list)
        return not values and _LEGACY_HEAD.match(text) is not None and '"messages"' in text


class GeminiJsonl(_Gemini):
    name = "gemini_cli_jsonl"
    description = "Gemini CLI chat recording (JSON Lines: metadata, messages, $set, $rewindTo)"
    input = "lines"
    layout = "jsonl"
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
