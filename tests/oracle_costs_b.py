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
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from datetime import date, datetime, timezone
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
    return out


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
    return out


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
    return out


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
    return out


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


def read_langfuse(folder: Path) -> dict[str, dict]:
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
    out: dict[str, dict] = {}
    for tid, (_, path, d) in docs.items():
        obs = d["observations"]
        by_id = {o["id"]: o for o in obs}
        notes: list[str] = []
        meta = {o["id"]: _meta(o) for o in obs}

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


if __name__ == "__main__":
    import sys

    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).parent / "fixtures" / "realdata"
    sys.stdout.write(_table(root))
