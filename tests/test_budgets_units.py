"""budgets in the units people read (dollars, whole steps, seconds), --emit's evidence, and --since everywhere."""

from __future__ import annotations

import csv
import io
import json
import tomllib
from datetime import datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from reconcile import store
from reconcile.analyses.budgets import latency_and_size
from reconcile.ingest.driver import ingest
from reconcile.when import Window
from reconcile.engine import DuckDBEngine
from test_budgets import night

SAMPLE = Path(__file__).resolve().parent.parent / "sample_runs" / "2026-11-28"


def one_run_db(tmp_path):
    db = tmp_path / "one.duckdb"
    with store.connect(db) as con:
        ingest(con, [night(tmp_path / "night.jsonl", [2])])
    return db


def test_the_ceilings_table_shows_dollars_and_whole_steps(cli, night_db):
    out = cli("budgets", "--wide", "--db", night_db).out  # p50 and p95 are in the wide table
    rows = [line for line in out.splitlines() if "│ coder " in line]
    steps = next(line for line in rows if " max_steps " in line)
    cost = next(line for line in rows if " max_cost_usd " in line)
    assert ".0 " not in steps  # steps are whole: "60", never "60.0"
    assert "$5.00" in cost and "5,000,000" not in cost  # the configured max_cost_micros 5,000,000 is $5.00
    assert cost.count("$") == 5  # p50, p95, p99, configured and recommended: all in dollars
    assert "max_cost_micros" not in out  # notes name the ceiling in dollars too
    compact = cli("budgets", "--db", night_db).out
    assert cost.count("$") - 2 == next(line for line in compact.splitlines()
                                       if "│ coder " in line and " max_cost_usd " in line).count("$")


def test_csv_and_json_carry_each_ceiling_in_its_unit(cli, night_db):
    data = cli("budgets", "--json", "--db", night_db).json()
    rows = list(csv.DictReader(io.StringIO(cli("budgets", "--csv", "--db", night_db).out)))
    cost = next(r for r in rows if r["key"] == "coder" and r["ceiling"] == "max_cost_usd")
    assert cost["unit"] == "usd" and cost["configured"] == "5.000000"
    coder = next(g for g in data["groups"] if g["key"] == "coder")
    assert cost["recommended"] == f"{coder['recommended']['cost_micros'] / 1e6:.6f}"
    as_json = next(r for r in data["ceilings"] if r["key"] == "coder" and r["ceiling"] == "max_cost_usd")
    assert as_json["recommended"] == float(cost["recommended"])
    steps = next(r for r in rows if r["key"] == "coder" and r["ceiling"] == "max_steps")
    assert steps["unit"] == "steps" and steps["configured"] == "60" and steps["recommended"].isdigit()


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_emit_carries_the_sample_size_and_flags_beside_each_value(cli, tmp_path, night_db):
    db = one_run_db(tmp_path)
    emitted = cli("budgets", "--emit", "toml", "--db", db).out
    line = next(line for line in emitted.splitlines() if line.startswith("max_steps"))
    assert line.startswith("max_steps = 2 ") and "from 1 succeeded run;" in line and "small_sample" in line
    values = [line for line in emitted.splitlines() if line.startswith("max_")]
    assert values and all("from 1 succeeded run" in v and "small_sample" in v for v in values)
    cost = next(v for v in cli("budgets", "--emit", "toml", "--db", night_db).out.splitlines()
                if v.lstrip("# ").startswith("max_cost_"))
    dollars = cost.lstrip("# ").split("=", 1)[1].split("#", 1)[0].strip()
    assert cost.lstrip("# ").startswith("max_cost_usd = ") and Decimal(dollars) == Decimal(dollars).quantize(Decimal("0.01"))
    assert tomllib.loads(emitted)["budgets"]["small"]["max_steps"] == 2  # comments keep it valid TOML
    for style in ("yaml", "python"):
        assert "from 1 succeeded run" in cli("budgets", "--emit", style, "--db", db).out


def test_a_window_with_no_runs_has_no_latency_or_size_rows(cli, night_db):
    empty = cli("budgets", "--since", "2031-01-01", "--db", night_db)
    assert empty.code == 2 and "Latency" not in empty.out  # no table from all time under an empty window
    with store.connect(night_db, read_only=True) as con:
        nothing = latency_and_size(DuckDBEngine(con), None, Window(datetime(2031, 1, 1, tzinfo=timezone.utc)))
        everything = latency_and_size(DuckDBEngine(con))
    assert nothing == {"latency": [], "result_size": []}
    assert everything["latency"] and everything["result_size"]  # the store has them: the window took them away


def raw_tool_latency(since: datetime, until: datetime) -> dict[str, list[float]]:
    """Tool step times by tool for the runs started in [since, until), read from the journals with json alone."""
    started, steps = {}, {}
    for path in sorted(SAMPLE.glob("*.jsonl")):
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["type"] == "run_start":
                started[record["run_id"]] = datetime.fromisoformat(record["ts"].replace("Z", "+00:00"))
            elif record["type"] == "step" and record["kind"] == "tool" and record.get("ms") is not None:
                steps[(record["run_id"], record["idx"])] = (record["tool"], record["ms"])  # the outcome, not in-flight
    by_tool: dict[str, list[float]] = {}
    for (run_id, _), (tool, ms) in steps.items():
        if run_id in started and since <= started[run_id] < until:
            by_tool.setdefault(tool, []).append(float(ms))
    return by_tool


def linear(ordered: list[float], q: float) -> float:
    """numpy's default quantile: linear between the ranks around (n - 1) q."""
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (position - low) * (ordered[high] - ordered[low])


def test_a_one_night_window_gives_that_nights_percentiles(cli, night_db):
    since, until = datetime(2026, 11, 29, tzinfo=timezone.utc), datetime(2026, 11, 30, tzinfo=timezone.utc)
    data = cli("budgets", "--since", "2026-11-29", "--until", "2026-11-29", "--tz", "UTC", "--json",
               "--db", night_db).json()
    expected = raw_tool_latency(since, until)
    everything = raw_tool_latency(datetime(2000, 1, 1, tzinfo=timezone.utc), datetime(2100, 1, 1, tzinfo=timezone.utc))
    assert expected and sum(map(len, expected.values())) < sum(map(len, everything.values()))  # a real subset
    got = {r["what"]: r for r in data["latency"] if r["kind"] == "tool"}
    assert set(got) == set(expected)
    for tool, values in expected.items():
        ordered = sorted(values)
        assert got[tool]["steps"] == len(values), tool
        want = [linear(ordered, q) for q in (0.5, 0.95, 0.99)]
        assert [round(v, 6) for v in got[tool]["ms_quantiles"]] == [round(v, 6) for v in want], tool
