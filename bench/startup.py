"""Benchmark: how long a command takes to start, next to ``ccusage --version`` (issue 48, target 1).

    python bench/startup.py                 # 15 interleaved pairs each; needs ccusage in bench/data/node
    python bench/startup.py --runs 30

Each figure is a whole process, as a user's shell starts it: ``reconcile --version``,
``reconcile runs -n 5`` on a store of the sample night, and the floor under the second (a Python
that imports DuckDB, typer and rich, opens the same store read-only and reads five run ids), each
paired with ``ccusage --version`` run just before it, so that the machine's drift cancels in the
ratio. The median of the pairs' ratios is the figure to quote. Byte-code is compiled first (an
installed wheel has it; PYTHONDONTWRITEBYTECODE would otherwise make every run compile).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CCUSAGE = HERE / "data" / "node" / "node_modules" / ".bin" / "ccusage"
FLOOR = """
import sys, duckdb, typer, rich.console, rich.table
con = duckdb.connect(sys.argv[1], read_only=True)
print(con.execute("select run_id from runs limit 5").fetchall())
"""


def wall(command: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - started


def pairs(ours: list[str], theirs: list[str], runs: int) -> tuple[float, float, float]:
    """Medians of (ours, theirs, ours/theirs) over ``runs`` interleaved pairs after one warm-up pair."""
    wall(ours), wall(theirs)
    a, b = [], []
    for _ in range(runs):
        b.append(wall(theirs))
        a.append(wall(ours))
    return statistics.median(a), statistics.median(b), statistics.median(x / y for x, y in zip(a, b))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    if not CCUSAGE.exists():
        raise SystemExit("ccusage not installed: npm install --prefix bench/data/node ccusage@20.0.24")
    reconcile = shutil.which("reconcile") or sys.exit("reconcile is not on PATH: pip install -e .")
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "reconcile")], check=True,
                   stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory() as folder:
        db = os.path.join(folder, "night.duckdb")
        subprocess.run([reconcile, "ingest", str(ROOT / "sample_runs"), "--db", db], check=True,
                       stdout=subprocess.DEVNULL)
        cases = {
            "reconcile --version": [reconcile, "--version"],
            "reconcile runs -n 5 (sample night)": [reconcile, "runs", "-n", "5", "--db", db],
            "floor: import duckdb+typer+rich, open, one query": [sys.executable, "-c", FLOOR, db],
        }
        print(f"{'command':<52} {'ours s':>7} {'ccusage s':>9} {'ratio':>6}")
        for name, command in cases.items():
            ours, theirs, ratio = pairs(command, [str(CCUSAGE), "--version"], args.runs)
            print(f"{name:<52} {ours:7.3f} {theirs:9.3f} {ratio:6.2f}")


if __name__ == "__main__":
    main()
