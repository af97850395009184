"""Benchmark: `reconcile ingest` of a native journal next to DuckDB's bare typed read_json.

    python bench/ingest.py --runs 50000      # about 1 M steps; writes bench/data/ (git-ignored)

The journal is written through reconcile.journal (so it has real hashes, tool calls and
arguments); the same file is then loaded twice: once by `reconcile ingest` (validation, rejects
bookkeeping, de-duplication, canonical arguments, inserts) and once by a bare
`create table … as select * from read_json(…, columns={typed})` with no checks at all. The ratio
is the price of "nothing is lost". Record figures in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import duckdb

from reconcile.journal import Journal

HERE = Path(__file__).resolve().parent

TYPED_COLUMNS = {
    "v": "INTEGER", "type": "VARCHAR", "run_id": "VARCHAR", "ts": "TIMESTAMPTZ", "idx": "INTEGER",
    "kind": "VARCHAR", "ms": "BIGINT", "model": "VARCHAR", "finish_reason": "VARCHAR", "final": "BOOLEAN",
    "usage": "STRUCT(input_uncached BIGINT, cache_read BIGINT, cache_write_5m BIGINT, cache_write_1h BIGINT, output BIGINT)",
    "tool_calls": "JSON", "call_id": "VARCHAR", "tool": "VARCHAR", "status": "VARCHAR", "result_tokens": "BIGINT",
    "result_hash": "VARCHAR", "stop_reason": "VARCHAR", "ledger": "JSON", "agent": "VARCHAR", "limits": "JSON",
    "tools": "JSON",
}


class Clock:
    def __init__(self, start: datetime | None = None):
        self.now = start or datetime(2026, 11, 28, 22, 0, tzinfo=timezone.utc)

    def __call__(self):
        self.now += timedelta(milliseconds=700)
        return self.now


def write_journal(path: Path, runs: int, seed: int = 1, first: int = 0, start: datetime | None = None) -> int:
    """Write ``runs`` runs of about 20 steps each, numbered from ``first``; return the number of step lines.

    Give each file of a corpus its own ``first``: a run id met in two files is one run, and the second
    file's copy is skipped as already loaded (a corpus of ten files numbered alike is one file's worth).
    """
    rng = random.Random(seed)
    steps = 0
    tools = [{"name": "read_file"}, {"name": "search"}, {"name": "write_file", "side_effect": True}]
    with Journal(path, clock=Clock(start)) as journal:
        for number in range(first, first + runs):
            run = journal.start_run(f"run{number:07d}", agent=f"agent{number % 3}", model="claude-sonnet-4-5",
                                    limits={"max_steps": 30}, tools=tools, catalogue_tokens=900)
            context = 2000
            turns = rng.randint(5, 14)
            for turn in range(turns):
                final = turn == turns - 1
                call = [] if final else [(rng.choice(["read_file", "search", "write_file"]),
                                          {"path": f"src/m{rng.randint(1, 99)}.py", "n": rng.randint(1, 9)})]
                step = run.model_step(model="claude-sonnet-4-5", ms=rng.randint(300, 9000), final=final,
                                      usage={"input_uncached": 50, "cache_read": context, "cache_write_5m": 400,
                                             "output": rng.randint(50, 400)},
                                      tool_calls=call, text="done" if final else None)
                steps += 1
                for tool_call in step.calls:
                    run.tool_step(tool_call, result="x" * rng.randint(10, 300), ms=rng.randint(5, 900))
                    steps += 1
                context += 500
            run.end("model_finished", ledger={"steps": turns})
    return steps


def time_bare_read_json(path: Path) -> float:
    con = duckdb.connect()
    start = time.perf_counter()
    con.execute("create table t as select * from read_json(?, format='newline_delimited', columns=?)",
                [str(path), TYPED_COLUMNS])
    return time.perf_counter() - start


def time_reconcile_ingest(path: Path, db: Path) -> float:
    db.unlink(missing_ok=True)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "reconcile.cli", "ingest", str(path), "--db", str(db)],
                   check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5000)
    args = parser.parse_args()
    data = HERE / "data"
    data.mkdir(exist_ok=True)
    journal = data / f"journal-{args.runs}.jsonl"
    if not journal.exists():
        started = time.perf_counter()
        steps = write_journal(journal, args.runs)
        print(f"wrote {journal.name}: {args.runs} runs, {steps} steps, "
              f"{journal.stat().st_size / 1e6:.0f} MB in {time.perf_counter() - started:.1f} s")
    bare = min(time_bare_read_json(journal) for _ in range(2))
    ours = time_reconcile_ingest(journal, data / "bench.duckdb")
    con = duckdb.connect(str(data / "bench.duckdb"), read_only=True)
    loaded = con.execute("select sum(loaded), sum(lines) from ingested_files").fetchall()[0]
    print(f"lines {loaded[1]}, loaded {loaded[0]}; cores {os.cpu_count()}")
    print(f"bare typed read_json: {bare:.2f} s")
    print(f"reconcile ingest:     {ours:.2f} s  (ratio {ours / bare:.1f}x, includes process start)")


if __name__ == "__main__":
    main()
