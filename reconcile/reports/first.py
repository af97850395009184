"""What the reports put first: the failing checks in the order to fix them, and amounts as finance reads them."""

from __future__ import annotations

from typing import Any

from reconcile.money import usd


def cents(micros: int | None, unknown: str = "unknown", signed: bool = False) -> str:
    """An amount for finance: dollars and cents; a real amount that rounds to no cent reads "less than a cent"
    (never "$0.00", never "-$0.00"; the per-call views keep their fractions of a cent)."""
    if micros is None:
        return unknown
    if micros and abs(micros) < 5_000:  # rounds to $0.00
        return "less than a cent"
    return usd(micros, signed=signed)


def fix_first(failing: list, runs: dict[str, dict]) -> list[dict[str, Any]]:
    """The failing checks in the order to fix them: error before warning, then the spend at stake (the cost of the
    runs it found on, known where priced), then the runs affected. A provider bucket's finding names no run: it
    counts as a bucket, its money in the finding itself."""
    items = []
    for result in failing:
        if result.outcome == "pass":
            continue
        ids = {f.run_id for f in result.findings if f.run_id}
        costs = [runs.get(run_id, {}).get("cost_micros") for run_id in ids]
        known = [c for c in costs if c is not None]
        items.append({"name": result.name, "outcome": result.outcome, "invariant": result.invariant,
                      "remedy": result.remedy, "findings": result.failures, "runs": len(ids),
                      "buckets": sum(1 for f in result.findings if not f.run_id),
                      "spend_micros": sum(known) if known else None, "spend_partial": len(known) < len(ids)})
    return sorted(items, key=lambda i: (i["outcome"] != "error", -(i["spend_micros"] or 0), -i["runs"], i["name"]))


# How many checks the "fix first" list names (the findings below list every one).
FIX_FIRST = 5
