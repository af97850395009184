"""``reconcile cost``, ``reconcile cost project``, ``reconcile prices add``, ``reconcile reprice``."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Annotated

import typer

from .. import pricing, store
from ..checks import parse_moment
from ..costs import SOURCE_TEXT, cost_report
from ..errors import BadInput
from ..money import described, usd
from ..projection import Inputs, fit, markdown, projection_table
from ..reprice import reprice
from . import app
from .options import ConfigOption, CostSourceOption, DbOption, JsonOption, configured
from .render import console, print_json, table

cost_app = typer.Typer(help="What the runs cost, and what they would cost.", no_args_is_help=False)
prices_app = typer.Typer(help="The prices costs are computed with.", no_args_is_help=True)
app.add_typer(cost_app, name="cost")
app.add_typer(prices_app, name="prices")


def _usd(micros: int | None, signed: bool = False) -> str:
    return usd(micros, signed=signed, unknown="")


def _pct(share: float | None) -> str:
    return "" if share is None else f"{share:.1%}"


def _from_harness(group: dict) -> str:
    if not group["harness_sourced_runs"]:
        return ""
    return f"{usd(group['harness_sourced_micros'])} ({group['harness_sourced_runs']} run(s))"


@cost_app.callback(invoke_without_command=True)
def cost_command(
    ctx: typer.Context,
    by: Annotated[str, typer.Option("--by", help="Group by day, agent, model, task_class or run.")] = "model",
    since: Annotated[str | None, typer.Option("--since", help="Runs started at or after this date/time (UTC).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Runs started before this time, or on or before this date.")] = None,
    cost_source: CostSourceOption = "auto",
    json_out: JsonOption = False,
    config_file: ConfigOption = None,
    db: DbOption = None,
) -> None:
    """What the runs cost: cached vs uncached, catalogue tax, cost per completed task, waste.

    Example: reconcile cost --by agent --since 2026-11-28
    """
    if ctx.invoked_subcommand is not None:
        return
    with store.connect(configured(config_file, db)[1], read_only=True) as con:
        report = cost_report(con, by, parse_moment(since), parse_moment(until, end_of_day=True), cost_source)
    if json_out:
        return print_json(report)
    rows = [[g["key"], g["runs"], g["model_calls"], described(g), _from_harness(g), _usd(g["priced_micros"]),
             _usd(g["uncached_cost_micros"]), _usd(g["savings_micros"]), _pct(g["cache_hit_rate"]),
             f"{g['catalogue_tax_tokens']:,}", _usd(g["catalogue_tax_micros"]), _pct(g["catalogue_tax_share"]),
             _usd(g["harness_difference_micros"], signed=True)] for g in [*report["groups"], report["total"]]]
    columns = [by, "runs", "calls", "cost", "of it, harness-reported", "ours", "uncached", "saved by cache",
               "hit rate", "catalogue tok", "catalogue tax", "tax share", "harness − ours"]
    console.print(table(columns, rows, right=set(columns[1:]), title=f"Cost (source: {SOURCE_TEXT[cost_source]})"))
    tasks = [[r["agent"], r["task_class"], r["model"], r["limits"], r["runs"], _pct(r["success_rate"]),
              usd(r["cost_micros"]), usd(r["cost_per_completed_task_micros"])] for r in report["cost_per_completed_task"]]
    console.print(table(["agent", "task class", "model", "limits", "runs", "success", "cost", "per completed task"],
                        tasks, title="Cost per completed task (total cost / success rate)",
                        right={"runs", "success", "cost", "per completed task"}))
    waste = report["spend_on_failed_stalled_budget_stopped"]
    if not waste["runs"]:
        console.print("Spend on failed, stalled and budget- or time-stopped runs: none (no such runs)")
    else:
        console.print(f"Spend on failed, stalled and budget- or time-stopped runs ({waste['runs']}): "
                      f"{usd(waste['cost_micros'])}{'' if waste['complete'] else ' + unpriced'} "
                      f"({_pct(waste['share']) or 'unknown share'} of all known spend)")
    unpriced = sorted({m for g in report["groups"] for m in g["unpriced_models"]})
    if unpriced:
        console.print(f"warning: no price for {', '.join(unpriced)}: their calls' cost is unknown (never counted as "
                      "$0). Add a price: reconcile prices add FILE (see docs/costs.md).")
    sources = ", ".join(f"{s['source']} {s['source_version']}" for s in report["prices"])
    console.print(f"Prices: {sources or 'none'}")
    return None


@cost_app.command("project")
def project_command(
    prefix: Annotated[int, typer.Option(help="Static prefix tokens sent every turn (system prompt + catalogue).")] = 9000,
    catalogue: Annotated[int, typer.Option(help="Of the prefix, the tool catalogue's tokens.")] = 7500,
    task: Annotated[int, typer.Option(help="Task tokens.")] = 400,
    growth: Annotated[int, typer.Option(help="History tokens added per completed turn.")] = 1650,
    output: Annotated[int, typer.Option(help="Output tokens per turn.")] = 250,
    input_price: Annotated[str, typer.Option(help="Input price, dollars per million tokens.")] = "2",
    output_price: Annotated[str, typer.Option(help="Output price, dollars per million tokens.")] = "10",
    cache_read: Annotated[str, typer.Option(help="Cache read price as a multiple of the input price.")] = "0.10",
    cache_write: Annotated[str, typer.Option(help="Cache write price as a multiple of the input price.")] = "1.25",
    success_rate: Annotated[str, typer.Option(help="Share of runs that complete their task.")] = "0.72",
    turns: Annotated[str, typer.Option(help="Turn counts to project, comma-separated.")] = "3,5,10,20,40",
    fit_runs: Annotated[bool, typer.Option("--fit", help="Derive the inputs per agent from the runs in the store.")] = False,
    json_out: JsonOption = False,
    config_file: ConfigOption = None,
    db: DbOption = None,
) -> None:
    """Project cost by turn count, cached and uncached, per completed task.

    Example: reconcile cost project --turns 3,5,10 --success-rate 0.8
    """
    if fit_runs:
        with store.connect(configured(config_file, db)[1], read_only=True) as con:
            fitted = fit(con)
        if json_out:
            return print_json(fitted)
        for agent in fitted:
            console.print(f"{agent['agent']} ({agent['runs']} runs; inputs fitted from them: {agent['inputs']}); "
                          f"observed mean cost per run ${agent['observed_mean_cost_usd']:.4f}")
            console.print(markdown(agent["rows"], Decimal(str(agent["inputs"]["success_rate"]))))
        return None
    try:
        counts = [int(t) for t in turns.split(",") if t.strip()]
        inputs = Inputs(prefix, catalogue, task, growth, output, Decimal(input_price), Decimal(output_price),
                        Decimal(cache_read), Decimal(cache_write), Decimal(success_rate))
    except (ValueError, ArithmeticError) as exc:
        raise BadInput(f"a projection input is not a number ({exc}); e.g. --turns 3,5,10 --input-price 2") from exc
    if not counts or min(counts) < 1 or not 0 < inputs.success_rate <= 1:
        raise BadInput("--turns needs positive whole numbers and --success-rate a share in (0, 1].")
    rows = projection_table(inputs, counts)
    if json_out:
        return print_json(rows)
    console.print(markdown(rows, inputs.success_rate))
    return None


@prices_app.command("add")
def prices_add_command(
    file: Annotated[Path, typer.Argument(help="CSV or TOML: provider, model, from, input, output, cache_read, "
                                              "cache_write_5m, cache_write_1h (dollars per million tokens).")],
    config_file: ConfigOption = None,
    db: DbOption = None,
) -> None:
    """Load price overrides (negotiated rates, models genai-prices lacks); they win over the snapshot.

    Example: reconcile prices add negotiated.csv
    """
    with store.connect(configured(config_file, db)[1], create=False) as con:
        count = pricing.load_overrides(con, file.resolve())
        pricing.resolve(con)
    console.print(f"{count} price(s) loaded from {file}; costs now use them where they match.")


@app.command("reprice")
def reprice_command(
    as_of: Annotated[str | None, typer.Option("--as-of", help="Price the same usage with the snapshot's prices of this date.")] = None,
    prices: Annotated[Path | None, typer.Option("--prices", help="Price the same usage with this file's prices only.")] = None,
    json_out: JsonOption = False,
    config_file: ConfigOption = None,
    db: DbOption = None,
) -> None:
    """The same usage under other prices, and the difference per model.

    Example: reconcile reprice --as-of 2026-01-01
    """
    try:
        day = dt.date.fromisoformat(as_of) if as_of else None
    except ValueError as exc:
        raise BadInput(f"--as-of {as_of!r} is not a date like 2026-01-01") from exc
    with store.connect(configured(config_file, db)[1], read_only=True) as con:
        result = reprice(con, day, prices.resolve() if prices else None)
    if json_out:
        return print_json(result)
    rows = [[m["model"], m["steps"], _usd(m["cost_micros"]), _usd(m["repriced_micros"]), _usd(m["difference_micros"], signed=True),
             m["repriced_as"] or "(no price)"] for m in result["models"]]
    console.print(table(["model", "steps", "now", "repriced", "difference", "priced as"], rows,
                        right={"steps", "now", "repriced", "difference"}))
    return None


@app.command("usage")
def usage_command(
    by: Annotated[str, typer.Option("--by", help="Group by day, hour, model, api_key, workspace or project.")] = "day",
    json_out: JsonOption = False,
    config_file: ConfigOption = None,
    db: DbOption = None,
) -> None:
    """The three-way match: what the provider billed, what the journals say, what the ledger counted.

    Example: reconcile usage --by model
    """
    from ..usage import usage_report

    with store.connect(configured(config_file, db)[1], read_only=True) as con:
        report = usage_report(con, by)
    if json_out:
        return print_json(report)
    def money(group, key):  # a row whose model has no price leaves the dollars unknown, never $0
        return usd(group[key]) + (" + unpriced" if group["unpriced_rows"] and group[key] is not None else "")

    rows = [[g["key"], f"{g['provider_tokens'] or 0:,}", f"{g['journal_tokens'] or 0:,}",
             "" if g["ledger_tokens"] is None else f"{g['ledger_tokens']:,}", _pct(g["coverage_tokens"]),
             f"{g['unexplained_tokens'] or 0:,}", money(g, "unexplained_micros"), f"{g['phantom_tokens'] or 0:,}",
             money(g, "phantom_micros"), _pct(g["coverage_usd"])] for g in [*report["groups"], report["total"]]]
    columns = [by, "provider tokens", "journal tokens", "ledger tokens", "coverage", "unexplained tokens",
               "unexplained $", "phantom tokens", "phantom $", "coverage $"]
    console.print(table(columns, rows, right=set(columns[1:])))
    if report["phantom_runs"]:
        console.print(f"Phantom calls come from runs: {', '.join(report['phantom_runs'][:20])}")
    return None
