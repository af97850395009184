"""``reconcile report finance|morning`` and ``reconcile morning``: HTML for people, files for machines."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import store
from ..checks import parse_moment
from ..errors import ExitCode
from ..reporting import morning, write_finance, write_morning
from . import app
from .options import DEFAULT_DB_PATH, DbOption
from .render import console

report_app = typer.Typer(help="Self-contained HTML reports that open offline.", no_args_is_help=True)
app.add_typer(report_app, name="report")
OutFile = Annotated[Path, typer.Option("--out", help="The HTML file to write.")]


@report_app.command("finance")
def finance_command(
    out: OutFile = Path("finance.html"),
    since: Annotated[str | None, typer.Option("--since", help="Runs started at or after this date/time (UTC).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Runs started before this time, or on or before this date.")] = None,
    db: DbOption = DEFAULT_DB_PATH,
) -> None:
    """Write the finance report: spend, cache savings, catalogue tax, cost per completed task.

    Example: reconcile report finance --out finance.html --since 2026-11-01
    """
    with store.connect(db) as con:
        path = write_finance(con, out, parse_moment(since), parse_moment(until, end_of_day=True))
    console.print(f"wrote {path}", markup=False)


@report_app.command("morning")
def morning_report_command(out: OutFile = Path("morning.html"), db: DbOption = DEFAULT_DB_PATH) -> None:
    """Write the morning report: findings with their runs' steps, stop rates, budgets, coverage.

    Example: reconcile report morning --out morning.html
    """
    with store.connect(db) as con:
        path = write_morning(con, out)
    console.print(f"wrote {path}", markup=False)


@app.command("morning")
def morning_command(
    folder: Annotated[Path, typer.Argument(help="The night's journals and transcripts (searched recursively).")],
    usage: Annotated[list[Path] | None, typer.Option("--usage", help="A provider usage or cost export (repeatable).")] = None,
    out: Annotated[Path, typer.Option("--out", help="Where to write the reports, findings.json and findings.xml.")] = Path("reconcile-morning"),
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when an error-severity check fails.")] = False,
    db: DbOption = DEFAULT_DB_PATH,
) -> None:
    """Ingest a night, run every check, write both reports and the findings; exit as check does.

    Made for cron: no prompts, safe to run twice, no colour or progress off a terminal.
    Example: reconcile morning sample_runs/ --out morning/
    """
    result = morning(db, folder, usage or [], out)
    failing = [r for r in result.checks.results if r.failures]
    errors = sum(r.failures for r in failing if r.severity == "error")
    totals = result.ingested.totals
    console.print(f"ingested {totals['files']} file(s) ({totals['unchanged']} unchanged): {totals['loaded']} loaded, "
                  f"{totals['rejected']} rejected", markup=False)
    console.print(f"{len(result.checks.results)} checks, {len(failing)} failing, {errors} error finding(s)", markup=False)
    for result_check in failing:
        console.print(f"  {result_check.name} ({result_check.severity}): {result_check.failures}", markup=False)
    for name, path in result.files.items():
        console.print(f"{name}: {path}", markup=False)
    if result.checks.has_errors and not exit_zero:
        raise typer.Exit(ExitCode.FINDINGS)
