"""OpenAI Codex CLI session rollouts (``~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl``).

Each line is ``{"timestamp", "type", "payload"}`` (0.171 adds an ``ordinal``, which nothing here
needs): ``session_meta`` (the session's id, client and version), ``turn_context`` (the model for the
requests that follow), ``response_item`` (the model-visible history: messages, reasoning, function
and custom tool calls and their outputs, hosted ``web_search_call`` items), ``event_msg`` (UI events,
among them ``token_count`` and how each command, patch or MCP call ended), ``compacted`` and, since
0.171, ``token_usage_record`` (one a response: its ``response_id`` and usage) and ``world_state`` (a
snapshot of the session's settings: read for nothing, skipped with a note).

Identity: one file is one run, its id the session's (the first ``session_meta``'s ``id``; a
forked file copies its parent's ``session_meta`` after its own, or, in 0.171, points at the
parent's history by reference, ``history_base``; without one, the session id that ends the file
name). It started when ``session_meta`` says the session was created. A resumed session is
appended to its own file; an archived copy of a session (``archived_sessions/``) is the same run,
loaded once — the other copy's lines say so.

Usage. Where Codex writes a ``token_usage_record`` (0.171), it is the response's own usage, and
the step it pays for is the one holding the response's items (the record follows them at once).
Elsewhere tokens are only in ``event_msg/token_count``: ``info.total_token_usage`` is cumulative
for the session and ``info.last_token_usage`` the latest request. Some client versions write every
``token_count`` twice, so per-call usage is the *difference of the cumulative totals*, and a count
whose totals equal the one before is a repeat (skipped, counted). ``info`` can be null (a
rate-limit snapshot only): skipped. A count with a ``token_usage_record`` since the count before
it repeats that record's request (0.171 writes it after the tool outputs): skipped. A count whose
every bucket is 0 is made up (0.171 writes one, its ``total_tokens`` the context window, when a
request is refused for exceeding the window): skipped. A fork's totals start from its parent's:
its first count is its own ``last_token_usage``, so is a count whose totals went down. A bucket
whose difference cannot be taken (the key left out of this count or the one before) is the
request's own ``last_token_usage`` value, else unknown (NULL). OpenAI's buckets overlap — cached
input is inside input, reasoning inside output — so uncached input = input − cached (unknown when
either is); reasoning stays a part of output. Codex records no cache writes and its providers bill
none (its ``zero_buckets``): they are 0.

Model steps: a response's items (the lines between two inputs — a call's output, a user or
developer message, a ``compacted`` line — up to its ``token_usage_record``); a local compaction's
summary request is one of them. A ``compacted`` line with an empty message is a remote compaction
(``/responses/compact``): a billed call whose usage Codex never records — a model step with every
bucket unknown, before its compaction event. Tool steps are the calls' outputs, paired by
``call_id``; a call's status is what Codex recorded of how it ended: 0.171's ``item_completed``
CommandExecution (``exit_code``, else ``status``), older versions' ``exec_command_end.exit_code``
(0 ok, else error), ``patch_apply_end.success``, ``mcp_tool_call_end.result`` (``Err``, or ``Ok``
with ``isError``) — paired by call id wherever they fall — else the exit code in a unified exec
output's header (``Process exited with code N``: a command the sandbox refused has no
CommandExecution item) or, in 0.39-era rollouts, the ``metadata.exit_code`` inside a shell
output's JSON text — NULL where none of them says. A hosted ``web_search_call`` is a tool call the
provider ran inside its response: a call to ``web_search`` (its ``action`` the arguments; 0.104
writes no id, so its line names it) and a tool step of its own with the item's status and no
result text (the results went to the model there); the step's ``web_searches`` counts them for
their per-use fee. The final answer is the last model step with text that asks for no tool the
harness runs (a hosted search leaves it none to run), after which none does. A ``compacted`` line
or a ``thread_rolled_back`` event is a compaction event (the history replaced by a shorter one).
The model is the latest ``turn_context``'s. Status is inferred: ``succeeded`` when the last task
ended with ``task_complete``, ``failed`` when that ``task_complete`` carries an ``error`` (the
stop reason its ``codex_error_info``), ``cancelled`` when it was aborted (``turn_aborted``), else
``running``. A request that failed (an HTTP error Codex retried, a ``response.failed`` stream it
reconnected) leaves no response and no step.

One conversation per file (``thread``). Its input may shrink with nothing cut, and the staging
says why where the rollout does: OpenAI's reasoning models leave earlier turns' reasoning out of
the context (``no_silent_truncation`` allows up to the reasoning of the calls before); a request
that ran a hosted web search counts the search passes in its input (no context size is kept for
it); a resumed session sends its opening instructions again and rebuilds the context (a
``resume`` event). A later ``task_started`` is an event too: a call still unanswered then was
passed by the session, its result lost rather than in flight. On the real rollouts in
tests/fixtures/realdata/codex-cli that explains every one of 21 drops.

A rollout that grew is read on from where it was left (docs/architecture.md, "Reading a grown
file"): from the first line of a request's segment that no call and its output or end event cross,
after the model first spoke (in practice a turn's first message; inside one task each call's output
begins the next request, so a task in progress is read again from its start), with the state kept
there: the model in force, the last count's cumulative totals, how the last task ended, the digests
of the opening instructions, the last step that asked for a tool and the final answer so far. A
``session_meta`` line, or an output or end event naming a call made before that line, reads the
file whole.
"""

