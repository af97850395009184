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

    ``-$…`` below zero, ``+$…`` above when ``signed``. Rounded (half up, exactly, in Decimal) before the sign is
    chosen, so no ``-$0.00`` is ever printed. A real amount under a cent is shown to its first significant digit
    (``$0.005``, ``$0.0008``: never rounded up to a cent it did not cost), and only a true zero reads ``$0.00``.
    """
    if micros is None:
        return unknown
    return _dollars(int(micros), _places(int(micros), places), signed)


def _places(micros: int, places: int) -> int:
    """The decimal places ``micros`` is shown to: ``places``, or, for a real amount under the smallest unit those
    places show, the place of its first significant digit (``$0.0008`` for $0.00084), never more than six."""
    smallest = 10 ** (6 - places)  # in micro-dollars: $0.01 at two places
    if not micros or abs(micros) >= smallest:
        return places
    first = min(6, -(Decimal(abs(micros)) / 1_000_000).adjusted())  # 0.00084 -> 4
    if abs(_rounded(micros, first)) >= Decimal(1).scaleb(1 - first):  # rounding carried a place up: $0.000099 -> $0.0001
        first -= 1
    return max(first, places)


def _rounded(micros: int, places: int) -> Decimal:
    return (Decimal(micros) / 1_000_000).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def _dollars(micros: int, places: int, signed: bool = False) -> str:
    dollars = _rounded(micros, places)
    sign = "-" if dollars < 0 else "+" if signed and dollars > 0 else ""
    return f"{sign}${abs(dollars):,.{places}f}"


def usd_range(low: int, high: int, places: int = 2, amount: Callable[[int], str] | None = None) -> str:
    """``$a to $b``, each to the places that tell them apart: a range never prints as two equal figures (which would
    read as exact), ``$0.0011 to $0.0014`` rather than ``$0.001 to $0.001``."""
    if amount is not None:
        low_text, high_text = amount(low), amount(high)
        if low_text != high_text:
            return f"{low_text} to {high_text}"
    shown = max(_places(low, places), _places(high, places))
    while _dollars(low, shown) == _dollars(high, shown) and shown < 6:
        shown += 1
    return f"{_dollars(low, shown)} to {_dollars(high, shown)}"


def amount_text(exact: int | None, low: int | None, high: int | None, places: int = 2,
                amount: Callable[[int], str] | None = None, unknown: str = "unknown") -> str:
    """A sum of money as the one rule says it: exact (``$x``), a range where every part is bounded
    (``$a to $b``), "at least $a" where some part is unbounded, "unknown" where nothing of it is known."""
    shown = amount or (lambda micros: usd(micros, places=places))
    if exact is not None:
        return shown(exact)
    if low is not None and high is not None:
        return usd_range(low, high, places, amount)
    if low:
        return f"at least {shown(low)}"
    return unknown


def described(row: dict[str, Any], key: str = "cost_micros", places: int = 2,
              amount: Callable[[int], str] | None = None) -> str:
    """A cost figure with what it leaves out: "$x", "$a to $b (…)" (every part bounded), "at least $a (…)" (some part
    unbounded) or "unknown (…)" — never the known part alone. ``amount`` formats each figure (default ``usd`` to
    ``places``; the finance report's tables say cents). A row without the bounds' keys has only its figure."""
    low_key, high_key = key.replace("_micros", "_low_micros"), key.replace("_micros", "_high_micros")
    exact = row.get(key)
    low = row.get(low_key)
    high = row.get(high_key) if high_key in row else (exact if low_key not in row else None)
    missing = left_out(row) if exact is None else []
    text = amount_text(exact, low, high, places, amount)
    return text + (f" ({', '.join(missing)})" if missing else "")


def left_out(row: dict[str, Any]) -> list[str]:
    """Why a cost figure is not exact: "40,000 tokens unpriced", "3 calls without usage", … (empty: nothing)."""
    missing = []
    if row.get("unpriced_tokens"):
        missing.append(f"{plural(row['unpriced_tokens'], 'token')} unpriced")
    if row.get("calls_without_usage"):
        missing.append(plural(row["calls_without_usage"], "call") + " without usage")
    split = row.get("calls_with_unknown_split") or 0  # input known whole, its cache split not: a range
    if (row.get("calls_with_unknown_buckets") or 0) - split > 0:  # usage recorded, but a cache or output count left out
        missing.append(plural(row["calls_with_unknown_buckets"] - split, "call") + " with a token count unknown")
    if split:
        missing.append(plural(split, "call") + "' cached share unknown" if split > 1
                       else "1 call's cached share unknown")
    if row.get("runs_without_cost"):
        missing.append(plural(row["runs_without_cost"], "run") + " without a recorded cost")
    return missing


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``1 call``, ``3 calls`` (thousands separated)."""
    return f"{count:,} {noun if count == 1 else nouns or noun + 's'}"


def share_text(part: dict[str, Any]) -> str:
    """A share by the one rule: exact (``23.5%``), or between its bounds (``12.0% to 31.5%``) where the money it is
    a share of is not exact (``share_low``, ``share_high``)."""
    if part.get("share") is not None:
        return f"{part['share']:.1%}"
    low, high = part.get("share_low"), part.get("share_high")
    if low is None or high is None:
        return "an unknown share"
    return f"{low:.1%} to {high:.1%}" if f"{low:.1%}" != f"{high:.1%}" else f"about {low:.1%}"
