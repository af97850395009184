"""Independent cost oracle (B) for the real-data folders of five agent formats.

What this is
------------
A second, deliberately independent reading of the raw transcript files under
``tests/fixtures/realdata/<folder>/``, written without looking at reconcile's SQL, its
price tables or its output, so that tests can hold reconcile's token and dollar figures
against it.  Only the standard library and ``genai_prices`` are used.

    truths(folder_path) -> {run_id: truth}

dispatches on the folder's name through ``READERS`` (``inspect-ai``, ``mini-swe-agent``,
``swe-agent``, ``openhands``, ``langfuse-framework-traces``).  Run ids follow
``docs/formats.md`` (checked against ``reconcile sql "select run_id, source_file from runs"``
and nothing else).

A truth is a dict:

``calls``
    provider calls the file shows were made and billed, *including* calls whose usage the
    file does not record (those are also counted in ``calls_usage_unknown``).  Attempts that
    failed at the transport level and returned no response (mini-swe-agent's ``api_calls``
    minus responses) are NOT calls: see ``failed_attempts``.
``input_uncached``, ``cache_read``, ``cache_write_5m``, ``cache_write_1h``, ``output_tokens``
    disjoint token totals; ``None`` where any call leaves that bucket unknown.
``low_usd`` / ``high_usd``
    list-price dollars (``genai_prices`` at the call's timestamp), each call priced exactly
    and summed as Decimals, only the run total rounded (6 dp, ROUND_HALF_UP).  Exactly known
    => low == high.  A call with unknown usage adds 0 to low and makes high ``None``; an
    unknown cached share adds its cheapest split (as much cached as possible) to low and its
    dearest (nothing cached) to high; an output that is only a lower bound (unrecorded
    thinking tokens) makes high ``None``; a model ``genai_prices`` cannot price adds 0 to low
    and makes high ``None``.
``recorded_usd``
    the framework's own recorded cost for the run, the JSON number exactly as written
    (``json`` is parsed with ``parse_float=Decimal``), or ``None``.
``models`` / ``unpriced_models``
    sorted model ids as priced (the provider-reported model where the file has one).
``notes``
    the judgement calls for that run.
Extra keys: ``calls_usage_unknown``, ``failed_attempts`` (mini-swe-agent), ``estimate_usd``
(SWE-agent >= 1.0, see below).

Minimum cacheable prompt lengths used (a shorter prompt cannot have been cached, so its split
is known):  OpenAI 1,024 tokens, cache hits then grow in 128-token steps (so at most
1024 + 128*floor((P-1024)/128) of a P-token prompt can be a hit);  Anthropic 1,024 (Sonnet
3.5/3.7/4/4.5, Opus 3/4/4.1), 2,048 (Haiku 3/3.5), 4,096 (Opus 4.5, Haiku 4.5);  Google
implicit caching 1,024 (Gemini 2.5 Flash, 2.0 Flash), 2,048 (2.5 Pro), 4,096 (3 Pro);
DeepSeek records hits itself.

Price corrections (own knowledge, not reconcile's):  ``genai_prices`` 0.2.5 still prices
``deepseek-reasoner`` / ``deepseek-chat`` at R1 / V3 rates with a time-of-day discount.
DeepSeek's list since 2025-09-05 (V3.1) is $0.56 miss / $0.07 hit / $1.68 output per MTok, and
since 2025-09-29 (V3.2-Exp, then V3.2) $0.28 / $0.028 / $0.42 with no off-peak discount, until
the V4 launch on 2026-04-24 (after which genai_prices is used again).  The DeepSeek runs here
(2026-04-13) are priced at $0.28 / $0.028 / $0.42 — which reproduces LiteLLM's per-call
``extra.cost`` to the last digit.

Per format
----------
inspect-ai
    One run per sample and epoch; run id = the sample's ``uuid`` (logs since ~0.3.70), else
    ``<eval_id>/<sample id>/epoch <n>``, else ``<run_id>/<task_id>/<sample id>/epoch <n>``.
    Every ``model`` event is a call (scorer/grader calls too), except ``pending`` events and
    those answered from Inspect's local cache (``cache == "read"``: nothing billed).  Usage is
    taken from the RAW provider response kept in ``event.call.response.usage`` where present
    (OpenAI: cached ⊂ prompt; Anthropic: disjoint) — this does not depend on Inspect's
    version; otherwise from ``output.usage`` with Inspect's version rule (< 0.3.184: OpenAI
    and others' ``input_tokens`` include cache reads, Anthropic's exclude them; >= 0.3.184:
    input excludes reads and writes).  The two are compared and a mismatch noted.  Model
    events with no usage from Inspect's test doubles (``hardcoded/…``, ``mockllm/…``) are not
    billed calls: such a run costs exactly $0.  ``recorded_usd`` = sum of ``total_cost``
    where Inspect recorded one (none of these logs does).
mini-swe-agent
    Run id = file name without ``.traj.json``.  Every message of ANY role whose
    ``extra.response`` carries ``usage`` is a call (de-duplicated by response id), so a
    format-error response kept on a ``user`` message would count too (none occurs here).
    OpenAI-style raw usage: cached (``prompt_tokens_details.cached_tokens`` or DeepSeek's
    ``prompt_cache_hit_tokens``) ⊂ ``prompt_tokens``; reasoning ⊂ ``completion_tokens``.
    ``google/gemini-3-pro-preview`` via OpenRouter is priced at Google's list (OpenRouter passes
    it through; its ``usage.cost`` agrees).  ``info.model_stats.api_calls`` counts failed
    attempts too; ``api_calls - responses`` is reported as ``failed_attempts`` and treated as
    NOT billed (transport failures: an SSL EOF, a 600 s client timeout — no response, no
    usage; if a provider did bill one, its cost is unknown and not in high).
    ``recorded_usd`` = ``info.model_stats.instance_cost``.
swe-agent
    Run id = file stem.  Only run totals exist (``info.model_stats``).  SWE-agent 0.x
    (no ``replay_config``) took ``tokens_sent``/``tokens_received`` from the provider's
    ``usage``; the model is the run directory's shortcut (``gpt4`` = ``gpt-4-1106-preview``,
    which never had prompt caching) — exact, and equal to the recorded ``instance_cost``.
    SWE-agent >= 1.0 (``replay_config`` present) counts tokens with ``litellm.token_counter``
    (an estimate: the tool schemas and the tool-call arguments are not counted) while its cost
    comes from the real response: the billed tokens are unknown, so low = 0, high = None and
    ``estimate_usd`` gives the list-price range of the estimated counts (all input cached ..
    none).  All-zero ``model_stats`` (demonstrations; a replay whose ``api_calls`` are
    counted with 0 tokens and $0) => no call was billed: $0 exactly.  A history-only file with
    no ``info`` => nothing known (calls 0, low 0, high None).
openhands
    Run id = file stem.  Each distinct ``tool_call_metadata.model_response.id`` is one call
    (observations repeat their action's metadata: counted once).  LiteLLM usage:
    ``prompt_tokens`` includes cache reads and cache creation, so uncached = prompt − read −
    creation; creation is 5-minute (the 1-hour TTL did not exist in Jan 2025).  An agent
    ``message`` action without metadata was produced by a model call whose usage was not
    recorded: counted, usage unknown (high None).  ``recorded_usd`` = the last
    ``llm_metrics.accumulated_cost`` (absent in these files => None).
langfuse-framework-traces
    Run id = trace id (a trace exported twice is one run: the copy with most observations,
    then path order).  Provider calls: GENERATION observations, and any other observation
    carrying provider token attributes (``gen_ai.usage.*``, ``llm.token_count.*``,
    ``ai.usage.*``) — minus (a) wrappers: an observation with a candidate descendant only
    re-reports the calls it wraps (agno ``OpenAIChat.invoke``, Vercel ``ai.generateText``);
    (b) event markers: a GENERATION with no usage, no input and no output (BeeAI
    ``…success-N`` / ``…finish-N``); (c) duplicates by response id.  AGENT observations whose
    usage has no provider attribute behind it are not calls (Microsoft Agent Framework's
    ``invoke_agent``: its 44/180 are Langfuse's own tokenisation of the agent's input/output).
    Usage provenance: Langfuse INFERS usage by tokenising input/output text when none is
    ingested.  A call's usage is taken as billed only when the observation carries provider
    token attributes, or came from a Langfuse SDK integration that sends usage (provided cost,
    or cache/audio/reasoning detail keys).  Otherwise (Claude Agent SDK via LangSmith OTel,
    Koog 0.3, BeeAI) the figures are tokenizer guesses (e.g. 5 input tokens for the text
    ``{"content":"role"}``) => usage unknown.  Buckets: ``input_*`` keys are additive
    (``input_cache_read`` is a cache read, ``input_audio`` uncached input),
    ``prompt_details.*`` / ``completion_details.*`` are subsets, ``output_*`` keys additive
    (LangChain's ``output_reasoning`` is moved out of ``output``).  Gemini thinking tokens are
    billed as output: where the provider's total exceeds prompt + candidates and no thoughts
    were recorded (Vertex AI trace) the gap is thoughts and is added to output; where a
    thinking Gemini model's thoughts and total are both unrecorded (Microsoft.Extensions.AI
    C# trace) the output is a lower bound (high None).  ``recorded_usd`` = sum of
    ``costDetails.total`` of the provider-call observations (Langfuse's own figure — computed
    on its inferred usage where usage was inferred).

Run facts
---------
Each truth also carries, read from the raw files only (rules: docs/formats.md per format and
docs/status.md; reconcile's SQL and analyses were not read; where a file shows something the docs do
not say, the file is followed and the run's ``notes`` say so):

``tool_calls`` / ``tool_results`` / ``tool_errors``
    the tool calls the model asked for; the tool results recorded; how many of those results are
    errors (``None`` where the format records no tool outcome).  An answer tool (react's ``submit``,
    SWE-agent's final ``submit``, OpenHands' ``finish``, mini's ``COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT``
    command) is the final answer, not a tool call, and its echo is no result.
``status``
    one of docs/status.md's canonical statuses.  A run with no end record is ``abandoned`` when its
    last recorded time is more than 24 h before now (none of these formats records a wall-clock
    budget), else ``running``.
``final_answer``
    the text the docs define as the run's answer, or ``None``.
``started_at`` / ``ended_at`` / ``wall_seconds``
    UTC ISO 8601 strings and seconds, as the format records them; ``None`` where unknown.
``model`` / ``provider``
    the model as the provider answered (see below) and the provider (lower-case vendor).
Extra key: ``tool_runs`` (Langfuse: tool runs the trace records, beside the calls asked for).

What is counted, per format:

inspect-ai
    Calls: the ``tool_calls`` of the agent's model events (not pending, not inside a scorer span /
    scorer step).  Results: ``tool`` events, except a ``pending`` one without ``completed`` (no
    result) and the ``submit`` echo.  Errors: a tool event with ``error`` or ``failed: true``.
    Status: sample ``error`` -> failed (``CancelledError`` -> cancelled); ``limit`` by type
    (message/turn/token/cost/context -> budget_exceeded, time/working -> timed_out, operator ->
    cancelled, custom -> failed); else succeeded (the eval's own status is not the sample's).
    Answer: the last successful react ``submit``'s ``answer``, else the agent's last model call with
    text that asks for no tool (attachments resolved); never a scorer's.  Time: ``started_at`` ..
    ``completed_at``; else start = first model call, wall = ``total_time``, end = start + wall; else
    the span of the calls (timestamp .. ``completed``, or timestamp + ``output.time``).  Model: the
    ``output.model`` of the answered calls to the eval's model; provider: the eval model's prefix.
mini-swe-agent
    Calls: each command of a model reply (``extra.actions``, else ``tool_calls``, else the one
    ```` ```bash ```` / ```` ```mswea_bash_command ```` block; a reply with no single command, or a
    ``user`` message with ``interrupt_type`` FormatError, is a format error: no call), the submit
    command excepted.  Results: the ``tool`` / ``function_call_output`` message of a call (1.1 / 2.x),
    or the ``user`` message after a text-mode command; an ``action was not executed`` placeholder is
    no result.  Errors: return code != 0 (``extra.returncode``, else ``<returncode>``) or an
    ``exception_info`` (a command timeout).  Status: ``exit_status`` Submitted -> succeeded,
    LimitsExceeded -> budget_exceeded, Timeout and TimeExceeded -> timed_out, any other (an exception's
    name) -> failed.  Answer: ``info.submission`` (empty -> None).  Time: the span of the responses'
    ``created`` and the messages' ``extra.timestamp``.  Model: the responses' ``model``; provider:
    OpenRouter's upstream ``provider`` where routed through it, else the config model's prefix.
swe-agent
    Calls: each trajectory entry's ``action`` (history-only files: each assistant ``action``), the
    final ``submit`` excepted.  Results: their observations.  Errors: ``None`` (SWE-agent records no
    tool outcome).  Status: ``info.exit_status`` by docs/status.md's rules; none: last action
    ``submit`` -> succeeded.  Answer: ``info.submission`` (history-only: the submit's observation).
    Time: not recorded.  Model: ``replay_config``'s model name, else the 0.x run directory's shortcut.
openhands
    Calls: agent actions carrying ``tool_call_metadata`` (``finish`` excepted).  Results: the
    observations answering them (``cause`` / tool call id).  Errors: ``error`` observations (a
    command's exit code -1 is not one).  Status: the last ``agent_state_changed`` (finished,
    awaiting_user_input -> succeeded; error -> failed or budget_exceeded for an iteration/budget
    ceiling; rejected -> failed; stopped -> cancelled); no final state: ``finish`` -> succeeded.
    Answer: ``finish``'s thought, else its message; without finish the last agent message after the
    last tool call.  Time: first .. last event (no offset: UTC).  Model: the responses' ``model``.
langfuse-framework-traces
    Calls: the tool calls in the GENERATIONs' outputs (OpenAI/LangChain ``tool_calls``, Anthropic
    ``tool_use``, gen_ai ``tool_call`` parts, Gemini ``function_call``, Responses ``function_call``,
    Vercel ``toolCallId``, Koog's JSON content), de-duplicated by call id; where no output records them
    (BeeAI), the tool runs.  Results: tool runs -- TOOL observations, or observations with tool
    attributes (``openinference.span.kind`` TOOL, ``gen_ai.tool.name``, ``gen_ai.operation.name``
    execute_tool, ``ai.toolCall.name``), one per ``gen_ai.tool.call.id``; also a SPAN whose output is
    a LangChain ToolMessage (LangGraph's tool runs); BeeAI: the agent.react spans' (tool.name,
    tool.parameters) with an output (its TOOL-kind spans are start/finish/success events of one run,
    and some tools have none).  A run without an end time is no result.  Errors: level ERROR (or
    OTel status ERROR, a ToolMessage status error).  Status: any level ERROR -> failed; an observation
    without end time -> running/abandoned; else succeeded.  Answer: the text of the last provider
    call's output (wrappers and markers skipped), None where it asks for a tool or has no text.
    Time: first start .. last end of the observations (= the trace's latency).  Model: the provider
    calls' model (``gen_ai.response.model`` first); provider: their gen_ai/llm provider attribute.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any, Callable

from genai_prices import Usage, calc_price

Q6 = Decimal("0.000001")
ZERO = Decimal(0)


# --------------------------------------------------------------------------------------
# a call and its price
# --------------------------------------------------------------------------------------


@dataclass
class Call:
    model: str | None
    provider: str | None
    ts: datetime | None
    input_total: int | None = None  # all input incl. cache reads/writes; None = usage unknown
    cache_read: int | None = 0  # None = cached share unknown (see max_cache_read)
    cache_write_5m: int = 0
    cache_write_1h: int = 0
    output: int | None = None  # None = usage unknown
    output_lower_bound: bool = False  # output may miss billed (thinking) tokens
    max_cache_read: int = 0  # upper limit of the cached share when cache_read is None
    n: int = 1  # how many API calls this record stands for (SWE-agent totals)

    @property
    def usage_known(self) -> bool:
        return self.input_total is not None and self.output is not None


def _d(x: Any) -> Decimal | None:
    if x is None:
        return None
    if isinstance(x, Decimal):
        return x
    if isinstance(x, bool):
        return None
    if isinstance(x, (int, float, str)):
        try:
            return Decimal(str(x))
        except Exception:
            return None
    return None


def _int(x: Any) -> int | None:
    if x is None or isinstance(x, bool):
        return None
    try:
        return int(Decimal(str(x)))
    except Exception:
        return None


# DeepSeek list prices per MTok (miss, hit, output), by start date; see module docstring.
_DEEPSEEK = [
    (date(2025, 9, 5), date(2025, 9, 29), (Decimal("0.56"), Decimal("0.07"), Decimal("1.68"))),
    (date(2025, 9, 29), date(2026, 4, 24), (Decimal("0.28"), Decimal("0.028"), Decimal("0.42"))),
]


def _deepseek_override(c: Call, cache_read: int) -> Decimal | None:
    if not c.model or not re.fullmatch(r"(deepseek/)?deepseek-(reasoner|chat)", c.model):
        return None
    if c.ts is None:
        return None
    day = c.ts.astimezone(timezone.utc).date()
    for start, end, (miss, hit, out) in _DEEPSEEK:
        if start <= day < end:
            mtok = Decimal(1_000_000)
            return ((c.input_total - cache_read) * miss + cache_read * hit + c.output * out) / mtok
    return None


class Unpriced(Exception):
    pass


def _price(c: Call, cache_read: int) -> Decimal:
    over = _deepseek_override(c, cache_read)
    if over is not None:
        return over
    u = Usage(
        input_tokens=c.input_total,
        cache_read_tokens=cache_read,
        cache_write_tokens=c.cache_write_5m + c.cache_write_1h,
        cache_write_1h_tokens=c.cache_write_1h,
        output_tokens=c.output,
    )
    try:
        p = calc_price(u, c.model, provider_id=c.provider, genai_request_timestamp=c.ts)
    except LookupError as e:
        raise Unpriced(str(e)) from e
    return p.total_price


def _openai_max_cached(prompt: int) -> int:
    if prompt < 1024:
        return 0
    return 1024 + 128 * ((prompt - 1024) // 128)


def _min_cacheable(model: str, provider: str | None) -> int | None:
    m = (model or "").lower()
    if provider == "anthropic" or "claude" in m:
        if "haiku-4-5" in m or "opus-4-5" in m:
            return 4096
        if "haiku" in m:
            return 2048
        return 1024
    if provider == "google" or "gemini" in m:
        if "gemini-3" in m:
            return 4096
        if "2.5-pro" in m:
            return 2048
        return 1024
    if provider == "openai" or m.startswith(("gpt-", "o1", "o3", "o4")):
        return 1024
    return None


def _unknown_cache(c: Call) -> None:
    """The file does not say how much of c.input_total was a cache hit: bound it."""
    limit = _min_cacheable(c.model or "", c.provider)
    if limit is not None and c.input_total < limit:
        c.cache_read = 0  # too short to have been cached: known
        return
    c.cache_read = None
    if c.provider == "openai" or (c.model or "").startswith("gpt-"):
        c.max_cache_read = _openai_max_cached(c.input_total)
    else:
        c.max_cache_read = c.input_total - c.cache_write_5m - c.cache_write_1h


# --------------------------------------------------------------------------------------
# truth of a run
# --------------------------------------------------------------------------------------


def _truth(
    calls: list[Call],
    *,
    recorded: Decimal | None,
    notes: list[str],
    n_calls: int | None = None,
    extra: dict | None = None,
) -> dict:
    low = ZERO
    high: Decimal | None = ZERO
    models: set[str] = set()
    unpriced: set[str] = set()
    tot = {"input_uncached": 0, "cache_read": 0, "cache_write_5m": 0, "cache_write_1h": 0, "output_tokens": 0}
    unknown_calls = 0

    def kill(key: str) -> None:
        tot[key] = None

    for c in calls:
        if c.model:
            models.add(c.model)
        if not c.usage_known:
            unknown_calls += c.n
            high = None
            for k in tot:
                kill(k)
            continue
        # tokens
        w = c.cache_write_5m + c.cache_write_1h
        if c.cache_read is None:
            kill("input_uncached")
            kill("cache_read")
        else:
            if tot["input_uncached"] is not None:
                tot["input_uncached"] += c.input_total - c.cache_read - w
            if tot["cache_read"] is not None:
                tot["cache_read"] += c.cache_read
        if tot["cache_write_5m"] is not None:
            tot["cache_write_5m"] += c.cache_write_5m
        if tot["cache_write_1h"] is not None:
            tot["cache_write_1h"] += c.cache_write_1h
        if c.output_lower_bound:
            kill("output_tokens")
        elif tot["output_tokens"] is not None:
            tot["output_tokens"] += c.output
        # dollars
        try:
            if c.cache_read is None:
                lo = _price(c, c.max_cache_read)
                hi = _price(c, 0)
            else:
                lo = hi = _price(c, c.cache_read)
        except Unpriced:
            if c.model:
                unpriced.add(c.model)
            high = None
            continue
        low += lo
        if high is not None:
            high = None if c.output_lower_bound else high + hi

    t = {
        "calls": n_calls if n_calls is not None else sum(c.n for c in calls),
        **tot,
        "low_usd": low.quantize(Q6, rounding=ROUND_HALF_UP),
        "high_usd": None if high is None else high.quantize(Q6, rounding=ROUND_HALF_UP),
        "recorded_usd": recorded,
        "models": sorted(models),
        "unpriced_models": sorted(unpriced),
        "notes": "; ".join(dict.fromkeys(n for n in notes if n)),
        "calls_usage_unknown": unknown_calls,
    }
    if extra:
        t.update(extra)
    return t


# --------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------


def _load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"), parse_float=Decimal)


def _ts(x: Any) -> datetime | None:
    if x is None:
        return None
    if isinstance(x, (int, Decimal)) and not isinstance(x, bool):
        return datetime.fromtimestamp(float(x), tz=timezone.utc)
    if isinstance(x, str):
        s = x.strip().replace("Z", "+00:00")
        try:
            t = datetime.fromisoformat(s)
        except ValueError:
            return None
        return t if t.tzinfo else t.replace(tzinfo=timezone.utc)
    return None


def _provider_of(model: str | None) -> str | None:
    m = (model or "").lower()
    if "claude" in m:
        return "anthropic"
    if "gemini" in m:
        return "google"
    if "deepseek" in m:
        return "deepseek"
    if m.startswith(("gpt-", "o1", "o3", "o4", "chatgpt")):
        return "openai"
    return None


def _split_vendor(model: str) -> tuple[str | None, str]:
    """'google/gemini-3-pro-preview' -> ('google', 'gemini-3-pro-preview')."""
    if "/" in model:
        vendor, rest = model.split("/", 1)
        return vendor, rest
    return None, model


_VENDOR_PROVIDER = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "google",
    "vertex": "google",
    "deepseek": "deepseek",
    "mistral": "mistral",
    "groq": "groq",
    "together": "together",
    "grok": "x-ai",
    "x-ai": "x-ai",
    "azureai": "azure",
    "azure": "azure",
    "bedrock": "aws",
}


def _raw_usage_call(u: dict, model: str | None, provider: str | None, ts: datetime | None) -> Call:
    """A provider's own usage object (OpenAI chat/responses, Anthropic, Gemini, LiteLLM)."""
    c = Call(model=model, provider=provider, ts=ts)
    if "usageMetadata" in u or "promptTokenCount" in u or "prompt_token_count" in u:
        g = u.get("usageMetadata", u)
        p = _int(g.get("promptTokenCount", g.get("prompt_token_count"))) or 0
        cand = _int(g.get("candidatesTokenCount", g.get("candidates_token_count"))) or 0
        th = _int(g.get("thoughtsTokenCount", g.get("thoughts_token_count"))) or 0
        tool = _int(g.get("toolUsePromptTokenCount", g.get("tool_use_prompt_token_count"))) or 0
        cached = _int(g.get("cachedContentTokenCount", g.get("cached_content_token_count"))) or 0
        c.input_total, c.cache_read, c.output = p + tool, cached, cand + th
        return c
    if "prompt_tokens" in u or "completion_tokens" in u:  # OpenAI chat / LiteLLM
        p = _int(u.get("prompt_tokens")) or 0
        details = u.get("prompt_tokens_details") or {}
        read = _int(u.get("cache_read_input_tokens"))
        if read is None:
            read = _int(details.get("cached_tokens"))
        if read is None:
            read = _int(u.get("prompt_cache_hit_tokens"))
        creation = _int(u.get("cache_creation_input_tokens")) or 0
        cc = u.get("cache_creation") or {}
        w1h = _int(cc.get("ephemeral_1h_input_tokens")) or 0
        c.input_total = p  # LiteLLM/OpenAI: prompt includes reads (and Anthropic creation)
        c.cache_write_1h = w1h
        c.cache_write_5m = creation - w1h
        c.output = _int(u.get("completion_tokens")) or 0
        if read is None:
            _unknown_cache(c)
        else:
            c.cache_read = read
        return c
    if "cache_creation_input_tokens" in u or "cache_read_input_tokens" in u or (
        provider == "anthropic" and "input_tokens" in u
    ):  # Anthropic Messages API: disjoint
        inp = _int(u.get("input_tokens")) or 0
        read = _int(u.get("cache_read_input_tokens")) or 0
        creation = _int(u.get("cache_creation_input_tokens")) or 0
        cc = u.get("cache_creation") or {}
        w1h = _int(cc.get("ephemeral_1h_input_tokens")) or 0
        c.input_total = inp + read + creation
        c.cache_read, c.cache_write_1h, c.cache_write_5m = read, w1h, creation - w1h
        c.output = _int(u.get("output_tokens")) or 0
        return c
    if "input_tokens" in u:  # OpenAI Responses API
        c.input_total = _int(u.get("input_tokens")) or 0
        c.output = _int(u.get("output_tokens")) or 0
        read = _int((u.get("input_tokens_details") or {}).get("cached_tokens"))
        if read is None:
            _unknown_cache(c)
        else:
            c.cache_read = read
        return c
    return c  # unknown shape: usage unknown


