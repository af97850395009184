"""Benchmark data for the scale-out path: a store and its Parquet export, at a given number of runs.

    python bench/scale_out.py --runs 20000          # writes bench/data/scale-out-20000/{store.duckdb,dataset}

It writes a native journal through bench/ingest.py's generator (once; reused), ingests it into a
store and exports the store, then prints the commands whose times bench/RESULTS.md reports, to run
side by side with the workplace's timing tool (DuckDB against Spark local mode on the same data,
and Spark with 1, 2 and 4 local workers). Nothing here times anything itself: the machine is
shared, and only interleaved pairs give a ratio worth quoting.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ingest import write_journal  # noqa: E402


def build(runs: int, data: Path) -> tuple[Path, Path]:
    folder = data / f"scale-out-{runs}"
    journal = data / f"journal-{runs}.jsonl"
    store, dataset = folder / "store.duckdb", folder / "dataset"
    if not journal.exists():
        write_journal(journal, runs)
    if not (dataset / "manifest.json").exists():
        folder.mkdir(parents=True, exist_ok=True)
        reconcile = Path(sys.executable).with_name("reconcile")
        subprocess.run([reconcile, "ingest", journal, "--db", store], check=True, stdout=subprocess.DEVNULL)
        subprocess.run([reconcile, "export", "--to", dataset, "--db", store], check=True, stdout=subprocess.DEVNULL)
    return store, dataset


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20000, help="runs in the journal (about 18 steps each)")
    parser.add_argument("--data", type=Path, default=HERE / "data")
    args = parser.parse_args()
    store, dataset = build(args.runs, args.data)
    reconcile = Path(sys.executable).with_name("reconcile")
    check = f"{reconcile} check --exit-zero"
    print(f"store {store}\ndataset {dataset}\n")
    print("# the store against its export, both in DuckDB")
    print(f"{check} --from-parquet {dataset}   vs   {check} --db {store}")
    print("# Spark local mode (2 workers) against DuckDB, the same export")
    print(f"{check} --engine spark --master local[2] --from-parquet {dataset}   vs   {check} --from-parquet {dataset}")
    print("# Spark with 1 and 4 local workers, each against 2")
    for workers in (1, 4):
        print(f"{check} --engine spark --master local[{workers}] --from-parquet {dataset}   vs   "
              f"{check} --engine spark --master local[2] --from-parquet {dataset}")
    print("# export (all partitions, into a fresh folder) against the ingest of the same journal")


if __name__ == "__main__":
    main()
