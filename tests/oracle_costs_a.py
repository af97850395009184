"""Independent cost oracle (part A): Claude Code, Codex CLI and Gemini CLI transcripts.

What this is
------------
A second opinion on what each run in four real-data folders cost, computed in plain Python from
the RAW transcript files only, so that tests can hold reconcile's figures against it.  It was
written WITHOUT reading reconcile's SQL, pricing, store or analysis code, or any cost it outputs.
The only things taken from reconcile are its run ids (``docs/formats.md`` and a
``select run_id, source_file from runs`` after ``reconcile ingest``), so the keys below line up.

Sources
-------
* Raw files under ``tests/fixtures/realdata/<folder>/`` and their ``SOURCE.txt`` /
  ``README.md`` (format facts: Claude Code's one-response-over-several-lines, Codex's cumulative
  ``total_token_usage`` written twice by Desktop 0.104, Gemini's re-appended JSONL messages).
* Prices: ``genai_prices`` (bundled snapshot, never auto-updated), called per model call with the
  call's own timestamp (``genai_request_timestamp``) so the price in force that day applies, and
  with the call's TOTAL input so long-context tiers (Opus 4.6 before 2026-03-13, Gemini Pro
  above 200k prompt tokens, ...) are chosen by ``calc_price`` itself.
* Provider billing semantics (public API docs):
  - Anthropic usage buckets are disjoint: ``input_tokens`` (uncached) + ``cache_read_input_tokens``
    + ``cache_creation_input_tokens`` (split by ``cache_creation.ephemeral_5m/1h_input_tokens``).
  - OpenAI / Codex: ``cached_input_tokens`` is a subset of ``input_tokens``;
    ``reasoning_output_tokens`` a subset of ``output_tokens``; OpenAI bills no cache writes.
  - Gemini (usageMetadata as Gemini CLI records it: input=promptTokenCount,
    cached=cachedContentTokenCount, output=candidatesTokenCount, thoughts=thoughtsTokenCount,
    tool=toolUsePromptTokenCount): cached is a subset of input; ``tool`` (the prompt of
    server-side tool use) is a separate prompt component beside ``input`` (totalTokenCount =
    prompt + candidates + toolUsePrompt + thoughts, which the files confirm) and is billed as
    (uncached) input; ``thoughts`` are billed at the output rate.  Gemini's implicit caching bills
    reads at the cache rate and no writes.

Decisions (also repeated per run in ``notes``)
----------------------------------------------
Claude Code
  * One call per (message.id, requestId); the LAST line of the group supplies usage (earlier lines
    carry provisional output_tokens and, in v2.1.x, lack server_tool_use).  Lines without both
    ids are single calls.  ``progress`` lines (agent_progress embeds copies of subagent calls)
    and every non-``assistant`` line are ignored; ``<synthetic>`` model lines are not API calls.
  * Inline side-chain lines (v1.0.x ``isSidechain: true`` in the session file) are billed calls of
    that session.  Subagent / compaction files ``agent-*.jsonl`` are runs of their own.
  * Cache-write lifetime: exact when ``cache_creation.ephemeral_5m/1h`` add up to
    ``cache_creation_input_tokens``.  When the breakdown is absent or zeroed (or short) beside a
    non-zero total, the lifetime of those tokens is unknown: ``cache_write_5m``/``_1h`` are None,
    low prices them as 5-minute writes, high as 1-hour writes.  An absent breakdown beside a zero
    total is a known zero.
  * ``server_tool_use.web_search_requests`` is billed at the model's web-search rate
    (genai_prices; $10/1k).  Non-standard service_tier / inference_geo / speed are flagged in notes
    (none occur in these folders).
Codex
  * Per-call usage = difference of consecutive DISTINCT cumulative ``total_token_usage``; a
    repeat of the previous total (Desktop 0.104 writes each count twice) is skipped; ``info: null``
    is a rate-limit snapshot; a total that goes down takes ``last_token_usage``.  The model is the
    latest ``turn_context.model`` before the count.  uncached = input - cached; cache read =
    cached; output = output_tokens (reasoning included); cache writes 0.
  * A ``compacted`` line whose ``message`` is empty (remote compaction through
    ``/responses/compact``) is a billed model call whose usage Codex does NOT add to
    ``total_token_usage`` (see openai/codex#47003; the totals before and after are identical).  It
    is counted in ``calls`` with unknown usage: token buckets become None, low prices it at 0 and
    high is None.
  * ``web_search_call`` items are OpenAI's hosted web-search tool: billed per call at the model's
    web-search rate, or, where genai_prices lists none for the model (gpt-5.3-codex), OpenAI's
    published $10 per 1,000 calls (the rate genai_prices lists for gpt-5/5.1/5.2).  low counts one
    fee per item, high one per query when an item ran several queries.
  * A model genai_prices cannot price (the 0.39 file's custom alias ``aide-gpt-5``) is listed in
    ``unpriced_models``; low counts only what is priced, high is None.
Gemini CLI
  * One call per ``gemini`` message; JSONL re-appends a message under the same id: last copy wins
    (``$set`` patches carrying ``messages`` are merged the same way); ``$rewindTo`` is ignored (the
    rewound messages were answered and billed).
  * uncached = input - cached + tool; cache read = cached; output = output + thoughts; no writes.
  * A gemini message whose tokens are missing or all zero (four in the bcec23f recording, with
    real text and thoughts) was nonetheless answered and billed: usage unknown -> buckets None,
    low prices it at 0, high None.
  * ``gemini-3-pro-image-preview`` (a CodeMie proxy alias): genai_prices lists no cache-read rate
    for it, so at list price its ``cached`` tokens cost the full input rate (high); Google's
    implicit-cache discount for Gemini 3 Pro is 90 % (cache read = 10 % of input), and the alias
    may really be gemini-3-pro-preview, so low prices cached tokens at 10 % of the input rate.

Scope: only calls the transcript records are counted.  Harness side calls that no transcript
records (Claude Code's title/topic Haiku calls, Gemini CLI's next-speaker / loop-detection /
compression checks, Codex thread naming) are outside every figure here.

Extra keys beside the requested ones: ``calls_usage_unknown`` (calls in ``calls`` whose usage the
file does not give), ``known_tokens`` (bucket sums over the calls whose buckets are known),
``web_search_calls``.

Part 2: tools, status, final answer, times, model
-------------------------------------------------
Each truth dict also carries ``tool_calls``, ``tool_results``, ``tool_errors``,
``tool_status_unknown`` (results whose outcome the file does not record: not errors, not ok),
``status`` (docs/status.md's canonical statuses), ``stop_reason``, ``final_answer``,
``started_at`` / ``ended_at`` (UTC ISO strings) and ``wall_seconds``, ``model`` and ``provider``.
Sources: the raw files and the rules docs/formats.md states per format (Claude Code, Codex,
Gemini sections and "What each format records") and docs/status.md -- never reconcile's SQL.
Judgement calls and places where a file shows something the docs say otherwise are written in
the run's ``notes`` ("judgement: ..." / "docs vs file: ..."); where they disagree the FILE is
followed.

Claude Code
  * tool_calls: ``tool_use`` blocks of assistant lines, de-duplicated by id within a response
    ((message.id, requestId)); side-chain lines of the session file count (they are its steps);
    ``progress`` copies and ``<synthetic>`` lines do not.  tool_results: ``tool_result`` blocks
    of user lines; tool_errors: ``is_error: true`` (absent = success, as the Messages API says).
  * status: the main thread's (``isSidechain`` false; a subagent file's own lines) last message
    that says how the session stands: assistant text asking for no tool -> succeeded, API error
    -> failed, ``max_turns_reached`` -> budget_exceeded, "[Request interrupted by user..." ->
    cancelled, a tool_use / tool_result / prompt -> running.  Local-command lines (user or 2.1.38's
    ``system``/local_command), ``isMeta`` lines, compaction summaries and other system lines leave
    it as it stood.
  * final answer: the last main-thread response with text and no tool_use, if no main-thread
    response after it asks for a tool.  start: the file's first timestamp (any line: often a
    SessionStart hook ``progress`` line); end: the main thread's last message, compaction,
    local-command output or max_turns line.  provider ``anthropic``; model: the first
    main-thread response's (the docs do not say).
Codex
  * tool_calls: ``function_call`` / ``custom_tool_call`` / ``web_search_call`` items;
    tool_results: ``*_call_output`` items plus one per ``web_search_call``; tool_errors: exit code
    != 0 from exec_command_end / item_completed CommandExecution / the unified-exec output header
    / a 0.39 output's ``metadata.exit_code``, patch_apply_end.success false, an mcp_tool_call_end
    error, a web search whose status is not ``completed``.  Nothing else: a result whose text
    says it failed but which records no code is ``tool_status_unknown``.
  * status from the last task event (task_complete -> succeeded, or failed with ``error``;
    turn_aborted -> cancelled; task_started -> running); without task events (0.39) succeeded
    when the rollout ends on the model's text.  final answer: model steps are the output items
    between two inputs; the last step with assistant text and no harness tool call, after which
    none asks for one.  start: ``session_meta.payload.timestamp``; end: the last line (the docs
    do not say).  model: the first ``turn_context.model``; provider: ``session_meta.model_provider``
    or None.
Gemini CLI
  * tool_calls = tool_results = ``toolCalls`` entries of the (de-duplicated) gemini messages;
    tool_errors: status ``error`` / ``cancelled``.  status from the last message (gemini text
    without tool calls -> succeeded, ``error`` -> failed, info "Request cancelled." ->
    cancelled, else running).  start / end: the earliest / latest message or tool-call timestamp
    (the docs do not say; ``startTime`` / ``lastUpdated`` are noted where they differ).  model:
    the first gemini message's; provider ``google``.
All formats: a run left ``running`` whose last line is more than 24 hours before ``NOW``
(2026-12-06T00:00Z, no run here declares a wall-clock budget) is ``abandoned`` (docs/status.md).
"""

