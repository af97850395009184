"""The bootstrap interval of a small group's p99, in code that runs wherever the group's rows are.

Standard library only, on purpose: on Spark this module is sent to the executors by value (pickled
with the function, ``SparkEngine.per_group``), so computing an interval there needs no reconcile
installed on them — the SQL commands need nothing there either.
"""

from __future__ import annotations

import math
import random

BOOTSTRAP_RESAMPLES = 1000


def quantile_cont(sorted_values: list[float], q: float) -> float:
    """Linear interpolation between the nearest ranks — what DuckDB's quantile_cont computes."""
    position = (len(sorted_values) - 1) * q
    low, high = math.floor(position), math.ceil(position)
    return sorted_values[low] + (position - low) * (sorted_values[high] - sorted_values[low])


def bootstrap_p99(values: list[float], resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> tuple[float, float]:
    """A 95 % interval for the p99 by resampling the runs with replacement (seeded: reproducible)."""
    rng = random.Random(seed)
    estimates = sorted(quantile_cont(sorted(rng.choices(values, k=len(values))), 0.99) for _ in range(resamples))
    return quantile_cont(estimates, 0.025), quantile_cont(estimates, 0.975)


def p99_interval(group) -> dict:
    """One group's interval from its rows (an Arrow table: ``key``, ``run_id``, ``steps`` of its succeeded runs):
    the steps taken in run order, so the seeded resampling draws what it draws on every engine."""
    steps = [float(s) for _, s in sorted(zip(group.column("run_id").to_pylist(), group.column("steps").to_pylist()))]
    low, high = bootstrap_p99(steps) if len(steps) >= 2 else (None, None)
    return {"key": group.column("key")[0].as_py(), "low": low, "high": high}


# the columns p99_interval returns, as Spark DDL
P99_INTERVAL = "key string, low double, high double"
