"""Ctrl-C is not a bug (issue 61): SIGINT during `ingest` or `morning` exits 130 with one line saying what was kept,
the store is whole (as before the load, or with what finished before the interrupt), and a re-run loads everything.

Work is saved a file (or a batch of files) at a time, each in one transaction, so a store after an interrupt is
either the store before the interrupted load or one with that load whole: never part of it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from ingest import write_journal  # noqa: E402  (bench/ingest.py: the benchmark's journal writer)


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    """Four journals of 1,500 runs each (about 120,000 lines): a few seconds' load, long enough to interrupt."""
    folder = tmp_path_factory.mktemp("journals")
    first = folder / "night0.jsonl"
    write_journal(first, 1500, seed=1)
    text = first.read_text(encoding="utf-8")
    for copy in range(1, 4):  # the same runs under other ids: a run id met in two files would be one run
        (folder / f"night{copy}.jsonl").write_text(text.replace('"run0', f'"r{copy}n0'), encoding="utf-8")
    return folder


def _state(db: Path) -> tuple:
    """What a store holds, in the terms a re-run must reproduce: runs, steps, and each file's line accounting."""
    if not db.exists():
        return (0, 0, ())
    with duckdb.connect(str(db), read_only=True) as con:
        tables = {row[0] for row in con.execute("select table_name from information_schema.tables").fetchall()}
        if "runs" not in tables:
            return (0, 0, ())
        runs = con.execute("select count(*) from runs").fetchone()[0]
        steps = con.execute("select count(*) from steps").fetchone()[0]
        files = tuple(con.execute("select regexp_extract(path, '[^/]+$'), lines, loaded, rejected, skipped "
                                  "from ingested_files order by 1").fetchall())
    return (runs, steps, files)


def _interrupted(args: list[str], db: Path) -> subprocess.CompletedProcess:
    """Run ``reconcile ARGS`` and send it SIGINT once it is loading; the first delay that interrupts it wins."""
    for delay in (1.0, 0.5, 0.2):
        db.unlink(missing_ok=True)
        process = subprocess.Popen([sys.executable, "-m", "reconcile.cli", *args], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                   env={**os.environ, "PYTHONPATH": str(ROOT)})
        started = time.monotonic()
        while not db.exists() and process.poll() is None and time.monotonic() - started < 60:
            time.sleep(0.02)  # the store is created first: the load follows
        time.sleep(delay)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=120)
        if process.returncode != 0:
            return subprocess.CompletedProcess(args, process.returncode, out, err)
    pytest.fail("the command finished before any interrupt reached it")


@pytest.mark.parametrize("command", ["ingest", "morning"])
def test_ctrl_c_exits_130_with_one_line_and_a_rerun_loads_everything(night, tmp_path, command):
    reference = tmp_path / "fresh.duckdb"
    done = subprocess.run([sys.executable, "-m", "reconcile.cli", "ingest", str(night), "--db", str(reference)],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    whole = _state(reference)
    assert whole[0] == 6000

    db = tmp_path / "store.duckdb"
    args = [command, str(night), "--db", str(db)] + (["--out", str(tmp_path / "out")] if command == "morning" else [])
    result = _interrupted(args, db)
    assert result.returncode == 130, (result.returncode, result.stdout, result.stderr)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    assert "run the command again" in lines[0]
    # whole: nothing of the interrupted load, or all of it (the interrupt came after its commit)
    assert _state(db) in ((0, 0, ()), whole), _state(db)

    again = subprocess.run([sys.executable, "-m", "reconcile.cli", *args], capture_output=True, text=True, cwd=ROOT)
    assert again.returncode in (0, 1), again.stderr  # morning exits 1 when a check finds an error
    assert _state(db) == whole