# --------------------------------------------------------------------------------------
# Inspect AI
# --------------------------------------------------------------------------------------

_INSPECT_TEST_DOUBLES = {"hardcoded", "mockllm"}


def _version_tuple(v: str | None) -> tuple[int, ...]:
    if not v:
        return ()
    return tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0].split(".dev")[0])[:3])


def _inspect_events(events: list) -> list[dict]:
    out = []
    for e in events or []:
        if not isinstance(e, dict):
            continue
        if e.get("event") == "model":
            out.append(e)
        if isinstance(e.get("events"), list):  # old 'subtask'/'step' nesting
            out.extend(_inspect_events(e["events"]))
    return out


def _inspect_logs(folder: Path):
    for path in sorted(folder.iterdir()):
        if path.suffix == ".json":
            try:
                log = _load(path)
            except Exception:
                continue
            if not isinstance(log, dict) or "eval" not in log:
                continue
            yield path, log, log.get("samples") or []
        elif path.suffix == ".eval":
            with zipfile.ZipFile(path) as z:
                names = z.namelist()
                if "header.json" not in names:
                    continue
                header = json.loads(z.read("header.json"), parse_float=Decimal)
                samples = [
                    json.loads(z.read(n), parse_float=Decimal)
                    for n in sorted(names)
                    if n.startswith("samples/") and n.endswith(".json")
                ]
            yield path, header, samples


