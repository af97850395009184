"""A hand-written, dated price table for the independent oracles in test_oracles.py.

Dollars per million tokens (= micro-dollars per token), typed in from the providers' public list
prices — NOT read from reconcile, genai-prices or the sample-night generator. Each entry says the
day its price applies from and where it was taken from.

Buckets: ``input`` (uncached input), ``cache_read``, ``cache_write_5m``, ``cache_write_1h``,
``output``. A bucket a provider does not charge separately is priced at the input price (OpenAI
bills no cache write: a write is ordinary input).

``tier`` is a long-context tier: when a request's total input (all four input buckets) is ABOVE
``above`` tokens, every token of that request is billed at the tier's prices.
"""

from __future__ import annotations

from decimal import Decimal as D

PRICES = {
    # https://www.anthropic.com/pricing (Claude API), https://docs.claude.com/en/docs/about-claude/pricing
    # Claude Sonnet 4.5, released 2025-09-29: $3 in, $15 out; cache read 0.1x, 5-minute write
    # 1.25x, 1-hour write 2x. Prompts over 200K input tokens: $6 in, $22.50 out (same multipliers).
    "claude-sonnet-4-5": [
        {
            "from": "2025-09-29",
            "source": "anthropic.com/pricing",
            "input": D("3"),
            "cache_read": D("0.30"),
            "cache_write_5m": D("3.75"),
            "cache_write_1h": D("6"),
            "output": D("15"),
            "tier": {
                "above": 200_000,
                "input": D("6"),
                "cache_read": D("0.60"),
                "cache_write_5m": D("7.50"),
                "cache_write_1h": D("12"),
                "output": D("22.50"),
            },
        }
    ],
    # Claude Haiku 4.5, released 2025-10-15: $1 in, $5 out; cache read $0.10, 5m write $1.25,
    # 1h write $2. No long-context tier.
    "claude-haiku-4-5": [
        {
            "from": "2025-10-15",
            "source": "anthropic.com/pricing",
            "input": D("1"),
            "cache_read": D("0.10"),
            "cache_write_5m": D("1.25"),
            "cache_write_1h": D("2"),
            "output": D("5"),
        }
    ],
    # https://openai.com/api/pricing, https://platform.openai.com/docs/pricing
    # GPT-5 mini, released 2025-08-07: $0.25 in, $0.025 cached in, $2 out. No cache-write charge.
    "gpt-5-mini": [
        {
            "from": "2025-08-07",
            "source": "openai.com/api/pricing",
            "input": D("0.25"),
            "cache_read": D("0.025"),
            "cache_write_5m": D("0.25"),
            "cache_write_1h": D("0.25"),
            "output": D("2"),
        }
    ],
    # GPT-4o mini, released 2024-07-18: $0.15 in, $0.075 cached in (prompt caching from 2024-10-01), $0.60 out.
    "gpt-4o-mini": [
        {
            "from": "2024-07-18",
            "source": "openai.com/api/pricing",
            "input": D("0.15"),
            "cache_read": D("0.075"),
            "cache_write_5m": D("0.15"),
            "cache_write_1h": D("0.15"),
            "output": D("0.60"),
        }
    ],
    # https://mistral.ai/pricing: Mistral Large, $2 in, $6 out; no prompt cache is billed.
    "mistral-large": [
        {
            "from": "2024-11-18",
            "source": "mistral.ai/pricing",
            "input": D("2"),
            "cache_read": D("2"),
            "cache_write_5m": D("2"),
            "cache_write_1h": D("2"),
            "output": D("6"),
        }
    ],
}
