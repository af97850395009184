"""Shared fixtures: every test gets its own store and working folder; nothing touches real state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconcile import store
from reconcile.cli import main

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_RUNS = ROOT / "sample_runs"
SAMPLE_NIGHT = SAMPLE_RUNS / "2026-11-28"


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RECONCILE_DB", raising=False)
    monkeypatch.delenv("RECONCILE_DEBUG", raising=False)
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path


@pytest.fixture(scope="session")
def night_db(tmp_path_factory) -> Path:
    """The sample night ingested once for the whole session. Tests that change a store copy it first."""
    from reconcile.ingest.driver import ingest

    path = tmp_path_factory.mktemp("night") / "night.duckdb"
    with store.connect(path) as con:
        ingest(con, [SAMPLE_RUNS])
    return path


@pytest.fixture
def db_path(tmp_path) -> Path:
    return tmp_path / "store.duckdb"


@pytest.fixture
def con(db_path):
    connection = store.connect(db_path)
    yield connection
    connection.close()


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def json(self):
        return json.loads(self.out)


@pytest.fixture
def cli(capsys):
    """Run ``reconcile ARGS`` in-process through the real entry point (error mapping included)."""

    def run(*args: str) -> CliResult:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return CliResult(code, captured.out, captured.err)

    return run