from __future__ import annotations

import json
import pathlib
import re
import warnings
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import ROUND_HALF_UP, Decimal

from genai_prices import Usage, calc_price

MICRO = Decimal("0.000001")
UUID_RE = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", re.I)

# Published list rates used only where genai_prices lists no web-search price for the model.
FALLBACK_WEB_SEARCH_PER_K = {"openai": Decimal("10"), "anthropic": Decimal("10")}
# Google's implicit-cache read rate for Gemini 2.5+/3 models, as a fraction of the input rate.
GEMINI_CACHE_READ_FRACTION = Decimal("0.1")


@dataclass
class Call:
    model: str | None
    provider: str | None
    ts: datetime | None
    usage_known: bool = True
    uncached: int = 0
    cache_read: int = 0
    cw5: int = 0  # cache writes known to be 5-minute
    cw1h: int = 0  # cache writes known to be 1-hour
    cw_unknown: int = 0  # cache writes whose lifetime the file does not say
    output: int = 0


@dataclass
class Fee:
    """A per-use charge beside tokens (hosted web search)."""

    model: str | None
    provider: str | None
    ts: datetime | None
    low_count: int
    high_count: int


# --------------------------------------------------------------------------------------------
# helpers


def _ts(value) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def _int(value) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0


def _read_jsonl(path: pathlib.Path) -> list[dict]:
    out = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


def _tier_rate(price, total_input: int) -> Decimal | None:
    """The per-MTok rate of a genai_prices price (flat or tiered) for a call of total_input."""
    if price is None:
        return None
    if isinstance(price, Decimal):
        return price
    rate = price.base
    for tier in sorted(price.tiers, key=lambda t: t.start):
        if total_input > tier.start:
            rate = tier.price
    return rate


def _calc(model: str, provider: str | None, ts: datetime | None, **usage):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return calc_price(Usage(**usage), model, provider_id=provider, genai_request_timestamp=ts)


def _price_call(call: Call) -> tuple[Decimal, Decimal | None, bool, str | None]:
    """(low, high, priced?, note) for one call; high None when unbounded."""
    if not call.usage_known:
        return Decimal(0), None, True, None
    if not call.model:
        return Decimal(0), None, False, None
    cw5, cw1h = call.cw5, call.cw1h
    total_in = call.uncached + call.cache_read + cw5 + cw1h + call.cw_unknown
    common = dict(input_tokens=total_in, cache_read_tokens=call.cache_read, output_tokens=call.output)
    try:
        low = _calc(call.model, call.provider, call.ts, **common,
                    cache_write_tokens=cw5 + cw1h + call.cw_unknown,
                    cache_write_5m_tokens=cw5 + call.cw_unknown, cache_write_1h_tokens=cw1h)
    except LookupError:
        return Decimal(0), None, False, None
    low_usd = low.total_price
    high_usd = low_usd
    if call.cw_unknown:
        high = _calc(call.model, call.provider, call.ts, **common,
                     cache_write_tokens=cw5 + cw1h + call.cw_unknown,
                     cache_write_5m_tokens=cw5, cache_write_1h_tokens=cw1h + call.cw_unknown)
        high_usd = high.total_price
    note = None
    mp = low.model_price
    if call.cache_read and getattr(mp, "cache_read_mtok", None) is None:
        # genai_prices lists no cache-read rate: list price charges cached tokens as input (high);
        # the provider's implicit-cache discount may have applied (low).
        rate = _tier_rate(getattr(mp, "input_mtok", None), total_in) or Decimal(0)
        low_usd = low_usd - Decimal(call.cache_read) * rate * (1 - GEMINI_CACHE_READ_FRACTION) / Decimal(1_000_000)
        note = (f"{call.model}: genai_prices lists no cache-read rate; cached tokens priced at the full input "
                f"rate (high) and at {GEMINI_CACHE_READ_FRACTION:%} of it (low, Google's implicit-cache rate)")
    return low_usd, high_usd, True, note


def _price_fee(fee: Fee) -> tuple[Decimal, Decimal, str | None]:
    rate = None
    try:
        res = _calc(fee.model, fee.provider, fee.ts, input_tokens=0, output_tokens=0)
        rate = getattr(res.model_price, "web_searches_kcount", None)
    except LookupError:
        pass
    note = None
    if rate is None:
        rate = FALLBACK_WEB_SEARCH_PER_K.get(fee.provider or "", Decimal("10"))
        note = (f"web search on {fee.model}: genai_prices lists no web-search price for it; "
                f"used the provider's published ${rate} per 1,000 calls")
    return (Decimal(fee.low_count) * rate / 1000, Decimal(fee.high_count) * rate / 1000, note)


