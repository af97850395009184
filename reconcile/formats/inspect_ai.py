"""Inspect AI evaluation logs: ``.json`` (one EvalLog) and ``.eval`` (a zip of its header and samples).

One run per sample and epoch (``<eval id>/<sample id>/epoch <n>``), its task the eval's task.
A ``.eval`` archive is read with the standard library (its members are deflated JSON): the
header and every ``samples/*.json`` become one document, the shape of a ``.json`` log. Records:
one per sample.

Model steps are the sample's ``model`` events (scorer calls included: they are paid for), with
``output.usage``; tool steps its ``tool`` events, paired with the model's ``tool_calls`` by id,
``error`` giving status ``error``. The meaning of ``input_tokens`` changed in inspect 0.3.184
(28 Feb 2026): since then it excludes cache reads and writes; before, it was the provider's own —
including cache reads for OpenAI and others, excluding them for Anthropic. The version is read
from the log (``eval.packages.inspect_ai``) and each call mapped to our disjoint buckets
accordingly. ``total_cost``, where Inspect recorded it, is the harness's cost of the call.

Status: ``failed`` when the sample has an ``error``; when a ``limit`` stopped it, by its type
(message, turn, token, cost, context → budget_exceeded; time, working → timed_out; operator →
cancelled; custom → failed), the raw stop reason naming the limit; else ``succeeded`` (a sample
in the log ran to its end). Configured limits (``eval.config``: token, time, cost) are budgets.
"""

from __future__ import annotations

import re
from typing import ClassVar

from .base import TranscriptFormat

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
        "usage": "output.usage of each model event", "timestamps": "timestamp and completed of each event",
        "tool_status": "error of each tool event", "result_size": "each tool event's result",
        "context_size": "all input tokens of each model call", "call_ids": "tool event id = the model's tool call id",
        "limits": "eval.config token / time / cost limits", "thread": "one conversation per sample",
        "run_status": "sample error and limit",
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
