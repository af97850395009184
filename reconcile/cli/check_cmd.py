"""``reconcile check``: run the invariant checks and report what they found, and what they could not judge."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reconcile.analyses.coverage import require_runs
from reconcile.checks import Scope, load_checks, run_checks, select_checks, write_junit
from reconcile.money import plural
from reconcile.checks.runner import SHOWN
from reconcile.checks.written import write_findings
from reconcile.errors import BadInput
from reconcile.sheets import Column, Sheet
from reconcile.errors import ExitCode
from reconcile.cli.root import app
from reconcile.cli.options import ChecksDirOption, Output, SetOption, Source, Window, grouped
from reconcile.sheets import json_rows
from reconcile.cli.render import console, fitted_table, output


@app.command("check")
@grouped
def check_command(
    only: Annotated[list[str] | None, typer.Option("--only", help="Run only this check (repeatable).")] = None,
    times: Window = Window(),
    agent: Annotated[str | None, typer.Option("--agent", help="Report only this agent's runs.")] = None,
    checks_dir: ChecksDirOption = None,
    setting: SetOption = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Also write JUnit XML to this file.")] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when an error-severity check fails.")] = False,
    findings_to: Annotated[Path | None, typer.Option(
        "--findings-to", metavar="DIR",
        help="Write every finding as a Parquet dataset in DIR (findings/ and summary.json; a previous one there is "
             "replaced), by the engine where it computes them; only the counts and each check's first findings "
             "come back to be printed. Every run is judged afresh.")] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Say, check by check, which runs each could "
                                          "not judge and why (--json always does).")] = False,
    given: Output = Output(),
    source: Source = Source(),
) -> None:
    """Run every invariant check; exit 1 when one at error severity finds a violation.

    Reads the store without changing it (or, with --from-parquet DIR, an export; with --engine
    spark, on Apache Spark). A store, or a --since/--until window, with no runs is an error
    (exit 2), never a pass. --csv and --parquet carry one row per finding.
    Example: reconcile check --since 2026-11-28 --junit findings.xml
    """
    config, path = source.configured(setting)
    if findings_to is not None and (given.csv or given.parquet is not None):
        raise BadInput("--findings-to writes every finding already; --csv and --parquet would list them again "
                       "(use --json for the counts, or neither)")
    scope = Scope(times.since, times.until, agent)
    checks = select_checks(load_checks(checks_dir), only)
    with source.reading(path=path) as engine:  # checks read all the data: some judge a run against history
        require_runs(engine, times, str(source.from_parquet or path))
        if findings_to is None:
            report = run_checks(engine, checks, scope, config=config, record=False)
        else:
            report = write_findings(findings_to, lambda table: run_checks(engine, checks, scope, config=config,
                                                                           record=False, findings_to=table))
    if junit:
        write_junit(report, junit)
    if not given.as_table:
        sheet = findings_sheet(report)  # JSON's findings are the CSV's rows, under the same names
        output(sheet, given, json_data={**report.to_json(), "findings": json_rows(sheet)})
    else:
        print_report(report, verbose)
    if report.has_errors and not exit_zero:
        raise typer.Exit(ExitCode.FINDINGS)


FINDING_COLUMNS = [Column("check", "check"), Column("severity", "severity"), Column("outcome", "outcome"),
                   Column("run_id", "run"), Column("step", "step", "count"), Column("detail", "detail"),
                   # where to look: the run's file and its step's line (or record) there
                   Column("file", "file", wide=True), Column("line", "line", "count", wide=True)]


def print_not_judged(results, verbose: bool = False, indent: str = "") -> None:
    """What the checks could not judge: a few lines (one a format, one a shared reason), or with ``verbose`` one a check."""
    if verbose:
        for result in results:
            if result.not_judged:
                console.print(f"{indent}{result.name}: not judged for {result.not_judged_text()}")
        return
    partial = sum(1 for result in results if result.not_judged)
    if partial:  # one line: the reasons are behind -v (and in the morning report)
        console.print(f"{indent}{plural(partial, 'check')} could not judge every run: reconcile check -v says why, "
                      "check by check")


def findings_sheet(report) -> Sheet:
    """One row per finding, with its check's severity and the outcome its thresholds gave."""
    rows = [{"check": r.name, "severity": r.severity, "outcome": r.outcome, "run_id": f.run_id, "step": f.step,
             "detail": f.detail, "file": f.file, "line": f.line} for r in report.results for f in r.findings]
    return Sheet(FINDING_COLUMNS, rows, title="Findings")


# A check's findings a terminal shows (and all that come back when they are written with --findings-to); a
# store of thousands of runs can have thousands, and a table that long is read by no one (and took seconds to
# lay out). --csv, --json and --junit carry every finding.
SHOWN_FINDINGS = SHOWN


def print_report(report, verbose: bool = False) -> None:
    """Each failing check's findings, then what could not be judged (one line per check with ``verbose``), then a
    summary."""
    for result in report.results:
        if not result.failures:
            continue
        level = result.outcome if result.outcome != "pass" else f"{result.severity}, passes its thresholds"
        if result.thresholds:  # configured: say which ones decided it
            level += f"; {result.thresholds}"
        # the invariant in words behind -v: the name, the count and the remedy are what to act on
        title = f"{result.name} ({level}): {plural(result.failures, 'violation')}" + (
            f" — {result.invariant}" if verbose else "")
        # the step's line in its run's file (the run's first line for a finding on the whole run): what to open
        rows = [[f.run_id or "", "" if f.step is None else f.step, "" if getattr(f, "line", None) is None else f.line,
                 f.detail]
                for f in result.findings[:SHOWN_FINDINGS]]
        console.print(fitted_table(["run", "step", "line", "detail"], rows, title=title, right={"step", "line"},
                                   ids={"run"}))
        more = result.failures - len(rows)
        if more > 0 and report.findings_to is not None:
            console.print(f"  … and {more:,} more of this check's findings, every one in {report.findings_to}")
        elif more > 0:
            console.print(f"  … and {more:,} more of this check's findings: "
                          f"reconcile check --only {result.name} --csv (or --json) lists every one")
        console.print(f"  remedy: {result.remedy}")
    print_not_judged(report.results, verbose)
    for name, by in report.disabled:
        console.print(f"{name}: switched off ({by})")
    errors = sum(r.failures for r in report.results if r.outcome == "error")
    warnings = sum(r.failures for r in report.results if r.outcome == "warn")
    failing = [r for r in report.results if r.outcome != "pass"]
    partial = sum(1 for r in report.results if r.not_judged)
    console.print(f"{len(report.results)} check(s) ran over {report.runs} run(s), {len(failing)} failing: "
                  f"{errors} error finding(s), {warnings} warning(s)"
                  + (f"; {partial} check(s) could not judge every run" if partial else "")
                  + ("" if failing else " — every invariant holds where it could be judged"))
    if report.kept:
        console.print(f"{plural(report.kept, 'verdict')} reused from an earlier check (their runs' files, the "
                      "configuration and the prices are unchanged); every other run was judged afresh")
