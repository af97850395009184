"""The notebook (issue 50): frames of rows only, in the CLI's JSON names and units, documented, windowed alike,
and the README's snippet runs as pasted."""

from __future__ import annotations

import inspect
import json
import re
import shutil
import subprocess
import sys
from decimal import Decimal

import polars as pl
import pytest

import reconcile
from conftest import ROOT
from reconcile.api import Reconcile


@pytest.fixture
def rc(night_db):
    with reconcile.connect(night_db) as opened:
        yield opened


@pytest.fixture(scope="module")
def printed(night_db):
    """What the CLI prints, asked before the notebook opens the store (one process holds one DuckDB instance)."""
    def run_cli(*args: str) -> str:
        return subprocess.run([sys.executable, "-m", "reconcile.cli", *args], capture_output=True, text=True,
                              check=True).stdout

    return {name: run_cli(*args, "--db", str(night_db)) for name, args in {
        "cost": ("cost", "--by", "agent", "--json"), "runs": ("runs", "--json", "--no-fold-subagents"),
        "budgets": ("budgets", "--csv")}.items()}


def test_costs_are_rows_only_and_their_sum_is_the_total(rc, printed):
    rows, total = rc.costs(by="agent"), rc.cost_total(by="agent")
    assert "total" not in rows["key"].to_list() and total.height == 1
    assert rows["cost_usd"].sum() == total["cost_usd"][0]  # summing the column is the spend, not twice it
    printed = json.loads(printed["cost"])
    assert Decimal(str(printed["total"]["cost_usd"])) == total["cost_usd"][0]
    # the CLI's JSON names, money as exact dollars (decimal, never float micro-dollars)
    assert set(printed["groups"][0]) <= set(rows.columns)
    assert not [c for c in rows.columns if c.endswith("_micros")]
    assert isinstance(rows.schema["cost_usd"], pl.Decimal)
    by_key = {row["key"]: row for row in printed["groups"]}
    for row in rows.iter_rows(named=True):
        assert Decimal(str(by_key[row["key"]]["cost_usd"])) == row["cost_usd"]


def test_runs_steps_and_replay_carry_dollars_as_the_cli_does(rc, printed):
    runs = rc.runs()
    printed = {r["run_id"]: r for r in json.loads(printed["runs"])}
    assert "cost_usd" in runs.columns and "cost_micros" not in runs.columns
    for row in runs.head(20).iter_rows(named=True):
        if printed[row["run_id"]]["cost_usd"] is not None:
            assert Decimal(str(printed[row["run_id"]]["cost_usd"])) == row["cost_usd"]
    assert "cost_usd" in rc.steps("8f3a").columns
    assert {"spend_saved_usd", "spend_lost_usd"} <= set(rc.replay({"max_steps": 16}).columns)


def test_budgets_are_the_rows_of_the_cli_csv(rc, printed):
    frame = rc.budgets()
    csv_header = printed["budgets"].splitlines()[0].split(",")
    assert frame.columns == csv_header
    assert "max_cost_usd" in frame["ceiling"].to_list() and "max_cost_micros" not in frame["ceiling"].to_list()


def test_every_method_takes_the_same_window(rc):
    everything = rc.runs()
    late = rc.runs(since="2026-11-29T03:00Z")
    assert 0 < late.height < everything.height
    assert rc.runs(since="2026-11-29T03:00Z", until="2031-01-01").height == late.height
    for name in ("runs", "steps", "findings", "costs", "cost_total", "cost_per_completed_task", "budgets", "replay"):
        parameters = inspect.signature(getattr(Reconcile, name)).parameters
        assert {"since", "until", "tz"} <= set(parameters), name
    steps_late = rc.steps(since="2026-11-29T03:00Z")
    assert set(steps_late["run_id"].unique()) <= set(late["run_id"])
    assert rc.cost_total(since="2026-11-29T03:00Z")["cost_usd"][0] < rc.cost_total()["cost_usd"][0]


def test_every_public_method_has_a_docstring():
    public = [name for name, member in inspect.getmembers(Reconcile, inspect.isfunction) if not name.startswith("_")]
    assert public and not [name for name in public if not inspect.getdoc(getattr(Reconcile, name))]
    assert inspect.getdoc(reconcile.connect) and inspect.getdoc(reconcile.open_dataset)


def test_the_readme_python_runs_as_pasted(night_db, tmp_path, monkeypatch):
    """Each ```python block of the README, run in a folder holding the quick start's night.duckdb."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.+?)```", readme, re.S)
    assert blocks
    shutil.copy(night_db, tmp_path / "night.duckdb")
    monkeypatch.chdir(tmp_path)
    for block in blocks:
        namespace: dict = {}
        exec(compile(block, "README.md", "exec"), namespace)  # noqa: S102 - our own README, as pasted
        assert namespace["costs"]["cost_usd"].sum() == namespace["total"]["cost_usd"][0]
