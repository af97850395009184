"""A smoke run of the benchmark on a tiny corpus: every stage runs and is reported with its ratio.

The figures themselves live in bench/RESULTS.md; here only that the harness works end to end.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

BENCH = Path(__file__).resolve().parent.parent / "bench" / "run.py"
STAGES = ["bare typed read_json", "ingest (journals + provider exports)", "check (all checks)", "cost", "budgets",
          "replay (budgets' recommendations)", "replay (a step and a spend ceiling)", "replay (the three seed detectors)",
          "report finance", "report morning", "morning (the whole job, fresh store)", "claude code: ingest, cold",
          "claude code: check", "claude code: re-ingest, a tenth new", "claude code: check again"]


def test_the_benchmark_runs_every_stage_on_a_tiny_corpus(tmp_path):
    out = tmp_path / "results.md"
    done = subprocess.run([sys.executable, str(BENCH), "--size", "2k", "--no-ccusage",
                           "--data", str(tmp_path / "data"), "--out", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    text = out.read_text()
    assert "DuckDB 2" in text and "### 2,000 journal lines" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "×" in line]
    assert [row.split(" | ")[0][2:] for row in rows] == STAGES
    assert all(float(row.split(" | ")[1]) > 0 for row in rows) and "failed" not in text
    assert rows[0].endswith("| 1.00× |")  # the bare load is the yardstick
    assert not (tmp_path / "data" / "work-2000").exists()  # the stores it made are cleaned up


def test_growth_exponents():
    sys.path.insert(0, str(BENCH.parent))
    import run

    table = run.exponents({1000: [("a", 1.0, 0, None), ("b", 2.0, 0, None), ("c", 1.0, 0, None)],
                           4000: [("a", 4.0, 0, None), ("b", 16.0, 0, None), ("c", 9.0, 0, "exit 2: out of memory")]})
    assert "| a | 1.00 |" in table and "| b | 1.50 |" in table and "| c | — |" in table


def test_a_failed_stage_is_reported_and_the_others_still_run(tmp_path):
    """A stage that fails (here: the finance report ran out of memory at 9 M steps) is a row saying why, not the end."""
    sys.path.insert(0, str(BENCH.parent))
    import run

    wall, _, failed = run.measure([sys.executable, "-c", "import sys; print('x' * 200_000, file=sys.stderr); "
                                                         "print('error: out of memory', file=sys.stderr); sys.exit(2)"])
    assert failed == "exit 2: error: out of memory"  # the last line of a long stderr, which did not stall the child
    text = run.table(10, [("bare", 1.0, 5.0, None), ("report", 2.0, 9.0, failed)])
    assert "| report | failed after 2.00 s: exit" in text


def test_the_floor_benchmark_runs_every_stage(tmp_path):
    """bench/floor.py: each stage runs those before it; the write stage lands the journal's step lines in steps."""
    import duckdb

    journal = Path(__file__).resolve().parent.parent / "sample_runs" / "2026-11-28" / "coder.jsonl"
    floor = BENCH.parent / "floor.py"
    for stage in ("bare", "text", "parse", "guard", "write", "hash"):
        db = tmp_path / f"{stage}.duckdb"
        done = subprocess.run([sys.executable, str(floor), stage, str(journal), str(db)], capture_output=True,
                              text=True, timeout=120)
        assert done.returncode == 0, (stage, done.stderr[-2000:])
    steps = sum(1 for line in journal.read_text().splitlines() if line.strip() and json.loads(line)["type"] == "step")
    with duckdb.connect(str(tmp_path / "write.duckdb"), read_only=True) as con:
        assert con.execute("select count(*) from steps").fetchall()[0][0] == steps > 0
