"""``reconcile signals``: the fleet's rates night by night, beside their baselines; ``--alert`` for a cron or CI."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reconcile.cli.options import Output, Store, WideOption, Window, grouped
from reconcile.cli.render import console, output
from reconcile.cli.root import app
from reconcile.errors import BadInput, ExitCode


@app.command("signals")
@grouped
def signals_command(
    scope: Window = Window(),
    by: Annotated[str, typer.Option("--by", help="The window a signal is read over: night (noon to noon), day, "
                                                 "hour or week.")] = "night",
    only: Annotated[list[str] | None, typer.Option("--signal", help="Only this signal (repeatable).")] = None,
    baseline: Annotated[int, typer.Option("--baseline", help="How many earlier windows the baseline (their median) "
                                                             "takes.")] = 7,
    signals_dir: Annotated[list[Path] | None, typer.Option(
        "--signals-dir", help="A folder of your own signal .sql files, read beside the built-in ones (repeatable).")] = None,
    crossed_only: Annotated[bool, typer.Option("--crossed", help="Only the signals that crossed their threshold.")] = False,
    alert: Annotated[bool, typer.Option("--alert", help="Exit 1 when a signal crossed its threshold (for cron, CI, "
                                                        "a pager's script).")] = False,
    given: Output = Output(),
    wide: WideOption = False,
    source: Store = Store(),
) -> None:
    """The fleet's signals: the failure rates and percentiles to watch across the fleet, by model, tool, agent or
    task class, each beside its baseline (the median of the windows before) and its threshold.

    Shows the latest night unless --since/--until say otherwise. Thresholds are each signal's alert_if, or
    [signals.NAME] alert_if = {above = …, rise = …, min_count = …} in reconcile.toml.

    Example: reconcile signals
    Example: reconcile signals --since 7d --crossed --json
    Example: reconcile signals --alert || notify-on-call
    """
    from reconcile.checks import kept_signals
    from reconcile.checks.signal_files import load_signals
    from reconcile.checks.signals import crossed, readings, window_word
    from reconcile.sheets import Column, Sheet

    config, path = source.configured()
    signals = load_signals(signals_dir, config)
    unknown = [name for name in only or [] if name not in {s.name for s in signals}]
    if unknown:
        raise BadInput(f"--signal {unknown[0]!r} is not a signal; signals: {', '.join(s.name for s in signals)}")
    wanted = {s.name for s in signals if not only or s.name in only}
    besides = {s.beside for s in signals if s.name in wanted and s.beside}  # read, to be shown beside, not listed
    with source.reading() as engine:
        found = readings(engine, [s for s in signals if s.name in wanted | besides], by, scope, baseline, scope.zone)
        # a team's own signal kept as sums only where it promises it can be: said, for a reading that may be slow
        unkept = [(s.name, why) for s in signals if s.name in wanted and not s.builtin and s.enabled
                  and (why := kept_signals.not_kept(engine, s)) is not None]
    found = [(signal, reading) for signal, reading in found if signal.name in wanted]
    if crossed_only:
        found = crossed(found)
    else:  # what crossed first, then each signal's keys
        hits = crossed(found)
        found = hits + [sr for sr in found if not sr[1].crossed]
    rows = [reading.as_row(signal) for signal, reading in found]
    for row in rows:
        row["state"] = "ALERT" if row["crossed"] else "ok" if row["judged"] else "not judged"  # ALERT: crossed
    one_window = len({row["window"] for row in rows}) <= 1  # named in the title: no column for it
    columns = [Column("signal", "signal"), Column("window", by, wide=one_window), Column("key", "key"),
               Column("shown", "value"), Column("count", "n", "count"), Column("baseline_shown", "baseline"),
               Column("change", "change", "share", wide=True), Column("state", "state"),
               Column("why", "why", wide=True), Column("detail", "detail", wide=True),
               Column("value", "value (raw)", "number", wide=True, export_only=True),
               Column("baseline", "baseline (raw)", "number", wide=True, export_only=True)]
    shown_window = (scope.describe() if scope.since or scope.until
                    else f"the {by} of {rows[0]['window']}" if rows else f"the latest {by}")
    sheet = Sheet(columns, rows, title=f"Signals, {shown_window} ({scope.zone}); baseline: median of "
                                       f"{baseline} {window_word(by)} before", zone=scope.zone,
                  headline=("key", "shown", "count", "state"))
    hits = [row for row in rows if row["crossed"]]
    if output(sheet, given, json_data=rows, wide=wide):  # JSON: each reading whole (threshold, remedy)
        if not rows:
            console.print("No signal has observations in this window (reconcile ingest first; the per-run rates "
                          "read the verdicts reconcile check keeps).")
        else:
            console.print(f"{len(hits)} of {len(rows)} reading(s) crossed their threshold"
                          + (" (listed first)" if hits else "") + ".")
            console.print("--wide says why; --json gives each threshold and remedy.")
        for name, why in unkept:
            console.print(f"{name} is read from the steps each time, not from kept sums: {why} "
                          "(docs/signals.md, kept sums).", markup=False, highlight=False)
    if alert and hits:
        raise typer.Exit(ExitCode.FINDINGS)
