"""No false green: a missing store, an empty store or an empty window is an error, never a pass."""

from __future__ import annotations

import hashlib

import pytest

from conftest import SAMPLE_RUNS
from reconcile.errors import ExitCode

READERS = [
    ("check",), ("cost",), ("usage",), ("budgets",), ("report", "finance", "--out", "f.html"),
    ("report", "morning", "--out", "m.html"), ("show", "8f3a"), ("sql", "select 1"), ("summary",),
    ("reprice", "--as-of", "2026-01-01"), ("cost", "project", "--fit"), ("config", "--sql"),
]


@pytest.mark.parametrize("args", READERS, ids=lambda a: " ".join(a[:2]))
def test_a_command_that_reads_refuses_a_store_that_is_not_there(cli, tmp_path, args):
    missing = tmp_path / "typo.duckdb"
    result = cli(*args, "--db", missing)
    assert result.code == ExitCode.BAD_INPUT, result.out + result.err
    assert f"No store at {missing}" in result.err and "reconcile ingest PATH --db" in result.err
    assert not missing.exists() and "Traceback" not in result.err


def test_prices_add_does_not_create_a_store_either(cli, tmp_path):
    prices = tmp_path / "p.csv"
    prices.write_text("provider,model,from,input,output\nanthropic,x,2026-01-01,1,2\n")
    assert cli("prices", "add", prices, "--db", tmp_path / "typo.duckdb").code == ExitCode.BAD_INPUT
    assert not (tmp_path / "typo.duckdb").exists()


@pytest.fixture
def empty_store(cli, tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "README.md").write_text("no runs here\n")
    db = tmp_path / "empty.duckdb"
    result = cli("ingest", folder, "--db", db)
    assert result.code == ExitCode.OK and "no store was made" in result.out and not db.exists()  # issue 61
    from reconcile import store

    store.connect(db).close()  # a store, but no runs in it
    return db


@pytest.mark.parametrize("args", [("check",), ("report", "morning", "--out", "m.html"),
                                  ("report", "finance", "--out", "f.html")], ids=lambda a: " ".join(a[:2]))
def test_a_store_without_runs_is_an_error_for_check_and_report(cli, empty_store, args):
    result = cli(*args, "--db", empty_store)
    assert result.code == ExitCode.BAD_INPUT and "holds no runs" in result.err


def test_morning_on_an_empty_folder_exits_non_zero_and_says_why(cli, tmp_path):
    folder = tmp_path / "night"
    folder.mkdir()
    (folder / "notes.txt").write_text("the harness did not run\n")
    result = cli("morning", folder, "--out", tmp_path / "out", "--db", tmp_path / "m.duckdb")
    assert result.code == ExitCode.BAD_INPUT
    assert f"no runs in {folder}" in result.err and "1 passed over" in result.err
    assert not (tmp_path / "out" / "morning.html").exists()
    assert not (tmp_path / "m.duckdb").exists()  # issue 61: a command that loaded nothing makes no store


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_check_reads_the_store_without_changing_it(cli, tmp_path):
    db = tmp_path / "night.duckdb"
    cli("ingest", SAMPLE_RUNS, "--db", db)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    assert cli("check", "--db", db).code == ExitCode.FINDINGS
    assert cli("report", "morning", "--out", tmp_path / "m.html", "--db", db).code == ExitCode.OK
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
