"""``reconcile report finance|morning`` and ``reconcile morning``: HTML for people, files for machines."""

from __future__ import annotations

import shlex

from pathlib import Path
from typing import Annotated

import typer

from reconcile.checks import Scope
from reconcile.analyses.coverage import require_runs
from reconcile.engines.dataset import reading
from reconcile.errors import BadInput, ExitCode, ReconcileError
from reconcile.money import amount_text, plural
from reconcile.store import DEFAULT_DB
from reconcile.reports.first import FIX_FIRST
from reconcile.morning import morning
from reconcile.reports.reporting import write_finance, write_morning
from reconcile.cli.root import app
from reconcile.cli.check_cmd import print_not_judged, print_report
from reconcile.cli.ingest_cmd import AsGiven, holds_nothing, print_not_loaded, rejected_note, remove_store, summary_line
from reconcile.cli.options import (ChecksDirOption, CostSourceOption, FromParquetOption, NightOption, SetOption, Store,
                                  Window, grouped)
from reconcile.cli.render import console

report_app = typer.Typer(help="Self-contained HTML reports that open offline.", no_args_is_help=True)
app.add_typer(report_app, name="report")
OutFile = Annotated[Path, typer.Option("--out", help="The HTML file to write.")]


@report_app.command("finance")
@grouped
def finance_command(
    out: OutFile = Path("finance.html"),
    scope: Window = Window(),
    by: Annotated[str, typer.Option("--by", help="Group spend over time by day, week or month.")] = "day",
    cost_source: CostSourceOption = "auto",
    source: Store = Store(),
    from_parquet: FromParquetOption = None,
) -> None:
    """Write the finance report: spend, cache savings, tool descriptions sent with every call, cost per completed task.

    Example: reconcile report finance --out finance.html --since 2026-11-01
    """
    _, path = source.configured()
    with reading(path, from_parquet, scope.since, scope.until) as engine:
        require_runs(engine, scope, str(from_parquet or path))
        written = write_finance(engine, out, scope, cost_source, by)
    console.print(f"wrote {written}")


@report_app.command("morning")
@grouped
def morning_report_command(
    out: OutFile = Path("morning.html"),
    night: NightOption = None,
    scope: Window = Window(),
    cost_source: CostSourceOption = "auto",
    checks_dir: ChecksDirOption = None,
    setting: SetOption = None,
    source: Store = Store(),
    from_parquet: FromParquetOption = None,
) -> None:
    """Write the morning report: the night at a glance, findings with their runs' steps, what was not judged.

    Without --since/--until it reports the latest night (noon to noon in --tz), or the one --night names:
    that night's findings and provider buckets, and a line counting the findings on earlier runs.
    --since/--until choose the runs the checks report instead (as reconcile check does).

    Example: reconcile report morning --out morning.html
    """
    if night is not None and (scope.since is not None or scope.until is not None):  # a usage error before any window
        raise BadInput("--night names a night; --since/--until name a window: give one or the other")
    config, path = source.configured(setting)
    with reading(path, from_parquet) as engine:  # not pruned: the glance compares with earlier nights
        require_runs(engine, scope, str(from_parquet or path))
        written = write_morning(engine, out, config=config, checks_dir=checks_dir, zone=scope.zone,
                                source=cost_source, scope=Scope(scope.since, scope.until), night=night)
    console.print(f"wrote {written}")