def _summarize(calls: list[Call], fees: list[Fee], notes: list[str]) -> dict:
    low = Decimal(0)
    high: Decimal | None = Decimal(0)
    models, unpriced = set(), set()
    notes = list(notes)
    for c in calls:
        if c.model:
            models.add(c.model)
        lo, hi, priced, note = _price_call(c)
        if not priced:
            unpriced.add(c.model or "(no model recorded)")
        low += lo
        high = None if (high is None or hi is None) else high + hi
        if note and note not in notes:
            notes.append(note)
    web = 0
    for f in fees:
        lo, hi, note = _price_fee(f)
        web += f.low_count
        low += lo
        if high is not None:
            high += hi
        if note and note not in notes:
            notes.append(note)
    if unpriced:
        notes.append("no genai_prices price for " + ", ".join(sorted(unpriced)) + ": low counts only priced calls, high unbounded")

    known = [c for c in calls if c.usage_known]
    known_tokens = {
        "input_uncached": sum(c.uncached for c in known),
        "cache_read": sum(c.cache_read for c in known),
        "cache_write_5m": sum(c.cw5 for c in known),
        "cache_write_1h": sum(c.cw1h for c in known),
        "cache_write_unknown_ttl": sum(c.cw_unknown for c in known),
        "output_tokens": sum(c.output for c in known),
    }
    all_known = len(known) == len(calls)
    split_known = all_known and not any(c.cw_unknown for c in calls)
    out = {
        "calls": len(calls),
        "input_uncached": known_tokens["input_uncached"] if all_known else None,
        "cache_read": known_tokens["cache_read"] if all_known else None,
        "cache_write_5m": known_tokens["cache_write_5m"] if split_known else None,
        "cache_write_1h": known_tokens["cache_write_1h"] if split_known else None,
        "output_tokens": known_tokens["output_tokens"] if all_known else None,
        "low_usd": low.quantize(MICRO, rounding=ROUND_HALF_UP),
        "high_usd": None if high is None else high.quantize(MICRO, rounding=ROUND_HALF_UP),
        "models": sorted(models),
        "unpriced_models": sorted(m for m in unpriced if m),
        "notes": "; ".join(notes),
        "calls_usage_unknown": len(calls) - len(known),
        "known_tokens": known_tokens,
        "web_search_calls": web,
    }
    return out


# --------------------------------------------------------------------------------------------
# Claude Code


def _claude_run_id(path: pathlib.Path, lines: list[dict]) -> str:
    sid = next((o["sessionId"] for o in lines if isinstance(o.get("sessionId"), str) and o["sessionId"]), None)
    stem = path.stem
    if stem.startswith("agent-"):
        parent = path.parent.parent.name if path.parent.name == "subagents" else (sid or path.parent.name)
        return f"{parent}/{stem}"
    if UUID_RE.fullmatch(stem):
        return stem
    return sid or stem


def read_claude_code(folder: pathlib.Path) -> dict[str, dict]:
    result: dict[str, dict] = {}
    seen_in: dict[tuple, set] = {}
    for path in sorted(folder.rglob("*.jsonl")):
        lines = _read_jsonl(path)
        if not any("sessionId" in o and o.get("type") in ("user", "assistant") for o in lines):
            continue
        run_id = _claude_run_id(path, lines)
        groups: dict[tuple, tuple[str | None, dict]] = {}
        n_assistant_lines = 0
        for i, o in enumerate(lines):
            if o.get("type") != "assistant":
                continue
            m = o.get("message")
            if not isinstance(m, dict) or not isinstance(m.get("usage"), dict):
                continue
            if m.get("model") == "<synthetic>":
                continue
            n_assistant_lines += 1
            mid, rid = m.get("id"), o.get("requestId")
            key = (mid, rid) if mid and rid else ("line", str(path), i)
            first_ts = groups[key][0] if key in groups else o.get("timestamp")
            groups[key] = (first_ts, o)  # last line wins; position of first kept
        calls: list[Call] = []
        fees: list[Fee] = []
        notes: list[str] = []
        flags: set[str] = set()
        unknown_ttl_calls = 0
        for key, (ts, o) in groups.items():
            if key[0] != "line":
                seen_in.setdefault(key, set()).add(run_id)
            m = o["message"]
            u = m["usage"]
            model = m.get("model")
            cc = u.get("cache_creation_input_tokens")
            bd = u.get("cache_creation")
            b5 = _int(bd.get("ephemeral_5m_input_tokens")) if isinstance(bd, dict) else 0
            b1 = _int(bd.get("ephemeral_1h_input_tokens")) if isinstance(bd, dict) else 0
            cc_total = _int(cc) if cc is not None else b5 + b1
            if b5 + b1 >= cc_total:
                if b5 + b1 > cc_total:
                    flags.add("cache_creation breakdown exceeds cache_creation_input_tokens on some call: breakdown trusted")
                cw5, cw1h, cw_unk = b5, b1, 0
            else:
                cw5, cw1h, cw_unk = b5, b1, cc_total - b5 - b1
                unknown_ttl_calls += 1
            calls.append(Call(
                model=model, provider="anthropic", ts=_ts(ts),
                uncached=_int(u.get("input_tokens")), cache_read=_int(u.get("cache_read_input_tokens")),
                cw5=cw5, cw1h=cw1h, cw_unknown=cw_unk, output=_int(u.get("output_tokens")),
            ))
            stu = u.get("server_tool_use")
            ws = _int(stu.get("web_search_requests")) if isinstance(stu, dict) else 0
            if ws:
                fees.append(Fee(model, "anthropic", _ts(ts), ws, ws))
            tier = u.get("service_tier")
            if tier not in (None, "standard"):
                flags.add(f"service_tier {tier!r} on some call (priced at standard list price)")
            geo = u.get("inference_geo")
            if geo not in (None, "", "global", "not_available"):
                flags.add(f"inference_geo {geo!r} on some call (a regional surcharge may apply; not priced)")
            if u.get("speed") not in (None, "standard"):
                flags.add(f"speed {u.get('speed')!r} on some call (fast-mode surcharge not priced)")
        notes.append(f"{n_assistant_lines} assistant lines with usage -> {len(calls)} calls after de-duplicating on "
                     "(message.id, requestId), last line's usage")
        if unknown_ttl_calls:
            notes.append(f"{unknown_ttl_calls} call(s) with cache writes but no (or a zeroed/short) 5m/1h breakdown: "
                         "lifetime unknown, low = 5-minute, high = 1-hour")
        else:
            notes.append("every cache write's 5m/1h lifetime is given by cache_creation")
        if any(o.get("isSidechain") for _, o in groups.values()) and not path.stem.startswith("agent-"):
            notes.append("includes inline side-chain (subagent) calls recorded in the session file")
        notes.extend(sorted(flags))
        result[run_id] = {"_calls": calls, "_fees": fees, "_notes": notes, "_extra": _claude_extras(path, lines)}
    for key, runs in seen_in.items():
        if len(runs) > 1:
            for r in runs:
                note = "a (message.id, requestId) also appears in another run of this folder (counted in each)"
                if note not in result[r]["_notes"]:
                    result[r]["_notes"].append(note)
    return {rid: _merge(_summarize(v["_calls"], v["_fees"], v["_notes"]), v["_extra"]) for rid, v in result.items()}


# --------------------------------------------------------------------------------------------
# Codex

CODEX_TYPES = {"session_meta", "turn_context", "response_item", "event_msg", "compacted"}
_USAGE_KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens")


def _is_empty_text(value) -> bool:
    if value is None:
        return True
    if not isinstance(value, str):
        return False
    if value.strip() == "":
        return True
    # sanitised fixtures replace text with "[REDACTED_... len=N sha=...]"
    return re.fullmatch(r"\[REDACTED_\w+ len=0\b[^\]]*\]", value.strip()) is not None


