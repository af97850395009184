"""``reconcile runs``: one row a run, to find the failed, the costly and the long ones without SQL."""

from __future__ import annotations

from typing import Annotated

import typer

from reconcile.analyses.coverage import coverage
from reconcile.analyses.runs import SORTS, list_runs, runs_summary
from reconcile.when import use_zone
from reconcile.cli.root import app
from reconcile.cli.options import CostSourceOption, Output, Store, WideOption, Window, grouped
from reconcile.cli.render import console, empty_window, output


@app.command("runs")
@grouped
def runs_command(
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
                                                       "run at its root (any format; seed 001's shared budget).")] = False,
    cost_source: CostSourceOption = "auto",
    given: Output = Output(),
    wide: WideOption = False,
    source: Store = Store(),
) -> None:
    """List the runs, one row each: status, stop reason, start, wall time, steps, tokens and cost.

    Example: reconcile runs --status failed --since yesterday --sort cost -n 10
    """
    with source.reading() as engine:
        use_zone(engine, scope.zone)
        found = coverage(engine, scope)
        sheet = list_runs(engine, scope, status, agent, sort, limit, fold_subagents, cost_source, trees)
    if not found.within:
        return empty_window(found, sheet, given)
    if output(sheet, given, wide=wide):
        for line in runs_summary(sheet.rows, found):
            console.print(line)
