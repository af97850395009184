"""Benchmark: every check over the store `bench/ingest.py` built (about 1 M steps).

    python bench/ingest.py --runs 50000 && python bench/checks.py
    python bench/checks.py --kept    # kept verdicts: none kept, first kept, all kept, a tenth judged again

Prints each check's time and the total; record figures in bench/RESULTS.md. ``--kept`` works on a
copy of the store (it writes verdicts and findings).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from reconcile import store
from reconcile.checks import kept, load_checks, run_checks
from reconcile.engine import DuckDBEngine

HERE = Path(__file__).resolve().parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--db", type=Path, default=HERE / "data" / "bench.duckdb")
    parser.add_argument("--kept", action="store_true", help="time kept verdicts (on a copy of the store)")
    args = parser.parse_args()
    if args.kept:
        return kept_verdicts(args.db)
    con = store.connect(args.db)
    steps = con.execute("select count(*) from steps").fetchall()[0][0]
    checks = load_checks()
    timings = []
    for check in checks:
        started = time.perf_counter()
        report = run_checks(DuckDBEngine(con), [check])
        timings.append((time.perf_counter() - started, check.name, report.results[0].failures))
    started = time.perf_counter()
    run_checks(DuckDBEngine(con), checks)
    total = time.perf_counter() - started
    print(f"{steps} steps, {len(checks)} checks")
    for seconds, name, failures in sorted(timings, reverse=True):
        print(f"  {seconds:6.2f} s  {name} ({failures} findings)")
    print(f"all checks in one `reconcile check`: {total:.2f} s")


def kept_verdicts(db: Path) -> None:
    """Every check, in-process: as before kept verdicts, then keeping them cold, warm, and with a tenth to judge again.

    "A tenth" drops the kept verdicts of a tenth of the runs (by a hash of the run id), which is what a
    tenth of the runs' files changing does to the keys; the ingest of those files is not in the figure.
    """
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "kept.duckdb"
        shutil.copy(db, copy)
        con = store.connect(copy)
        checks = load_checks()
        usable = kept.usable
        kept.usable = lambda con: False
        started = time.perf_counter()
        run_checks(DuckDBEngine(con), checks, record=False)
        print(f"no verdict kept (as before): {time.perf_counter() - started:.2f} s")
        kept.usable = usable
        for label in ("first check, keeping its verdicts", "again, every verdict kept"):
            started = time.perf_counter()
            report = run_checks(DuckDBEngine(con), checks)
            print(f"{label}: {time.perf_counter() - started:.2f} s ({report.kept} verdicts kept)")
        con.execute("delete from kept_judgements where hash(run_id) % 10 = 0")
        started = time.perf_counter()
        report = run_checks(DuckDBEngine(con), checks)
        print(f"a tenth of the runs judged again: {time.perf_counter() - started:.2f} s ({report.kept} verdicts kept)")
        con.close()


if __name__ == "__main__":
    main()
