"""``reconcile cost`` and ``reconcile cost project``: what the runs cost, and what they would cost."""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated

import typer

from reconcile.analyses.costs import BUCKETS, SOURCE_TEXT, cost_report, run_count_lines
from reconcile.analyses.coverage import coverage
from reconcile.errors import BadInput
from reconcile.money import amount_text, left_out, share_text
from reconcile.analyses.projection import Inputs, fit, projection_sheet, projection_table
from reconcile.money import NONE_COMPLETED
from reconcile.sheets import MISSING_AS, Column, Sheet, every_key, in_dollars, json_rows
from reconcile.when import TIME_GROUPS, use_zone
from reconcile.cli.root import app
from reconcile.cli.options import CostSourceOption, Output, Source, Store, WideOption, Window, grouped
from reconcile.cli.render import console, empty_window, output, sheet_table

cost_app = typer.Typer(help="What the runs cost, and what they would cost.", no_args_is_help=False)
app.add_typer(cost_app, name="cost")


def _pct(share: float | None) -> str:
    return "" if share is None else f"{share:.1%}"


COST_COLUMNS = [
    Column("cost_micros", "cost", "money", unknown="unknown"),
    # a cost known only between bounds (some calls' cache split unknown): the table says it in "left out of the cost"
    Column("cost_low_micros", "cost at least", "money", wide=True, export_only=True),
    Column("cost_high_micros", "cost at most", "money", wide=True, export_only=True),
    Column("left_out", "not in the cost", table_only=True),  # CSV and JSON: unpriced_tokens, … as figures
    Column("harness_sourced_micros", "of it, from the harness's records", "money", wide=True),
    Column("harness_sourced_runs", "harness runs", "count", wide=True), Column("priced_micros", "at reconcile's prices", "money", wide=True),
    Column("uncached_cost_micros", "uncached", "money"), Column("savings_micros", "saved by cache", "money"),
    Column("cache_hit_rate", "hit rate", "share"), Column("catalogue_tax_tokens", "tool description tokens", "count", wide=True),
    # the tool descriptions (schemas) sent with every call: the name the finance report gives the same figure
    Column("catalogue_tax_micros", "tool descriptions", "money"), Column("catalogue_tax_share", "their share", "share"),
    Column("harness_difference_micros", "harness − reconcile", "signed_money", wide=True),
    Column("cost_per_completed_task_micros", "per completed task", "money", wide=True),
    Column("no_task_completed", "none completed", "bool", wide=True, export_only=True),
]
# Declared, not read off the rows: a bucket nobody recorded (SWE-agent) is null in JSON and empty in CSV, never absent.
_BUCKET_COLUMNS = [Column(bucket, bucket.replace("_", " "), "count", unknown="unknown", wide=True, export_only=True)
                   for bucket in BUCKETS]
TASK_COLUMNS = [
    Column("agent", "agent"), Column("task_class", "task class"), Column("model", "model"),
    Column("limits", "limits"), Column("runs", "runs", "count"), Column("success_rate", "success", "share"),
    # the group's whole spend: named so that it is never read as a task's cost, the figure beside it
    Column("cost_micros", "spend", "money", unknown="unknown"),
    Column("cost_per_completed_task_micros", "per completed task", "money", unknown="unknown"),
    Column("no_task_completed", "none completed", "bool", wide=True, export_only=True),
]


def _not_recorded(group: dict) -> dict[str, str]:
    """A group none of whose runs records its tool catalogue: its tax is "not recorded", not unknown or $0; a group
    whose runs completed no task: its cost per completed task is "none completed", not unknown."""
    keys = ("catalogue_tax_tokens", "catalogue_tax_micros", "catalogue_tax_share")
    words = {} if group.get("catalogue_recorded", True) else dict.fromkeys(keys, "not recorded")
    if group.get("no_task_completed"):
        words["cost_per_completed_task_micros"] = NONE_COMPLETED
    return words


def _task_rows(report: dict) -> list[dict]:
    return [{**row, MISSING_AS: _not_recorded(row)} for row in report["cost_per_completed_task"]]


def _left_out(group: dict) -> str:
    """What a group's cost is not exact for ("9 calls without usage, …"), in the same words as everywhere else."""
    return "" if group.get("cost_micros") is not None else ", ".join(left_out(group))


