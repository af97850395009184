"""``reconcile runs``: one row a run, to find the failed, the costly and the long ones without SQL."""

from __future__ import annotations

from typing import Annotated

import typer

from reconcile.analyses.coverage import coverage
from reconcile.analyses.runs import SORTS, list_runs, runs_summary
from reconcile.when import use_zone
from reconcile.cli.root import app
from reconcile.cli.options import CostSourceOption, Output, Store, WideOption, Window, grouped
from reconcile.cli.render import LiteralConsole, console, empty_window, output
from reconcile.errors import ExitCode


@app.command("runs")
@grouped
def runs_command(
    paths: Annotated[list[str] | None, typer.Argument(
        metavar="[PATH...]", show_default=False,
        help="Load these first, as ingest does (only what changed: an unchanged file costs a stat), then list: "
             "one command for a folder that grows, such as ~/.claude/projects.")] = None,
    status: Annotated[list[str] | None, typer.Option("--status", help="Only runs with this status (repeatable), "
                                                     "e.g. --status failed --status budget_exceeded.")] = None,
    agent: Annotated[list[str] | None, typer.Option("--agent", help="Only this agent's runs (repeatable).")] = None,
    scope: Window = Window(),
    sort: Annotated[str, typer.Option("--sort", help=f"Order by {', '.join(SORTS)} (the largest first; "
                                                     "started: the earliest first).")] = "started",
    limit: Annotated[int | None, typer.Option("-n", "--limit", help="Show only the first N runs.")] = None,
    fold_subagents: Annotated[bool, typer.Option(
        "--fold-subagents/--no-fold-subagents",
        help="One row per Claude Code session, its subagents' steps, tokens and cost folded in (as ccusage's "
             "session report).")] = True,
    trees: Annotated[bool, typer.Option("--tree", help="One row an agent tree: every sub-agent run folded into the "
                                                       "run at its root (any format; a tree that shares one budget).")] = False,
    cost_source: CostSourceOption = "auto",
    given: Output = Output(),
    wide: WideOption = False,
    source: Store = Store(),
) -> None:
    """List the runs, one row each: status, stop reason, start, wall time, steps, tokens and cost.

    Example: reconcile runs --status failed --since yesterday --sort cost -n 10
    Example: reconcile runs ~/.claude/projects --sort cost -n 10
    """
    report = _load(paths, source) if paths else None
    with source.reading() as engine:
        use_zone(engine, scope.zone)
        found = coverage(engine, scope)
        sheet = list_runs(engine, scope, status, agent, sort, limit, fold_subagents, cost_source, trees)
    if not found.within:
        empty_window(found, sheet, given)
    elif output(sheet, given, wide=wide):
        for line in runs_summary(sheet.rows, found):
            console.print(line)
    if report is not None and report.not_loaded:
        raise typer.Exit(ExitCode.BAD_INPUT)


def _load(paths: list[str], source: Store):
    """Ingest ``paths`` into the store (created if need be); say on stderr what was loaded, unless nothing was."""
    from reconcile import store
    from reconcile.cli.ingest_cmd import AsGiven, print_not_loaded, rejected_note, summary_line
    from reconcile.ingest.driver import ingest

    config, path = source.configured()
    with store.connect(path) as con:
        report = ingest(con, paths, window=config.window, abandoned_after=config.abandoned_after)
    errors = LiteralConsole(stderr=True)
    if any(f.status != "unchanged" for f in report.files) or report.forgotten:
        errors.print(summary_line(report))
    if rejected_note(report):
        errors.print(rejected_note(report))
    print_not_loaded(report, "could not be loaded (reconcile ingest -v says why); the runs of every other file "
                             "are listed.", AsGiven(paths))
    return report
