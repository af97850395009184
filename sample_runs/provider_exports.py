"""The providers' side of the sample night: usage and cost exports, as their admin APIs return them.

The fake provider records every call it answered (``Provider.record``, passed to the harness as
``RunSpec.on_call``); the exports are built from that record, not from the journals, so a call
the journals lost or a step they wrote twice shows up exactly as it would with a real bill.
Prices are genai-prices' list prices (what the provider charges).
"""

from __future__ import annotations

import json
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

from genai_prices import data_snapshot

BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output")
# How each provider names the models in its reports (dated snapshots), vs the journals' names.
REPORTED_NAME = {"claude-sonnet-4-5": "claude-sonnet-4-5-20250929", "claude-haiku-4-5": "claude-haiku-4-5-20251001",
                 "gpt-5-mini": "gpt-5-mini-2025-08-07"}
KEYS = {"anthropic": ("api_key_id", "workspace_id"), "openai": ("api_key_id", "project_id")}


class Provider:
    """Every call the providers answered, by day, model and key."""

    def __init__(self):
        self.usage: dict[tuple, dict[str, int]] = defaultdict(lambda: dict.fromkeys([*BUCKETS, "requests"], 0))

    def recorder(self, api_key_id: str, workspace_id: str, project_id: str):
        def record(answered_at: datetime, model: str, provider: str, usage: dict) -> None:
            if provider not in KEYS:
                return  # an in-house model: no provider export
            day = answered_at.astimezone(timezone.utc).date()
            row = self.usage[(provider, day, REPORTED_NAME.get(model, model), api_key_id, workspace_id, project_id)]
            for bucket in BUCKETS:
                row[bucket] += usage.get(bucket, 0)
            row["requests"] += 1
        return record


def _day_bounds(day) -> tuple[datetime, datetime]:
    start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    return start, start + timedelta(days=1)


def _price(provider: str, model: str) -> dict[str, Decimal]:
    _, info = data_snapshot.get_snapshot().find_provider_model(model, None, provider, None)
    price = info.get_prices(datetime(2026, 11, 28, tzinfo=timezone.utc))

    def base(name: str):
        value = getattr(price, name, None)
        return getattr(value, "base", value)

    source = base("input_mtok")
    write = base("cache_write_mtok") or source
    return {"input_uncached": source, "cache_read": base("cache_read_mtok") or source, "cache_write_5m": write,
            "cache_write_1h": base("cache_write_1h_mtok") or write, "output": base("output_mtok")}


def write_exports(provider: Provider, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rows = sorted(provider.usage.items())
    anthropic_pages, anthropic_costs, openai_buckets, openai_costs = [], [], [], []
    for day in sorted({key[1] for key, _ in rows}):
        start, end = _day_bounds(day)
        today = [(key, usage) for key, usage in rows if key[1] == day]
        anthropic = [(k, u) for k, u in today if k[0] == "anthropic"]
        openai = [(k, u) for k, u in today if k[0] == "openai"]
        anthropic_pages.append({"data": [{"starting_at": start.isoformat().replace("+00:00", "Z"),
                                          "ending_at": end.isoformat().replace("+00:00", "Z"), "results": [
            {"uncached_input_tokens": u["input_uncached"], "cache_read_input_tokens": u["cache_read"],
             "cache_creation": {"ephemeral_5m_input_tokens": u["cache_write_5m"],
                                "ephemeral_1h_input_tokens": u["cache_write_1h"]},
             "output_tokens": u["output"], "server_tool_use": {"web_search_requests": 0}, "api_key_id": k[3],
             "workspace_id": k[4], "model": k[2], "service_tier": "standard", "context_window": "0-200k",
             "inference_geo": "global"} for k, u in anthropic]}], "has_more": day != rows[-1][0][1], "next_page": None})
        billed: dict[tuple, dict] = {}  # the cost report groups by workspace and line item, not by API key
        for k, u in anthropic:
            total = billed.setdefault((k[2], k[4]), {b: 0 for b in u})
            for bucket, tokens in u.items():
                total[bucket] += tokens
        anthropic_costs.append({"starting_at": start.isoformat().replace("+00:00", "Z"),
                                "ending_at": end.isoformat().replace("+00:00", "Z"), "results": [
            {"currency": "USD", "amount": _cents(u[bucket] * _price("anthropic", model)[bucket] / Decimal(1_000_000)),
             "workspace_id": workspace, "description": f"{model} {name}", "cost_type": "tokens",
             "context_window": "0-200k", "model": model, "service_tier": "standard", "token_type": token_type}
            for (model, workspace), u in sorted(billed.items()) for bucket, name, token_type in (
                ("input_uncached", "input", "uncached_input_tokens"), ("cache_read", "cache read", "cache_read_input_tokens"),
                ("cache_write_5m", "cache write", "cache_creation.ephemeral_5m_input_tokens"),
                ("cache_write_1h", "cache write 1h", "cache_creation.ephemeral_1h_input_tokens"),
                ("output", "output", "output_tokens")) if u[bucket]]})
        openai_buckets.append({"object": "bucket", "start_time": int(start.timestamp()), "end_time": int(end.timestamp()),
                               "results": [
            {"object": "organization.usage.completions.result",
             "input_tokens": u["input_uncached"] + u["cache_read"],  # OpenAI's input includes cached tokens
             "output_tokens": u["output"], "num_model_requests": u["requests"], "project_id": k[5], "user_id": None,
             "api_key_id": k[3], "model": k[2], "batch": False, "input_cached_tokens": u["cache_read"],
             "input_audio_tokens": 0, "output_audio_tokens": 0} for k, u in openai]})
        openai_costs.append({"object": "bucket", "start_time": int(start.timestamp()), "end_time": int(end.timestamp()),
                             "results": [
            {"object": "organization.costs.result",
             "amount": {"value": float(u[bucket] * _price("openai", k[2])[bucket] / Decimal(1_000_000)), "currency": "usd"},
             "line_item": f"{k[2]}, {name}", "project_id": k[5]}
            for k, u in openai for bucket, name in (("input_uncached", "input"), ("cache_read", "cached input"),
                                                    ("output", "output")) if u[bucket]]})
    _write(out / "anthropic_usage_report.json", anthropic_pages)  # an array of pages
    _write(out / "anthropic_cost_report.json", {"data": anthropic_costs, "has_more": False, "next_page": None})
    _write(out / "openai_usage_completions.json", openai_buckets)  # the pages' data arrays, concatenated
    _write(out / "openai_costs.json", {"object": "page", "data": openai_costs, "has_more": False, "next_page": None})


def _cents(dollars: Decimal) -> str:
    """Anthropic's amount: a decimal string of cents ("123.45" is $1.2345)."""
    return f"{(dollars * 100).quantize(Decimal('0.000001')):f}"


def _write(path: Path, data: object) -> None:
    path.write_text(json.dumps(data, indent=1) + "\n")
