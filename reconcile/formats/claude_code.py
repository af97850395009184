"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

One file is one run. The run id is the session, named by the file (``<session>.jsonl``) as
ccusage names it; a subagent transcript (``<session>/subagents/agent-*.jsonl``) is a child run
``<session>/<file>`` whose ``parent_run_id`` is the session. Inline side-chain lines (older
versions) stay in their session's run as steps labelled ``sidechain-N`` (one label per side chain).

- One API response is written as several lines sharing ``message.id`` and ``requestId``: they
  form one model step, with the usage of the last line (earlier lines carry provisional output
  counts) and the content blocks of all of them.
- ``tool_result`` blocks in user lines are tool steps, paired to the ``tool_use`` by id;
  ``is_error`` gives status ``error`` (absent, as the Messages API defines it, means success).
- ``system``/``compact_boundary`` lines are compaction events.
- Lines of other types (``progress`` copies of subagent messages, ``file-history-snapshot``,
  other ``system`` lines, ``summary``, …) are skipped and counted.

Status (a session has no budgets and writes no end record) is inferred: ``succeeded`` when the
session's last main-thread message is an assistant text asking for no tool, ``cancelled`` when it
is the user's "[Request interrupted by user…]", else ``running`` (the transcript stops mid-work).
See ``docs/formats.md``.
"""

from __future__ import annotations

from typing import ClassVar

from ..ingest.validate import Field
from .base import TranscriptFormat

CONVERSATION = "{type} in ('user', 'assistant')"

FIELDS = [
    Field("type", "str", "true"),
    Field("subtype", "str"),
    Field("timestamp", "ts", CONVERSATION),
    Field("sessionId", "str"),
    Field("agentId", "str"),
    Field("isSidechain", "bool"),
    Field("isMeta", "bool"),
    Field("uuid", "str"),
    Field("parentUuid", "str"),
    Field("requestId", "str"),
    Field("message", "object", CONVERSATION),
    Field("message.id", "str"),
    Field("message.model", "str"),
    Field("message.stop_reason", "str"),
    Field("message.content", "any"),
    *(Field(f"message.usage.{name}", "count") for name in ("input_tokens", "cache_creation_input_tokens",
                                                            "cache_read_input_tokens", "output_tokens")),
    Field("message.usage.cache_creation.ephemeral_5m_input_tokens", "count"),
    Field("message.usage.cache_creation.ephemeral_1h_input_tokens", "count"),
    Field("compactMetadata.preTokens", "count"),
]

_TYPES = {"user", "assistant", "summary", "system", "progress", "file-history-snapshot", "queue-operation"}


class ClaudeCode(TranscriptFormat):
    name = "claude_code"
    description = "Claude Code session transcript (JSON Lines with sessionId)"
    input = "lines"
    fields = FIELDS
    facts: ClassVar[dict[str, str]] = {
        "usage": "message.usage of each API response", "timestamps": "timestamp on every line",
        "tool_status": "is_error on each tool_result", "result_size": "the tool_result text (tokens estimated as bytes / 4)",
        "context_size": "all input tokens of each response", "thread": "side chains and subagent files are labelled",
        "call_ids": "tool_use id = tool_result tool_use_id",
        "run_status": "inferred from the last message",
    }
    inferred = frozenset({"run_status"})
    # Claude Code's own documented caps on what a tool result may put into the context: Read and
    # MCP tool output stop at 25,000 tokens (CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS,
    # MAX_MCP_OUTPUT_TOKENS); Bash output at 30,000 characters (BASH_MAX_OUTPUT_LENGTH), below that.
    policy: ClassVar[dict[str, tuple[str, str]]] = {
        "result_bound_tokens": ("25000", "Claude Code caps Read and MCP tool results at 25,000 tokens and Bash "
                                         "output at 30,000 characters (its documented defaults)"),
    }

    def sniff(self, values: list[object], text: str) -> bool:
        return any(isinstance(v, dict) and v.get("type") in _TYPES
                   and ("sessionId" in v or v.get("type") in ("summary", "file-history-snapshot")) for v in values)


FORMAT = ClaudeCode()
