"""``reconcile check``: run the invariant checks and report what they found."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import store
from ..checks import Scope, load_checks, parse_moment, run_checks, select_checks, write_junit
from ..checks.settings import parse_assignments
from ..errors import ExitCode
from . import app
from .options import DEFAULT_DB_PATH, DbOption, JsonOption
from .render import console, print_json, table


@app.command("check")
def check_command(
    only: Annotated[list[str] | None, typer.Option("--only", help="Run only this check (repeatable).")] = None,
    since: Annotated[str | None, typer.Option("--since", help="Report runs started at or after this date/time (UTC).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Report runs started before this time, or on or before this date.")] = None,
    agent: Annotated[str | None, typer.Option("--agent", help="Report only this agent's runs.")] = None,
    checks_dir: Annotated[list[Path] | None, typer.Option("--checks-dir", help="A folder of your own .sql checks (repeatable).")] = None,
    setting: Annotated[list[str] | None, typer.Option("--set", help="Override a check setting, KEY=VALUE (repeatable).")] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML to this file.")] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when an error-severity check fails.")] = False,
    json_out: JsonOption = False,
    db: DbOption = DEFAULT_DB_PATH,
) -> None:
    """Run every invariant check; exit 1 when one at error severity finds a violation.

    Example: reconcile check --since 2026-11-28 --junit findings.xml
    """
    scope = Scope(parse_moment(since), parse_moment(until, end_of_day=True), agent)
    checks = select_checks(load_checks(checks_dir), only)
    with store.connect(db) as con:
        report = run_checks(con, checks, scope, parse_assignments(setting or []))
    if junit:
        write_junit(report, junit)
    if json_out:
        print_json(report.to_json())
    else:
        _print_report(report)
    if report.has_errors and not exit_zero:
        raise typer.Exit(ExitCode.FINDINGS)


def _print_report(report) -> None:
    for result in report.results:
        if not result.failures:
            continue
        title = f"{result.name} ({result.severity}): {result.failures} violation(s) — {result.invariant}"
        rows = [[f.run_id or "", "" if f.step is None else f.step, f.detail] for f in result.findings]
        console.print(table(["run", "step", "detail"], rows, title=title, right={"step"}))
        console.print(f"  remedy: {result.remedy}", markup=False)
    failing = [r for r in report.results if r.failures]
    errors = sum(r.failures for r in failing if r.severity == "error")
    warnings = sum(r.failures for r in failing if r.severity == "warn")
    console.print(f"{len(report.results)} check(s) ran, {len(failing)} failing: {errors} error finding(s), "
                  f"{warnings} warning(s)" + ("" if failing else " — all invariants hold"), markup=False)