def read_inspect(folder: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path, log, samples in _inspect_logs(folder):
        ev = log["eval"]
        version = (ev.get("packages") or {}).get("inspect_ai")
        new_semantics = _version_tuple(version) >= (0, 3, 184)
        for s in samples:
            if s.get("uuid"):
                run_id = s["uuid"]
            elif ev.get("eval_id"):
                run_id = f"{ev['eval_id']}/{s.get('id')}/epoch {s.get('epoch', 1)}"
            else:
                run_id = f"{ev.get('run_id')}/{ev.get('task_id')}/{s.get('id')}/epoch {s.get('epoch', 1)}"
            calls: list[Call] = []
            notes: list[str] = [f"inspect {version}"]
            recorded = None
            for e in _inspect_events(s.get("events")):
                if e.get("pending"):
                    continue
                if e.get("cache") == "read":
                    notes.append("a model event served from Inspect's local cache was not billed")
                    continue
                full = e.get("model") or ev.get("model") or ""
                vendor, name = _split_vendor(full)
                output = e.get("output") or {}
                usage = output.get("usage")
                raw = ((e.get("call") or {}).get("response") or {})
                raw_usage = raw.get("usage") if isinstance(raw, dict) else None
                if vendor in _INSPECT_TEST_DOUBLES and not usage and not raw_usage:
                    notes.append(f"{full} is Inspect's test double: no provider call, $0")
                    continue
                model = output.get("model") or raw.get("model") or name
                provider = _VENDOR_PROVIDER.get(vendor or "", _provider_of(model))
                ts = _ts(e.get("timestamp"))
                if isinstance(raw_usage, dict) and raw_usage:
                    c = _raw_usage_call(raw_usage, model, provider, ts)
                    if usage:  # cross-check Inspect's normalised figures
                        it = _inspect_usage_call(usage, model, provider, ts, new_semantics)
                        if (it.input_total, it.output) != (c.input_total, c.output) or (
                            it.cache_read is not None and it.cache_read != c.cache_read
                        ):
                            notes.append("output.usage disagrees with the raw response's usage (raw used)")
                    notes.append("usage from the raw provider response (call.response.usage)")
                elif usage:
                    c = _inspect_usage_call(usage, model, provider, ts, new_semantics)
                    notes.append("usage from output.usage (version rule applied)")
                else:
                    c = Call(model=model, provider=provider, ts=ts)
                    notes.append("a model event without usage: cost unknown")
                tc = _d((usage or {}).get("total_cost"))
                if tc is not None:
                    recorded = (recorded or ZERO) + tc
                calls.append(c)
            if any(e.get("error") for e in _inspect_events(s.get("events"))):
                notes.append("a model event carries an error")
            out[run_id] = _truth(calls, recorded=recorded, notes=notes)
    return _merge_facts(out, _facts_inspect(folder))


def _inspect_usage_call(u: dict, model: str, provider: str | None, ts, new_semantics: bool) -> Call:
    inp = _int(u.get("input_tokens")) or 0
    read = _int(u.get("input_tokens_cache_read"))
    write = _int(u.get("input_tokens_cache_write"))
    c = Call(model=model, provider=provider, ts=ts, output=_int(u.get("output_tokens")) or 0)
    if new_semantics or provider == "anthropic":
        c.input_total = inp + (read or 0) + (write or 0)
    else:
        c.input_total = inp  # provider's own count, reads (and writes) inside
    c.cache_write_5m = write or 0
    if read is None:
        _unknown_cache(c)
    else:
        c.cache_read = read
    return c


# --------------------------------------------------------------------------------------
# mini-swe-agent
# --------------------------------------------------------------------------------------


def read_mini_swe_agent(folder: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in sorted(folder.rglob("*.traj.json")):
        d = _load(path)
        if not isinstance(d, dict) or "messages" not in d:
            continue
        run_id = path.name[: -len(".traj.json")]
        info = d.get("info") or {}
        stats = info.get("model_stats") or {}
        cfg_model = ((info.get("config") or {}).get("model") or {}).get("model_name") or ""
        notes = [f"format {d.get('trajectory_format')}, exit {info.get('exit_status')}"]
        calls: list[Call] = []
        seen: set = set()
        per_call_cost = ZERO
        have_cost = False
        for i, m in enumerate(d["messages"]):
            ex = m.get("extra") if isinstance(m, dict) else None
            if not isinstance(ex, dict):
                continue
            resp = ex.get("response")
            if not isinstance(resp, dict) or not isinstance(resp.get("usage"), dict):
                continue
            rid = resp.get("id") or f"#{i}"
            if rid in seen:
                continue
            seen.add(rid)
            if m.get("role") != "assistant":
                notes.append(f"a billed response kept on a {m.get('role')} message (format error) is counted")
            raw_model = resp.get("model") or cfg_model
            vendor, name = _split_vendor(raw_model)
            if vendor is None:
                vendor, _ = _split_vendor(cfg_model)
            provider = _VENDOR_PROVIDER.get(vendor or "", _provider_of(name))
            c = _raw_usage_call(resp["usage"], name, provider, _ts(resp.get("created")))
            calls.append(c)
            cost = _d(ex.get("cost"))
            if cost is None:
                cost = _d(resp["usage"].get("cost"))
            if cost is not None:
                have_cost = True
                per_call_cost += cost
        recorded = _d(stats.get("instance_cost"))
        if recorded is None and have_cost:
            recorded = per_call_cost
        api_calls = _int(stats.get("api_calls"))
        failed = max(0, api_calls - len(calls)) if api_calls is not None else 0
        if failed:
            notes.append(
                f"{failed} failed attempt(s) counted in api_calls returned no response/usage: treated as not billed"
            )
        if any(c.provider == "google" for c in calls):
            notes.append("Gemini (via OpenRouter: usage.cost/is_byok) priced at Google's list")
        if any(c.provider == "deepseek" for c in calls):
            notes.append("deepseek-reasoner priced at DeepSeek's V3.2 list (0.28/0.028/0.42), not genai_prices' R1 entry")
        out[run_id] = _truth(
            calls,
            recorded=recorded,
            notes=notes,
            extra={"failed_attempts": failed, "recorded_calls_usd": per_call_cost if have_cost else None},
        )
    return _merge_facts(out, _facts_mini(folder))


# --------------------------------------------------------------------------------------
# SWE-agent
# --------------------------------------------------------------------------------------

# SWE-agent 0.x model shortcuts (sweagent/agent/models.py of 0.x)
_SWE0_SHORTCUTS = {
    "gpt4": "gpt-4-1106-preview",
    "gpt3": "gpt-3.5-turbo-1106",
    "gpt4o": "gpt-4o-2024-05-13",
    "gpt4-turbo": "gpt-4-turbo-2024-04-09",
}


def read_swe_agent(folder: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in sorted(folder.glob("*.traj")):
        d = _load(path)
        if not isinstance(d, dict) or not ("trajectory" in d or "history" in d):
            continue
        run_id = path.stem
        info = d.get("info") or {}
        ms = info.get("model_stats")
        rc = d.get("replay_config")
        if isinstance(rc, str):
            try:
                rc = json.loads(rc)
            except ValueError:
                rc = None
        if not ms:
            out[run_id] = _truth(
                [],
                recorded=None,
                notes=["no info.model_stats: nothing recorded about model calls (a demonstration)"],
                extra={"calls_usage_unknown": None},
            )
            out[run_id]["high_usd"] = None
            continue
        cost = _d(ms.get("instance_cost"))
        sent, recv, n = (_int(ms.get(k)) or 0 for k in ("tokens_sent", "tokens_received", "api_calls"))
        if not sent and not recv and not cost:
            note = "all-zero model_stats: no billed call (demonstration"
            note += f"; replay counted {n} api_calls with 0 tokens and $0)" if n else ")"
            out[run_id] = _truth([], recorded=cost, notes=[note])
            continue
        if rc:  # SWE-agent >= 1.0: LiteLLM, tokens are token_counter estimates
            model = ((rc.get("agent") or {}).get("model") or {}).get("name") or "unknown"
            provider = _provider_of(model)
            calls = [Call(model=model, provider=provider, ts=None, n=n)]
            est = Call(model=model, provider=provider, ts=datetime(2025, 2, 13, tzinfo=timezone.utc),
                       input_total=sent, output=recv)
            try:
                est_lo = _price(est, sent)  # totals of several calls: no per-call minimum applies
                est_hi = _price(est, 0)
                estimate = (est_lo.quantize(Q6, rounding=ROUND_HALF_UP), est_hi.quantize(Q6, rounding=ROUND_HALF_UP))
            except Unpriced:
                estimate = None
            t = _truth(
                calls,
                recorded=cost,
                notes=[
                    "SWE-agent>=1.0: tokens_sent/received are litellm.token_counter estimates (tool schemas and "
                    "tool-call arguments uncounted), cost is from real usage: billed tokens unknown",
                    f"estimate_usd = list price of the estimates, all input cached .. none ({model} at 2025-02-13)",
                ],
                extra={"estimate_usd": estimate, "ledger_tokens_sent": sent, "ledger_tokens_received": recv},
            )
            out[run_id] = t
            continue
        # SWE-agent 0.x: provider usage summed; model from the run directory's shortcut
        model = None
        for part in run_id.split("__"):
            if part in _SWE0_SHORTCUTS:
                model = _SWE0_SHORTCUTS[part]
                break
        c = Call(model=model, provider="openai" if model else None,
                 ts=datetime(2024, 6, 1, tzinfo=timezone.utc), input_total=sent, output=recv, n=n)
        notes = ["SWE-agent 0.x: run totals only (tokens from provider usage)"]
        if model and model.startswith(("gpt-4-", "gpt-3.5")):
            c.cache_read = 0
            notes.append(f"model {model} (shortcut in run name); no prompt caching exists for it")
        else:
            c.cache_read, c.max_cache_read = None, sent  # totals of several calls: any share possible
            notes.append("cached share unknown (only run totals)")
        if model is None:
            notes.append("model not recorded")
        out[run_id] = _truth([c], recorded=cost, notes=notes)
    return _merge_facts(out, _facts_swe(folder))


# --------------------------------------------------------------------------------------
# OpenHands
# --------------------------------------------------------------------------------------


def read_openhands(folder: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            d = _load(path)
        except Exception:
            continue
        if not isinstance(d, list) or not all(isinstance(e, dict) for e in d):
            continue
        if not any(("action" in e or "observation" in e) and "source" in e for e in d):
            continue
        run_id = path.stem
        calls: list[Call] = []
        seen: set = set()
        notes: list[str] = []
        recorded = None
        for e in d:
            lm = e.get("llm_metrics")
            if isinstance(lm, dict) and lm.get("accumulated_cost") is not None:
                recorded = _d(lm["accumulated_cost"])
            mr = (e.get("tool_call_metadata") or {}).get("model_response")
            if isinstance(mr, dict):
                rid = mr.get("id")
                if rid in seen:
                    continue
                seen.add(rid)
                model = mr.get("model")
                c = _raw_usage_call(mr.get("usage") or {}, model, _provider_of(model), _ts(mr.get("created")))
                calls.append(c)
            elif e.get("source") == "agent" and e.get("action") == "message":
                calls.append(Call(model=None, provider=None, ts=_ts(e.get("timestamp"))))
                notes.append("agent message without tool_call_metadata: a model call with unrecorded usage")
        models = {c.model for c in calls if c.model}
        if len(models) == 1:  # the usage-less calls were made with the run's one model
            for c in calls:
                c.model = c.model or next(iter(models))
        if recorded is None:
            notes.append("no llm_metrics: no recorded cost")
        out[run_id] = _truth(calls, recorded=recorded, notes=notes)
    return _merge_facts(out, _facts_openhands(folder))


# --------------------------------------------------------------------------------------
# Langfuse
# --------------------------------------------------------------------------------------

_TOKEN_ATTR = re.compile(r"^(gen_ai\.usage\.|llm\.token_count\.|ai\.usage\.)")


def _meta(o: dict) -> tuple[dict, str | None]:
    md = o.get("metadata")
    if isinstance(md, str):
        try:
            md = json.loads(md)
        except ValueError:
            md = {}
    if not isinstance(md, dict):
        md = {}
    attrs = md.get("attributes") if isinstance(md.get("attributes"), dict) else {}
    scope = (md.get("scope") or {}).get("name") if isinstance(md.get("scope"), dict) else None
    return attrs, scope


def _response_id(o: dict, attrs: dict) -> str | None:
    if attrs.get("gen_ai.response.id"):
        return str(attrs["gen_ai.response.id"])
    pm = attrs.get("ai.response.providerMetadata")
    if isinstance(pm, str) and "responseId" in pm:
        m = re.search(r'"responseId"\s*:\s*"([^"]+)"', pm)
        if m:
            return m.group(1)
    return None


def _lf_usage_ingested(o: dict, attrs: dict, scope: str | None) -> bool:
    if any(_TOKEN_ATTR.match(k) for k in attrs):
        return True
    ud = o.get("usageDetails") or {}
    if scope == "langfuse-sdk" and (
        o.get("providedCostDetails") or any(k not in ("input", "output", "total") for k in ud)
    ):
        return True
    return False


def _lf_model(o: dict, attrs: dict) -> str | None:
    m = attrs.get("gen_ai.response.model") or o.get("model") or attrs.get("gen_ai.request.model") \
        or attrs.get("llm.model_name")
    if not m:
        return None
    m = str(m)
    if "/models/" in m:
        m = m.rsplit("/models/", 1)[1]
    return m


def _lf_call(o: dict, attrs: dict, scope: str | None, notes: list[str]) -> Call:
    model = _lf_model(o, attrs)
    provider = _provider_of(model)
    c = Call(model=model, provider=provider, ts=_ts(o.get("startTime")))
    ud = o.get("usageDetails") or {}
    if not ud or not _lf_usage_ingested(o, attrs, scope):
        if ud:
            notes.append(
                f"{o.get('name')!r}: usage {dict(ud)} is Langfuse's tokenizer inference, not provider usage: unknown"
            )
        else:
            notes.append(f"{o.get('name')!r}: no usage recorded")
        return c
    inp = _int(ud.get("input")) or 0
    out = _int(ud.get("output")) or 0
    add_in = {k: _int(v) or 0 for k, v in ud.items() if k.startswith("input_")}
    add_out = {k: _int(v) or 0 for k, v in ud.items() if k.startswith("output_")}
    sub_read = _int(ud.get("prompt_details.cache_read"))
    read_keys = [k for k in add_in if "cache_read" in k or k == "input_cached_tokens"]
    write_keys = [k for k in add_in if "cache_creation" in k or "cache_write" in k]
    read = sum(add_in[k] for k in read_keys) + (sub_read or 0)
    w1h = sum(add_in[k] for k in write_keys if "1h" in k)
    write = sum(add_in[k] for k in write_keys)
    c.input_total = inp + sum(add_in.values())
    c.cache_write_1h, c.cache_write_5m = w1h, write - w1h
    c.output = out + sum(add_out.values())
    cache_recorded = bool(read_keys) or sub_read is not None or any("cache" in k for k in attrs)
    if cache_recorded:
        c.cache_read = read
    else:
        _unknown_cache(c)
    if provider == "google":
        thoughts = _int(attrs.get("gen_ai.usage.details.thoughts_tokens"))
        reasoning = _int(ud.get("completion_details.reasoning"))
        total = _int(attrs.get("llm.token_count.total"))
        if total is not None and total > c.input_total + c.output and thoughts is None and not reasoning:
            gap = total - c.input_total - c.output
            c.output += gap
            notes.append(f"{o.get('name')!r}: provider total exceeds prompt+candidates by {gap}: thinking tokens, billed as output")
        elif thoughts is None and reasoning is None and total is None and re.search(r"gemini-(2\.5|3)", model or ""):
            c.output_lower_bound = True
            notes.append(
                f"{o.get('name')!r}: thinking Gemini model, neither thoughts nor a provider total recorded: output is a lower bound"
            )
    if c.cache_read is None:
        notes.append(f"{o.get('name')!r}: cached share of {c.input_total} input tokens not recorded")
    return c


def _lf_docs(folder: Path) -> dict[str, tuple[int, Path, dict]]:
    """trace id -> (observations, path, document): a trace exported twice is one run, its fullest copy."""
    docs: dict[str, tuple[int, Path, dict]] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            d = _load(path)
        except Exception:
            continue
        if not isinstance(d, dict) or "trace" not in d or "observations" not in d:
            continue
        tid = d["trace"]["id"]
        n = len(d["observations"])
        if tid not in docs or n > docs[tid][0]:
            docs[tid] = (n, path, d)
    return docs


def _lf_provider_obs(obs: list[dict], meta: dict, notes: list[str]) -> list[dict]:
    """The observations that are provider calls, in start order (wrappers, markers, repeats left out)."""
    by_id = {o["id"]: o for o in obs}

    def is_candidate(o: dict) -> bool:
        attrs, _ = meta[o["id"]]
        if o.get("type") == "GENERATION":
            if not o.get("usageDetails") and o.get("input") in (None, "", "null") and o.get("output") in (
                None, "", "null"
            ):
                return False  # event marker (e.g. BeeAI success/finish)
            return True
        return any(_TOKEN_ATTR.match(k) for k in attrs)

    cands = [o for o in obs if is_candidate(o)]
    cand_ids = {o["id"] for o in cands}
    has_cand_desc: set[str] = set()
    for o in cands:
        p = o.get("parentObservationId")
        seen_p: set = set()
        while p and p in by_id and p not in seen_p:
            seen_p.add(p)
            if p in cand_ids:
                has_cand_desc.add(p)
            p = by_id[p].get("parentObservationId")
    for o in obs:
        if o.get("type") != "GENERATION" and o.get("usageDetails") and o["id"] not in cand_ids:
            notes.append(f"{o.get('type')} {o.get('name')!r} usage {dict(o['usageDetails'])} not provider usage (wrapper, Langfuse-inferred): not a call")
    provider_obs = []
    seen_resp: set = set()
    for o in sorted(cands, key=lambda o: o.get("startTime") or ""):
        if o["id"] in has_cand_desc:
            notes.append(f"wrapper {o.get('name')!r} re-reports the call(s) under it: skipped")
            continue
        rid = _response_id(o, meta[o["id"]][0])
        if rid and rid in seen_resp:
            notes.append(f"{o.get('name')!r} repeats response {rid}: skipped")
            continue
        if rid:
            seen_resp.add(rid)
        provider_obs.append(o)
    return provider_obs


def read_langfuse(folder: Path) -> dict[str, dict]:
    docs = _lf_docs(folder)
    out: dict[str, dict] = {}
    for tid, (_, path, d) in docs.items():
        obs = d["observations"]
        notes: list[str] = []
        meta = {o["id"]: _meta(o) for o in obs}
        provider_obs = _lf_provider_obs(obs, meta, notes)
        # Claude Agent SDK (LangSmith OTel) writes one observation per content block of a
        # response; a new API response starts only after tool results (or at the start).
        groups: list[list[dict]] = []
        tool_starts = sorted((o.get("startTime") or "") for o in obs if o.get("type") == "TOOL")
        for o in provider_obs:
            if (
                groups
                and o.get("name") == "claude.assistant.turn"
                and groups[-1][-1].get("name") == "claude.assistant.turn"
                and not any(groups[-1][-1]["startTime"] < t <= o["startTime"] for t in tool_starts)
            ):
                groups[-1].append(o)
            else:
                groups.append([o])
        if any(len(g) > 1 for g in groups):
            notes.append(
                f"{len(provider_obs)} claude.assistant.turn observations are content blocks of {len(groups)} API "
                "responses (a new response only after tool results); Claude Code may also make unseen auxiliary calls"
            )
        calls: list[Call] = []
        recorded: Decimal | None = None
        for g in groups:
            gcalls = [_lf_call(o, meta[o["id"]][0], meta[o["id"]][1], notes) for o in g]
            if len(gcalls) == 1:
                calls.append(gcalls[0])
            else:
                if all(c.usage_known for c in gcalls):
                    # blocks of one response repeat its usage (as Claude Code does): the last is final
                    calls.append(gcalls[-1])
                else:
                    calls.append(Call(model=gcalls[0].model, provider=gcalls[0].provider, ts=gcalls[0].ts))
            for o in g:
                cd = o.get("costDetails") or {}
                v = _d(cd.get("total"))
                if v is None:
                    v = _d(o.get("calculatedTotalCost") or o.get("totalCost"))
                    if v == 0:
                        v = None
                if v is not None:
                    recorded = (recorded or ZERO) + v
        if any(not c.usage_known for c in calls) and recorded is not None:
            notes.append("recorded_usd is Langfuse's cost of its inferred usage")
        out[tid] = _truth(calls, recorded=recorded, notes=[f"file {path.name}"] + notes)
    return _merge_facts(out, _facts_langfuse(folder))


# --------------------------------------------------------------------------------------
# run facts: tool calls / results / errors, status, final answer, times, model, provider
# (read from the raw files only; rules from docs/formats.md and docs/status.md, see the
# module docstring, "Run facts")
# --------------------------------------------------------------------------------------

ABANDONED_AFTER = timedelta(hours=24)  # [ingest] abandoned_after_hours default (docs/status.md)

# docs/status.md "Mapping from raw stop reasons": tried in order, each must match the WHOLE reason.
_N = r"\s*\d[\d,_]*(?:\.\d+)?\s*"
_CNT = r"(?:(?:tokens|steps|turns|calls|iterations)\s*)?"
_STOP_RULES: list[tuple[str, str | None]] = [
    (r"succeeded|failed|cancelled|budget_exceeded|timed_out|stalled|running", None),  # itself
    (r"model_finished|end_turn|stop|complete|completed|finish|finished|done|final_answer|success", "succeeded"),
    (r"submitted", "succeeded"),
    (r"submitted \(exit_context\)", "budget_exceeded"),
    (r"submitted \(exit_cost\)", "budget_exceeded"),
    (r"submitted \(exit_total_execution_time\)", "timed_out"),
    (r"submitted \(exit_command_timeout\)", "timed_out"),
    (r"submitted \((exit_format|exit_api|exit_error)\)", "failed"),
    (r"submitted \(.*\)", "succeeded"),
    (r"limitsexceeded", "budget_exceeded"),
    (rf"max_steps|max_turns|max_iterations|(?:step|turn|iteration) limit \({_N}{_CNT}\)", "budget_exceeded"),
    (rf"max_prompt_tokens|max_input_tokens|(?:prompt|input) token limit \({_N}{_CNT}\)", "budget_exceeded"),
    (rf"max_completion_tokens|max_output_tokens|(?:completion|output) token limit \({_N}{_CNT}\)", "budget_exceeded"),
    (rf"max_tokens|token limit \({_N}{_CNT}\)|exit_context", "budget_exceeded"),
    (r"max_cost|max_cost_micros|max_cost_usd|(?:cost|spend) limit \(\s*(?:[$€£]\s*)?\d[\d,_]*(?:\.\d+)?\s*"
     r"(?:(?:usd|dollars)\s*)?\)|exit_cost", "budget_exceeded"),
    (r"max_wall_seconds|max_seconds|(?:time|wall[- ]clock) limit \(\s*\d[\d,_]*(?:\.\d+)?\s*(?:(?:ms|s|sec|secs|"
     r"seconds|m|min|mins|minutes|h|hr|hrs|hours)\s*)?\)|timeout|timed out|exit_total_execution_time", "timed_out"),
    (r"exit_command_timeout", "timed_out"),
    (r"identical_tool_results|repeated_tool_calls|max_repeats|loop_detected|stall|stalled_loop|no_progress|"
     r"repeated the same tool calls \d+ times without progress", "stalled"),
    (r"cancel|canceled|user_cancelled|interrupted|keyboard_interrupt|aborted", "cancelled"),
    (r"incomplete|error|exception|crash|exit_format|exit_api|exit_error|tool_error|fatal", "failed"),
]


def _status_of_reason(reason: str) -> str | None:
    r = reason.strip()
    for pat, status in _STOP_RULES:
        if re.fullmatch(pat, r, flags=re.IGNORECASE):
            return status or r.lower()
    return None


def _unended(last_seen: datetime | None, notes: list[str], now: datetime | None = None) -> str:
    """No end record: docs/status.md -- abandoned when silent longer than 24 h (no wall-clock budget is
    recorded by these formats) before the ingest (taken as now), else running."""
    if last_seen is None:
        notes.append("no end record and no time at all: cannot say how long it has been silent -> running")
        return "running"
    now = now or datetime.now(timezone.utc)
    if now - last_seen > ABANDONED_AFTER:
        notes.append(f"no end record, silent since {_iso(last_seen)} (> 24 h): abandoned")
        return "abandoned"
    return "running"


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.astimezone(timezone.utc).isoformat()


def _facts(
    *,
    tool_calls: int | None,
    tool_results: int | None,
    tool_errors: int | None,
    status: str,
    final_answer: str | None,
    started: datetime | None,
    ended: datetime | None,
    model: str | None,
    provider: str | None,
    notes: list[str],
    wall: float | None = None,
    extra: dict | None = None,
) -> dict:
    if wall is None and started is not None and ended is not None:
        wall = (ended - started).total_seconds()
    f = {
        "tool_calls": tool_calls,
        "tool_results": tool_results,
        "tool_errors": tool_errors,
        "status": status,
        "final_answer": final_answer if (final_answer is not None and final_answer.strip()) else None,
        "started_at": _iso(started),
        "ended_at": _iso(ended),
        "wall_seconds": None if wall is None else round(float(wall), 6),
        "model": model,
        "provider": provider,
        "_notes": notes,
    }
    if extra:
        f.update(extra)
    return f


def _merge_facts(out: dict[str, dict], facts: dict[str, dict]) -> dict[str, dict]:
    for run_id, f in facts.items():
        t = out.get(run_id)
        if t is None:  # a run the cost reader did not see: facts only
            t = out[run_id] = {"notes": ""}
        fnotes = f.pop("_notes", [])
        t.update(f)
        t["notes"] = "; ".join(dict.fromkeys(n for n in [t.get("notes") or "", *fnotes] if n))
    return out


def _most_common(xs: list[str]) -> str | None:
    xs = [x for x in xs if x]
    if not xs:
        return None
    counts: dict[str, int] = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    return max(counts, key=lambda k: (counts[k], -xs.index(k)))


def _norm_provider(s: Any) -> str | None:
    if not s:
        return None
    v = str(s).lower()
    for key, name in (("openai", "openai"), ("anthropic", "anthropic"), ("deepseek", "deepseek"),
                      ("azure", "azure"), ("mistral", "mistral"), ("bedrock", "aws")):
        if key in v:
            return name
    if any(k in v for k in ("google", "gcp", "vertex", "gemini")):
        return "google"
    return v


# ---- Inspect AI ----------------------------------------------------------------------


def _inspect_flat(events: list) -> list[dict]:
    flat: list[dict] = []
    for e in events or []:
        if not isinstance(e, dict):
            continue
        flat.append(e)
        if isinstance(e.get("events"), list):  # old 'subtask' nesting
            flat.extend(_inspect_flat(e["events"]))
    return flat


def _inspect_scorer_mask(flat: list[dict]) -> list[bool]:
    """True for events inside a scorer: a span of type scorer(s), followed up parent_id; before spans, a
    scorer `step` (begin .. end)."""
    spans: dict[str, tuple[Any, Any]] = {}
    for e in flat:
        if e.get("event") == "span_begin" and e.get("id"):
            spans[e["id"]] = (e.get("type"), e.get("parent_id"))

    def in_scorer_span(sid: Any) -> bool:
        seen: set = set()
        while sid and sid not in seen:
            seen.add(sid)
            typ, parent = spans.get(sid, (None, None))
            if typ in ("scorer", "scorers"):
                return True
            sid = parent
        return False

    mask, open_scorer_steps = [], 0
    for e in flat:
        if e.get("event") == "step" and e.get("type") == "scorer":
            if e.get("action") == "begin":
                open_scorer_steps += 1
            elif e.get("action") == "end":
                open_scorer_steps = max(0, open_scorer_steps - 1)
        mask.append(open_scorer_steps > 0 or in_scorer_span(e.get("span_id")))
    return mask


def _inspect_resolve(text: Any, attachments: dict) -> Any:
    if isinstance(text, str) and text.startswith("attachment://"):
        return attachments.get(text[len("attachment://"):], text)
    return text


def _inspect_text(content: Any, attachments: dict) -> str | None:
    if isinstance(content, str):
        parts = [_inspect_resolve(content, attachments)]
    elif isinstance(content, list):
        parts = [_inspect_resolve(c.get("text"), attachments) for c in content
                 if isinstance(c, dict) and c.get("type") == "text"]
    else:
        parts = []
    text = "\n".join(p for p in parts if isinstance(p, str) and p)
    return text if text.strip() else None


def _inspect_message(e: dict) -> dict:
    choices = ((e.get("output") or {}).get("choices")) or []
    return (choices[0].get("message") or {}) if choices and isinstance(choices[0], dict) else {}


_INSPECT_LIMIT_STATUS = {
    "message": "budget_exceeded", "turn": "budget_exceeded", "token": "budget_exceeded", "cost": "budget_exceeded",
    "context": "budget_exceeded", "time": "timed_out", "working": "timed_out", "operator": "cancelled",
    "custom": "failed",
}


def _facts_inspect(folder: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path, log, samples in _inspect_logs(folder):
        ev = log["eval"]
        eval_model = ev.get("model") or ""
        vendor, eval_name = _split_vendor(eval_model)
        for s in samples:
            if s.get("uuid"):
                run_id = s["uuid"]
            elif ev.get("eval_id"):
                run_id = f"{ev['eval_id']}/{s.get('id')}/epoch {s.get('epoch', 1)}"
            else:
                run_id = f"{ev.get('run_id')}/{ev.get('task_id')}/{s.get('id')}/epoch {s.get('epoch', 1)}"
            notes: list[str] = []
            att = s.get("attachments") or {}
            flat = _inspect_flat(s.get("events"))
            scorer = _inspect_scorer_mask(flat)
            agent_models = [e for e, sc in zip(flat, scorer)
                            if e.get("event") == "model" and not sc and not e.get("pending")]
            if any(e.get("event") == "model" and sc for e, sc in zip(flat, scorer)):
                notes.append("scorer model calls are no part of the agent: not its tool calls, never its answer")
            # tool calls the agent's model calls asked for; react()/basic_agent()'s submit is the answer
            asked: list[dict] = []
            for e in agent_models:
                for tc in _inspect_message(e).get("tool_calls") or []:
                    if isinstance(tc, dict):
                        asked.append(tc)
            tool_events = [e for e in flat if e.get("event") == "tool"]
            by_id = {te.get("id"): te for te in tool_events}
            submit = None
            for tc in asked:
                te = by_id.get(tc.get("id"))
                if tc.get("function") == "submit" and te is not None and not te.get("error") and not te.get("failed"):
                    submit = tc
            answer_ids = {submit.get("id")} if submit else set()
            if submit:
                notes.append("react/basic_agent submit call is the final answer, not a tool call (its ToolEvent echoes it)")
            calls = [tc for tc in asked if tc.get("id") not in answer_ids]
            results = errors = 0
            for te in tool_events:
                if te.get("id") in answer_ids:
                    continue
                if te.get("pending") and not te.get("completed"):
                    notes.append(f"tool {te.get('function')} pending (interrupted): no result")
                    continue
                results += 1
                if te.get("error") or te.get("failed"):
                    errors += 1
            unrun = len({tc.get("id") for tc in calls} - {te.get("id") for te in tool_events})
            if unrun:
                notes.append(f"{unrun} tool call(s) asked for were never run (no ToolEvent)")
            # status
            err, lim = s.get("error"), s.get("limit")
            if err:
                msg = err.get("message") if isinstance(err, dict) else str(err)
                tb = (err.get("traceback") or "") if isinstance(err, dict) else ""
                status = "cancelled" if "CancelledError" in f"{msg} {tb}" else "failed"
            elif lim:
                typ = lim.get("type") if isinstance(lim, dict) else str(lim)
                status = _INSPECT_LIMIT_STATUS.get(typ, "failed")
            else:
                status = "succeeded"
            if log.get("status") not in (None, "success") and status == "succeeded":
                notes.append(f"eval status {log.get('status')!r} is about the eval, not this sample (succeeded)")
            # final answer
            final = None
            if submit:
                args = submit.get("arguments") or {}
                final = _inspect_resolve(args.get("answer"), att) if isinstance(args, dict) else None
            else:  # the agent's last model call with text that asks for no tool (docs/formats.md)
                for k, e in enumerate(reversed(agent_models)):
                    m = _inspect_message(e)
                    text = None if m.get("tool_calls") else _inspect_text(m.get("content"), att)
                    if text is not None:
                        final = text
                        if k:
                            notes.append(f"final answer from the agent's call {len(agent_models) - k} of "
                                         f"{len(agent_models)}: the later ones ask for tools")
                        break
            # times
            started = _ts(s.get("started_at"))
            ended = _ts(s.get("completed_at"))
            wall = None
            model_events = [e for e in flat if e.get("event") == "model" and not e.get("pending")]
            first_call = min((_ts(e.get("timestamp")) for e in model_events if e.get("timestamp")), default=None)
            if started is not None and ended is not None:
                pass
            elif s.get("total_time") is not None:
                wall = float(s["total_time"])
                started = first_call
                ended = None if started is None else started + timedelta(seconds=wall)
                first_event = min((_ts(e.get("timestamp")) for e in flat if e.get("timestamp")), default=None)
                notes.append("no started_at/completed_at: start = first call, wall = total_time (docs); "
                             f"the sample's first event is {_iso(first_event)} (sandbox/init before the first "
                             "call is outside total_time)")
            else:
                ends = []
                for e in model_events:
                    t0 = _ts(e.get("timestamp"))
                    t1 = _ts(e.get("completed"))
                    if t1 is None and t0 is not None and (e.get("output") or {}).get("time") is not None:
                        t1 = t0 + timedelta(seconds=float((e.get("output") or {})["time"]))
                    ends.append(t1 or t0)
                started = first_call
                ended = max((t for t in ends if t), default=None)
                notes.append(f"inspect {(ev.get('packages') or {}).get('inspect_ai')} ({ev.get('created', '')[:10]}) "
                             "records neither started_at/completed_at nor total_time: wall = span of the calls "
                             "(timestamp .. timestamp + output.time; no `completed` on its model events). "
                             "docs/formats.md says only 'logs before 2025' lack both; this 2025 log does too")
            # model / provider
            answered = [(e.get("output") or {}).get("model") for e in model_events
                        if (e.get("model") or "") == eval_model and not e.get("error")]
            model = _most_common([m for m in answered if m]) or eval_name or None
            provider = vendor or _provider_of(model)
            out[run_id] = _facts(
                tool_calls=len(calls), tool_results=results, tool_errors=errors, status=status,
                final_answer=final, started=started, ended=ended, wall=wall, model=model,
                provider=provider, notes=notes,
            )
    return out


# ---- mini-swe-agent ------------------------------------------------------------------

_MINI_SUBMIT = re.compile(r"\s*echo\s+['\"]?(COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT)\b")
_MINI_BASH = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)
_MINI_RC = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>")
_MINI_STATUS = {"submitted": "succeeded", "limitsexceeded": "budget_exceeded", "timeout": "timed_out"}


def _mini_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return ""


def _mini_result(text: str, rc: Any, exc: Any) -> tuple[bool, bool]:
    """(is a result, is an error) of an observation."""
    if isinstance(exc, str) and "not executed" in exc.lower():
        return False, False
    if rc is None:
        m = _MINI_RC.search(text)
        if m:
            rc = int(m.group(1))
        else:
            try:
                j = json.loads(text)
                rc = j.get("returncode") if isinstance(j, dict) else None
                exc = exc or (j.get("exception_info") if isinstance(j, dict) else None)
            except ValueError:
                pass
            if isinstance(exc, str) and "not executed" in exc.lower():
                return False, False
    timed_out = "timed out" in text[:300].lower() and rc is None
    return True, (rc is not None and int(rc) != 0) or bool(exc) or timed_out


def _mini_commands(m: dict) -> list[tuple[str, Any]] | None:
    """(command, call id) of a model reply; None for a format error (no single command)."""
    ex = m.get("extra") if isinstance(m.get("extra"), dict) else {}
    if isinstance(ex.get("actions"), list) and ex["actions"]:
        return [(str(a.get("command") or ""), a.get("tool_call_id")) for a in ex["actions"] if isinstance(a, dict)]
    if m.get("tool_calls"):
        cmds = []
        for tc in m["tool_calls"]:
            fn = (tc.get("function") or {}) if isinstance(tc, dict) else {}
            try:
                cmd = (json.loads(fn.get("arguments") or "{}") or {}).get("command", "")
            except (ValueError, AttributeError):
                cmd = ""
            cmds.append((str(cmd or ""), tc.get("id") if isinstance(tc, dict) else None))
        return cmds
    blocks = _MINI_BASH.findall(_mini_text(m.get("content")))
    return [(blocks[0], None)] if len(blocks) == 1 else None


def _facts_mini(folder: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in sorted(folder.rglob("*.traj.json")):
        d = _load(path)
        if not isinstance(d, dict) or "messages" not in d:
            continue
        run_id = path.name[: -len(".traj.json")]
        info = d.get("info") or {}
        msgs = [m for m in d["messages"] if isinstance(m, dict)]
        notes: list[str] = []
        calls = results = errors = 0
        times: list[datetime] = []
        models: list[str] = []
        upstream: list[str] = []
        call_ids: set = set()
        submit_ids: set = set()
        answered_ids: set = set()
        for i, m in enumerate(msgs):
            ex = m.get("extra") if isinstance(m.get("extra"), dict) else {}
            resp = ex.get("response") if isinstance(ex.get("response"), dict) else None
            if m.get("object") == "response":  # 2.x Responses-API mode: the response is the message
                resp = m
            if resp:
                if resp.get("model"):
                    models.append(str(resp["model"]))
                if resp.get("provider"):
                    upstream.append(str(resp["provider"]))
                created = resp.get("created", resp.get("created_at"))
                if created is not None:
                    times.append(_ts(created))
            if ex.get("timestamp") is not None:
                times.append(_ts(ex["timestamp"]))
            is_reply = m.get("role") == "assistant" or m.get("object") == "response"
            if not is_reply:
                continue
            if ex.get("interrupt_type"):
                continue
            cmds = _mini_commands(m)
            if cmds is None:
                notes.append(f"message {i}: no single command: a format error, no call")
                continue
            text_mode = all(cid is None for _, cid in cmds)
            for cmd, cid in cmds:
                if _MINI_SUBMIT.match(cmd):
                    if cid is not None:
                        submit_ids.add(cid)
                    continue  # the submission, not a call (docs/formats.md)
                calls += 1
                if cid is not None:
                    call_ids.add(cid)
                elif text_mode:
                    nxt = msgs[i + 1] if i + 1 < len(msgs) else None
                    nex = (nxt.get("extra") or {}) if nxt is not None and isinstance(nxt.get("extra"), dict) else {}
                    if nxt is not None and nxt.get("role") == "user" and not nex.get("interrupt_type"):
                        is_res, is_err = _mini_result(_mini_text(nxt.get("content")), nex.get("returncode"),
                                                      nex.get("exception_info") or None)
                        results += is_res
                        errors += is_res and is_err
        for m in msgs:
            cid = m.get("tool_call_id") or (m.get("call_id") if m.get("type") == "function_call_output" else None)
            if cid is None:
                continue
            ex = m.get("extra") if isinstance(m.get("extra"), dict) else {}
            text = _mini_text(m.get("content")) if m.get("content") is not None else str(m.get("output") or "")
            is_res, is_err = _mini_result(text, ex.get("returncode"), ex.get("exception_info") or None)
            if cid in submit_ids:
                notes.append("the submit command's " + ("'not executed' placeholder" if not is_res else "echo")
                             + " is no result")
                continue
            if cid not in call_ids or cid in answered_ids:
                continue
            if not is_res:
                notes.append("an 'action was not executed' placeholder: no result")
                continue
            answered_ids.add(cid)
            results += 1
            errors += is_err
        if call_ids - answered_ids:
            notes.append(f"{len(call_ids - answered_ids)} call(s) with no result recorded")
        exit_msg = next((m for m in reversed(msgs) if m.get("role") == "exit"), None)
        exit_extra = (exit_msg.get("extra") or {}) if exit_msg else {}
        exit_status = info.get("exit_status") or exit_extra.get("exit_status")
        submission = info.get("submission")
        if submission is None:
            submission = exit_extra.get("submission")
        if exit_status:
            es = str(exit_status).lower()
            if es == "timeexceeded":
                status = "timed_out"
                notes.append("exit 'TimeExceeded' (2.x wall_time_limit_seconds): timed_out by status.md's meaning; "
                             "docs/formats.md lists only Submitted/LimitsExceeded/Timeout and 'an exception's name'")
            else:
                status = _MINI_STATUS.get(es, "failed")
            if es == "timeout":
                exc = info.get("exception_str") or exit_extra.get("exception_str") or ""
                if exc:
                    notes.append(f"exit 'Timeout' -> timed_out (docs); the file says it was the model API's "
                                 f"client timeout, not an agent limit: {exc[:90]!r}")
        elif submission:
            status = "succeeded"
            notes.append("no exit_status: submitted -> succeeded (inferred)")
        else:
            status = _unended(max((t for t in times if t), default=None), notes)
        if not submission:
            notes.append("info.submission is empty: no final answer")
        times = [t for t in times if t]
        started, ended = (min(times), max(times)) if times else (None, None)
        if times:
            notes.append("times: the span of the responses' `created` and the messages' extra.timestamp "
                         "(the run's own start and end are not recorded)")
        else:
            notes.append("no response and no timestamp: times unknown")
        cfg_model = ((info.get("config") or {}).get("model") or {}).get("model_name") or None
        model = _most_common(models)
        if model is None and cfg_model:
            cfg_vendor0, cfg_name = _split_vendor(cfg_model)
            model = cfg_name if cfg_vendor0 in _VENDOR_PROVIDER and not upstream else cfg_model
            notes.append(f"no call was answered: model is the configured model_name {cfg_model!r} without LiteLLM's "
                         "routing prefix (as the provider names it in answered runs)")
        cfg_vendor, _ = _split_vendor(cfg_model or "")
        provider = _norm_provider(_most_common(upstream)) or _VENDOR_PROVIDER.get(cfg_vendor or "") \
            or _provider_of(model)
        if upstream:
            notes.append(f"routed through OpenRouter; provider = its upstream {_most_common(upstream)!r}")
        out[run_id] = _facts(
            tool_calls=calls, tool_results=results, tool_errors=errors, status=status,
            final_answer=submission or None, started=started, ended=ended, model=model, provider=provider,
            notes=notes,
        )
    return out


# ---- SWE-agent -----------------------------------------------------------------------


def _swe_first_word(action: Any) -> str:
    return (str(action or "").strip().split() or [""])[0]


def _facts_swe(folder: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in sorted(folder.glob("*.traj")):
        d = _load(path)
        if not isinstance(d, dict) or not ("trajectory" in d or "history" in d):
            continue
        run_id = path.stem
        info = d.get("info") or {}
        notes: list[str] = ["SWE-agent records no tool outcome (an observation is whatever the command printed): "
                            "tool_errors unknown"]
        pairs: list[tuple[str, Any]] = []  # (action, observation or None)
        traj = d.get("trajectory") or []
        if traj:
            for entry in traj:
                pairs.append((entry.get("action"), entry.get("observation") if "observation" in entry else None))
        else:
            hist = d.get("history") or []
            for i, m in enumerate(hist):
                if m.get("role") == "assistant" and m.get("action") is not None:
                    nxt = hist[i + 1] if i + 1 < len(hist) else None
                    obs = nxt.get("content") if nxt and nxt.get("role") in ("tool", "user") else None
                    pairs.append((m.get("action"), obs))
            notes.append("history-only file: actions from assistant messages, observations from the message after")
        final_submit = None
        if pairs and _swe_first_word(pairs[-1][0]) == "submit":
            final_submit = pairs[-1]
            pairs = pairs[:-1]
        calls = len(pairs)
        results = sum(1 for _, o in pairs if o is not None)
        exit_status = info.get("exit_status")
        if exit_status:
            status = _status_of_reason(str(exit_status))
            if status is None:
                notes.append(f"exit_status {exit_status!r} matches no documented rule: failed")
                status = "failed"
        elif final_submit is not None:
            status = "succeeded"
            notes.append("no exit_status: last action is submit -> succeeded (inferred)")
        else:
            status = _unended(None, notes)
        final = info.get("submission")
        if final is None and final_submit is not None and final_submit[1]:
            final = final_submit[1]
            notes.append("no info.submission: the submit action's observation (the patch) taken as the submission")
        rc = d.get("replay_config")
        if isinstance(rc, str):
            try:
                rc = json.loads(rc)
            except ValueError:
                rc = None
        model = None
        if isinstance(rc, dict):
            model = ((rc.get("agent") or {}).get("model") or {}).get("name")
            for part in run_id.split("__"):
                if part in _SWE0_SHORTCUTS and model and _SWE0_SHORTCUTS[part] != model:
                    notes.append(f"replay_config names {model!r}; the run directory says {part!r} (file followed)")
        if model is None:
            for part in run_id.split("__"):
                if part in _SWE0_SHORTCUTS:
                    model = _SWE0_SHORTCUTS[part]
                    notes.append(f"model not in the file: {model} from the run directory's shortcut {part!r}")
                    break
        if model is None:
            notes.append("model not recorded")
        notes.append("no timestamps in SWE-agent trajectories: times unknown")
        out[run_id] = _facts(
            tool_calls=calls, tool_results=results, tool_errors=None, status=status, final_answer=final,
            started=None, ended=None, model=model, provider=_provider_of(model), notes=notes,
        )
    return out


# ---- OpenHands -----------------------------------------------------------------------

_OH_TERMINAL = {"finished": "succeeded", "awaiting_user_input": "succeeded", "rejected": "failed",
                "stopped": "cancelled", "error": "failed"}


def _facts_openhands(folder: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            d = _load(path)
        except Exception:
            continue
        if not isinstance(d, list) or not all(isinstance(e, dict) for e in d):
            continue
        if not any(("action" in e or "observation" in e) and "source" in e for e in d):
            continue
        run_id = path.stem
        notes: list[str] = []
        tool_action_ids: set = set()
        tool_call_ids: set = set()
        models: list[str] = []
        finish = None
        last_text = None  # (index, text) of the last agent message without a tool call
        last_tool_idx = -1
        for i, e in enumerate(d):
            tcm = e.get("tool_call_metadata") or {}
            mr = tcm.get("model_response") if isinstance(tcm, dict) else None
            if isinstance(mr, dict) and mr.get("model"):
                models.append(str(mr["model"]))
            if e.get("source") != "agent" or "action" not in e:
                continue
            if e["action"] == "finish":
                finish = e
                continue
            if e["action"] == "message" and not tcm:
                last_text = (i, (e.get("args") or {}).get("content") or e.get("message"))
                continue
            if tcm:
                tool_action_ids.add(e.get("id"))
                if tcm.get("tool_call_id"):
                    tool_call_ids.add(tcm["tool_call_id"])
                last_tool_idx = i
        results = errors = 0
        for e in d:
            if "observation" not in e or e.get("observation") in ("agent_state_changed",):
                continue
            tcm = e.get("tool_call_metadata") or {}
            if e.get("cause") in tool_action_ids or (tcm.get("tool_call_id") in tool_call_ids and tcm):
                results += 1
                if e.get("observation") == "error":
                    errors += 1
                md = (e.get("extras") or {}).get("metadata") or {}
                if isinstance(md, dict) and md.get("exit_code") not in (None, 0):
                    why = " (still running when OpenHands stopped waiting)" if md.get("exit_code") == -1 else ""
                    notes.append(f"observation {e.get('id')}: command exit code {md.get('exit_code')}{why} is not an "
                                 "`error` observation (docs: error observations only): not counted as an error")
        # status: the last agent_state_changed
        states = [(e.get("extras") or {}).get("agent_state") for e in d if e.get("observation") == "agent_state_changed"]
        last_state = states[-1] if states else None
        times = [t for t in (_ts(e.get("timestamp")) for e in d) if t]
        if last_state in _OH_TERMINAL:
            status = _OH_TERMINAL[last_state]
            if last_state == "error":
                reason = " ".join(str((e.get("extras") or {}).get("reason") or e.get("message") or "")
                                  for e in d if e.get("observation") == "agent_state_changed")[-300:]
                if re.search(r"maximum iteration|iteration limit|budget", reason, re.I):
                    status = "budget_exceeded"
        elif finish is not None:
            status = "succeeded"
            notes.append("no final agent state in the stream: finish action -> succeeded (inferred)")
        else:
            status = _unended(max(times, default=None), notes)
        # final answer: finish is the answer; else the last agent message asking for no tool
        final = None
        if finish is not None:
            args = finish.get("args") or {}
            final = args.get("final_thought") or args.get("thought") or finish.get("message")
            if not (args.get("final_thought") or args.get("thought")):
                notes.append(f"finish carries no thought of the model: its message {finish.get('message')!r} "
                             "(OpenHands' own text) is the final answer")
        elif last_text is not None and last_text[0] > last_tool_idx:
            final = last_text[1]
        model = _most_common(models)
        if any(e.get("source") == "agent" and e.get("action") == "message" and not e.get("tool_call_metadata")
               for e in d):
            notes.append("agent messages without tool_call_metadata name no model: the run's model is that of its "
                         "recorded responses")
        started, ended = (min(times), max(times)) if times else (None, None)
        notes.append("times: first and last event timestamps (no offset: read as UTC)")
        out[run_id] = _facts(
            tool_calls=len(tool_action_ids), tool_results=results, tool_errors=errors, status=status,
            final_answer=final, started=started, ended=ended, model=model, provider=_provider_of(model),
            notes=notes,
        )
    return out


# ---- Langfuse ------------------------------------------------------------------------


def _json_or(v: Any) -> Any:
    if isinstance(v, str):
        t = v.strip()
        if t[:1] in ("{", "[") or t in ("null", "None"):
            try:
                return json.loads(t, parse_float=Decimal)
            except ValueError:
                return v if t not in ("None",) else None
        if t == "None":
            return None
    return v


def _lf_tool_calls_in(v: Any, found: list[tuple[str | None, str | None]], depth: int = 0) -> None:
    """(id, name) of every tool call in a generation's output, whatever the shape."""
    if depth > 12:
        return
    v = _json_or(v)
    if isinstance(v, list):
        for x in v:
            _lf_tool_calls_in(x, found, depth + 1)
        return
    if not isinstance(v, dict):
        return
    typ = v.get("type")
    fn = v.get("function")
    if typ in ("tool_use", "tool_call", "function_call") and v.get("name"):
        found.append((v.get("id") if typ != "function_call" else (v.get("call_id") or v.get("id")), v.get("name")))
        return
    if "toolCallId" in v and "toolName" in v:
        found.append((v.get("toolCallId"), v.get("toolName")))
        return
    if isinstance(fn, dict) and fn.get("name") and "arguments" in fn:
        found.append((v.get("id"), fn.get("name")))
        return
    for key in ("function_call", "functionCall"):
        if isinstance(v.get(key), dict) and v[key].get("name"):
            found.append((v[key].get("id"), v[key].get("name")))
            return
    for k, x in v.items():
        if k in ("tools", "tool_choice", "usage", "usage_metadata", "sdk_http_response"):
            continue
        _lf_tool_calls_in(x, found, depth + 1)


def _lf_text(v: Any) -> str | None:
    """The assistant text of a generation's output (None when it has none)."""
    v = _json_or(v)
    if v is None:
        return None
    if isinstance(v, str):
        return v
    texts: list[str] = []

    def msg(m: Any) -> None:
        if not isinstance(m, dict):
            return
        if m.get("role") not in (None, "assistant", "model"):
            return
        c = m.get("content")
        if isinstance(c, str) and m.get("finish_reason") != "tool_calls":
            texts.append(c)
        elif isinstance(c, list):
            for b in c:
                if isinstance(b, dict) and b.get("type") in ("text", "output_text") and isinstance(b.get("text"), str):
                    texts.append(b["text"])
        elif isinstance(c, dict):
            msg(c)
        for p in m.get("parts") or []:
            if not isinstance(p, dict) or p.get("thought"):
                continue
            if p.get("type") == "text" and isinstance(p.get("content"), str):
                texts.append(p["content"])
            elif "text" in p and isinstance(p.get("text"), str) and p.get("type") in (None, "text"):
                texts.append(p["text"])

    if isinstance(v, list):
        for m in v:
            msg(m)
    elif isinstance(v, dict):
        if isinstance(v.get("choices"), list) and v["choices"]:
            msg((v["choices"][0] or {}).get("message"))
        elif isinstance(v.get("candidates"), list) and v["candidates"]:
            msg((v["candidates"][0] or {}).get("content"))
        elif isinstance(v.get("output"), list):
            for item in v["output"]:
                if isinstance(item, dict) and item.get("type") == "message":
                    msg(item)
        elif isinstance(v.get("message"), dict):
            msg(v["message"])
        else:
            msg(v)
    text = "\n".join(t for t in texts if t)
    return text if text.strip() else None


def _lf_tool_runs(obs: list[dict], meta: dict, scope_of: dict, notes: list[str]) -> list[dict]:
    """One record per tool run recorded: {'key', 'name', 'ended', 'result', 'error'}."""
    runs: dict[Any, dict] = {}
    beeai = any(scope_of.get(o["id"]) == "openinference.instrumentation.beeai" for o in obs)
    tool_kind = sorted(o.get("name") or "" for o in obs if meta[o["id"]][0].get("openinference.span.kind") == "TOOL")
    for o in sorted(obs, key=lambda o: o.get("startTime") or ""):
        attrs = meta[o["id"]][0]
        level_err = o.get("level") == "ERROR" or str(attrs.get("otel.status_code", "")).upper() == "ERROR"
        if beeai:
            # BeeAI's ReAct agent records each tool call on its agent.react spans (tool.name, tool.parameters,
            # then the output); its tool.* TOOL spans are start/finish/success events of a run, and only some
            # tools have them.
            if attrs.get("tool.name") and attrs.get("openinference.span.kind") == "AGENT":
                params = attrs.get("tool.parameters")
                if params in (None, "null", ""):
                    continue
                key = (attrs["tool.name"], json.dumps(_json_or(params), sort_keys=True, default=str))
                r = runs.setdefault(key, {"key": key, "name": attrs["tool.name"], "ended": False,
                                          "result": False, "error": False})
                if o.get("output") not in (None, "", "null"):
                    r["result"] = r["ended"] = True
                r["error"] = r["error"] or level_err
            elif attrs.get("openinference.span.kind") == "TOOL" and re.search(r"\.error-\d+$", o.get("name") or ""):
                notes.append(f"BeeAI tool error event {o.get('name')!r}")
                for r in runs.values():
                    if r["name"].lower() in (o.get("name") or "").lower():
                        r["error"] = True
            continue
        is_tool = (o.get("type") == "TOOL" or attrs.get("openinference.span.kind") == "TOOL"
                   or "gen_ai.tool.name" in attrs or attrs.get("gen_ai.operation.name") == "execute_tool"
                   or "ai.toolCall.name" in attrs)
        lc_status = None
        if not is_tool and o.get("type") == "SPAN":
            out_v = _json_or(o.get("output"))
            if isinstance(out_v, dict):
                kw = out_v.get("kwargs") if isinstance(out_v.get("kwargs"), dict) else out_v
                ids = out_v.get("id") if isinstance(out_v.get("id"), list) else []
                if kw.get("tool_call_id") and (out_v.get("type") == "tool" or "ToolMessage" in ids):
                    is_tool = True
                    lc_status = kw.get("status")
                    notes.append(f"SPAN {o.get('name')!r} is a LangChain tool run (its output is a ToolMessage for "
                                 f"{kw.get('tool_call_id')}): counted as a tool result although docs/formats.md "
                                 "skips SPAN observations")
        if not is_tool:
            continue
        key = (attrs.get("gen_ai.tool.call.id") or attrs.get("ai.toolCall.id") or o["id"])
        r = runs.setdefault(key, {"key": key, "name": attrs.get("gen_ai.tool.name") or attrs.get("tool.name")
                                  or o.get("name"), "ended": False, "result": False, "error": False})
        r["ended"] = r["ended"] or bool(o.get("endTime"))
        r["result"] = r["result"] or bool(o.get("endTime"))
        r["error"] = r["error"] or level_err or lc_status == "error"
        out_v = _json_or(o.get("output"))
        if not r["error"] and isinstance(out_v, dict) and any(
            re.search(r"error", str(out_v.get(k) or ""), re.I) for k in ("status", "response_status")
        ):
            notes.append(f"tool {r['name']!r} returned an error payload ({str(o.get('output'))[:90]!r}) but its "
                         f"observation is level {o.get('level')}: the run is recorded as succeeding, not counted "
                         "as an error")
    if beeai:
        events = " ".join(tool_kind).lower()
        bare = sorted(r["name"] for r in runs.values() if r["name"].lower() not in events)
        notes.append("BeeAI: tool runs read from the agent.react spans (tool.name + tool.parameters, then their "
                     f"output); its TOOL-kind spans {tool_kind} are the start/finish/success events of one run"
                     + (f", and {bare} ran with no TOOL-kind span at all" if bare else "")
                     + ": counting TOOL-kind observations alone would misstate the runs")
    return list(runs.values())


def _facts_langfuse(folder: Path) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for tid, (_, path, d) in _lf_docs(folder).items():
        obs = d["observations"]
        meta = {o["id"]: _meta(o) for o in obs}
        scope_of = {o["id"]: meta[o["id"]][1] for o in obs}
        notes: list[str] = []
        provider_obs = _lf_provider_obs(obs, meta, [])
        # tool calls the model asked for: every GENERATION's output (wrappers included, de-duplicated by call id)
        asked: dict[Any, str | None] = {}
        for o in sorted(obs, key=lambda o: o.get("startTime") or ""):
            if o.get("type") != "GENERATION":
                continue
            found: list = []
            _lf_tool_calls_in(o.get("output"), found)
            for j, (cid, name) in enumerate(found):
                asked.setdefault(cid if cid else (o["id"], j), name)
        runs = _lf_tool_runs(obs, meta, scope_of, notes)
        results = sum(1 for r in runs if r["result"])
        errors = sum(1 for r in runs if r["result"] and r["error"])
        if asked:
            calls = len(asked)
            if len(asked) != len(runs):
                names = sorted(str(n) for n in asked.values())
                notes.append(f"generations asked for {len(asked)} tool call(s) {names}, {len(runs)} tool run(s) recorded")
            if "final_result" in asked.values():
                notes.append("final_result is the framework's output tool: the call carries the structured answer")
        else:
            calls = len(runs)
            if runs:
                notes.append("no generation output records the tool calls (outputs null / ReAct text): "
                             "tool calls = the tool runs the trace records")
        for r in runs:
            if not r["ended"]:
                notes.append(f"tool {r['name']!r} has no end time: no result")
        # status (docs: failed if a level ERROR, running if no end time, else succeeded -- all inferred)
        errs = [o for o in obs if o.get("level") == "ERROR"]
        starts = [t for t in (_ts(o.get("startTime")) for o in obs) if t]
        ends = [t for t in (_ts(o.get("endTime")) for o in obs) if t]
        if errs:
            status = "failed"
            notes.append(f"level ERROR on {errs[0].get('name')!r}: {errs[0].get('statusMessage')!r}")
        elif any(not o.get("endTime") for o in obs):
            status = _unended(max(starts + ends, default=None), notes)
        else:
            status = "succeeded"
        # final answer: the last generation's output (docs/formats.md, Langfuse "Lost")
        final = None
        if provider_obs:
            last = provider_obs[-1]
            found = []
            _lf_tool_calls_in(last.get("output"), found)
            text = _lf_text(last.get("output"))
            if found:
                notes.append(f"the last generation {last.get('name')!r} asks for {[n for _, n in found]}: no final "
                             "text answer")
            elif text is None:
                tout = d["trace"].get("output")
                notes.append(f"the last generation {last.get('name')!r} records no output text"
                             + (" (the trace's own output holds an answer)" if tout not in (None, "", "null") else ""))
            else:
                final = text
        # times: the observations' span (Langfuse's trace latency is the same span)
        started = min(starts, default=None)
        ended = max(ends, default=None)
        lat = d["trace"].get("latency")
        if started and ended and lat is not None and abs((ended - started).total_seconds() - float(lat)) > 0.002:
            notes.append(f"trace latency {lat} differs from the observations' span")
        tts = _ts(d["trace"].get("timestamp"))
        if tts and started and tts != started:
            notes.append(f"trace timestamp {_iso(tts)} is not the first observation's start {_iso(started)}")
        # model / provider of the provider calls
        models = [_lf_model(o, meta[o["id"]][0]) for o in provider_obs]
        model = _most_common([m for m in models if m])
        if len(set(m for m in models if m)) > 1:
            notes.append(f"several models: {sorted(set(m for m in models if m))}; the most used is the run's")
        provs = []
        for o in provider_obs:
            a = meta[o["id"]][0]
            md = o.get("metadata")
            md = _json_or(md) if isinstance(md, str) else md
            p = (a.get("gen_ai.provider.name") or a.get("gen_ai.system") or a.get("llm.provider")
                 or a.get("llm.system") or (md.get("ls_provider") if isinstance(md, dict) else None))
            provs.append(_norm_provider(p))
        provider = _most_common([p for p in provs if p]) or _provider_of(model)
        out[tid] = _facts(
            tool_calls=calls, tool_results=results, tool_errors=errors, status=status, final_answer=final,
            started=started, ended=ended, model=model, provider=provider, notes=notes,
            extra={"tool_runs": len(runs)},
        )
    return out


# --------------------------------------------------------------------------------------

READERS: dict[str, Callable[[Path], dict[str, dict]]] = {
    "inspect-ai": read_inspect,
    "mini-swe-agent": read_mini_swe_agent,
    "swe-agent": read_swe_agent,
    "openhands": read_openhands,
    "langfuse-framework-traces": read_langfuse,
}


def truths(folder_path: Path) -> dict[str, dict]:
    folder_path = Path(folder_path)
    try:
        reader = READERS[folder_path.name]
    except KeyError:
        raise ValueError(f"no oracle reader for folder {folder_path.name!r}; known: {sorted(READERS)}") from None
    return reader(folder_path)


def _table(root: Path) -> str:
    lines = [f"{'calls':>5} {'unk':>4} {'low_usd':>10} {'high_usd':>10} {'recorded_usd':>24}  run_id"]
    for name in READERS:
        lines.append(f"== {name}")
        for run_id, t in sorted(truths(root / name).items()):
            lines.append(
                f"{t['calls']:>5} {str(t['calls_usage_unknown']):>4} {str(t['low_usd']):>10} "
                f"{str(t['high_usd']):>10} {str(t['recorded_usd']):>24}  {run_id}"
            )
    return "\n".join(lines) + "\n"


def _facts_table(root: Path) -> str:
    """run_id, tool_calls, tool_results, tool_errors, status, wall_seconds, model: one line a run."""
    rows = [("run_id", "tool_calls", "tool_results", "tool_errors", "status", "wall_seconds", "model")]
    for name in READERS:
        for run_id, t in sorted(truths(root / name).items()):
            rows.append((run_id, *(str(t.get(k)) for k in ("tool_calls", "tool_results", "tool_errors", "status",
                                                           "wall_seconds", "model"))))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows) + "\n"


if __name__ == "__main__":
    import sys

    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    root = Path(args[0]) if args else Path(__file__).parent / "fixtures" / "realdata"
    sys.stdout.write(_facts_table(root) if "--facts" in sys.argv else _table(root))
