"""Langfuse trace exports: ``{"trace": {...}, "observations": [...]}``.

One file is one trace is one run (run id = the trace id). GENERATION observations are model
steps, TOOL observations tool steps, in start-time order; SPAN, AGENT, CHAIN and EVENT
observations are structure and are skipped (counted) — unless they carry usage (an AGENT span
reporting ``gen_ai.usage.*``), which Langfuse counts into the trace and so do we, as a model
step. Steps are labelled with their parent observation's name. Records: the trace is record 1,
the observations records 2, 3, … in file order.

Usage: Langfuse's ``usageDetails`` keys are additive buckets (``input``, ``output``,
``input_cache_read``, ``output_reasoning``, …; ``total`` is their sum), while
``prompt_details.*`` and ``completion_details.*`` are subsets of ``input``/``output``. So:
cache read = ``input_cache_read`` + ``prompt_details.cache_read`` (moved out of ``input``),
cache write = ``input_cache_creation``/``input_cache_write``, other ``input_*`` keys and unknown
keys count as uncached input, every ``output_*`` key as output; reasoning is
``output_reasoning`` or ``completion_details.reasoning``. A generation without usage has unknown
usage (NULL), not zero. ``costDetails.total`` is kept as each step's own cost.

Not recorded, so not judged: a trace's calls need not continue one conversation (a router call
and an agent call sit side by side), a TOOL observation is not linked to the generation that
asked for it (the call is taken as asked by the latest generation before it), and the trace has
no outcome of its own (the status is inferred from observation levels and end times).
"""

from __future__ import annotations

from typing import ClassVar

from .base import TranscriptFormat


class Langfuse(TranscriptFormat):
    name = "langfuse"
    description = "Langfuse trace export ({trace, observations[]})"
    input = "document"
    shape_sql = "json_type(j, '$.trace') = 'OBJECT' and json_type(j, '$.observations') = 'ARRAY'"
    expected = 'a Langfuse trace export ({"trace": {...}, "observations": [...]})'
    facts: ClassVar[dict[str, str]] = {
        "usage": "usageDetails of each generation", "timestamps": "startTime / endTime of each observation",
        "tool_status": "the level of each TOOL observation (ERROR or not)", "result_size": "the TOOL observation's output",
        "context_size": "input buckets of each generation", "run_status": "inferred from levels and end times",
    }
    inferred = frozenset({"run_status"})

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, dict):
            return isinstance(first.get("trace"), dict) and isinstance(first.get("observations"), list)
        return not values and text.lstrip().startswith("{") and '"observations"' in text and '"trace"' in text


FORMAT = Langfuse()