from __future__ import annotations

from typing import ClassVar

from reconcile.ingest.validate import Field
from reconcile.formats.base import TranscriptFormat

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
    Field("payload.exit_code", "int"),  # exec_command_end
    Field("payload.success", "bool"),  # patch_apply_end
    Field("payload.result", "any"),  # mcp_tool_call_end
    *(Field(f"payload.info.{total}.{name}", "count") for total in ("total_token_usage", "last_token_usage")
      for name in USAGE),
    Field("payload.timestamp", "any"),  # session_meta: when the session was created
    Field("payload.forked_from_id", "str"),  # session_meta of a fork
    Field("payload.history_base", "any"),  # session_meta of a fork (0.171): the parent's history, by reference
    Field("payload.response_id", "str"),  # token_usage_record
    *(Field(f"payload.usage.{name}", "count") for name in USAGE),  # token_usage_record: the response's own usage
    Field("payload.message", "any"),  # compacted: the summary (empty for a remote compaction)
    Field("payload.status", "any"),  # web_search_call
    Field("payload.action", "any"),  # web_search_call: what it searched or opened
    Field("payload.error", "any"),  # task_complete of a task that ended in an error (0.171)
    Field("payload.item.type", "any"),  # item_completed (0.171)
    Field("payload.item.id", "any"),  # item_completed CommandExecution: the call id
    Field("payload.item.exit_code", "int"),  # item_completed CommandExecution
    Field("payload.item.status", "any"),  # item_completed CommandExecution: completed / failed
]

LINE_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted", "token_usage_record",
              "world_state")

# Real rollouts (tests/fixtures/realdata/codex-cli) that show the facts: a Codex Desktop 0.104 session
# (each token_count written twice) and a 0.39 session whose shell outputs carry metadata.exit_code.
_DOUBLED = "sessions/2026/02/23/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
_V039 = "VibeCodingTracker__tests__fixtures__sessions__codex.jsonl"


class Codex(TranscriptFormat):
    name = "codex"
    description = "OpenAI Codex CLI session rollout (JSON Lines of timestamp, type, payload)"
    input = "lines"
    continues = True  # a grown rollout is read from its last segment no call crosses (codex.sql: _tail_state)
    whole = ("when it was last read no line after the model first spoke was free of a call awaiting its output "
             "(inside one task, each call's output starts the next request): there was no line to go on from")
    fields = FIELDS
    facts: ClassVar[dict[str, str]] = {
        "usage": "each response's token_usage_record (0.171), else differences of token_count's cumulative "
                 "total_token_usage (last_token_usage where a difference cannot be taken)",
        "timestamps": "timestamp on every line",
        "tool_status": "item_completed CommandExecution (0.171), exec_command_end.exit_code, patch_apply_end.success, "
                       "mcp_tool_call_end.result, the exit code in a unified exec output's header or a 0.39-era shell "
                       "output's metadata, a hosted web_search_call's status; NULL where none is recorded",
        "result_size": "the call output's text (tokens estimated as bytes / 4)",
        "context_size": "the input tokens of each request (not of a hosted web search's, which counts its passes)",
        "call_ids": "call_id of each call and its output",
        "thread": "one conversation per rollout file (a fork or sub-agent writes its own)",
        "run_status": "inferred from task_complete (and its error) / turn_aborted",
    }
    inferred = frozenset({"run_status"})
    examples: ClassVar[dict[str, str]] = {
        "usage": f"codex-cli/{_DOUBLED}", "timestamps": f"codex-cli/{_DOUBLED}", "tool_status": f"codex-cli/{_V039}",
        "result_size": f"codex-cli/{_DOUBLED}", "context_size": f"codex-cli/{_DOUBLED}", "call_ids": f"codex-cli/{_DOUBLED}",
        "run_status": f"codex-cli/{_DOUBLED}", "thread": f"codex-cli/{_DOUBLED}",
    }
    zero_buckets: ClassVar[dict[str, str]] = {
        bucket: "Codex speaks the OpenAI Responses / Chat Completions API, whose usage has no cache-write count: "
                "OpenAI's prompt caching is automatic and bills no writes, and Codex asks no provider for explicit "
                "caching — written 0 on every request whose token_count was recorded"
        for bucket in ("cache_write_5m", "cache_write_1h")}

    def sniff(self, values: list[object], text: str) -> bool:
        return any(isinstance(v, dict) and v.get("type") in LINE_TYPES and isinstance(v.get("payload"), dict)
                   and "timestamp" in v for v in values)


FORMAT = Codex()
