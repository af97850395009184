"""``reconcile watch`` (issue 49): alerts said once, across rounds and restarts; cleared and raised again; runs gone
silent; journals rotated, truncated, replaced, deleted or mid-line; a store another command holds; and, in real
time, an alert within 10 s of the line that caused it and a clean stop on SIGTERM."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from reconcile import store
from reconcile.ingest.driver import ingest
from reconcile.store.views import KEPT, view_query
from reconcile.journal import Journal
from reconcile.watch import Watch
from signal_nights import Clock, write_nights

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

UTC = timezone.utc


class Said:
    """What a watch printed, and the moment it believes it is."""

    def __init__(self, now: datetime):
        self.events: list[dict] = []
        self.notes: list[str] = []
        self.now = now

    def watch(self, db: Path, paths: list, **options) -> Watch:
        return Watch(db, [str(p) for p in paths], self.events.append, clock=lambda: self.now,
                     notes=self.notes.append, **options)


@pytest.fixture(scope="module")
def history(tmp_path_factory) -> Path:
    """Eight nights of journals (the last with a 529 storm for gpt-5-mini and a tool changing shape at 02:00)."""
    folder = tmp_path_factory.mktemp("watch") / "journals"
    write_nights(folder, plant=True)
    return folder


def _copy(history: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "journals"
    shutil.copytree(history, folder)
    return folder


def _alerts(events: list[dict]) -> set[tuple[str, str, str]]:
    return {(e["type"], e["name"], e["key"]) for e in events}


def test_an_alert_is_said_once_across_rounds_and_restarts(history, tmp_path):
    folder, db = _copy(history, tmp_path), tmp_path / "w.duckdb"
    said = Said(datetime(2026, 11, 28, 1, 0, tzinfo=UTC))  # the planted night, 22:00 to 01:00
    watch = said.watch(db, [folder], window=timedelta(hours=3))
    watch.round()
    assert _alerts(said.events) == {("alert", "provider_error_rate", "gpt-5-mini")}
    [event] = said.events
    assert event["baseline"] is not None and event["value"] > 0.05 and "over 2026-11-27 22:00–01:00 UTC" in event["text"]
    watch.round()
    said.watch(db, [folder], window=timedelta(hours=3)).round()  # a restart resumes from the store
    assert len(said.events) == 1
    said.now = datetime(2026, 11, 28, 5, 0, tzinfo=UTC)  # 02:00 to 05:00: the tool changed its shape at 02:00
    watch.round()
    assert _alerts(said.events[1:]) == {("alert", "tool_failure_rate", "lookup"), ("alert", "tool_result_shape", "lookup")}
    shape = next(e for e in said.events if e["name"] == "tool_result_shape")
    assert shape["detail"].startswith("$ object, $.data object") and shape["beside"]["signal"] == "tool_failure_rate"


def test_a_crossing_that_clears_and_comes_back_is_a_new_alert(history, tmp_path):
    folder, db = _copy(history, tmp_path), tmp_path / "w.duckdb"
    said = Said(datetime(2026, 11, 28, 1, 0, tzinfo=UTC))
    watch = said.watch(db, [folder], window=timedelta(hours=3))
    watch.round()
    said.now = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)  # the night is over: nothing crosses
    watch.round()
    assert [e["type"] for e in said.events] == ["alert", "cleared"]
    assert said.events[1]["name"] == "provider_error_rate" and said.events[1]["was"] == "alert"
    said.now = datetime(2026, 11, 28, 1, 0, tzinfo=UTC)
    watch.round()
    assert [e["type"] for e in said.events] == ["alert", "cleared", "alert"]
    with store.connect(db, read_only=True) as con:
        assert con.execute("select count(*), count(cleared_at) from watch_alerts").fetchall() == [(2, 1)]


def test_an_alert_a_stop_cut_off_is_said_by_the_next_round(history, tmp_path):
    folder, db = _copy(history, tmp_path), tmp_path / "w.duckdb"
    said = Said(datetime(2026, 11, 28, 1, 0, tzinfo=UTC))
    said.watch(db, [folder], window=timedelta(hours=3)).round()
    with store.connect(db) as con:  # as if the process died between writing the alert and printing it
        con.execute("update watch_alerts set delivered = false")
    said.events.clear()
    said.watch(db, [folder], window=timedelta(hours=3)).round()
    assert _alerts(said.events) == {("alert", "provider_error_rate", "gpt-5-mini")}
    said.events.clear()
    said.watch(db, [folder], window=timedelta(hours=3)).round()
    assert said.events == []


def test_on_alert_gets_each_event_as_json_on_its_standard_input(history, tmp_path):
    folder, db = _copy(history, tmp_path), tmp_path / "w.duckdb"
    hook, out = tmp_path / "hook.py", tmp_path / "got.jsonl"
    hook.write_text(f"import sys\nopen({str(out)!r}, 'a').write(sys.stdin.read())\n")
    said = Said(datetime(2026, 11, 28, 1, 0, tzinfo=UTC))
    said.watch(db, [folder], window=timedelta(hours=3), on_alert=f"{sys.executable} {hook}").round()
    [got] = [json.loads(line) for line in out.read_text().splitlines()]
    assert got["type"] == "alert" and got["name"] == "provider_error_rate" and got["key"] == "gpt-5-mini"
    broken = Said(datetime(2026, 11, 28, 1, 0, tzinfo=UTC))  # a hook that fails is said, and the watch goes on
    broken.watch(tmp_path / "b.duckdb", [folder], window=timedelta(hours=3),
                 on_alert=f"{sys.executable} -c 'import sys; sys.exit(4)'").round()
    assert broken.events and any("exited 4" in note for note in broken.notes)


def _silent_run(path: Path, budget: float | None, end: bool = False) -> datetime:
    """A run that starts, makes two calls and goes quiet; returns the time of its last line."""
    clock = Clock(datetime(2026, 12, 1, 22, 0, tzinfo=UTC))
    with Journal(path, clock=clock) as journal:
        run = journal.start_run("quiet", agent="a", limits={"max_wall_seconds": budget} if budget else {})
        for _ in range(2):
            clock.now += timedelta(seconds=10)
            run.model_step(usage={"input_uncached": 10, "output": 1})
        if end:
            run.end("done")
    return clock.now


@pytest.mark.parametrize("budget, limit", [(60.0, 60.0), (None, 3600.0)])
def test_a_run_silent_past_its_wall_clock_budget_is_stuck_once_and_clears_when_it_ends(tmp_path, budget, limit):
    journal, db = tmp_path / "j" / "agents.jsonl", tmp_path / "w.duckdb"
    journal.parent.mkdir()
    last = _silent_run(journal, budget)
    said = Said(last + timedelta(seconds=limit))  # exactly at the limit: not yet
    watch = said.watch(db, [journal.parent])
    watch.round()
    assert said.events == []
    said.now = last + timedelta(seconds=limit + 1)
    watch.round()
    watch.round()
    [stuck] = said.events
    assert stuck["type"] == "stuck" and stuck["key"] == "quiet" and stuck["limit_seconds"] == limit
    _silent_run(journal, budget, end=True)
    watch.round()
    assert [e["type"] for e in said.events] == ["stuck", "cleared"]


def test_a_run_silent_for_days_is_abandoned_not_stuck(tmp_path):
    journal, db = tmp_path / "j" / "agents.jsonl", tmp_path / "w.duckdb"
    journal.parent.mkdir()
    last = _silent_run(journal, 60.0)
    said = Said(last + timedelta(days=3))
    said.watch(db, [journal.parent]).round()
    assert said.events == []


def test_a_line_being_written_is_waited_for(tmp_path):
    folder, db = tmp_path / "j", tmp_path / "w.duckdb"
    folder.mkdir()
    journal = folder / "agents.jsonl"
    _silent_run(journal, None, end=True)
    whole = journal.read_bytes()
    journal.write_bytes(whole[: whole.rindex(b"{")] + b'{"v":1,"type":"run_e')  # the writer is mid-line
    with store.connect(db) as con:
        report = ingest(con, [folder], hold_unfinished=30)
        assert [p.reason for p in report.passed_over] == ["being written: its last line is not finished yet"]
        assert con.execute("select count(*) from rejects").fetchall() == [(0,)]
    journal.write_bytes(whole)
    with store.connect(db) as con:
        ingest(con, [folder], hold_unfinished=30)
        assert con.execute("select status, count(*) from runs group by all").fetchall() == [("succeeded", 1)]
        assert con.execute("select count(*) from rejects").fetchall() == [(0,)]


def test_rotated_truncated_replaced_and_deleted_journals(history, tmp_path):
    folder, db = tmp_path / "j", tmp_path / "w.duckdb"
    folder.mkdir()
    nights = sorted(history.glob("*.jsonl"))
    live = folder / "agents.jsonl"
    shutil.copy(nights[0], live)
    said = Said(datetime(2026, 11, 21, 1, 0, tzinfo=UTC))
    watch = said.watch(db, [folder])

    def runs() -> int:
        """The runs in the store, once the round's kept totals are checked against their definitions (the round
        keeps them from the runs it priced once for its checks and signals)."""
        with store.connect(db, read_only=True, keep_totals=False) as con:
            for name in KEPT:
                definition = f"select * from ({view_query(name)})"
                assert con.execute(f"select count(*) from ((select * from main.{name} except all {definition}) "
                                   f"union all ({definition} except all select * from main.{name}))"
                                   ).fetchall()[0][0] == 0, name
            return con.execute("select count(*) from runs").fetchall()[0][0]

    watch.round()
    assert runs() == 30
    live.rename(folder / "agents.jsonl.1")  # rotated: the old file under a new name, a new one begun
    shutil.copy(nights[1], live)
    watch.round()
    assert runs() == 60
    live.write_text("")  # truncated
    watch.round()
    assert runs() == 30
    shutil.copy(nights[2], live)  # replaced
    watch.round()
    assert runs() == 60
    (folder / "agents.jsonl.1").unlink()  # deleted
    watch.round()
    assert runs() == 30


def test_a_store_another_command_holds_is_tried_again_next_round(history, tmp_path):
    folder, db = _copy(history, tmp_path), tmp_path / "w.duckdb"
    store.connect(db).close()
    holder = subprocess.Popen([sys.executable, "-c", f"import duckdb, sys, time; c = duckdb.connect({str(db)!r}); "
                               "print('held', flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        said = Said(datetime(2026, 11, 28, 1, 0, tzinfo=UTC))
        watch = said.watch(db, [folder], window=timedelta(hours=3), lock_wait=0.2)
        assert watch.round() == [] and watch.round() == []
        assert len(said.notes) == 1 and "in use by another command" in said.notes[0]  # said once, not each round
    finally:
        holder.communicate("")
    watch.round()
    assert _alerts(said.events) == {("alert", "provider_error_rate", "gpt-5-mini")}


def _now_journal(path: Path, calls: int, refused_every: int | None) -> None:
    """One run of ``calls`` model calls timed now, every ``refused_every``-th refused by the provider (a 529)."""
    with Journal(path.open("a")) as journal:
        run = journal.start_run(f"live-{time.time_ns()}", agent="live", model="gpt-5-mini", provider="openai")
        for call in range(calls):
            refused = refused_every is not None and call % refused_every == 0
            run.model_step(usage={} if refused else {"input_uncached": 10, "output": 1}, model="gpt-5-mini",
                           **({"error_class": "transport", "error": "529 overloaded"} if refused else {}))


def test_in_real_time_an_alert_comes_within_ten_seconds_and_sigterm_stops_cleanly(tmp_path):
    folder, db = tmp_path / "live", tmp_path / "w.duckdb"
    folder.mkdir()
    journal = folder / "agents.jsonl"
    _now_journal(journal, 30, None)  # a quiet start: no refusals
    watch = subprocess.Popen([sys.executable, "-m", "reconcile.cli", "watch", str(folder), "--db", str(db), "--json",
                              "--interval", "1s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        time.sleep(4)  # the first rounds: the quiet run loaded, nothing to say
        _now_journal(journal, 30, 3)  # a 529 storm: a third of the calls refused
        written = time.monotonic()
        line = watch.stdout.readline()  # blocks until the watch says something
        took = time.monotonic() - written
        event = json.loads(line)
        assert event["type"] == "alert" and event["name"] == "provider_error_rate" and event["key"] == "gpt-5-mini"
        assert took <= 10, f"the alert came {took:.1f} s after the line that caused it"
    finally:
        watch.send_signal(signal.SIGTERM)
        out, err = watch.communicate(timeout=30)
    assert watch.returncode == 0, err
    assert err.rstrip().endswith("stopped")
    with store.connect(db, read_only=True) as con:  # what it said is in the store: a restart says nothing twice
        assert con.execute("select name, key, delivered from watch_alerts").fetchall() == [
            ("provider_error_rate", "gpt-5-mini", True)]


def test_ctrl_c_stops_it_cleanly(tmp_path):
    folder = tmp_path / "live"
    folder.mkdir()
    _now_journal(folder / "agents.jsonl", 5, None)
    watch = subprocess.Popen([sys.executable, "-m", "reconcile.cli", "watch", str(folder), "--db", str(tmp_path / "w.duckdb"),
                              "--interval", "1s"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert watch.stderr.readline().startswith("watching 1 path(s)")
    time.sleep(1.5)
    watch.send_signal(signal.SIGINT)
    out, err = watch.communicate(timeout=30)
    assert watch.returncode == 0 and err.rstrip().endswith("stopped") and "Traceback" not in err
    with store.connect(tmp_path / "w.duckdb", read_only=True) as con:  # the round it was in finished: the run is in
        assert con.execute("select count(*) from runs").fetchall() == [(1,)]
