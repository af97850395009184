"""Crash safety and concurrency: SIGKILL mid-ingest five times, then a re-ingest equals a clean one;
two ingests on one store, and readers during a write, fail cleanly or see a consistent store."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conftest import SAMPLE_NIGHT  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.errors import ExitCode  # noqa: E402
from test_state import snapshot  # noqa: E402

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

RECONCILE = [sys.executable, "-m", "reconcile.cli"]
COPIES = 4


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> Path:
    """The sample night four times over (run ids prefixed per copy): an ingest of several seconds."""
    folder = tmp_path_factory.mktemp("workload")
    for copy in range(COPIES):
        for journal in sorted(SAMPLE_NIGHT.glob("*.jsonl")):
            lines = [json.loads(line) for line in journal.read_text().splitlines() if line.strip()]
            for line in lines:
                line["run_id"] = f"c{copy}-{line['run_id']}"
            (folder / f"c{copy}-{journal.name}").write_text("".join(json.dumps(l) + "\n" for l in lines))
    return folder


@pytest.fixture(scope="module")
def clean(workload, tmp_path_factory) -> tuple[dict, float]:
    """The workload ingested undisturbed: the store's snapshot, and how long the whole process took (the faster of
    two fresh ingests: one timed while the other test worker was busy would place the kills after a quicker one ends)."""
    timings = []
    for attempt in range(2):
        db = tmp_path_factory.mktemp("clean") / f"clean{attempt}.duckdb"
        started = time.perf_counter()
        assert subprocess.run([*RECONCILE, "ingest", workload, "--db", db], capture_output=True).returncode == 0
        timings.append(time.perf_counter() - started)
    with store.connect(db, read_only=True) as con:
        return snapshot(con), min(timings)


def test_sigkill_mid_ingest_five_times_then_a_reingest_equals_a_clean_one(workload, clean, tmp_path):
    expected, seconds = clean
    db = tmp_path / "killed.duckdb"
    chance = random.Random(20261201)
    running = 0
    for _ in range(5):
        ingest = subprocess.Popen([*RECONCILE, "ingest", workload, "--db", db],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        # within the ingest as long as it takes here: fixed sleeps of 0.3-3 s met a finished one 4 times in 5
        # once the workload loaded in about 1.5 s. Stay early: each ingest after a kill has less left to load
        # (the files the killed one committed are unchanged), so a late share met a finished one 3 times in 5
        # in one full-suite run.
        time.sleep(chance.uniform(0.15, 0.45) * seconds)
        running += ingest.poll() is None
        ingest.send_signal(signal.SIGKILL)
        ingest.wait()
    assert running >= 3, f"only {running} of 5 kills met a running ingest: the test did not test"
    finish = subprocess.run([*RECONCILE, "ingest", workload, "--db", db], capture_output=True, text=True)
    assert finish.returncode == 0, finish.stderr
    with store.connect(db, read_only=True) as con:
        assert snapshot(con) == expected
        lines, accounted = con.execute("select sum(lines), sum(loaded + rejected + skipped) from ingested_files").fetchall()[0]
        assert lines == accounted


def _second_during_first(workload, db, env=None):
    first = subprocess.Popen([*RECONCILE, "ingest", workload, "--db", db], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.time() + 20
        while not db.exists() and time.time() < deadline:
            time.sleep(0.05)
        time.sleep(0.3)
        second = subprocess.run([*RECONCILE, "ingest", workload, "--db", db], capture_output=True, text=True,
                                env={**os.environ, **(env or {})})
        overlapped_until = time.time()
    finally:
        first_err = first.communicate(timeout=120)[1]
    assert first.returncode == 0, first_err
    return second, overlapped_until


def test_a_second_ingest_waits_for_the_first_with_a_message(workload, tmp_path):
    db = tmp_path / "shared.duckdb"
    second, _ = _second_during_first(workload, db)
    assert second.returncode == ExitCode.OK, second.stderr
    assert "is in use by another process; waiting up to 30 s" in second.stderr, second.stderr
    assert "unchanged" in second.stdout  # it ran after the first, which had loaded everything


_HOLD = "import sys; from reconcile import store; con = store.connect(sys.argv[1]); print('held', flush=True); sys.stdin.read()"


def test_a_second_ingest_that_waits_too_long_fails_cleanly(workload, tmp_path):
    """The store is held open by another process for as long as the test needs (a first ingest could finish
    before the second's half second of waiting ran out: the workload takes about a second to load now)."""
    db = tmp_path / "shared.duckdb"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        second = subprocess.run([*RECONCILE, "ingest", workload, "--db", db], capture_output=True, text=True,
                                env={**os.environ, "RECONCILE_LOCK_TIMEOUT": "0.5"})
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert second.returncode == ExitCode.BAD_INPUT, second.stderr
    assert "in use by another process (waited" in second.stderr and "Traceback" not in second.stderr


def test_readers_during_a_write_fail_cleanly_or_see_a_consistent_store(workload, tmp_path):
    db = tmp_path / "read-while-writing.duckdb"
    writer = subprocess.Popen([*RECONCILE, "ingest", workload, "--db", db], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    seen = []
    try:
        while writer.poll() is None:
            reader = subprocess.run([*RECONCILE, "sql", "--csv",  # no waiting: see what a reader meets mid-write
                                     "select (select count(*) from ingested_files f where not exists "
                                     "(select 1 from runs r where r.source_file = f.path)) as files_without_runs, "
                                     "(select coalesce(sum(lines - loaded - rejected - skipped), 0) from ingested_files) "
                                     "as unaccounted", "--db", db], capture_output=True, text=True,
                                    env={**os.environ, "RECONCILE_LOCK_TIMEOUT": "0"})
            seen.append(reader)
    finally:
        writer.wait(timeout=120)
    assert writer.returncode == 0
    assert len(seen) >= 2, "the write ended before a reader could try"
    for reader in seen:
        assert reader.returncode in (ExitCode.OK, ExitCode.BAD_INPUT), reader.stderr
        if reader.returncode == ExitCode.OK:
            assert reader.stdout.splitlines()[1] == "0,0", reader.stdout
        else:
            assert "Traceback" not in reader.stderr and reader.stderr.startswith("error: ")