def read_codex(folder: pathlib.Path) -> dict[str, dict]:
    result: dict[str, dict] = {}
    for path in sorted(folder.rglob("*.jsonl")):
        lines = _read_jsonl(path)
        if not lines or lines[0].get("type") not in CODEX_TYPES or "payload" not in lines[0]:
            continue
        meta = next((o["payload"] for o in lines if o.get("type") == "session_meta" and isinstance(o.get("payload"), dict)), {})
        run_id = meta.get("id")
        if not run_id:
            found = UUID_RE.findall(path.stem)
            run_id = found[-1] if found else path.stem
        provider = meta.get("model_provider") or None
        model = None
        prev_total = None
        calls: list[Call] = []
        fees: list[Fee] = []
        notes: list[str] = []
        repeats = null_info = restarts = first_mismatch = remote_compactions = 0
        for o in lines:
            t, p = o.get("type"), o.get("payload")
            if not isinstance(p, dict):
                continue
            ts = _ts(o.get("timestamp"))
            if t == "turn_context":
                model = p.get("model") or model
            elif t == "response_item" and p.get("type") == "web_search_call":
                action = p.get("action") if isinstance(p.get("action"), dict) else {}
                queries = action.get("queries") if isinstance(action.get("queries"), list) else []
                if p.get("status") in (None, "completed"):
                    fees.append(Fee(model, provider or "openai", ts, 1, max(1, len(queries))))
            elif t == "compacted":
                if _is_empty_text(p.get("message")):
                    remote_compactions += 1
                    calls.append(Call(model=model, provider=provider, ts=ts, usage_known=False))
            elif t == "event_msg" and p.get("type") == "token_count":
                info = p.get("info")
                if not isinstance(info, dict) or not isinstance(info.get("total_token_usage"), dict):
                    null_info += 1
                    continue
                tot = {k: _int(info["total_token_usage"].get(k)) for k in _USAGE_KEYS}
                last = info.get("last_token_usage")
                last = {k: _int(last.get(k)) for k in _USAGE_KEYS} if isinstance(last, dict) else None
                if prev_total is not None and tot == prev_total:
                    repeats += 1
                    continue
                if prev_total is None:
                    delta = tot
                    if last is not None and last != tot:
                        first_mismatch += 1
                else:
                    delta = {k: tot[k] - prev_total[k] for k in _USAGE_KEYS}
                    if any(v < 0 for v in delta.values()):
                        restarts += 1
                        delta = last if last is not None else tot
                prev_total = tot
                cached = delta["cached_input_tokens"]
                calls.append(Call(model=model, provider=provider, ts=ts,
                                  uncached=delta["input_tokens"] - cached, cache_read=cached,
                                  cw5=0, cw1h=0, output=delta["output_tokens"]))
        notes.append(f"usage = differences of distinct cumulative totals; {repeats} repeated token_count(s) and "
                     f"{null_info} without info skipped")
        if restarts:
            notes.append(f"{restarts} cumulative total(s) went down: took last_token_usage")
        if first_mismatch:
            notes.append("first cumulative total differs from its last_token_usage (session resumed?): took the total")
        if remote_compactions:
            notes.append(f"{remote_compactions} remote compaction(s) (compacted line with empty message): billed "
                         "/responses/compact call whose usage Codex does not record (totals unchanged across it) -> "
                         "counted as a call of unknown usage, low 0, high unbounded")
        if fees:
            notes.append(f"{len(fees)} hosted web_search_call(s) billed per call "
                         f"(low {sum(f.low_count for f in fees)} fees, high {sum(f.high_count for f in fees)} = one per query)")
        if not meta.get("model_provider"):
            notes.append("session_meta records no model_provider; model looked up by name alone")
        notes.append("cache writes 0 (OpenAI bills none); service tier not recorded, standard assumed")
        result[run_id] = _merge(_summarize(calls, fees, notes), _codex_extras(lines, meta))
    return result


# --------------------------------------------------------------------------------------------
# Gemini CLI


def _gemini_messages(path: pathlib.Path) -> tuple[str | None, list[dict], list[str]]:
    notes: list[str] = []
    if path.suffix == ".json":
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None, [], notes
        if not isinstance(doc, dict) or "sessionId" not in doc or not isinstance(doc.get("messages"), list):
            return None, [], notes
        by_id: dict = {}
        for i, m in enumerate(doc["messages"]):
            if isinstance(m, dict):
                by_id[m.get("id") or ("#", i)] = m
        if len(by_id) != len(doc["messages"]):
            notes.append("duplicate message ids in the recording: last copy kept")
        return doc["sessionId"], list(by_id.values()), notes
    if path.suffix == ".jsonl":
        lines = _read_jsonl(path)
        if not lines or "sessionId" not in lines[0] or "projectHash" not in lines[0]:
            return None, [], notes
        by_id: dict = {}
        copies = 0
        for i, o in enumerate(lines[1:]):
            if "$set" in o:
                s = o["$set"]
                if isinstance(s, dict) and isinstance(s.get("messages"), list):
                    for m in s["messages"]:
                        if isinstance(m, dict) and m.get("id"):
                            by_id[m["id"]] = m
                continue
            if "$rewindTo" in o:
                notes.append("$rewindTo seen: rewound messages kept (they were answered and billed)")
                continue
            if "type" in o:
                key = o.get("id") or ("#", i)
                if key in by_id:
                    copies += 1
                by_id[key] = o
        if copies:
            notes.append(f"{copies} re-appended message cop(ies) under an existing id: last copy kept")
        return lines[0]["sessionId"], list(by_id.values()), notes
    return None, [], notes


def read_gemini(folder: pathlib.Path) -> dict[str, dict]:
    result: dict[str, dict] = {}
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix not in (".json", ".jsonl"):
            continue
        run_id, messages, notes = _gemini_messages(path)
        if run_id is None:
            continue
        calls: list[Call] = []
        unknown = 0
        total_mismatch = 0
        tool_tokens = 0
        for m in messages:
            if m.get("type") != "gemini":
                continue
            tok = m.get("tokens")
            ts = _ts(m.get("timestamp"))
            model = m.get("model")
            counts = [tok.get(k) for k in ("input", "output", "cached", "thoughts", "tool", "total")] if isinstance(tok, dict) else []
            if not isinstance(tok, dict) or tok.get("input") is None or not any(_int(x) for x in counts):
                unknown += 1
                calls.append(Call(model=model, provider="google", ts=ts, usage_known=False))
                continue
            inp, out = _int(tok.get("input")), _int(tok.get("output"))
            cached, thoughts, tool = _int(tok.get("cached")), _int(tok.get("thoughts")), _int(tok.get("tool"))
            tool_tokens += tool
            if tok.get("total") is not None and _int(tok.get("total")) != inp + out + thoughts + tool:
                total_mismatch += 1
            calls.append(Call(model=model, provider="google", ts=ts,
                              uncached=inp - cached + tool, cache_read=cached, cw5=0, cw1h=0,
                              output=out + thoughts))
        notes.append("one call per gemini message; uncached = input - cached + tool, cache read = cached, "
                     "output = output + thoughts (thoughts billed as output), no cache writes")
        notes.append(f"tool-use prompt tokens in this run: {tool_tokens} (billed as uncached input beside input)")
        if unknown:
            notes.append(f"{unknown} gemini message(s) with missing or all-zero tokens: answered and billed but usage "
                         "unrecorded -> token buckets None, low prices them at 0, high unbounded")
        if total_mismatch:
            notes.append(f"{total_mismatch} message(s) where total != input+output+thoughts+tool")
        result[run_id] = _merge(_summarize(calls, [], notes), _gemini_extras(path, messages))
    return result


# --------------------------------------------------------------------------------------------
# Part 2: tool calls, tool results and errors, status, final answer, times, model and provider
#
# Computed from the raw files only, following the rules docs/formats.md states for each format
# and docs/status.md's canonical statuses.  Where the docs are silent, the choice made is said
# in the run's notes ("judgement: ..."); where a file shows something the docs say otherwise,
# the file is followed and the notes say so ("docs vs file: ...").

# "now" for the abandoned rule (docs/status.md): no end record and silent longer than 24 hours
# (no run here declares a wall-clock budget) before the last ingest.
NOW = datetime(2026, 12, 6, tzinfo=timezone.utc)
ABANDONED_AFTER = timedelta(hours=24)

