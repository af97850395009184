"""The ceilings table of ``reconcile budgets``: a row per group and ceiling, each in the ceiling's own unit.

The terminal, ``--csv``, ``--json`` (under ``ceilings``), ``--parquet`` and the notebook's ``rc.budgets()``
all read these rows, so a ceiling has one name and one unit everywhere (``max_cost_usd``, dollars).
"""

from __future__ import annotations

from reconcile.analyses.ceilings import CEILINGS, OPTIONAL
from reconcile.sheets import Column, Sheet

_UNITS = CEILINGS


# A row per ceiling: its figures are in the ceiling's own unit, which the row names (steps and tokens
# whole, seconds as seconds, money as dollars: "$9.27" in the table, 9.273578 in CSV and JSON).
UNIT_OF = {"steps": ("steps", "count"), "tokens": ("tokens", "count"), "prompt_tokens": ("tokens", "count"),
           "completion_tokens": ("tokens", "count"), "wall_seconds": ("seconds", "seconds"),
           "cost_micros": ("usd", "money4")}  # a quantile of cents: four places ("$0.0177", not "$0.02")
SET_KIND = {"cost_micros": "money"}  # a recommendation is set in whole cents (ceilings.round_figure)
SHOWN_CEILING = {**CEILINGS, "cost_micros": "max_cost_usd"}  # replay --set and --limits take max_cost_usd too

CEILING_COLUMNS = [
    Column("ceiling", "ceiling"), Column("unit", "unit", wide=True), Column("runs", "runs", "count", wide=True),
    Column("succeeded_runs", "succeeded", "count"), Column("success_rate", "success", "share", wide=True),
    Column("p50", "p50", "number", kind_of="kind", wide=True), Column("p95", "p95", "number", kind_of="kind", wide=True),
    Column("p99", "p99", "number", kind_of="kind"),
    Column("censored", "cut while progressing", "count"), Column("configured", "configured", "number", kind_of="kind"),
    Column("recommended", "recommended", "number", kind_of="set_kind"),
    Column("at_least", "at least (a lower bound)", "bool"),
    Column("would_stop", "succeeded runs it would stop", "count"), Column("would_stop_runs", "which", wide=True),
    Column("flags", "flags"),
]


def ceilings_sheet(report: dict, window: str = "all time") -> Sheet:
    """A row per group and ceiling: the succeeded runs' quantiles, the configured and the recommended value."""
    rows = []
    for g in report["groups"]:
        for name, column in _UNITS.items():
            metric, recommendation = g["metrics"][name], g["recommendation"].get(name)
            if recommendation is None and (metric["p99"] is None or name in OPTIONAL and g["configured"][name] is None):
                continue  # nothing to say, or a ceiling (seed 000's prompt or completion) the harness does not keep
            stops = (recommendation or {}).get("would_stop", {"count": 0, "runs": []})
            unit, kind = UNIT_OF[name]
            flags = [f["flag"] for f in g["flags"] if f["flag"] in ("small_sample", "answered_then_kept_going")
                     or f["flag"] == "no_budget" and name == "steps"
                     or f["flag"] == "too_tight" and column in f.get("ceilings", [])]
            if recommendation and not recommendation.get("apply", True):
                flags.insert(0, "do not apply as is")
            rows.append({"key": g["key"], "ceiling": SHOWN_CEILING[name], "unit": unit, "kind": kind,
                         "set_kind": SET_KIND.get(name, kind),
                         "runs": g["runs"], "succeeded_runs": metric.get("succeeded_runs", g["succeeded"]),
                         "success_rate": g["success_rate"], "flags": ", ".join(flags),
                         "p50": metric["p50"], "p95": metric["p95"], "p99": metric["p99"],
                         "censored": metric["censored"] or 0, "configured": g["configured"][name],
                         "recommended": recommendation["value"] if recommendation else None,
                         "at_least": bool(recommendation and recommendation["at_least"]),
                         "would_stop": stops["count"],
                         "would_stop_runs": ", ".join(stops["runs"][:5]) + (" …" if stops["count"] > 5 else "")})
    return Sheet([Column("key", report["by"]), *CEILING_COLUMNS], rows, headline=("ceiling", "p99", "configured", "recommended"),
                 title=f"Ceilings from the succeeded runs, {window} (exact quantiles; runs cut while still progressing "
                       "counted as needing at least what they used)")


