"""The native journal, format v1 (``docs/journal-format.md``): JSON Lines a harness appends to.

Nothing is inferred: every fact the journal records is read as it is, and what a journal leaves
out stays NULL — except a token bucket left out of a model step's ``usage``, which the format
defines as none of that kind (the writer's contract, ``docs/journal-format.md``). Staging (``native.sql``) validates each line's fields, resolves repeated lines
(an exact repeat is skipped, a conflicting one rejected) and requires each run's ``run_start``
in the same file.
"""

from __future__ import annotations

from typing import ClassVar

from reconcile.formats.journal_spec import CALL_ENTRY, END_MISSING, END_UNKNOWN, FIELDS, TOOL_ENTRY, TOOL_STATUS, TOOL_STATUSES
from reconcile.sql_text import string_literal
from reconcile.formats.base import TranscriptFormat, sql_list


class NativeJournal(TranscriptFormat):
    name = "native"
    description = "reconcile native journal v1 (JSON Lines of run_start / step / run_end)"
    input = "lines"
    settled = "status <> 'running'"  # a run_end line ends a run: a grown journal is read from its first open run on
    fields = FIELDS
    extra_line_checks = """when json_type(f[1]) in ('BIGINT', 'UBIGINT') and f[1] ->> '$' <> '1'
        then 'journal version ' || (f[1] ->> '$') || ' is not supported; this reconcile reads v1'"""
    extra_line_suspect = "j.v is distinct from 1"
    facts: ClassVar[dict[str, str]] = {
        "usage": "usage on each model step", "timestamps": "ts on every line",
        "tool_status": "status on each tool step", "result_size": "result_tokens / result_bytes",
        "bounded": "bounded on each tool step",
        "result_bound": "limits.result_bound_tokens", "limits": "limits on run_start", "loop_detector": "loop_detector (or limits.max_repeats) on run_start",
        "ledger": "ledger on run_end", "retry_limit": "limits.max_retries",
        "fallback_route": "fallback_model on run_start", "catalogue": "tools on run_start",
        "side_effects": "side_effect of each tools entry (left out: false, as the format defines)", "context_size": "context_tokens",
        "thread": "one conversation per run (agent_label names sub-agents)", "call_ids": "call_id on tool steps",
        "input_hash": "input_hash", "run_status": "status / stop_reason on run_end",
    }

    examples: ClassVar[dict[str, str]] = {fact: "sample_runs/2026-11-28/coder.jsonl" for fact in facts}
    zero_buckets: ClassVar[dict[str, str]] = {
        bucket: "the journal format defines a bucket left out of a model step's usage as none of that kind"
        for bucket in ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")}

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        return isinstance(first, dict) and "v" in first and first.get("type") in ("run_start", "step", "run_end")

    def sql_values(self) -> dict[str, str]:
        # the messages of the rules across fields, worded once in journal_spec (the writer's twin)
        def message(text: str, **values: str) -> str:
            parts = text.split("{")
            sql = string_literal(parts[0])
            for part in parts[1:]:
                name, rest = part.split("}", 1)
                sql += f" || {values[name]} || {string_literal(rest)}"
            return sql

        quoted = "coalesce('\"' || {} || '\"', '(none)')"
        return {"tool_statuses": sql_list(TOOL_STATUSES),
                "tool_status_message": message(TOOL_STATUS, status="j.status"),
                "end_missing": string_literal(END_MISSING),
                "end_unknown": message(END_UNKNOWN, status=quoted.format("j.status"),
                                       reason=quoted.format("j.stop_reason")),
                "call_entry": string_literal(CALL_ENTRY), "tool_entry": string_literal(TOOL_ENTRY)}


FORMAT = NativeJournal()
