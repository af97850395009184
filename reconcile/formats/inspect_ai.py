"""Inspect AI evaluation logs: ``.json`` (one EvalLog) and ``.eval`` (a zip of its header and samples).

One run per sample and epoch, its task the eval's task. Its id is what the harness recorded: the
sample's ``uuid`` (inspect >= 0.3.70, "globally unique identifier for sample run" — the same in a
``.eval`` and its ``.json`` export, and kept when a retry carries a finished sample over into its
own log), so the same run seen in two files is loaded once and the second file's samples are noted
"already loaded"; older logs: ``<eval id>/<sample id>/epoch <n>``, the eval id being ``eval_id``,
else ``run_id/task_id`` (what Inspect derives a missing eval_id from: two tasks of one run differ
by task id); the file's name only when the log records none of them. A ``.eval`` archive's header and
every ``samples/*.json`` become one document, the shape of a ``.json`` log (``reconcile.ingest.files``
reads its members, deflated or, since inspect 0.3.285, Zstandard). Records: one per sample. A log with
no samples (``log_samples=False``: only the eval's usage totals, ``stats.model_usage``) is one record,
skipped with why: its totals belong to no sample, call or time, and a run without calls would read as
one that cost $0.

Model steps are the sample's ``model`` events, scorer calls included: a model-graded scorer's call
(an event inside a span whose ``span_begin`` has type ``scorer``, followed through ``parent_id``; in
logs before spans, inside a scorer ``step``) is paid for, so it is a model step, but no part of the
agent's conversation: ``agent_label`` ``scorer``, off the main thread (its own thread for the context
checks, never the final answer). A call that raised (``error``; Inspect's empty output, no usage, no
completion) is a model step with that error and no finish reason, its model named as the log's
answered calls to the same model string name it. The step's model is ``output.model`` (the dated
snapshot the provider answered as); its provider the model string's first part, as Inspect records
it (``mockllm`` for Inspect's offline mock: the price is found by the model). The run's model is the
eval's, named as its answered calls name it, so a run and its steps name one model.

Usage is ``output.usage``. The meaning of ``input_tokens`` changed in inspect 0.3.184 (28 Feb 2026):
since then it excludes cache reads and writes; before, it was the provider's own — including cache
reads for OpenAI and others, excluding them for Anthropic. The version is read from the log
(``eval.packages.inspect_ai``) and each call mapped to our disjoint buckets accordingly. A count the
usage leaves out is unknown (NULL), and so is what depends on it: where ``input_tokens`` included the
reads and the reads are not recorded (0.3.58 here; 0.3.95 has them), the uncached part is unknown
while the whole input (the context) is known. Since 0.3.184 Inspect's OpenAI Responses mapping
leaves ``input_tokens_cache_read`` out when none was read: where the provider's total shows no
cached part (``total_tokens − output_tokens = input_tokens + writes``) the reads are 0. Reasoning is
``reasoning_tokens`` where recorded, unknown where not (Anthropic's mapping omits it), never 0. Two
buckets are 0 by the provider's or the harness's own rule (``zero_buckets``). A call Inspect answered
from its own response cache (``cache: "read"``) made no provider call: its tokens and cost are 0.
``total_cost``, where Inspect recorded it, is the harness's cost of the call. An answered call whose
output has no ``usage`` (a model API that reports none, as the ``hardcoded/hardcoded`` test model of
Inspect's own logs; Inspect then adds nothing to the sample's ``model_usage`` either) has unknown usage:
the log does not say what it billed, and no provider name is taken to mean free.

Time: the sample's ``started_at`` / ``completed_at``; else its first call plus ``total_time``; else
(logs before 2025) from its first call to the last moment the log shows it — the end of its last call
(``completed``, else ``timestamp`` + ``output.time``) or its last event, whichever is later.

Tool steps are the ``tool`` events, paired with the model's ``tool_calls`` by id: ``error`` (a handled
error the model sees) gives status ``error`` and its message; ``failed: true`` without an error (the
tool raised: the exception ended the sample) is an error too, "the tool crashed (<exception>)";
``pending: true`` without ``completed`` (a time limit or Ctrl-C interrupted it) is ``started``: no
result, so the pairing checks see the unanswered call. The call that crosses a limit is made and
counted, and its tool calls are never run: each is a ``not_run`` step. react()'s and basic_agent()'s
``submit``: the agent's last call asking for it, answered without error, is the final answer (its
``answer``, attachments resolved), not a tool call — its ToolEvent only echoes the answer; without
one, the final answer is the agent's last call with text that asks for no tool. Text Inspect moved to
the sample's ``attachments`` (``attachment://<md5>``) is read as the text it stands for.

The catalogue is the union of the ``tools`` each model event offered (names and
schemas; whether a tool changes the world is not recorded). The ledger is the sample's
``model_usage``: Inspect's own per-model count of the same calls (its token_limit is enforced against
``total_tokens``); an empty one with no call is a ledger of 0.

Status: ``cancelled`` when the sample's error is a ``CancelledError`` (Ctrl-C, a sibling cancelled when
the eval failed, the operator's cancel), with a short reason, "cancelled (CancelledError)"; else
``failed`` when the sample has an ``error``; when a ``limit`` stopped it, by its type (message, turn,
token, cost, context → budget_exceeded; time, working → timed_out; operator → cancelled; custom →
failed), the stop reason naming the limit and its value (``token limit (30000)``, ``time limit
(2s)``, ``cost limit ($0.02)``); else ``succeeded`` (a sample in the log ran to its end). Limits: the
sample's own ``token_limit`` / ``time_limit`` / ``message_limit``, else ``eval.config``'s; token, time
and cost limits are the budgets ``max_tokens``, ``max_wall_seconds``, ``max_cost_micros``; the
message, turn and working-time limits, which the store has no column for, are kept as declared in the
run's ``labels`` (``{"limits": {"message_limit": 8}}``).

Lost: earlier attempts of a sample retried on error (Inspect keeps neither their events nor their
usage), scores and their explanations, sandbox and state events.
"""

