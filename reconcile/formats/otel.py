"""OpenTelemetry GenAI spans as OTLP JSON (the collector file exporter's output).

A file holds one ``ExportTraceServiceRequest`` (``resourceSpans → scopeSpans → spans``, attributes
as key/value lists) or one per line. Records: one per span (a line that is not JSON is one
rejected record).

- A run is an agent span's tree: a span with ``gen_ai.operation.name = invoke_agent`` (or
  OpenInference ``openinference.span.kind = AGENT``) roots a run ``<traceId>/<spanId>``, and every
  span belongs to its nearest agent ancestor (a nested agent is a child run). Spans of a trace
  with no agent span form one run, ``<traceId>``.
- Model steps: ``chat``, ``text_completion``, ``generate_content``, ``embeddings`` operations (or
  OpenInference ``LLM``/``EMBEDDING``); tool steps: ``execute_tool`` (or ``TOOL``); other spans
  are structure, skipped and counted. Steps are in start-time order.
- Usage: ``gen_ai.usage.input_tokens`` (old name ``prompt_tokens``; OpenInference
  ``llm.token_count.prompt``) includes cache reads and writes, which are
  ``gen_ai.usage.cache_read.input_tokens`` / ``cache_creation.input_tokens`` (old names
  ``cache_read_input_tokens`` / ``cache_creation_input_tokens``; OpenInference
  ``llm.token_count.prompt_details.cache_read`` / ``cache_write``). Uncached input is what is
  left — unless the cache counts exceed the input, in which case the instrumentation reported
  them apart and the input is taken as uncached. A cache count the span leaves out is unknown
  (NULL; its share stays in the uncached input and the call's cost is unknown) — except from an
  instrumentation that leaves zero counts out (``ZERO_OMITTING_SCOPES``: pydantic-ai's,
  OpenInference's LangChain one), where it is 0. Cache writes are counted whole, not by lifetime:
  where some were made their 5-minute / 1-hour split is unknown (the cost a range over the
  lifetimes) — except for models whose provider bills no cache writes (OpenAI, Gemini:
  ``zero_buckets``), whose writes are 0. ``operation.cost`` is the harness's price of the call,
  ``gen_ai.aggregated_usage.*`` on an agent span its ledger; ids written base64 are read as hex.
- Catalogue: the tools a model span was offered, from ``gen_ai.tool.definitions`` (opt-in), else
  OpenInference ``llm.tools.N.tool.json_schema``; whether a tool changes the world is not recorded.
- Tool calls: ``gen_ai.tool.call.id`` (else the span id), ``gen_ai.tool.name``, arguments from
  ``gen_ai.tool.call.arguments``; spans do not say which model call asked, so the latest model
  step before the tool is taken as the asker. A tool result's size is known only when the span
  carries ``gen_ai.tool.call.result`` (an opt-in attribute).
- Span status ERROR is a step error (the conventions leave a successful span's status unset);
  a run's status is inferred: ``failed`` when its root span (or, for a trace run, any span)
  errored, ``running`` when a span has no end time, else ``succeeded``.
"""

from __future__ import annotations

from typing import ClassVar

from reconcile.formats.base import TranscriptFormat
from reconcile.ingest.billing import NO_CACHE_WRITES_WHY
from reconcile.sql_text import string_literal


# Instrumentations that leave a usage count out when it is zero, by the instrumentation scope they write (the
# scope's name in scopeSpans): on their model spans a count left out is 0, not unknown (docs/formats.md).
ZERO_OMITTING_SCOPES = {
    # pydantic-ai's own instrumentation (2.x, instrumentation versions 5 and 6): RequestUsage's zero counts are not
    # written (gen_ai.usage.input_tokens, output_tokens, cache_read.input_tokens, cache_creation.input_tokens)
    "pydantic-ai": "pydantic-ai's instrumentation writes gen_ai.usage.* only for non-zero counts",
    # OpenInference's LangChain instrumentation: llm.token_count.prompt_details.cache_read / cache_write only when
    # LangChain's usage metadata carries a non-zero count
    "openinference.instrumentation.langchain": "OpenInference's LangChain instrumentation writes "
                                               "llm.token_count.prompt_details.* only for non-zero counts",
}


class OpenTelemetry(TranscriptFormat):
    name = "otel"
    description = "OpenTelemetry spans as OTLP JSON (resourceSpans; one request or one per line)"
    input = "text"
    facts: ClassVar[dict[str, str]] = {
        "usage": "gen_ai.usage.* attributes (a cache count a span leaves out is unknown)",
        "timestamps": "span start and end times",
        "tool_status": "span status (ERROR, else unset as the conventions say)",
        "result_size": "gen_ai.tool.call.result, when recorded", "context_size": "gen_ai.usage.input_tokens",
        "catalogue": "gen_ai.tool.definitions (opt-in), else OpenInference llm.tools.N.tool.json_schema",
        "run_status": "inferred from span status and end times",
    }
    inferred = frozenset({"run_status"})
    # No real OTLP capture is in the shared corpora; tests/fixtures/otel is written by this project.
    examples: ClassVar[dict[str, str]] = dict.fromkeys(
        facts, "(no real file: the shared corpora hold no OTLP capture; tests/fixtures/otel holds spans this project "
               "wrote to the documented conventions)")
    zero_buckets: ClassVar[dict[str, str]] = {"cache_write_5m": NO_CACHE_WRITES_WHY, "cache_write_1h": NO_CACHE_WRITES_WHY}

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, dict):
            return isinstance(first.get("resourceSpans"), list)
        return not values and '"resourceSpans"' in text[:2000]

    def sql_values(self) -> dict[str, str]:
        from reconcile.ingest.validate import lenient_reason_sql, lenient_suspect_sql

        # what makes JSON that DuckDB parses not strict JSON (a trailing comma, NaN), or NULL: one rule for all
        return {"lenience": f"case when {lenient_suspect_sql('t')} then {lenient_reason_sql('t')} end",
                "zero_omitting_scopes": "[" + ", ".join(string_literal(scope) for scope in ZERO_OMITTING_SCOPES) + "]"}

    def stage(self, con) -> None:
        super().stage(con)
        from reconcile.errors import BadInput

        wrong = con.execute("select f.path from _ot_requests r join _files f using (file_no) group by f.path "
                            "having count(*) filter (where valid) > 0 and count(*) filter (where spans) = 0 "
                            "order by f.path limit 1").fetchall()
        if wrong:
            raise BadInput(f"{wrong[0][0]}: expected OTLP JSON (an ExportTraceServiceRequest with resourceSpans, or "
                           "one per line), found JSON without resourceSpans. Check --format, or leave it out to detect it.")


FORMAT = OpenTelemetry()
