"""The morning report's fleet signals: those that crossed their threshold on the night, each with a chart of its
recent nights beside its baseline (what the report opens with)."""

from __future__ import annotations

import contextlib
from datetime import datetime
from typing import Any

from markupsafe import Markup

from reconcile import store
from reconcile.engine import Engine
from reconcile.when import Window, night_bounds


RECENT_SIGNAL_NIGHTS = 8  # the nights a crossed signal's chart shows, the report's night last


def crossed_signals(engine: Engine, config, night: str | None, zone: str) -> list[dict[str, Any]]:
    """The fleet signals that crossed their threshold on ``night``, the largest change first, each with a chart of
    its recent nights beside its baseline (what the morning report opens with)."""
    from reconcile.checks.signal_files import load_signals
    from reconcile.checks import kept_signals

    if night is None:
        return []
    since, until = night_bounds(night, zone)
    signals = load_signals(config=config)
    # a signal not kept as sums reads the priced steps of its windows: priced once for all of them
    live = any("step_view" in s.sql and kept_signals.not_kept(engine, s) for s in signals)
    with (store.frozen_views(engine) if live else contextlib.nullcontext()):
        return _crossed(engine, signals, night, since, until, zone)


def _crossed(engine: Engine, signals: list, night: str, since: datetime, until: datetime,
             zone: str) -> list[dict[str, Any]]:
    from reconcile.checks import kept_signals
    from reconcile.checks.signals import crossed, earliest_needed, observed, readings, shown
    from reconcile.reports.charts import trend_chart

    hits = crossed(readings(engine, signals, "night", Window(since, until, zone), zone=zone))
    kept = kept_signals.kept_digests(engine, signals)  # (readings has just brought their sums up to date)
    found = []
    for signal, reading in hits:
        recent = [(win, value) for win, key, _, value, *_ in observed(engine, signal, "night", kept,
                                                                      earliest_needed(night, "night", RECENT_SIGNAL_NIGHTS, zone))
                  if key == reading.key and win <= night][-RECENT_SIGNAL_NIGHTS:]
        chart = trend_chart([win for win, _ in recent], [value for _, value in recent], reading.baseline,
                            f"{signal.name}, {reading.key}: the last {len(recent)} night(s)",
                            lambda value, unit=signal.unit: shown(value, unit))
        found.append({**reading.as_row(signal), "measures": signal.measures, "chart": Markup(chart)})
    return found
