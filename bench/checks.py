"""Benchmark: every check over the store `bench/ingest.py` built (about 1 M steps).

    python bench/ingest.py --runs 50000 && python bench/checks.py

Prints each check's time and the total; record figures in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from reconcile import store
from reconcile.checks import load_checks, run_checks

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=HERE / "data" / "bench.duckdb")
    args = parser.parse_args()
    con = store.connect(args.db)
    steps = con.execute("select count(*) from steps").fetchall()[0][0]
    checks = load_checks()
    timings = []
    for check in checks:
        started = time.perf_counter()
        report = run_checks(con, [check])
        timings.append((time.perf_counter() - started, check.name, report.results[0].failures))
    started = time.perf_counter()
    run_checks(con, checks)
    total = time.perf_counter() - started
    print(f"{steps} steps, {len(checks)} checks")
    for seconds, name, failures in sorted(timings, reverse=True):
        print(f"  {seconds:6.2f} s  {name} ({failures} findings)")
    print(f"all checks in one `reconcile check`: {total:.2f} s")


if __name__ == "__main__":
    main()
