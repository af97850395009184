"""``reconcile replay``: what candidate limits or a loop detector would have done to past runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reconcile.errors import BadInput
from reconcile.analyses.replay import as_run, from_file, from_options, replay
from reconcile.analyses.replay.render import replay_sheet, text_lines
from reconcile.cli.root import app
from reconcile.cli.options import CostSourceOption, Output, Source, WideOption, Window, grouped
from reconcile.sheets import in_dollars
from reconcile.cli.render import console, output
from reconcile.when import use_zone


@app.command("replay")
@grouped
def replay_command(
    set_values: Annotated[list[str] | None, typer.Option(
        "--set", help="A candidate limit, KEY=VALUE: max_steps, max_tokens, max_prompt_tokens, max_completion_tokens, "
                      "max_wall_seconds, max_cost_usd, loop_detector, loop_limit, loop_window, wrap_up. LABEL:KEY=VALUE "
                      "makes a candidate of its own, compared side by side (repeatable).")] = None,
    detector: Annotated[list[str] | None, typer.Option(
        "--detector", metavar="NAME[:LIMIT[:WINDOW]]",
        help="A loop detector to try, each a candidate of its own: results_in_a_row (LIMIT identical tool results "
             "in a row), calls_anywhere (one step's calls LIMIT times anywhere in the run), calls_window (one call "
             "LIMIT times among the last WINDOW calls), or all three (repeatable); docs/replay.md.")] = None,
    limits: Annotated[list[Path] | None, typer.Option(
        "--limits", metavar="FILE", help="A limits file as budgets --emit writes it (toml, yaml, python), per group "
                                         "(repeatable: each a candidate).")] = None,
    base: Annotated[str, typer.Option(
        "--base", help="own: a run keeps its own limits where the candidate sets none; none: the candidate alone.")] = "own",
    as_run_too: Annotated[bool, typer.Option(
        "--as-run", help="Also replay each run's own limits: every fence stop should be found where it happened.")] = False,
    by: Annotated[str, typer.Option("--by", help="Group by agent, task_class or model (and read a limits file's "
                                                 "groups as such).")] = "agent",
    runs: Annotated[bool, typer.Option("--runs", help="With --json, --csv or --parquet: a row per run and "
                                                      "candidate instead of per group.")] = False,
    scope: Window = Window(),
    cost_source: CostSourceOption = "auto",
    given: Output = Output(),
    wide: WideOption = False,
    source: Source = Source(),
) -> None:
    """Replay candidate limits over past runs: which it would have stopped, where, what it saves and costs.

    Each run is walked as a fence walks it: every budget checked before each model call (steps, tokens, prompt
    and completion tokens, wall clock, spend), and the loop detector after each tool result or call.
    Per group: runs stopped earlier, successes lost (with their ids and step), spend saved on runs that failed
    anyway and spend lost on successes cut, steps and minutes saved, the new stop-reason mix, and cost per
    completed task before and after. With no candidate, the ceilings reconcile budgets recommends.

    Example: reconcile replay --set max_steps=16 --set max_cost_usd=0.50 --detector calls_window
    """
    config, path = source.configured()
    candidates = from_options(set_values or [], detector or [], base)
    candidates += [from_file(file, base) for file in limits or []]
    for candidate in candidates:
        if candidate.by and candidate.by != by:
            raise BadInput(f"--limits {candidate.origin}: its groups are by {candidate.by} (its first line says so); "
                           f"replay it with --by {candidate.by}")
    if as_run_too:
        candidates.insert(0, as_run())
    with source.reading(path=path) as engine:
        use_zone(engine, scope.zone)
        report = replay(engine, candidates or None, by, scope, config, cost_source, runs=runs)
    if output(replay_sheet(report, runs), given, json_data=in_dollars(report), wide=wide):
        for line in text_lines(report):
            console.print(line, markup=False, highlight=False)
