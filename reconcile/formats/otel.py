"""OpenTelemetry GenAI spans as OTLP JSON (the collector file exporter's output).

A file holds one ``ExportTraceServiceRequest`` (``resourceSpans → scopeSpans → spans``, attributes as
key/value lists) or one per line. Records: one per line of the file (one request), or one for a file that
is a single request: ingest counts the file's lines, never its spans. A line is loaded whole or not at all
(a span with no ids or an unreadable time rejects it), and so is a run (a staged value out of range rejects
its lines and the run). Every rule is SQL, in ``otel.sql``; docs/formats.md gives each with the attribute
it reads, per convention (GenAI ``gen_ai.*``, OpenInference, OpenLLMetry).

- Runs: an agent span (``gen_ai.operation.name = invoke_agent``, OpenInference ``AGENT``) starts a run
  ``<traceId>/<spanId>`` and every span belongs to its nearest agent ancestor, so a sub-agent (pydantic-ai's
  delegation inside a tool) is a child run; a LangGraph node marked AGENT (``metadata.langgraph_node`` is its
  own name: the ``agent`` node, once a turn) is a step of its graph's run. Spans under no agent span are their
  trace's run ``<traceId>``, rooted at the trace's root span.
- Status: the run's root span and its error decide it. ERROR is ``failed`` — ``budget_exceeded`` when the
  exception's class (the exception event's ``exception.type``, else the status message) is a framework's
  limit stop (``LIMIT_STOPS``); a root not ended, or not in the file, is ``running`` (inferred); a root that
  returned a framework's limit reply (``LIMIT_REPLIES``: LangGraph's remaining-steps answer) is
  ``budget_exceeded``; else ``succeeded``: a tool that raised while the agent went on to answer leaves the run
  succeeded. The calls a limit-stopped run's last model call asked for and no tool span ran are ``not_run``.
- Steps: model calls are the provider calls (``chat``, ``text_completion``, ``generate_content``,
  ``embeddings``; OpenInference ``LLM``, ``EMBEDDING``) — a model span with another under it is a wrapper,
  skipped; tool steps are ``execute_tool`` / ``TOOL`` spans; other spans are structure, skipped.
- Tool calls: what the model-call span's output messages asked for (``gen_ai.output.messages`` tool_call
  parts, OpenInference ``llm.output_messages.M.message.tool_calls.K.tool_call.*``, OpenLLMetry
  ``gen_ai.completion.M.tool_calls.K.*``), ids and arguments as the model wrote them; a call of an output tool
  (pydantic-ai's ``final_result``: ``OUTPUT_TOOL_NAMES``, or ``model_request_parameters.output_tools``) is the
  answer, not a call. A tool span runs the call of its ``gen_ai.tool.call.id`` (a LangChain ToolMessage's
  ``tool_call_id``), else, in order, the calls of its name the latest model call asked for; one that answers
  none is a call of its own. A call the model gave no id is named by the tool span that ran it, else by its
  model span and position. Its result is ``gen_ai.tool.call.result``, else the ToolMessage's content.
- The answer (a run whose root returned without raising): pydantic-ai's ``final_result`` on the agent span, the
  last assistant message's text in the root's ``output.value`` (or that value when it is plain text), else, for a
  run that succeeded, the text of its last model call, which asked for no tool and after which no tool ran.
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
- A file of one request a line that grew (the collector's file exporter appends) is read on from the first
  line of its earliest trace still open: a trace is open until its root span (exported when it ends, after
  every span under it) and one of its runs are in the file. A span of a trace read before that line (a child
  that ended after its root, a request written twice) reads the file whole (docs/architecture.md).
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


# A framework's own stop at one of its limits, by the exception's class (the last part of the root span's exception
# event's exception.type, else the class its status message starts with): the run is budget_exceeded, not failed.
LIMIT_STOPS = {
    # pydantic-ai: UsageLimits (request_limit, tool_calls_limit, input/output/total_tokens_limit) checked before a
    # request or after a response; the agent span is ERROR with "UsageLimitExceeded: …" and an exception event
    "UsageLimitExceeded": "pydantic-ai's UsageLimits stopped the run (a request, tool-call or token limit)",
    # LangGraph: the graph ran recursion_limit super-steps without reaching END; only the root span is ERROR
    "GraphRecursionError": "LangGraph's recursion_limit stopped the graph before it reached a stop condition",
}

# A framework's own answer when one of its limits ends the loop without an exception: the run is budget_exceeded, its
# stop reason "<name>: <reply>".
LIMIT_REPLIES = {
    # LangGraph's create_react_agent (langgraph.prebuilt.chat_agent_executor): when its remaining_steps (from the
    # recursion_limit) run out as the model asks for tools, it returns this instead of the model's message
    "Sorry, need more steps to process this request.": "remaining_steps",
}

# A framework's output tools: a call of one is how the model gave its answer (the run's final_result), not a tool call.
# Where the span records its request parameters (pydantic-ai's model_request_parameters.output_tools) those name
# them; else the framework's default names, by the instrumentation scope it writes.
OUTPUT_TOOL_NAMES = {
    # pydantic-ai's ToolOutput default name, final_result_<type> for several output types (DEFAULT_OUTPUT_TOOL_NAME)
    "pydantic-ai": r"final_result(_\w+)?",
}


class OpenTelemetry(TranscriptFormat):
    name = "otel"
    description = "OpenTelemetry spans as OTLP JSON (resourceSpans; one request or one per line)"
    input = "text"
    # a file of one request per line (the collector's file exporter appends them) is read on from its first trace still
    # open, as a line format is (otel.sql: _tail_spans); a file that is one request is read whole
    tail_text = True
    facts: ClassVar[dict[str, str]] = {
        "usage": "gen_ai.usage.* (OpenInference llm.token_count.*) on each model-call span (a cache count a span "
                 "leaves out is unknown)",
        "timestamps": "span start and end times (a run's: its root span's)",
        "tool_status": "the tool span's status (ERROR, else unset as the conventions say), and a LangChain "
                       "ToolMessage's status",
        "result_size": "gen_ai.tool.call.result (opt-in), else the content of the ToolMessage in OpenInference's "
                       "output.value (not the serialized message)",
        "context_size": "gen_ai.usage.input_tokens (llm.token_count.prompt)",
        "catalogue": "gen_ai.tool.definitions (opt-in), else OpenInference llm.tools.N.tool.json_schema",
        "ledger": "gen_ai.aggregated_usage.input_tokens / output_tokens on pydantic-ai's agent span (the run's own "
                  "calls)",
        "thread": "gen_ai.conversation.id on each model-call span, else the LangGraph node it ran in "
                  "(metadata.langgraph_node); a run's calls with neither continue one conversation",
        "call_ids": "the tool span's gen_ai.tool.call.id (a ToolMessage's tool_call_id) against the ids in the "
                    "model-call span's output messages; a tool span with none runs the calls of its name the latest "
                    "model call asked for, in order",
        "run_status": "the root span's status and exception event (ERROR: failed; a framework's limit stop, or "
                      "its limit reply, budget_exceeded), as the framework set it when the run ended; a root not "
                      "ended, or not in the file, is running (inferred)",
    }
    # run by run: a run whose root span ended has the framework's outcome; one without it is inferred running
    inferred: ClassVar[frozenset[str]] = frozenset()
    # No real OTLP capture is in the shared corpora; the frameworks' own spans are under tests/fixtures/frameworks.
    examples: ClassVar[dict[str, str]] = dict.fromkeys(
        facts, "(no real file: the shared corpora hold no OTLP capture; tests/fixtures/frameworks holds spans "
               "pydantic-ai 2.78 and LangGraph 1.2 under OpenInference wrote offline with scripted models, "
               "tests/fixtures/otel spans this project wrote to the documented conventions)")
    zero_buckets: ClassVar[dict[str, str]] = {"cache_write_5m": NO_CACHE_WRITES_WHY, "cache_write_1h": NO_CACHE_WRITES_WHY}

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, dict):
            return isinstance(first.get("resourceSpans"), list)
        return not values and '"resourceSpans"' in text[:2000]

    def sql_values(self) -> dict[str, str]:
        from reconcile.ingest.lines import RAW_KEEP_CHARS
        from reconcile.ingest.validate import lenient_reason_sql, lenient_suspect_sql

        # what makes JSON that DuckDB parses not strict JSON (a trailing comma, NaN), or NULL: one rule for all
        return {"lenience": f"case when {lenient_suspect_sql('t')} then {lenient_reason_sql('t')} end",
                "zero_omitting_scopes": "[" + ", ".join(string_literal(scope) for scope in ZERO_OMITTING_SCOPES) + "]",
                "raw_keep_chars": str(RAW_KEEP_CHARS),
                "limit_stops": "[" + ", ".join(string_literal(name) for name in LIMIT_STOPS) + "]",
                "limit_replies": "map {" + ", ".join(f"{string_literal(reply)}: {string_literal(name)}"
                                                     for reply, name in LIMIT_REPLIES.items()) + "}",
                "output_tool_names": "map {" + ", ".join(f"{string_literal(scope)}: {string_literal(pattern)}"
                                                         for scope, pattern in OUTPUT_TOOL_NAMES.items()) + "}"}

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