from __future__ import annotations

import re
from typing import ClassVar

from reconcile.formats.base import TranscriptFormat
from reconcile.ingest.billing import NO_CACHE_WRITES_WHY

# A zip's first member name follows 26 bytes of header (time, CRC, sizes). The head arrives decoded as UTF-8
# with replacement, where some of those bytes may pair into one character, so the name is looked for
# within 26 characters, not at exactly 26.
_ZIP_HEAD = re.compile(r"^PK\x03\x04.{0,26}?(_journal/start\.json|header\.json|samples/)", re.S)


class InspectAi(TranscriptFormat):
    name = "inspect_ai"
    description = "Inspect AI evaluation log (.json EvalLog, or .eval zip of header and samples)"
    input = "document"
    shape_sql = ("json_type(coalesce(j -> 'header', j), '$.eval') = 'OBJECT' "
                 "and json_type(coalesce(j -> 'header', j), '$.version') in ('UBIGINT', 'BIGINT', 'INTEGER')")
    expected = 'an Inspect AI log ({"version": …, "eval": {...}, "samples": [...]}, or an .eval archive)'
    facts: ClassVar[dict[str, str]] = {
        "usage": "output.usage of each model event (a key it leaves out is unknown)",
        "timestamps": "timestamp and completed of each event; the sample's started_at / completed_at, else total_time",
        "tool_status": "error of each tool event", "result_size": "each tool event's result",
        "context_size": "all input tokens of each model call", "call_ids": "tool event id = the model's tool call id",
        "limits": "eval.config token / time / cost limits", "thread": "one conversation per sample",
        "run_status": "sample error and limit",
        "catalogue": "the tools each model event offered (name, description, parameter schema)",
        "ledger": "the sample's model_usage: input, output and total tokens and cost, per model",
    }
    # A real file showing each fact (under tests/fixtures/realdata).
    examples: ClassVar[dict[str, str]] = {
        "usage": "inspect-ai/tests__analysis__test_logs__2025-05-12T20-27-36-04-00_browser.json",
        "timestamps": "inspect-ai/tests__analysis__test_logs_choices__mmlu-summary-choices.eval",
        "tool_status": "inspect-ai/tests__analysis__test_logs__2025-05-12T20-27-36-04-00_browser.json",
        "result_size": "inspect-ai/tests__analysis__test_logs__2025-05-12T20-27-36-04-00_browser.json",
        "context_size": "inspect-ai/tests__analysis__test_logs__2025-05-12T20-27-36-04-00_browser.json",
        "call_ids": "inspect-ai/tests__analysis__test_logs__2025-05-12T20-27-36-04-00_browser.json",
        "thread": "inspect-ai/tests__analysis__test_logs__2025-05-12T20-28-26-04-00_security-guide.json",
        "run_status": "inspect-ai/tests__analysis__test_logs__2025-05-12T20-28-13-04-00_popularity.json",
        "catalogue": "inspect-ai/tests__log__test_eval_log__log_message_deduplication.eval",
        "ledger": "inspect-ai/tests__analysis__test_logs__2025-05-12T20-27-36-04-00_browser.json",
        "limits": "(no real file in the shared corpora configures one: eval.config token_limit, time_limit and "
                  "cost_limit, as Inspect's EvalConfig documents them; tests/test_ingest_inspect_ai.py sets them)",
    }
    zero_buckets: ClassVar[dict[str, str]] = {
        "cache_write_5m": NO_CACHE_WRITES_WHY + "; any other model's absent input_tokens_cache_write is unknown",
        "cache_write_1h": "Inspect records one write bucket and asks for Anthropic's default 5-minute cache only "
                          "(cache_control {\"type\": \"ephemeral\"}); the other providers it drives have no 1-hour "
                          "writes: every call that records usage wrote none for an hour",
    }

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, dict):
            return isinstance(first.get("eval"), dict) and "version" in first and (
                "samples" in first or "stats" in first or "plan" in first)
        if _ZIP_HEAD.match(text):
            return True
        return not values and re.match(r'\s*\{\s*"version"\s*:\s*\d+\s*,\s*"status"\s*:', text) is not None


FORMAT = InspectAi()
