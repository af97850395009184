"""Money as people read it: integer micro-dollars shown as dollars, and unknown never shown as $0.

A figure is *known* (a number), *partial* (a number, plus spend reconcile could not price) or
*unknown* (no number at all). JSON carries ``null`` for unknown; text says "unknown", or
"$1.2345 + unpriced (40,000 tokens)" for a partial sum.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any


def cost_per_completed_task(spend, completed):
    """What one completed task cost: the spend divided by the tasks completed for it — a group's spend over its
    succeeded runs, or a run's projected cost over the success rate (seed 003: cost per run ÷ success rate, the
    same thing). Failed runs are paid for too, so they are in the spend and not in the divisor.

    Integer micro-dollars in, integer micro-dollars out (half up); a Decimal in, an exact Decimal out. None when
    the spend is unknown or nothing was completed.
    """
    if spend is None or not completed:
        return None
    if isinstance(spend, int) and isinstance(completed, int):
        return int((Decimal(spend) / completed).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    return Decimal(spend) / Decimal(completed)


NONE_COMPLETED = "none completed"  # what a cost per completed task reads as where runs spent and none succeeded


def none_completed(runs: int | None, completed: int | None) -> bool:
    """Runs were paid for and none completed its task: the cost per completed task is not unknown but unbounded —
    the worst a configuration can do, not missing data (so it is said in words, never as "unknown")."""
    return bool(runs) and not completed


def usd(micros: int | None, signed: bool = False, unknown: str = "unknown", places: int = 2) -> str:
    """``$1.23`` from micro-dollars (``places=4`` for a per-call figure: ``$0.0123``); ``unknown`` for None.

    ``-$…`` below zero, ``+$…`` above when ``signed``. Rounded (half up, exactly, in Decimal) before
    the sign is chosen, so no ``-$0.00`` is ever printed: an amount too small for the places is shown
    to its first significant digit (``$0.004``, ``-$0.0001``), and only a true zero reads ``$0.00``.
    """
    if micros is None:
        return unknown
    dollars = (Decimal(int(micros)) / 1_000_000).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    while not dollars and micros and places < 6:  # a real amount too small for the places: never "$0.00" for it
        places += 1
        dollars = (Decimal(int(micros)) / 1_000_000).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    sign = "-" if dollars < 0 else "+" if signed and dollars > 0 else ""
    return f"{sign}${abs(dollars):,.{places}f}"


def described(row: dict[str, Any], key: str = "cost_micros", places: int = 2,
              amount: Callable[[int], str] | None = None) -> str:
    """A cost figure with what it leaves out: "unknown (…)", "$x + unpriced (…)", "$x", or — where all it leaves
    out is the cache split of some calls whose input is known whole — "$a to $b (…)", all cached to all uncached.
    ``amount`` formats each figure (default ``usd`` to ``places``; the finance report's tables say cents)."""
    shown = amount or (lambda micros: usd(micros, places=places))
    missing = left_out(row)
    low, high = row.get(key.replace("cost_", "cost_low_")), row.get(key.replace("cost_", "cost_high_"))
    if missing and low is not None and high is not None and key == "cost_micros":
        return f"{shown(low)} to {shown(high)} ({', '.join(missing)})"
    if row.get(key) is None:
        return "unknown" + (f" ({', '.join(missing)})" if missing else "")
    return shown(row[key]) + (f" + unpriced ({', '.join(missing)})" if missing else "")


def left_out(row: dict[str, Any]) -> list[str]:
    """What a cost figure leaves out: "40,000 tokens unpriced", "3 calls without usage", … (empty: nothing)."""
    missing = []
    if row.get("unpriced_tokens"):
        missing.append(f"{row['unpriced_tokens']:,} tokens unpriced")
    if row.get("calls_without_usage"):
        missing.append(f"{row['calls_without_usage']:,} calls without usage")
    split = row.get("calls_with_unknown_split") or 0  # input known whole, its cache split not: a range
    if (row.get("calls_with_unknown_buckets") or 0) - split > 0:  # usage recorded, but a cache or output count left out
        missing.append(f"{row['calls_with_unknown_buckets'] - split:,} calls with a token bucket unknown")
    if split:
        missing.append(f"{split:,} calls' cached share unknown: all cached to all uncached")
    if row.get("runs_without_cost"):
        missing.append(f"{row['runs_without_cost']:,} runs without a recorded cost")
    return missing