def cost_sheet(report: dict, by: str, zone: str, source: str, window: str = "all time") -> Sheet:
    """A row a group, money in micro-dollars; the total under them in the table, never a row of the CSV.

    Every figure of a group is a column (the less-read ones ``wide``), so CSV carries what JSON does.
    """
    rows, total = [[{**g, "left_out": _left_out(g), MISSING_AS: _not_recorded(g)} for g in groups]
                   for groups in (report["groups"], [report["total"]])]
    columns = [Column("key", by), Column("runs", "runs", "count"), Column("model_calls", "calls", "count"), *COST_COLUMNS,
               *_BUCKET_COLUMNS]
    zone_note = f", days in {zone}" if by in TIME_GROUPS else ""
    return Sheet(every_key(columns, [*rows, *total]), rows, title=f"Cost, {window} ({zone}; source: {SOURCE_TEXT[source]}{zone_note})",
                 zone=zone, totals=total, headline=("runs", "cost_micros"))


def cost_json(report: dict, sheet: Sheet) -> dict:
    """``cost --json``: the groups as the CSV has them (same keys, dollars), the total apart, every other section."""
    total = Sheet(sheet.columns, sheet.totals)
    tasks = Sheet(every_key(TASK_COLUMNS, report["cost_per_completed_task"]), _task_rows(report))
    return {**in_dollars(report), "groups": json_rows(sheet), "total": json_rows(total)[0],
            "cost_per_completed_task": json_rows(tasks)}


@cost_app.callback(invoke_without_command=True)
@grouped
def cost_command(
    ctx: typer.Context,
    by: Annotated[str, typer.Option("--by", help="Group by day, week, month, agent, model, task_class, run or tree (the root of an agent tree).")] = "model",
    scope: Window = Window(),
    cost_source: CostSourceOption = "auto",
    given: Output = Output(),
    wide: WideOption = False,
    source: Source = Source(),
) -> None:
    """What the runs cost: cached vs uncached, tool descriptions sent with every call, cost per completed task, waste.

    --csv and --parquet carry a row a group (money in exact dollars, no total row); --json the same rows under
    the same names, the total apart ("total"), and every other section.
    Example: reconcile cost --by agent --since 7d
    """
    if ctx.invoked_subcommand is not None:
        return
    with source.reading(scope) as engine:
        use_zone(engine, scope.zone)
        found = coverage(engine, scope, source.described)
        report = cost_report(engine, by, scope, cost_source)
    sheet = cost_sheet(report, by, scope.zone, cost_source, scope.describe())
    if not found.within:
        return empty_window(found, sheet, given, json_data=cost_json(report, sheet))
    if not output(sheet, given, json_data=cost_json(report, sheet), wide=wide):
        return None
    for line in run_count_lines(report, by, found):
        console.print(line)
    title = (f"Cost per completed task, {scope.describe()} (spend / succeeded tasks; a run and its sub-agents are one "
             "task)")
    console.print(sheet_table(Sheet(TASK_COLUMNS, _task_rows(report), title=title, drop_first=("limits", "runs"),
                                    headline=("cost_per_completed_task_micros", "success_rate")), wide))
    waste = report["spend_on_failed_stalled_budget_stopped"]
    if not waste["runs"]:
        console.print("Spend on failed, stalled and budget- or time-stopped runs: none (no such runs)")
    else:
        console.print(f"Spend on failed, stalled and budget- or time-stopped runs ({waste['runs']}): "
                      f"{amount_text(waste['cost_micros'], waste['cost_low_micros'], waste['cost_high_micros'])} "
                      f"({share_text(waste)} of all spend)")
    unfinished = report["spend_on_cancelled_abandoned"]
    if unfinished["runs"]:  # stopped by a person or left unfinished: beside the waste, not in it
        console.print(f"Spend on cancelled and abandoned runs ({unfinished['runs']}): "
                      f"{amount_text(unfinished['cost_micros'], unfinished['cost_low_micros'], unfinished['cost_high_micros'])}"
                      f" ({share_text(unfinished)} of all spend)")
    unpriced = sorted({m for g in report["groups"] for m in g["unpriced_models"]})
    if unpriced:
        console.print(f"warning: no price for {', '.join(unpriced)}: their calls' cost is unknown (never counted as "
                      "$0). Add a price: reconcile prices add FILE (see docs/costs.md).")
    sources = ", ".join(" ".join(str(v) for v in (s["source"], s["source_version"]) if v is not None)
                        for s in report["prices"])
    console.print(f"Prices: {sources or 'none'}")
    return None