@app.command("morning")
@grouped
def morning_command(
    folder: Annotated[Path, typer.Argument(help="The night's journals and transcripts (searched recursively).")],
    usage: Annotated[list[Path] | None, typer.Option("--usage", help="A provider usage or cost export (repeatable).")] = None,
    out: Annotated[Path, typer.Option("--out", help="Where to write the reports, findings.json and findings.xml.")] = Path("reconcile-morning"),
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when an error-severity check fails.")] = False,
    night: NightOption = None,
    times: Window = Window(),
    cost_source: CostSourceOption = "auto",
    checks_dir: ChecksDirOption = None,
    setting: SetOption = None,
    source: Store = Store(),
) -> None:
    """Ingest a night, run every check, write both reports and the findings; exit as check does.

    Made for cron: no prompts, safe to run twice, no colour or progress off a terminal. It judges the
    latest night in the store (noon to noon in --tz), or the one --night names, or the runs
    --since/--until name (both reports then cover those runs). A night with no runs is an error
    (exit 2) that says what was found instead.
    Example: reconcile morning sample_runs/ --out morning/ --night 2026-11-28
    """
    config, path = source.configured(setting)
    new = not Path(path).exists()
    try:
        result = morning(path, folder, usage or [], out, config=config, checks_dir=checks_dir, source=cost_source,
                         zone=times.zone, night=night, scope=Scope(times.since, times.until))
    except ReconcileError:  # nothing loaded (an empty folder, a typo): a store this command made is not left behind
        if new and holds_nothing(Path(path)):
            remove_store(Path(path))
        raise
    console.print(summary_line(result.ingested, verbose=True))  # the night's files one by one: reconcile ingest -v
    if rejected_note(result.ingested):
        console.print(rejected_note(result.ingested))
    failing = [r for r in result.checks.results if r.outcome != "pass"]
    errors = sum(r.failures for r in failing if r.outcome == "error")
    console.print(f"{plural(len(result.checks.results), 'check')} over {plural(result.checks.runs, 'run')}"
                  f"{f' (the night of {result.night})' if result.night else ''}, {len(failing)} failing, "
                  f"{errors} error finding(s)")
    earlier = result.earlier
    if earlier and earlier["findings"]:  # the night's report leaves them out; say they are there and how to see them
        console.print(f"  and {earlier['findings']} finding(s) on {earlier['runs_with_findings']} earlier run(s): "
                      f"{earlier['command']}")
    if result.fix_first:  # the report's order: errors first, then the spend at stake, then the runs
        console.print("Fix first:")
    for n, item in enumerate(result.fix_first[:FIX_FIRST], 1):
        console.print(f"  {n}. {item['name']} ({item['outcome']}): {_at_stake(item)}")
    if len(result.fix_first) > FIX_FIRST:
        console.print(f"  … and {plural(len(result.fix_first) - FIX_FIRST, 'more failing check')}, each in the report")
    print_not_judged(result.checks.results, indent="  ")
    for name, path_written in result.files.items():
        console.print(f"{name}: {path_written}")
    console.print(_next_step(result, path))
    if result.ingested.not_loaded:  # the reports are written, but the night in them lacks these files
        print_not_loaded(result.ingested, "of the night could not be loaded, so the reports leave them out; every "
                         "other file was loaded. Fix them and run again.", AsGiven([str(folder), *map(str, usage or [])]))
        raise typer.Exit(ExitCode.BAD_INPUT)
    if result.checks.has_errors and not exit_zero:
        raise typer.Exit(ExitCode.FINDINGS)


def _at_stake(item: dict) -> str:
    """What a failing check found, as the report's "Fix first" list says it: findings, on what, the spend at stake."""
    where = [plural(item["runs"], "run")] if item["runs"] else []
    where += [plural(item["buckets"], "provider bucket")] if item["buckets"] else []
    text = plural(item["findings"], "finding") + (f" on {' and '.join(where)}" if where else "")
    if not item["runs"]:
        return text
    if item["spend_micros"] is None and not item["spend_low_micros"]:
        return text + ", their spend unknown (unpriced)"
    return text + f", {amount_text(item['spend_micros'], item['spend_low_micros'], item['spend_high_micros'])} of spend"


def _next_step(result, db: Path) -> str:
    """The command to run next: the report to open, and the run of the first finding to fix (with the store it is in,
    unless that is the default one, so the line runs as printed)."""
    first = next((f.run_id for item in result.fix_first for check in result.checks.results if check.name == item["name"]
                  for f in check.findings if f.run_id), None)
    step = f"Next: open {result.files['morning']}"
    store = "" if Path(db) == Path(DEFAULT_DB) else f" --db {shlex.quote(str(db))}"
    return step + (f", or reconcile show {shlex.quote(first)}{store} (the first run to fix)" if first
                   else " (the night at a glance)")


__all__ = ["print_report"]
