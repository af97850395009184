"""Money as people read it: integer micro-dollars shown as dollars, and unknown never shown as $0.

A figure is *known* (a number), *partial* (a number, plus spend reconcile could not price) or
*unknown* (no number at all). JSON carries ``null`` for unknown; text says "unknown", or
"$1.2345 + unpriced (40,000 tokens)" for a partial sum.
"""

from __future__ import annotations

from typing import Any


def usd(micros: int | None, signed: bool = False, unknown: str = "unknown") -> str:
    """``$1.2345`` from micro-dollars; ``unknown`` for None; ``-$…`` below zero, ``+$…`` above when ``signed``.

    Rounded to four decimals first, so a tiny negative difference never prints as ``-$0.0000``.
    """
    if micros is None:
        return unknown
    dollars = round(micros / 1_000_000, 4)
    sign = "-" if dollars < 0 else "+" if signed and dollars > 0 else ""
    return f"{sign}${abs(dollars):,.4f}"


def described(row: dict[str, Any], key: str = "cost_micros") -> str:
    """A cost figure with what it leaves out: "unknown (…)", "$x + unpriced (…)", or "$x"."""
    missing = []
    if row.get("unpriced_tokens"):
        missing.append(f"{row['unpriced_tokens']:,} tokens unpriced")
    if row.get("calls_without_usage"):
        missing.append(f"{row['calls_without_usage']:,} calls without usage")
    if row.get("runs_without_cost"):
        missing.append(f"{row['runs_without_cost']:,} runs without a recorded cost")
    if row.get(key) is None:
        return "unknown" + (f" ({', '.join(missing)})" if missing else "")
    return usd(row[key]) + (f" + unpriced ({', '.join(missing)})" if missing else "")
