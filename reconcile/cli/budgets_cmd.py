"""``reconcile budgets``: ceilings from evidence, stop-reason rates, latency and size percentiles."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from reconcile.analyses.budgets import budget_report, emit, latency_and_size, stop_reason_rates
from reconcile.analyses.ceilings import UNITS
from reconcile.errors import BadInput, ExitCode
from reconcile.analyses.replay import from_budgets, replay
from reconcile.store.status import STATUSES
from reconcile.cli.root import app
from reconcile.money import plural
from reconcile.sheets import json_rows
from reconcile.analyses.ceiling_sheet import SHOWN_CEILING, ceilings_sheet
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
                                                     "shares one budget: its runs' totals).")] = "run",
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
    elif output(sheet := ceilings_sheet(report, scope.describe()), given,
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
        console.print(f"ALERT {alert['group']}: {alert['status']} is {alert['share']:.1%} of {plural(alert['runs'], 'run')}, "
                      f"above {alert['rate']:.1%}")
