"""One table code for every command: no markdown, no Python reprs, figures never broken, no -$0."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT, SAMPLE_RUNS
from reconcile.cli.render import LiteralConsole, table
from reconcile.errors import ExitCode
from reconcile.money import usd

COMMANDS = [["runs"], ["cost"], ["cost", "--by", "day"], ["cost", "project"], ["cost", "project", "--fit"],
            ["budgets"], ["usage"], ["reprice", "--as-of", "2026-01-01"], ["summary"], ["show", "0ca2"], ["show", "0ca2", "--step", "0"],
            ["prices", "list"], ["check", "--exit-zero"], ["sql", "select * from run_view limit 5"]]
REPRS = re.compile(r"Decimal\(|datetime\.|\[<class|\|---|\{'|-\$0\.0+\b|\$-\d|µ\$")


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_prints_through_the_table_code(cli, night_db, command):
    result = cli(*command, "--db", night_db)
    assert result.code == ExitCode.OK, result.err
    assert not REPRS.search(result.out), REPRS.search(result.out).group()
    if command[0] not in ("summary",):
        assert "┏" in result.out or "┌" in result.out  # a rich table, not hand-made text


def test_money_is_dollars_and_cents_and_never_minus_zero():
    # an amount under a cent reads to its first significant digit: never $0.00, never "-<$0.01"
    assert [usd(m) for m in (0, 1_234_567, 4_999, -4_999, -5_000, 12, 1, 450)] == [
        "$0.00", "$1.23", "$0.005", "-$0.005", "-$0.005", "$0.00001", "$0.000001", "$0.0005"]
    # issue 56: a real amount under a cent is shown to its first significant digit, never rounded up to a cent it
    # did not cost ($0.0051 is not "$0.01", $0.00084 not "$0.001"); one that rounds to a cent reads as the cent
    assert [usd(m) for m in (5_100, 840, 9_600, 99, 950, 10_000)] == [
        "$0.005", "$0.0008", "$0.01", "$0.0001", "$0.001", "$0.01"]
    assert usd(-71, signed=True) == "-$0.00007" and usd(0, signed=True) == "$0.00" and usd(10_000, signed=True) == "+$0.01"
    assert usd(71, signed=True) == "+$0.00007" and usd(123_456, places=4) == "$0.1235" and usd(40, places=4) == "$0.00004"
    assert usd(14_837, places=4) == "$0.0148" and usd(None) == "unknown"


def test_figures_are_never_broken_across_lines_in_a_narrow_terminal():
    out = io.StringIO()
    console = LiteralConsole(width=100, file=out)
    columns = ["model", *[f"column number {i}" for i in range(10)]]
    console.print(table(columns, [["claude-sonnet-4-5", *[f"$1,561.{i:02d}" for i in range(10)]]], right=set(columns[1:])))
    text = out.getvalue()
    assert all(f"$1,561.{i:02d}" in text for i in range(10))  # each figure whole, on one line
    assert "claude-sonnet-4-5" in text  # a text column keeps a readable width instead of folding to nothing


def test_summary_keeps_long_agent_names_and_shows_cost(cli, db_path, tmp_path):
    from journals import StepClock
    from reconcile.journal import Journal

    name = "nightly-dependency-upgrader-eu-west"
    with Journal(tmp_path / "long.jsonl", clock=StepClock()) as journal:
        run = journal.start_run("r1", agent=name, model="claude-sonnet-4-5", provider="anthropic")
        run.model_step(usage={"input_uncached": 1000, "output": 100})
        run.end("model_finished")
    cli("ingest", tmp_path / "long.jsonl", "--db", db_path)
    out = cli("summary", "--db", db_path).out
    assert name in out and "│ cost" not in out.splitlines()[0]
    header = next(line for line in out.splitlines() if "agent" in line and "cost" in line)
    row = next(line for line in out.splitlines() if name in line)
    assert "$0.0" in row  # 1,000 + 100 tokens of Sonnet: about a cent
    assert header.index("cost") > header.index("tokens")


def test_show_header_carries_the_run_s_cost(cli, night_db):
    out = cli("show", "0ca2", "--db", night_db).out
    cost = next(line for line in out.splitlines() if line.startswith("│ cost "))
    assert "$0.7202" in cost and "harness: $0.7202" in cost and "ledger: $0.7202" in cost
    assert "max_cost=$5.00" in out and "['" not in out and "+00:00" not in out.split("run 0ca2")[0]


def test_sql_csv_lines_end_in_newline_not_crlf(cli, night_db):
    out = cli("sql", "select run_id, status from run_view order by run_id limit 3", "--csv", "--db", night_db).out
    assert out.count("\n") == 4 and "\r" not in out


@pytest.mark.slow  # a whole morning in a subprocess: CI runs it (pytest -m slow)
def test_morning_prints_nothing_to_stderr_with_an_unwritable_home(tmp_path):
    """Cron runs with odd homes: matplotlib's cache warnings must not reach stderr."""
    env = {**os.environ, "HOME": str(tmp_path / "missing"), "XDG_CACHE_HOME": "/proc/no-such", "MPLCONFIGDIR": "",
           "RECONCILE_LOCK_TIMEOUT": "5"}
    result = subprocess.run([sys.executable, "-m", "reconcile.cli", "morning", str(SAMPLE_RUNS), "--out", str(tmp_path / "m"),
                             "--db", str(tmp_path / "n.duckdb"), "--exit-zero"],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert result.returncode == 0 and result.stderr == ""