FIT_COLUMNS = [
    Column("agent", "agent"), Column("runs", "runs", "count"), Column("prefix_tokens", "first input", "count"),
    Column("catalogue_tokens", "catalogue", "count"), Column("growth_tokens", "growth / turn", "count"),
    Column("output_tokens", "output / turn", "count"), Column("input_price", "input $/Mtok", "decimal"),
    Column("output_price", "output $/Mtok", "decimal"), Column("cache_read_multiplier", "read ×", "decimal"),
    Column("cache_write_multiplier", "write ×", "decimal"), Column("success_rate", "success", "share"),
    Column("observed_mean_micros", "observed mean cost / run", "money4"),
]


def _decimal(option: str, text: str) -> Decimal:
    try:
        value = Decimal(text.strip())
    except ArithmeticError:
        raise BadInput(f"{option} {text!r} is not a number; give a decimal such as {option} 2.5") from None
    if not value.is_finite() or value < 0:
        raise BadInput(f"{option} {text!r} must be a finite number of zero or more, e.g. {option} 2.5")
    return value


def _turns(text: str | None) -> list[int] | None:
    if text is None:
        return None
    try:
        counts = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise BadInput(f"--turns {text!r}: give whole numbers separated by commas, e.g. --turns 3,5,10") from None
    if not counts or min(counts) < 1 or max(counts) > 100_000:
        raise BadInput(f"--turns {text!r}: give turn counts from 1 to 100,000, e.g. --turns 3,5,10")
    return counts


@cost_app.command("project")
@grouped
def project_command(
    prefix: Annotated[int, typer.Option(min=0, help="Static prefix tokens sent every turn (system prompt + catalogue).")] = 9000,
    catalogue: Annotated[int, typer.Option(min=0, help="Of the prefix, the tool catalogue's tokens.")] = 7500,
    task: Annotated[int, typer.Option(min=0, help="Task tokens.")] = 400,
    growth: Annotated[int, typer.Option(min=0, help="History tokens added per completed turn.")] = 1650,
    output_tokens: Annotated[int, typer.Option("--output", min=0, help="Output tokens per turn.")] = 250,
    input_price: Annotated[str, typer.Option(help="Input price, dollars per million tokens.")] = "2",
    output_price: Annotated[str, typer.Option(help="Output price, dollars per million tokens.")] = "10",
    cache_read: Annotated[str, typer.Option(help="Cache read price as a multiple of the input price.")] = "0.10",
    cache_write: Annotated[str, typer.Option(help="Cache write price as a multiple of the input price.")] = "1.25",
    success_rate: Annotated[str, typer.Option(help="Share of runs that complete their task.")] = "0.72",
    turns: Annotated[str | None, typer.Option(help="Turn counts to project, comma-separated. Default 3,5,10,20,40; "
                                                   "with --fit, each agent's median and p99.")] = None,
    fit_runs: Annotated[bool, typer.Option("--fit", help="Derive the inputs per agent from the runs in the store.")] = False,
    given: Output = Output(),
    source: Store = Store(),
) -> None:
    """Project cost by turn count, cached and uncached, per completed task.

    Example: reconcile cost project --turns 3,5,10 --success-rate 0.8
    """
    counts = _turns(turns)
    if fit_runs:
        with source.reading() as engine:
            fitted = fit(engine, counts)
        rows = [{"agent": a["agent"], "runs": a["runs"], **a["inputs"], "observed_mean_micros":
                 None if a["observed_mean_cost_usd"] is None else int(a["observed_mean_cost_usd"] * 1_000_000)}
                for a in fitted]
        sheet = Sheet(FIT_COLUMNS, rows, title="Inputs fitted per agent from its runs (medians)")
        # --json: each agent's row as the CSV has it, and its projection by turns
        projected = [{**row, "rows": agent["rows"]} for row, agent in zip(json_rows(sheet), fitted)]
        if output(sheet, given, json_data=projected):
            for agent in fitted:
                console.print(sheet_table(projection_sheet(agent["rows"], Decimal(str(agent["inputs"]["success_rate"])),
                                                           title=f"{agent['agent']}: projected cost by turns")))
        return None
    inputs = Inputs(prefix, catalogue, task, growth, output_tokens, _decimal("--input-price", input_price),
                    _decimal("--output-price", output_price), _decimal("--cache-read", cache_read),
                    _decimal("--cache-write", cache_write), _decimal("--success-rate", success_rate))
    if not 0 < inputs.success_rate <= 1:
        raise BadInput(f"--success-rate {success_rate!r} must be a share above 0 and at most 1, e.g. 0.72")
    rows = projection_table(inputs, counts or [3, 5, 10, 20, 40])
    output(projection_sheet(rows, inputs.success_rate), given, json_data=rows)
    return None
