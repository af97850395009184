"""Langfuse trace exports: ``{"trace": {...}, "observations": [...]}``.

One file is one trace is one run (run id = the trace id), begun at the earlier of the trace's
timestamp and its first observation. GENERATION observations are model steps, tool runs tool
steps, in start-time order; SPAN, AGENT, CHAIN and EVENT observations are structure and are skipped
(counted) — unless they carry usage (an AGENT span reporting ``gen_ai.usage.*``), which Langfuse
counts into the trace and so do we, as a model step. Steps are labelled with their parent
observation's name. Records: the trace is record 1, the observations records 2, 3, … in file order.
The Claude Agent SDK's ``claude.assistant.turn`` observations are content blocks: those before the
next tool ran are one response, one call.

Tool runs: TOOL observations, spans marking a tool's run (OpenInference kind TOOL, ``gen_ai.tool.name``,
``execute_tool``, ``ai.toolCall.name``, a LangChain span whose output is its ToolMessage), BeeAI's
``agent.react`` spans (tool.name + tool.parameters, per iteration); observations naming one call id are
one run. Tool calls and text are read from each call's output, item by item (OpenAI chat and Responses,
Anthropic blocks, OTel GenAI parts, Gemini parts, LangChain, Vercel AI SDK, Koog's JSON text); a call of a
pydantic-ai output tool (``model_request_parameters.output_tools``) is the answer, not a call. A run
answers the call of its recorded id, else the calls and runs of one tool pair in order. The model is the
one that answered (``gen_ai.response.model``), a Vertex resource path cut to its name; the provider is
read where the call (or the generation wrapping it) records it, never from a model's name.

Usage: Langfuse's ``usageDetails`` keys are additive buckets (``input``, ``output``,
``input_cache_read``, ``output_reasoning``, …), while ``prompt_details.*`` and
``completion_details.*`` are subsets of ``input``/``output``. So: cache read =
``input_cache_read``/``input_cached_tokens``/``cache_read_input_tokens`` + ``prompt_details.cache_read``
(moved out of ``input``); cache write = ``input_cache_creation``/``input_cache_write``/
``cache_creation_input_tokens``/``input_cache_creation_5m`` (5-minute) and ``input_cache_creation_1h``;
other ``input_*`` keys and unknown keys count as uncached input, every ``output_*`` key as output;
reasoning is ``output_reasoning`` or ``completion_details.reasoning``. A bucket whose keys are all
absent is unknown (NULL) — a generation without usage has unknown usage, one without an ``output*``
key unknown output — except the cache writes of OpenAI and Gemini models, which their providers do
not bill (0, see ``zero_buckets``). ``total`` is the keys' sum when the client gave none; a larger
``total`` names billed tokens the keys leave out: for Gemini, thinking, which Google bills as output
and counts in its total but not in its candidates (the Vertex AI trace: input 5, output 845, total
2,023 — 1,173 thinking tokens), so they are added to output and are its reasoning; for another model
the excess has no known bucket and the output is unknown. The context size is every input bucket,
known where the cache buckets are (or the model's ``input`` holds its cache reads: OpenAI's and
Gemini's do, so with no read count at all their uncached part is unknown, not the whole input). A negative
count rejects the observation. ``costDetails.total`` is kept as each step's own cost.

The catalogue is the tools an observation offered: Langfuse's ``toolDefinitions``, else what the
instrumentation put in its ``metadata.attributes`` (OpenInference ``llm.tools.N.tool.json_schema``,
GenAI ``gen_ai.tool.definitions``, the Vercel AI SDK's ``ai.prompt.tools``, BeeAI's ``llm.tools``, pydantic-ai's
``model_request_parameters`` function and output tools);
a run's catalogue is every tool its observations offered. Whether a tool changes the world is not
recorded. The catalogue size is the largest set one observation offered, as bytes / 4.

Not recorded, so not judged: a trace's calls need not continue one conversation (a router call
and an agent call sit side by side), a TOOL observation is not linked to the generation that
asked for it (the call id links them where both record it; else the order of a tool's calls and
runs, else the latest generation before it asked), and the trace has no outcome of its own (the
status is inferred from observation levels and end times).
"""

from __future__ import annotations

from typing import ClassVar

from reconcile.formats.base import TranscriptFormat
from reconcile.ingest.billing import NO_CACHE_WRITES_WHY


class Langfuse(TranscriptFormat):
    name = "langfuse"
    description = "Langfuse trace export ({trace, observations[]})"
    input = "document"
    shape_sql = "json_type(j, '$.trace') = 'OBJECT' and json_type(j, '$.observations') = 'ARRAY'"
    expected = 'a Langfuse trace export ({"trace": {...}, "observations": [...]})'
    facts: ClassVar[dict[str, str]] = {
        "usage": "usageDetails of each generation (and its total, for tokens the other keys leave out)",
        "timestamps": "startTime / endTime of each observation",
        "tool_status": "the level of each tool run's observation (ERROR or not; a LangChain ToolMessage's status)",
        "result_size": "the tool run's output (a LangChain ToolMessage's content)",
        "context_size": "input buckets of each generation, where the cache buckets are known",
        "catalogue": "toolDefinitions, else the tool definitions in metadata.attributes (llm.tools.N.tool.json_schema, "
                     "gen_ai.tool.definitions, ai.prompt.tools, llm.tools, model_request_parameters)",
        "run_status": "inferred from levels and end times",
    }
    inferred = frozenset({"run_status"})
    examples: ClassVar[dict[str, str]] = {
        "usage": "langfuse-framework-traces/vertex-ai-2025-08-01.trace.json",
        "timestamps": "langfuse-framework-traces/openai-agents-2025-09-30.trace.json",
        "tool_status": "langfuse-framework-traces/openai-agents-2025-09-30.trace.json",
        "result_size": "langfuse-framework-traces/openai-agents-2025-09-30.trace.json",
        "context_size": "langfuse-framework-traces/langgraph-js-2025-10-30.trace.json",
        "catalogue": "langfuse-framework-traces/microsoft-agent-2025-12-17.trace.json",
        "run_status": "langfuse-framework-traces/openai-agents-2025-09-30.trace.json",
    }
    zero_buckets: ClassVar[dict[str, str]] = {"cache_write_5m": NO_CACHE_WRITES_WHY, "cache_write_1h": NO_CACHE_WRITES_WHY}

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, dict):
            return isinstance(first.get("trace"), dict) and isinstance(first.get("observations"), list)
        return not values and text.lstrip().startswith("{") and '"observations"' in text and '"trace"' in text


FORMAT = Langfuse()
