"""Kept signal sums read as the signals read from the steps (issue 60, item 2).

A ``rate`` or ``mean`` signal that promises ``kept: by run`` is read from its sums by run, key and minute
(``checks/kept_signals.py``). Every reading — by night, day, hour and week, in a zone whose offset is not whole
hours, and the watch's sliding window ending on a whole minute — must equal the same reading from the steps, in a
store that may be written (the sums kept) and in a read-only one (the sums a writer left, completed in a temporary
table), before and after a night's journal grows, another is removed and the prices change.
"""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone

import pytest

from reconcile import store
from reconcile.checks import kept_signals
from reconcile.checks.signal_files import load_signals
from reconcile.checks.signals import readings, sliding_readings
from reconcile.engine import DuckDBEngine
from reconcile.ingest.driver import ingest
from reconcile.prices import pricing
from reconcile.when import Window
from signal_nights import write_nights

pytestmark = pytest.mark.slow  # eight nights written and read a dozen ways: CI runs it (pytest -m slow)

KEPT = {"cost_per_request", "invalid_output_rate", "provider_error_rate", "tool_failure_rate"}


def _read(engine, monkeypatch, kept: bool) -> list:
    signals = load_signals()
    with monkeypatch.context() as patch:
        if not kept:
            patch.setattr(kept_signals, "prepare", lambda engine, signals: {})
        found = []
        for by, zone in (("night", "UTC"), ("day", "Asia/Kolkata"), ("hour", "UTC"), ("week", "UTC")):
            found += readings(engine, signals, by, Window(zone=zone), zone=zone)
            found += readings(engine, signals, by, Window(datetime(2026, 11, 20, tzinfo=timezone.utc),
                                                          datetime(2026, 11, 29, tzinfo=timezone.utc), zone), zone=zone)
        for now in (datetime(2026, 11, 28, 1, 0, tzinfo=timezone.utc), datetime(2026, 11, 28, 3, 17, tzinfo=timezone.utc)):
            for length in (timedelta(hours=1), timedelta(minutes=30)):
                found += sliding_readings(engine, signals, now, length)
    # a mean's sum is added in another order from sums by minute: equal to the last few bits of a double
    def close(x):
        return x if x is None else pytest.approx(x, rel=1e-12)
    return {(s.name, r.window, r.key): (r.count, close(r.value), close(r.baseline), r.crossed, r.judged)
            for s, r in found}


def test_kept_readings_equal_the_readings_from_the_steps(tmp_path, monkeypatch):
    nights = write_nights(tmp_path / "all", plant=True)
    folder = tmp_path / "night"
    folder.mkdir()
    for path in nights[:-1]:
        shutil.copy(path, folder)
    half = nights[-1].read_text().splitlines(keepends=True)
    (folder / nights[-1].name).write_text("".join(half[: len(half) // 2]))
    db = tmp_path / "s.duckdb"
    rates = tmp_path / "rates.csv"
    rates.write_text("provider,model,from,input,output,cache_read,cache_write_5m,cache_write_1h\n"
                     "anthropic,claude-sonnet-4-5,2026-01-01,6,30,0.6,7.5,12\n")
    steps = [
        lambda con: None,
        lambda con: (folder / nights[-1].name).write_text("".join(half)),  # the last night grows to its end
        lambda con: (folder / nights[0].name).unlink(),  # the first night's journal removed
        lambda con: (pricing.load_overrides(con, rates), pricing.resolve(con)),  # dearer calls: cost_per_request
    ]
    for change in steps:
        with store.connect(db) as con:
            change(con)
            ingest(con, [folder])
            engine = DuckDBEngine(con)
            assert set(kept_signals.prepare(engine, load_signals())) == KEPT
            assert con.execute("select count(*) from signal_minutes").fetchall()[0][0] > 0
            live = _read(engine, monkeypatch, kept=False)
            assert len(live) > 100 and _read(engine, monkeypatch, kept=True) == live
        with store.connect(db, read_only=True) as reader:
            assert _read(DuckDBEngine(reader), monkeypatch, kept=True) == live


def test_a_signal_without_the_promise_is_read_from_the_steps_and_says_why(tmp_path):
    with store.connect(tmp_path / "s.duckdb") as con:
        engine = DuckDBEngine(con)
        why = {s.name: kept_signals.not_kept(engine, s) for s in load_signals()}
    assert {name for name, reason in why.items() if reason is None} == KEPT
    assert why["result_size_p99"] == "its header does not promise 'kept: by run'"
    assert why["step_ceiling_use"] == "a p99 does not add up over minutes"
    assert why["tool_result_shape"] == "its header does not promise 'kept: by run'"