_EXIT_HEADER_RE = re.compile(r"Process exited with code (-?\d+)")


def _iso(value: datetime | None) -> str | None:
    if value is None:
        return None
    value = value.astimezone(timezone.utc)
    spec = "milliseconds" if value.microsecond % 1000 == 0 else "microseconds"
    return value.isoformat(timespec=spec).replace("+00:00", "Z")


def _wall(start: datetime | None, end: datetime | None) -> float | None:
    if start is None or end is None:
        return None
    return round((end - start).total_seconds(), 3)


def _abandon(status: str, last_heard: datetime | None, notes: list[str]) -> str:
    """docs/status.md: a run with no end record ('running') silent past 24 h before now is abandoned."""
    if status != "running":
        return status
    if last_heard is not None and NOW - last_heard > ABANDONED_AFTER:
        notes.append(f"no end record and silent since {_iso(last_heard)} (> 24 h before now = {_iso(NOW)}): "
                     "running -> abandoned (docs/status.md)")
        return "abandoned"
    return status


def _merge(truth: dict, extra: dict) -> dict:
    extra = dict(extra)
    notes = extra.pop("_notes", [])
    out = {**truth, **extra}
    if notes:
        out["notes"] = "; ".join([n for n in [truth.get("notes")] if n] + notes)
    return out


# ---- Claude Code

_CC_LOCAL_COMMAND_MARKS = ("<command-name>", "<local-command-stdout>", "<local-command-stderr>",
                           "<local-command-caveat>")
_CC_INTERRUPTED = "[Request interrupted by user"


def _cc_texts(content) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [b.get("text") for b in content
                if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]
    return []


def _cc_is_api_error(o: dict) -> bool:
    m = o.get("message") if isinstance(o.get("message"), dict) else {}
    if o.get("isApiErrorMessage"):
        return True
    return m.get("model") == "<synthetic>" and any(t.lstrip().startswith("API Error") for t in _cc_texts(m.get("content")))


def _claude_extras(path: pathlib.Path, lines: list[dict]) -> dict:
    notes: list[str] = []
    agent_file = path.stem.startswith("agent-")
    # --- copied history (--fork-session): lines before the file's own first message that carry
    # another session's id or are stamped before the file's first timestamp (docs/formats.md).
    own_sid = path.stem if UUID_RE.fullmatch(path.stem) else next(
        (o["sessionId"] for o in lines if o.get("type") in ("user", "assistant") and isinstance(o.get("sessionId"), str)), None)
    first_ts_any = next((_ts(o.get("timestamp")) for o in lines if _ts(o.get("timestamp"))), None)
    copied: set[int] = set()
    if not agent_file:
        for i, o in enumerate(lines):
            if o.get("type") not in ("user", "assistant"):
                continue
            sid = o.get("sessionId")
            ts = _ts(o.get("timestamp"))
            if (isinstance(sid, str) and own_sid and sid != own_sid) or (ts and first_ts_any and ts < first_ts_any):
                copied.add(i)
                continue
            break  # the file's own first message
    if copied:
        notes.append(f"{len(copied)} line(s) of copied history (fork) left out of tool counts, status and times")

    def main_thread(o: dict) -> bool:
        return agent_file or not o.get("isSidechain")

    # --- responses: lines sharing (message.id, requestId); tool_use ids de-duplicated per response
    responses: dict = {}
    order: list = []
    line_key: dict[int, tuple] = {}
    for i, o in enumerate(lines):
        if i in copied or o.get("type") != "assistant" or not isinstance(o.get("message"), dict):
            continue
        m = o["message"]
        mid, rid = m.get("id"), o.get("requestId")
        key = (mid, rid) if mid and rid else ("line", i)
        line_key[i] = key
        r = responses.get(key)
        if r is None:
            r = responses[key] = {"tool_ids": [], "anon_tools": 0, "texts": [], "main": main_thread(o),
                                  "synthetic": m.get("model") == "<synthetic>", "api_error": _cc_is_api_error(o),
                                  "model": m.get("model"), "stop_reason": None, "first_line": i}
            order.append(key)
        r["last_line"] = i
        if m.get("stop_reason"):
            r["stop_reason"] = m.get("stop_reason")
        content = m.get("content") if isinstance(m.get("content"), list) else []
        for b in content:
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_use":
                if b.get("id"):
                    if b["id"] not in r["tool_ids"]:
                        r["tool_ids"].append(b["id"])
                else:
                    r["anon_tools"] += 1
            elif b.get("type") == "text" and isinstance(b.get("text"), str):
                r["texts"].append(b["text"])
        if isinstance(m.get("content"), str):
            r["texts"].append(m["content"])

    real = [k for k in order if not responses[k]["synthetic"]]
    tool_calls = sum(len(responses[k]["tool_ids"]) + responses[k]["anon_tools"] for k in real)
    call_ids = [t for k in real for t in responses[k]["tool_ids"]]
    if len(call_ids) != len(set(call_ids)):
        notes.append(f"{len(call_ids) - len(set(call_ids))} tool_use id(s) asked again by another response (each counted)")

    # --- tool results: tool_result blocks on user lines (progress copies are not results)
    results: list[tuple[str | None, bool]] = []
    for i, o in enumerate(lines):
        if i in copied or o.get("type") != "user" or not isinstance(o.get("message"), dict):
            continue
        content = o["message"].get("content")
        for b in content if isinstance(content, list) else []:
            if isinstance(b, dict) and b.get("type") == "tool_result":
                results.append((b.get("tool_use_id"), b.get("is_error") is True))
    result_ids = [r for r, _ in results]
    unpaired_calls = set(call_ids) - set(result_ids)
    unpaired_results = [r for r in result_ids if r not in set(call_ids)]
    if len(result_ids) != len(set(result_ids)):
        notes.append(f"{len(result_ids) - len(set(result_ids))} tool_result(s) repeat a tool_use_id already answered")
    if unpaired_calls:
        notes.append(f"{len(unpaired_calls)} tool_use(s) without a tool_result")
    if unpaired_results:
        notes.append(f"{len(unpaired_results)} tool_result(s) answering no tool_use in this file")

    # --- status: the main thread's last message that says how the session stands
    status, stop_reason = "running", None
    last_main_line_ts = None  # end: main thread's last message / compaction / local command output / max_turns
    for i, o in enumerate(lines):
        if i in copied:
            continue
        t = o.get("type")
        ts = _ts(o.get("timestamp"))
        if t in ("user", "assistant"):
            if not main_thread(o):
                continue
            if ts:
                last_main_line_ts = ts
            m = o.get("message") if isinstance(o.get("message"), dict) else {}
            if t == "assistant":
                r = responses.get(line_key.get(i))
                if r is None:
                    continue
                if r["api_error"]:
                    status, stop_reason = "failed", next(iter(_cc_texts(m.get("content"))), None)
                elif r["synthetic"]:
                    continue  # "No response requested." etc.: answers no call
                elif r["tool_ids"] or r["anon_tools"]:
                    status, stop_reason = "running", None
                elif any(x.strip() for x in r["texts"]):
                    status, stop_reason = "succeeded", r["stop_reason"]
                else:
                    status, stop_reason = "running", None
                continue
            # user line
            if o.get("isCompactSummary") or o.get("isMeta"):
                continue
            content = m.get("content")
            if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
                status, stop_reason = "running", None
                continue
            texts = _cc_texts(content)
            if any(_CC_INTERRUPTED in x for x in texts):
                status, stop_reason = "cancelled", "interrupted by user"
            elif any(mark in x for x in texts for mark in _CC_LOCAL_COMMAND_MARKS):
                continue  # a local command asks the model nothing
            elif any(x.strip() for x in texts):
                status, stop_reason = "running", None  # a prompt awaiting its answer
        elif t == "system" and o.get("subtype") in ("compact_boundary", "local_command"):
            if ts:
                last_main_line_ts = ts
        elif t == "attachment" and isinstance(o.get("attachment"), dict) and o["attachment"].get("type") == "max_turns_reached":
            if ts:
                last_main_line_ts = ts
            status, stop_reason = "budget_exceeded", "max_turns"

    # --- final answer: last main-thread assistant text asking for no tool, after which none asks for one
    main_real = [k for k in real if responses[k]["main"] and not responses[k]["api_error"]]
    final = None
    for j in range(len(main_real) - 1, -1, -1):
        r = responses[main_real[j]]
        if r["tool_ids"] or r["anon_tools"]:
            break
        texts = [x.strip() for x in r["texts"] if x.strip()]
        if texts:
            final = "\n\n".join(texts)
            if len(texts) > 1:
                notes.append("judgement: final answer's response has several text blocks, joined with a blank line")
            break

    # --- times
    started = first_ts_any if not copied else next(
        (_ts(o.get("timestamp")) for i, o in enumerate(lines) if i not in copied and _ts(o.get("timestamp"))), None)
    own_ts = [_ts(o.get("timestamp")) for i, o in enumerate(lines) if i not in copied and _ts(o.get("timestamp"))]
    if own_ts and started and min(own_ts) < started:
        notes.append(f"a later line is stamped earlier ({_iso(min(own_ts))}) than the file's first timestamp "
                     f"({_iso(started)}): start kept at the first timestamp, as the docs say")
    if agent_file:
        # A subagent file may open with isMeta <system-reminder> lines carried in from the parent session
        # (their parentUuid points into the parent's file, their timestamps are the parent's hook times):
        # the file shows the run began at its own first line after them.
        own_uuids = {o.get("uuid") for o in lines if o.get("uuid")}
        carried = 0
        for o in lines:
            if o.get("isMeta") and o.get("parentUuid") and o["parentUuid"] not in own_uuids:
                carried += 1
                continue
            break
        own_start = _ts(lines[carried].get("timestamp")) if carried < len(lines) else None
        if carried and own_start and started and own_start != started:
            notes.append(f"docs vs file: the file opens with {carried} isMeta system-reminder line(s) carried in from the "
                         f"parent session (parentUuid outside this file, stamped from {_iso(started)}, the parent's hook "
                         f"times), the run's own first line (its prompt) is at {_iso(own_start)}: started_at follows the file "
                         f"(docs' 'file's first timestamp' would give {_iso(started)}, "
                         f"wall {_wall(started, last_main_line_ts)} s)")
            started = own_start
    ended = last_main_line_ts
    all_ts = [_ts(o.get("timestamp")) for i, o in enumerate(lines) if i not in copied and _ts(o.get("timestamp"))]
    last_heard = max(all_ts) if all_ts else None
    first_line_kind = next((o.get("type") for o in lines if _ts(o.get("timestamp"))), None)
    if first_line_kind not in ("user", "assistant"):
        notes.append(f"start = the file's first timestamp, on a {first_line_kind!r} line (docs: 'its file's first timestamp')")
    if agent_file:
        notes.append("judgement: a subagent file's own lines (all isSidechain) are its main thread for status, final answer and end")
    main_ts = [_ts(o.get("timestamp")) for i, o in enumerate(lines) if i not in copied and _ts(o.get("timestamp"))
               and o.get("type") in ("user", "assistant") and main_thread(o)]
    if main_ts and ended and max(main_ts) > ended:
        notes.append(f"a main-thread line before the last is stamped later ({_iso(max(main_ts))}) than the last one "
                     f"({_iso(ended)}): ended_at kept at the last line's")
    if lines and any(o.get("type") == "system" and o.get("subtype") == "local_command" for o in lines):
        tail = [o for o in lines if o.get("type") in ("user", "assistant", "system", "attachment") and main_thread(o)
                and not (o.get("type") == "system" and o.get("subtype") not in ("local_command", "compact_boundary"))]
        if tail and tail[-1].get("type") == "system":
            notes.append("judgement: the session ends on `system`/local_command lines (how Claude Code 2.1.38 writes a local "
                         "command and its <local-command-stdout>): taken as the 'local command output' that ends the run "
                         "(docs: it leaves the status as it stood)")

    status = _abandon(status, last_heard, notes)
    first_main_model = next((responses[k]["model"] for k in main_real if responses[k]["model"]), None)
    models = [responses[k]["model"] for k in real if responses[k]["model"]]
    if len(set(models)) > 1:
        counts = {mm: models.count(mm) for mm in dict.fromkeys(models)}
        notes.append("judgement: run model = the first main-thread response's model (docs do not say how a Claude Code run "
                     f"names its model), responses per model: {counts}")
    return {
        "tool_calls": tool_calls,
        "tool_results": len(results),
        "tool_errors": sum(1 for _, e in results if e),
        "tool_status_unknown": 0,
        "status": status,
        "stop_reason": stop_reason,
        "final_answer": final,
        "started_at": _iso(started),
        "ended_at": _iso(ended),
        "wall_seconds": _wall(started, ended),
        "model": first_main_model,
        "provider": "anthropic",
        "_notes": notes,
    }


