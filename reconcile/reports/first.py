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
        found_on = [runs.get(run_id, {}) for run_id in ids]
        exact = [run.get("cost_micros") for run in found_on]
        highs = [run.get("cost_high_micros") for run in found_on]
        # the spend at stake by the one rule: exact where every run's cost is, else a range, else at least its floor
        items.append({"name": result.name, "outcome": result.outcome, "invariant": result.invariant,
                      "remedy": result.remedy, "findings": result.failures, "runs": len(ids),
                      "buckets": sum(1 for f in result.findings if not f.run_id),
                      "spend_micros": None if None in exact else sum(exact),
                      "spend_low_micros": sum(run.get("cost_low_micros") or 0 for run in found_on),
                      "spend_high_micros": None if None in highs else sum(highs)})
    return sorted(items, key=lambda i: (i["outcome"] != "error", -i["spend_low_micros"], -i["runs"], i["name"]))


# How many checks the "fix first" list names (the findings below list every one).
FIX_FIRST = 5
