"""``reconcile budgets``: ceilings from evidence, stop-reason rates, latency and size percentiles."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from reconcile.analyses.budgets import budget_report, emit, latency_and_size, stop_reason_rates
from reconcile.analyses.ceilings import CEILINGS, OPTIONAL, UNITS
from reconcile.errors import BadInput, ExitCode
from reconcile.analyses.replay import from_budgets, replay
from reconcile.store.status import STATUSES
from reconcile.cli.root import app
from reconcile.sheets import Column, Sheet, json_rows
from reconcile.analyses.coverage import require_runs
from reconcile.when import use_zone
from reconcile.cli.options import CostSourceOption, Output, Source, WideOption, Window, grouped
from reconcile.cli.render import console, fitted_table, output


def _alerts(pairs: list[str], rates: list[dict]) -> list[dict]:
    """STATUS=RATE: groups whose share of STATUS over the whole window is above RATE."""
    alerts = []
    for pair in pairs:
        status, sep, rate = pair.partition("=")
        if not sep or status not in STATUSES:
            raise BadInput(f"--alert-rate {pair!r}: expected STATUS=RATE with a status of {', '.join(STATUSES)}")
        try:
            limit = float(rate)
        except ValueError as exc:
            raise BadInput(f"--alert-rate {pair!r}: {rate!r} is not a share like 0.05") from exc
        totals: dict[str, list[int]] = {}
        for row in rates:
            counted = totals.setdefault(row["key"], [0, 0])
            counted[1] += row["runs"]
            counted[0] += row["runs"] if row["status"] == status else 0
        for key, (hits, runs) in sorted(totals.items()):
            if runs and hits / runs > limit:
                alerts.append({"group": key, "status": status, "share": hits / runs, "rate": limit, "runs": runs})
    return alerts


@app.command("budgets")
@grouped
def budgets_command(
    by: Annotated[str, typer.Option("--by", help="Group by agent, task_class or model.")] = "agent",
    unit: Annotated[str, typer.Option("--unit", help=f"What spends a budget: {' or '.join(UNITS)} (an agent tree "
                                                     "shares one budget, seed 001: its runs' totals).")] = "run",
    scope: Window = Window(),
    emit_style: Annotated[str | None, typer.Option("--emit", help="Print the recommended ceilings as toml, yaml or python.")] = None,
    alert_rate: Annotated[list[str] | None, typer.Option("--alert-rate", help="STATUS=RATE: exit 1 when a group's share of STATUS is above RATE (repeatable).")] = None,
    cost_source: CostSourceOption = "auto",
    given: Output = Output(),
    wide: WideOption = False,
    source: Source = Source(),
) -> None:
    """Recommend step, token, time and spend ceilings from the p99 of succeeded runs (or agent trees).

    --csv and --parquet carry the ceilings' table (a row per group and ceiling); --json carries everything.
    Example: reconcile budgets --by agent --emit toml
    """
    config, path = source.configured()
    with source.reading(path=path) as engine:
        use_zone(engine, scope.zone)
        require_runs(engine, scope, str(source.from_parquet or path))  # no ceiling from no runs: exit 2, never an empty table
        report = budget_report(engine, by, scope, cost_source, unit, config)
        rates = stop_reason_rates(engine, by, scope)
        percentiles = latency_and_size(engine, config, scope)  # every section: the same window
        replayed = None
        # a snippet to paste carries each recommendation's consequence on these runs (reconcile replay); the
        # tables leave it to `reconcile replay`, which says which runs and why (it costs as much again as budgets)
        if emit_style and unit == "run":
            candidate = from_budgets(report)
            if candidate.limits:
                replayed = {g["key"]: g for g in replay(engine, [candidate], by, scope, config,
                                                        cost_source)["candidates"][0]["groups"]}
    alerts = _alerts(alert_rate or [], rates)
    if emit_style:
        sys.stdout.write(emit(report, emit_style, replayed))  # a file to paste: as written, never folded
    elif output(sheet := ceilings_sheet(report), given,
                json_data={**report, "ceilings": json_rows(sheet), "stop_reason_rates": rates,
                           **percentiles, "alerts": alerts}, wide=wide):
        _print(report, rates, percentiles, alerts, scope.zone)
        if report["groups"] and unit == "run":
            console.print("What these ceilings would have done to these runs — which runs they stop, the successes "
                          "lost, the spend saved: reconcile replay", markup=False)
    if alerts:
        raise typer.Exit(ExitCode.FINDINGS)


def _fmt(value, digits: int = 1) -> str:
    return "" if value is None else f"{value:,.{digits}f}"


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


def ceilings_sheet(report: dict) -> Sheet:
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
    return Sheet([Column("key", report["by"]), *CEILING_COLUMNS], rows,
                 title="Ceilings from the succeeded runs (exact quantiles; runs cut while still progressing counted as "
                       "needing at least what they used)")


def _print(report, rates, percentiles, alerts, zone: str) -> None:
    for g in report["groups"]:
        for name, recommendation in g["recommendation"].items():
            if recommendation["at_least"]:
                console.print(f"  {g['key']} {SHOWN_CEILING[name]}: {recommendation['basis']}")
            if not recommendation.get("apply", True):
                console.print(f"  {g['key']}: {recommendation['not_applied']}")
        for flag in g["flags"]:
            console.print(f"  {g['key']}: {flag['flag']}: {flag['detail']}")
    latest = {}
    for row in rates:
        latest[(row["key"], row["status"])] = row
    rate_rows = [[key, status, row["day"], row["runs"], f"{row['share']:.1%}",
                  "" if row["change"] is None else f"{row['change']:+.1%}"] for (key, status), row in sorted(latest.items())]
    console.print(fitted_table(["group", "status", "day", "runs", "share", "change"], rate_rows,
                        title=f"Stop-reason rates (latest day in {zone}, change from the day before)", right={"runs", "share", "change"}))
    latency = [[r["kind"], r["what"], r["steps"], *[_fmt(q, 0) for q in r["ms_quantiles"]]] for r in percentiles["latency"]]
    console.print(fitted_table(["kind", "model / tool", "steps", "p50 ms", "p95 ms", "p99 ms"], latency,
                        title="Latency", right={"steps", "p50 ms", "p95 ms", "p99 ms"}))
    sizes = [[r["tool_name"], r["results"], _fmt(r["p99_result_tokens"], 0),
              "no bound known" if r["share_above_bound"] is None else f"{r['share_above_bound']:.1%}"]
             for r in percentiles["result_size"]]
    console.print(fitted_table(["tool", "results", "p99 result tokens", "above the bound"], sizes, title="Tool result size",
                        right={"results", "p99 result tokens", "above the bound"}))
    for alert in alerts:
        console.print(f"ALERT {alert['group']}: {alert['status']} is {alert['share']:.1%} of {alert['runs']} runs, "
                      f"above {alert['rate']:.1%}")