# ---- Codex


def _codex_output_text(output) -> str | None:
    if isinstance(output, str):
        return output
    if isinstance(output, list):  # content items
        return "".join(x.get("text", "") for x in output if isinstance(x, dict))
    if isinstance(output, dict):
        return output.get("content") if isinstance(output.get("content"), str) else json.dumps(output)
    return None


def _codex_output_exit(text: str | None) -> tuple[int | None, str]:
    """Exit code written in the output itself: a unified exec header or a 0.39 shell output's metadata."""
    if not text:
        return None, ""
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            j = json.loads(stripped)
        except json.JSONDecodeError:
            j = None
        if isinstance(j, dict) and isinstance(j.get("metadata"), dict) and isinstance(j["metadata"].get("exit_code"), int):
            return j["metadata"]["exit_code"], "metadata.exit_code"
    header = text.split("\nOutput:", 1)[0] if "\nOutput:" in text else (text if text.startswith("Chunk ID") else "")
    m = _EXIT_HEADER_RE.search(header)
    if m:
        return int(m.group(1)), "output header"
    return None, ""


def _codex_extras(lines: list[dict], meta: dict) -> dict:
    notes: list[str] = []
    # --- tool calls and results
    calls: list[str] = []  # call ids (web searches get a made-up one)
    outputs: dict[str, str | None] = {}
    output_order: list[str] = []
    web_status: dict[str, str | None] = {}
    event_status: dict[str, tuple[bool, str]] = {}  # call id -> (is_error, source)
    for n, o in enumerate(lines):
        t, p = o.get("type"), o.get("payload")
        if not isinstance(p, dict):
            continue
        pt = p.get("type")
        if t == "response_item":
            if pt in ("function_call", "custom_tool_call", "local_shell_call"):
                calls.append(p.get("call_id") or p.get("id") or f"{pt}-{n}")
            elif pt == "web_search_call":
                cid = p.get("id") or f"web_search_call-{n}"
                calls.append(cid)
                web_status[cid] = p.get("status")
            elif pt in ("function_call_output", "custom_tool_call_output"):
                cid = p.get("call_id") or f"{pt}-{n}"
                outputs[cid] = _codex_output_text(p.get("output"))
                output_order.append(cid)
        elif t == "event_msg":
            if pt == "exec_command_end" and p.get("call_id") and isinstance(p.get("exit_code"), int):
                event_status[p["call_id"]] = (p["exit_code"] != 0, "exec_command_end")
            elif pt == "patch_apply_end" and p.get("call_id") and isinstance(p.get("success"), bool):
                event_status[p["call_id"]] = (not p["success"], "patch_apply_end")
            elif pt == "mcp_tool_call_end" and p.get("call_id") and isinstance(p.get("result"), dict):
                res = p["result"]
                is_err = "Err" in res or (isinstance(res.get("Ok"), dict) and res["Ok"].get("isError") is True)
                event_status[p["call_id"]] = (is_err, "mcp_tool_call_end")
            elif pt == "item_completed" and isinstance(p.get("item"), dict) and p["item"].get("type") == "CommandExecution":
                item = p["item"]
                if isinstance(item.get("exit_code"), int):
                    event_status[item.get("id")] = (item["exit_code"] != 0, "item_completed")
                elif item.get("status") in ("completed", "failed"):
                    event_status[item.get("id")] = (item["status"] == "failed", "item_completed")
    errors = unknown = 0
    sources: dict[str, int] = {}
    plain_failures = 0
    for cid in output_order:
        if cid in event_status:
            is_err, src = event_status[cid]
        else:
            code, src = _codex_output_exit(outputs.get(cid))
            if code is None:
                unknown += 1
                txt = (outputs.get(cid) or "").strip().lower()
                if txt.startswith(("patch rejected", "error", "failed")):
                    plain_failures += 1
                continue
            is_err = code != 0
        sources[src] = sources.get(src, 0) + 1
        errors += is_err
    for cid, st in web_status.items():
        if st is None:
            unknown += 1
        else:
            errors += st != "completed"
            sources["web_search_call status"] = sources.get("web_search_call status", 0) + 1
    n_results = len(output_order) + len(web_status)
    if sources:
        notes.append("tool status from " + ", ".join(f"{k} ({v})" for k, v in sorted(sources.items())))
    if unknown:
        notes.append(f"{unknown} tool result(s) with no recorded exit code or status (NULL, not counted as errors)")
    if plain_failures:
        notes.append(f"docs vs file: {plain_failures} result(s) whose text plainly reports a failure (e.g. 'patch rejected: "
                     "empty patch') carry no exit code, so by the documented rule their status is NULL, not error")
    unanswered = [c for c in calls if c not in outputs and c not in web_status]
    if unanswered:
        notes.append(f"{len(unanswered)} tool call(s) without an output")

    # --- status from task events
    last_task = None
    for o in lines:
        p = o.get("payload")
        if o.get("type") == "event_msg" and isinstance(p, dict) and p.get("type") in ("task_started", "task_complete", "turn_aborted"):
            last_task = p
    stop_reason = None
    if last_task is None:
        last_item = next((o["payload"] for o in reversed(lines)
                          if o.get("type") == "response_item" and isinstance(o.get("payload"), dict)), None)
        ends_on_text = bool(last_item and last_item.get("type") == "message" and last_item.get("role") == "assistant")
        status = "succeeded" if ends_on_text else "running"
        notes.append("no task events (0.39): status from whether the rollout ends on the model's text")
    elif last_task["type"] == "task_complete":
        if last_task.get("error"):
            status = "failed"
            err = last_task["error"]
            stop_reason = (err.get("codex_error_info") if isinstance(err, dict) else None) or str(err)
        else:
            status = "succeeded"
    elif last_task["type"] == "turn_aborted":
        status, stop_reason = "cancelled", last_task.get("reason")
    else:
        status = "running"
    started_tasks = sum(1 for o in lines if isinstance(o.get("payload"), dict) and o["payload"].get("type") == "task_started")
    ended_tasks = sum(1 for o in lines if isinstance(o.get("payload"), dict) and o["payload"].get("type") in ("task_complete", "turn_aborted"))
    if started_tasks > ended_tasks:
        notes.append(f"{started_tasks - ended_tasks} task(s) started and never ended (task_complete / turn_aborted)")

    # --- final answer: model steps are the output items between two inputs
    steps: list[dict] = []
    cur = None
    for o in lines:
        t, p = o.get("type"), o.get("payload")
        if t == "compacted":
            cur = None
            continue
        if t != "response_item" or not isinstance(p, dict):
            continue
        pt = p.get("type")
        is_input = pt in ("function_call_output", "custom_tool_call_output") or (
            pt == "message" and p.get("role") in ("user", "developer", "system"))
        if is_input:
            cur = None
            continue
        if cur is None:
            cur = {"texts": [], "tools": 0, "searches": 0, "phases": []}
            steps.append(cur)
        if pt == "message" and p.get("role") == "assistant":
            txt = "".join(c.get("text", "") for c in p.get("content") or [] if isinstance(c, dict) and c.get("type") in ("output_text", "text"))
            if txt.strip():
                cur["texts"].append(txt)
                cur["phases"].append(p.get("phase"))
        elif pt in ("function_call", "custom_tool_call", "local_shell_call"):
            cur["tools"] += 1
        elif pt == "web_search_call":
            cur["searches"] += 1
    final = None
    final_phase = None
    for st in reversed(steps):
        if st["tools"]:
            break
        if st["texts"]:
            final = "\n\n".join(st["texts"])
            final_phase = st["phases"]
            if len(st["texts"]) > 1:
                notes.append("judgement: the final step holds several assistant messages, joined with a blank line")
            break
    last_phase_final = next((o["payload"] for o in reversed(lines) if o.get("type") == "response_item"
                             and isinstance(o.get("payload"), dict) and o["payload"].get("type") == "message"
                             and o["payload"].get("role") == "assistant"), None)
    if final is None and last_phase_final and last_phase_final.get("phase") == "final_answer":
        notes.append("docs vs file: the last assistant message is marked phase 'final_answer' but a tool call follows it, "
                     "so by the documented rule there is no final answer")
    def _norm(x):  # the sanitiser writes "[REDACTED_<KIND> len=N sha=H]": compare len and sha only
        x = (x or "").strip()
        m = re.fullmatch(r"\[REDACTED_\w+ (len=\d+ sha=\w+)\]", x)
        return m.group(1) if m else x
    if last_task is not None and last_task.get("type") == "task_complete" and "last_agent_message" in last_task:
        lam = last_task.get("last_agent_message")
        if (lam or None) != (final or None) and _norm(lam) != _norm(final):
            notes.append(f"docs vs file: task_complete.last_agent_message ({str(lam)[:60]!r}) differs from the final answer "
                         f"the documented rule gives ({str(final)[:60]!r})")
    if final is not None and final_phase and any(ph not in (None, "final_answer") for ph in final_phase):
        notes.append(f"docs vs file: the documented final answer is an assistant message of phase {final_phase}")

    # --- times: start = session_meta's timestamp, else the first line; the end is not documented
    started = _ts(meta.get("timestamp")) or next((_ts(o.get("timestamp")) for o in lines if _ts(o.get("timestamp"))), None)
    all_ts = [_ts(o.get("timestamp")) for o in lines if _ts(o.get("timestamp"))]
    ended = all_ts[-1] if all_ts else None
    notes.append("judgement: docs/formats.md does not say when a Codex run ends: ended_at = the rollout's last line")
    if all_ts and max(all_ts) != ended:
        notes.append(f"the latest timestamp ({_iso(max(all_ts))}) is not on the last line")
    status = _abandon(status, max(all_ts) if all_ts else None, notes)

    models = [o["payload"].get("model") for o in lines if o.get("type") == "turn_context" and isinstance(o.get("payload"), dict) and o["payload"].get("model")]
    model = models[0] if models else None
    if len(set(models)) > 1:
        notes.append(f"judgement: run model = the first turn_context's (the model changed: {sorted(set(models))})")
    return {
        "tool_calls": len(calls),
        "tool_results": n_results,
        "tool_errors": errors,
        "tool_status_unknown": unknown,
        "status": status,
        "stop_reason": stop_reason,
        "final_answer": final,
        "started_at": _iso(started),
        "ended_at": _iso(ended),
        "wall_seconds": _wall(started, ended),
        "model": model,
        "provider": meta.get("model_provider") or None,
        "_notes": notes,
    }


