"""A notebook connection never blocks the command line: readers share the store, a writer waits for them."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import reconcile
from journals import journal_file
from reconcile import store
from reconcile.errors import ExitCode
from reconcile.ingest.driver import ingest
import pytest

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

RECONCILE = [sys.executable, "-m", "reconcile.cli"]


def _store(tmp_path):
    db = tmp_path / "night.duckdb"
    with store.connect(db) as con:
        ingest(con, [journal_file(tmp_path / "j.jsonl", runs=("8f3a", "9b2c"))])
    return db


def _cli(*args, timeout="30"):
    return subprocess.run([*RECONCILE, *map(str, args)], capture_output=True, text=True,
                          env={**os.environ, "RECONCILE_LOCK_TIMEOUT": timeout})


def test_read_commands_run_while_a_notebook_is_open(tmp_path):
    db = _store(tmp_path)
    rc = reconcile.connect(db)
    try:
        assert rc.runs().height == 2
        for args in (["summary"], ["sql", "select count(*) from runs"], ["show", "8f3a"], ["check"], ["cost"],
                     ["report", "finance", "--out", tmp_path / "finance.html"]):
            done = _cli(*args, "--db", db)
            assert done.returncode in (ExitCode.OK, ExitCode.FINDINGS), (args, done.stderr)
            assert "bug" not in done.stderr
        assert rc.costs(by="agent").height >= 1  # the notebook still works beside them
    finally:
        rc.close()


def test_a_writer_waits_for_the_notebook_and_runs_when_it_closes(tmp_path):
    db = _store(tmp_path)
    more = journal_file(tmp_path / "more.jsonl", runs=("c0de",))
    rc = reconcile.connect(db)
    closer = threading.Timer(1.5, rc.close)
    closer.start()
    started = time.monotonic()
    done = _cli("ingest", more, "--db", db)
    closer.join()
    assert done.returncode == ExitCode.OK, done.stderr
    assert "in use by another process; waiting up to 30 s" in done.stderr
    assert time.monotonic() - started >= 1.0
    with store.connect(db, read_only=True) as con:
        assert con.execute("select count(*) from runs").fetchall() == [(3,)]


def test_a_writer_that_waits_too_long_says_so(tmp_path):
    db = _store(tmp_path)
    rc = reconcile.connect(db)
    try:
        done = _cli("ingest", journal_file(tmp_path / "more.jsonl", runs=("c0de",)), "--db", db, timeout="0.5")
    finally:
        rc.close()
    assert done.returncode == ExitCode.BAD_INPUT
    assert "in use by another process (waited" in done.stderr and "RECONCILE_LOCK_TIMEOUT" in done.stderr


def test_a_bad_lock_timeout_is_named(tmp_path):
    done = _cli("summary", "--db", _store(tmp_path), timeout="soon")
    assert done.returncode == ExitCode.BAD_INPUT
    assert "RECONCILE_LOCK_TIMEOUT='soon'" in done.stderr
