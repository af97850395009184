"""``reconcile watch``: follow the journals while the harness writes them; alert on a rate within seconds."""

from __future__ import annotations

import json
import re
import signal
import threading
from datetime import datetime, timedelta
from pathlib import Path
from typing import Annotated

import typer

from reconcile.cli.options import Store, grouped
from reconcile.cli.render import LiteralConsole, console
from reconcile.cli.root import app
from reconcile.errors import BadInput

_DURATION = re.compile(r"(\d{1,6})(s|m|h)")  # bounded digits, one unit: linear
_UNITS = {"s": 1, "m": 60, "h": 3600}


def duration(text: str, option: str) -> float:
    """``90s``, ``30m``, ``1h`` (or plain seconds) as seconds."""
    match = _DURATION.fullmatch(text.strip())
    if match:
        return int(match.group(1)) * _UNITS[match.group(2)]
    if text.strip().isdigit() and len(text.strip()) <= 6:
        return float(text.strip())
    raise BadInput(f"{option} {text!r}: give a duration such as 90s, 30m or 1h")


@app.command("watch")
@grouped
def watch_command(
    paths: Annotated[list[str], typer.Argument(metavar="PATH...", help="The journals (files or folders) the harness "
                                                                      "writes, followed as they grow.")],
    interval: Annotated[str, typer.Option("--interval", help="How often to look (a duration: 2s, 10s).")] = "2s",
    window: Annotated[str, typer.Option("--window", help="The sliding window the signals are read over, against the "
                                                         "same window of the seven nights before.")] = "1h",
    stuck_after: Annotated[str, typer.Option("--stuck-after", help="A run with no wall-clock budget that is silent this "
                                                                   "long is stuck (one with a budget: past it).")] = "1h",
    on_alert: Annotated[str | None, typer.Option("--on-alert", metavar="CMD", help="Run CMD (no shell) for each alert "
                                                 "and each clearing, the event as JSON on its standard input.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object a line: alerts, clearings (notes on "
                                                          "stderr).")] = False,
    once: Annotated[bool, typer.Option("--once", help="One round, then exit (from cron, or to try a configuration).")]
    = False,
    source: Store = Store(),
) -> None:
    """Follow the journals while the harness writes them: load what is appended, judge each run when it ends,
    flag a run gone silent, and read the fleet's signals over the last hour against that hour of the nights
    before. Each crossing is said once (a restart resumes from the store); Ctrl-C or SIGTERM stop it cleanly.

    Example: reconcile watch /var/log/agents --db night.duckdb
    Example: reconcile watch /var/log/agents --json --on-alert "/usr/local/bin/page-oncall"
    """
    from reconcile.watch import Watch

    config, db = source.configured()
    every = duration(interval, "--interval")
    if not 0.1 <= every <= 3600:
        raise BadInput(f"--interval {interval!r}: give 1s to 1h")
    errors = LiteralConsole(stderr=True)

    def emit(event: dict) -> None:
        if json_out:
            print(json.dumps(event, default=str), flush=True)
        else:
            word = {"alert": "ALERT", "stuck": "STUCK", "cleared": "cleared"}[event["type"]]
            text = event.get("text") or f"{event['name']} {event['key']} (was {event.get('was')})"
            console.print(f"{datetime.fromisoformat(event['at']):%Y-%m-%d %H:%M:%S} {word} {text}")

    watcher = Watch(db, paths, emit, config=config, window=timedelta(seconds=duration(window, "--window")),
                    stuck_after=duration(stuck_after, "--stuck-after"), on_alert=on_alert,
                    notes=lambda text: errors.print(text))
    stop = threading.Event()
    previous = {s: signal.signal(s, lambda *_: stop.set()) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        if not once:
            errors.print(f"watching {len(paths)} path(s) every {interval}; signals over the last {window}; "
                         "Ctrl-C stops")
        while True:
            watcher.round()  # a stop asked for meanwhile lets the round finish: nothing half-done
            if once or stop.wait(every):
                break
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if not once:
        errors.print("stopped")