# ---- Gemini CLI


def _gemini_text(content) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return content["text"]
    return ""


def _gemini_header(path: pathlib.Path) -> dict:
    try:
        if path.suffix == ".json":
            doc = json.loads(path.read_text(encoding="utf-8"))
            return {k: doc.get(k) for k in ("startTime", "lastUpdated")}
        lines = _read_jsonl(path)
        head = {k: lines[0].get(k) for k in ("startTime", "lastUpdated")} if lines else {}
        for o in lines[1:]:
            if isinstance(o.get("$set"), dict) and o["$set"].get("lastUpdated"):
                head["lastUpdated"] = o["$set"]["lastUpdated"]
        return head
    except (OSError, json.JSONDecodeError, UnicodeDecodeError):
        return {}


def _gemini_extras(path: pathlib.Path, messages: list[dict]) -> dict:
    notes: list[str] = []
    gem = [m for m in messages if m.get("type") == "gemini"]
    tool_calls = sum(len(m.get("toolCalls") or []) for m in gem)
    statuses = [tc.get("status") for m in gem for tc in (m.get("toolCalls") or []) if isinstance(tc, dict)]
    errors = sum(1 for s in statuses if s in ("error", "cancelled"))
    unknown = sum(1 for s in statuses if s not in ("success", "error", "cancelled"))
    if unknown:
        notes.append(f"{unknown} tool call(s) with a status other than success/error/cancelled (not counted as errors)")
    if not tool_calls and any(_gemini_text(m.get("content")).startswith("[Function Response") for m in messages if m.get("type") == "user"):
        notes.append("file: no toolCalls recorded although the session plainly ran tools (a '[Function Response: …]' user "
                     "message, and SOURCE.txt: probably pruned by the uploader) -> tool counts are what the file records, 0")
    elif not tool_calls:
        notes.append("file: no toolCalls recorded though the answers describe reading and editing files (SOURCE.txt: "
                     "probably pruned by the uploader) -> tool counts are what the file records, 0")
    # one message holding tool calls of several responses
    for m in gem:
        tss = sorted({tc.get("timestamp") for tc in m.get("toolCalls") or [] if isinstance(tc, dict) and tc.get("timestamp")})
        if len(tss) > 1:
            notes.append(f"docs vs file: gemini message {str(m.get('id'))[:8]} carries {len(m['toolCalls'])} tool calls stamped "
                         f"{tss[0]} .. {tss[-1]} (sequential calls that needed each other's results, i.e. several model "
                         "responses) under ONE tokens record: docs say each gemini message is one model response")
    # --- status from the last message
    last = messages[-1] if messages else None
    stop_reason = None
    if last is None:
        status = "running"
    elif last.get("type") == "gemini" and _gemini_text(last.get("content")).strip() and not last.get("toolCalls"):
        status = "succeeded"
    elif last.get("type") == "error":
        status, stop_reason = "failed", _gemini_text(last.get("content")) or None
    elif last.get("type") == "info" and _gemini_text(last.get("content")).strip() == "Request cancelled.":
        status, stop_reason = "cancelled", "Request cancelled."
    else:
        status = "running"
    # --- final answer
    final = None
    for m in reversed(gem):
        if m.get("toolCalls"):
            break
        txt = _gemini_text(m.get("content"))
        if txt.strip():
            final = txt
            break
    # --- times: the docs name each message's and tool call's timestamp
    ts_all = []
    for m in messages:
        if _ts(m.get("timestamp")):
            ts_all.append(_ts(m.get("timestamp")))
        for tc in m.get("toolCalls") or []:
            if isinstance(tc, dict) and _ts(tc.get("timestamp")):
                ts_all.append(_ts(tc.get("timestamp")))
    started = min(ts_all) if ts_all else None
    ended = max(ts_all) if ts_all else None
    notes.append("judgement: docs/formats.md does not define a Gemini run's start and end: started_at/ended_at = the "
                 "earliest/latest message or tool-call timestamp")
    head = _gemini_header(path)
    st, lu = _ts(head.get("startTime")), _ts(head.get("lastUpdated"))
    if st and started and st != started:
        notes.append(f"the recording's startTime {_iso(st)} differs from its first message ({_iso(started)})")
    if lu and ended and lu != ended:
        notes.append(f"the recording's lastUpdated {_iso(lu)} differs from its last message/tool call ({_iso(ended)})")
    status = _abandon(status, max([x for x in (ended, lu) if x], default=None), notes)
    models = [m.get("model") for m in gem if m.get("model")]
    if len(set(models)) > 1:
        notes.append(f"judgement: run model = the first gemini message's (the model changed mid-session: "
                     f"{list(dict.fromkeys(models))})")
    return {
        "tool_calls": tool_calls,
        "tool_results": tool_calls,
        "tool_errors": errors,
        "tool_status_unknown": unknown,
        "status": status,
        "stop_reason": stop_reason,
        "final_answer": final,
        "started_at": _iso(started),
        "ended_at": _iso(ended),
        "wall_seconds": _wall(started, ended),
        "model": models[0] if models else None,
        "provider": "google",
        "_notes": notes,
    }


