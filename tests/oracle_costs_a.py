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
"""

from __future__ import annotations

import json
import pathlib
import re
import warnings
from dataclasses import dataclass
from datetime import datetime
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
        result[run_id] = {"_calls": calls, "_fees": fees, "_notes": notes}
    for key, runs in seen_in.items():
        if len(runs) > 1:
            for r in runs:
                note = "a (message.id, requestId) also appears in another run of this folder (counted in each)"
                if note not in result[r]["_notes"]:
                    result[r]["_notes"].append(note)
    return {rid: _summarize(v["_calls"], v["_fees"], v["_notes"]) for rid, v in result.items()}


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
        result[run_id] = _summarize(calls, fees, notes)
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
        result[run_id] = _summarize(calls, [], notes)
    return result


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


if __name__ == "__main__":  # pragma: no cover - manual sanity run
    import sys

    root = pathlib.Path(__file__).parent / "fixtures" / "realdata"
    rows = []
    for name in READERS:
        for rid, t in sorted(truths(root / name).items()):
            rows.append(f"{name:22} {rid:60} {t['calls']:5} {str(t['low_usd']):>12} {str(t['high_usd']):>12}")
    print("\n".join(rows))
    sys.exit(0)
