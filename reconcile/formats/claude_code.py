"""Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

One file is one run, named by the ids Claude Code writes on every line. A session transcript is
the run ``sessionId`` (a copy under another name is still that session, and is loaded once, from
the fuller copy: the other file's lines are skipped, "already loaded from …"); a line-less file keeps its file name. A
subagent transcript (``<session>/subagents/agent-<agentId>.jsonl``, or any file of side-chain lines
carrying an ``agentId``) is the child run ``<sessionId>/agent-<agentId>`` whose
``parent_run_id`` is the session. An older side-chain file beside its session
(``agent-<hash>.jsonl``, side-chain lines with the session's id and no ``agentId``) records no id
of its own: it is the child run ``<sessionId>/<file name>`` of the session its lines name (ccusage
lists it apart, by its file name). Inline side-chain
lines (older versions) stay in their session's run as steps labelled ``sidechain-N`` (one label
per side chain).

- One API response is written as several lines sharing ``message.id`` and ``requestId``: they
  form one model step, with the usage of the last line (earlier lines carry provisional output
  counts) and the content blocks of all of them.
- Usage is the Messages API's, buckets disjoint: ``input_tokens`` (uncached),
  ``cache_read_input_tokens``, ``cache_creation_input_tokens`` split by
  ``cache_creation.ephemeral_5m_input_tokens`` / ``ephemeral_1h_input_tokens``, ``output_tokens``;
  the context is their input sum. A key the usage leaves out is NULL (a message without
  ``usage``: every bucket and the context), never 0. Without the ``cache_creation`` breakdown
  every cache write is a 5-minute one and the 1-hour bucket is 0 (``zero_buckets``): the API
  returns the breakdown wherever a 1-hour write is possible (it came with the 1-hour TTL, at first
  only under its ``extended-cache-ttl`` beta header, without which every write was a 5-minute
  one); every real transcript here carries it (Claude Code 1.0.98 on), and ccusage counts writes
  the same way. One part of the breakdown missing is the total less the other. A breakdown that
  does not add up to the total (Claude Code 2.1 writes a zeroed one where the API sent none)
  leaves both lifetimes unknown.
- ``tool_result`` blocks in user lines are tool steps, paired to the ``tool_use`` by id;
  ``is_error`` gives status ``error`` (absent, as the Messages API defines it, means success).
- ``<synthetic>`` assistant messages are Claude Code's own: an API error (``isApiErrorMessage``)
  is the model call that failed (its text the step's error; no answer, stop reason, model or
  message id; zero usage: a refused request is not billed; context unknown); any other ("No
  response requested." after ``--continue``) is no model call and is skipped.
- ``system``/``compact_boundary`` lines are compaction events. From Claude Code 2.1.197 on the
  compaction's own API call is written nowhere (2.1.39 wrote it as a ``subagents/agent-acompact-*``
  child run): a model step of unknown usage stands for it, just before the event, so the run's
  cost reads "at least".
- History copied in by ``--fork-session`` (the earlier session's lines, verbatim, at the head of
  the new file) is skipped, "history copied from an earlier session": those calls are the
  session's that made them. Told from the file alone, so that the store does not depend on the
  order files are loaded in: the lines before the file's own first message that are stamped
  before the file's first timestamp (2.1.197: the fork's own queue-operation line comes first,
  the copies after it, stamped earlier) or that carry another session's id.
- Lines of other types (``progress`` copies of subagent messages, ``file-history-snapshot``,
  other ``system`` lines, ``attachment``, ``summary``, …) are skipped and counted; the
  ``max_turns_reached`` attachment is loaded (it ends the run).

Status (a session has no budgets and writes no end record) is inferred from the main thread's last
message that says how it stands (a local command's lines — ``/compact``, ``/mcp`` — and a
compaction's summary ask the model nothing and leave it as it stood): ``succeeded`` when it is an
assistant text asking for no tool, ``failed`` when it is an API error (the stop reason its text),
``budget_exceeded`` when ``--max-turns`` stopped the session (stop reason ``max_turns``),
``cancelled`` when it is the user's "[Request interrupted by user…]", else ``running`` (the
transcript stops mid-work). A run starts at its first timestamp and ends at its main thread's last
one (copied history apart). See ``docs/formats.md``.
"""

from __future__ import annotations

from typing import ClassVar

from reconcile.ingest.validate import Field
from reconcile.formats.base import TranscriptFormat

CONVERSATION = "{type} in ('user', 'assistant')"

FIELDS = [
    Field("type", "str", "true"),
    Field("subtype", "str"),
    Field("timestamp", "ts", CONVERSATION),
    Field("sessionId", "str"),
    Field("agentId", "str"),
    Field("isSidechain", "bool"),
    Field("isMeta", "bool"),
    Field("isCompactSummary", "bool"),
    Field("isApiErrorMessage", "bool"),
    Field("version", "str"),
    Field("attachment.type", "str"),
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
    Field("message.usage.server_tool_use.web_search_requests", "count"),
    Field("compactMetadata.preTokens", "count"),
    Field("compactMetadata.durationMs", "ms"),
]

# Real sessions in tests/fixtures/realdata: a session (usage, is_error results, compaction) and its subagent file.
_SPOTTER = "spotter-real-sessions/projects/-home-marco-projects-spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04"
_SESSION = f"{_SPOTTER}.jsonl"
_SUBAGENT = f"{_SPOTTER}/subagents/agent-aac57f5.jsonl"

_TYPES = {"user", "assistant", "summary", "system", "progress", "file-history-snapshot", "queue-operation"}


class ClaudeCode(TranscriptFormat):
    name = "claude_code"
    description = "Claude Code session transcript (JSON Lines with sessionId)"
    input = "lines"
    continues = True  # a grown session is read from its last open exchange on (claude_code.sql: _tail_state)
    fields = FIELDS
    facts: ClassVar[dict[str, str]] = {
        "usage": "message.usage of each API response", "timestamps": "timestamp on every line",
        "tool_status": "is_error on each tool_result", "result_size": "the tool_result text (tokens estimated as bytes / 4)",
        "context_size": "all input tokens of each response (uncached, cache reads and writes)",
        "thread": "sessionId and agentId: subagent files are child runs, inline side chains labelled",
        "call_ids": "tool_use id = tool_result tool_use_id",
        "run_status": "inferred from the last message",
    }
    inferred = frozenset({"run_status"})
    examples: ClassVar[dict[str, str]] = {
        **{fact: _SESSION for fact in ("usage", "timestamps", "tool_status", "result_size", "context_size", "call_ids",
                                       "run_status")},
        "thread": _SUBAGENT,
    }
    zero_buckets: ClassVar[dict[str, str]] = {
        "cache_write_1h": "where cache_creation_input_tokens comes without the cache_creation breakdown: the API returns "
                          "the breakdown wherever a 1-hour write is possible (it came with the 1-hour TTL and its beta "
                          "header), so such writes are all 5-minute ones, as ccusage counts them; every real transcript "
                          "from Claude Code 1.0.98 on carries the breakdown",
    }
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