# --------------------------------------------------------------------------------------------

READERS = {
    "claude-code-viewer": read_claude_code,
    "spotter-real-sessions": read_claude_code,
    "codex-cli": read_codex,
    "gemini-cli": read_gemini,
}


def truths(folder_path: pathlib.Path) -> dict[str, dict]:
    """run_id -> truth dict for one of the four folders (dispatch on the folder's name)."""
    folder_path = pathlib.Path(folder_path)
    try:
        reader = READERS[folder_path.name]
    except KeyError:
        raise KeyError(f"oracle A has no reader for folder {folder_path.name!r}; it knows {sorted(READERS)}") from None
    return reader(folder_path)


def status_table(root: pathlib.Path | None = None) -> str:
    """The part-2 table: run_id, tool_calls, tool_results, tool_errors, status, wall_seconds, model."""
    root = pathlib.Path(root) if root else pathlib.Path(__file__).parent / "fixtures" / "realdata"
    head = ("folder", "run_id", "tool_calls", "tool_results", "tool_errors", "status", "wall_seconds", "model")
    rows = [head]
    for name in READERS:
        for rid, t in sorted(truths(root / name).items()):
            rows.append((name, rid, str(t["tool_calls"]), str(t["tool_results"]), str(t["tool_errors"]), t["status"],
                         "None" if t["wall_seconds"] is None else f"{t['wall_seconds']:.3f}", str(t["model"])))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    return "\n".join("  ".join(c.rjust(w) if 2 <= i <= 4 or i == 6 else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
                     for r in rows)


if __name__ == "__main__":  # pragma: no cover - manual sanity run
    import sys

    if "--status" in sys.argv:
        print(status_table())
        sys.exit(0)
    root = pathlib.Path(__file__).parent / "fixtures" / "realdata"
    rows = []
    for name in READERS:
        for rid, t in sorted(truths(root / name).items()):
            rows.append(f"{name:22} {rid:60} {t['calls']:5} {str(t['low_usd']):>12} {str(t['high_usd']):>12}")
    print("\n".join(rows))
    sys.exit(0)
