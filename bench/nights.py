"""Benchmark: a night added to a store of judged nights, next to that night alone (issue 48, target 3; issue 60).

    python bench/nights.py                    # nine nights of 3,000 runs (about 60 k lines each), then the tenth
    python bench/nights.py --runs-per-night 2000 --history 29 --pairs 5

Native journals, one per night (each starts at 20:00 UTC on its own day, so the morning job's
noon-to-noon night holds exactly one), are written once into bench/data/nights-N/. A store is built by
running ``reconcile morning`` on the first ``--history`` nights, one night at a time, as a team's mornings
would. Then, pair by pair: that store is copied (the copy not timed) and ``reconcile morning`` adds the
next night to it; and ``reconcile morning`` runs on that night alone in a fresh store. Each is a whole
process; the ratio of the pair is what the targets bound (issue 60: ≤ 1.2× after 9 and after 29 nights).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "sample_runs"))

from ingest import write_journal  # noqa: E402

NIGHTS = 10


def corpus(runs_per_night: int, nights: int = NIGHTS) -> list[Path]:
    """One folder a night, written once for this size."""
    root = HERE / "data" / f"nights-{runs_per_night}"
    folders = []
    for night in range(nights):
        folder = root / f"night{night:02d}"
        journal = folder / "agents.jsonl"
        if not journal.exists():
            folder.mkdir(parents=True, exist_ok=True)
            start = datetime(2026, 11, 1, 20, 0, tzinfo=timezone.utc) + timedelta(days=night)
            write_journal(journal.with_suffix(".tmp"), runs_per_night, seed=night + 1,
                          first=night * runs_per_night, start=start)
            journal.with_suffix(".tmp").rename(journal)
        folders.append(folder)
    return folders


def morning(folder: Path, db: Path, out: Path) -> float:
    started = time.perf_counter()
    subprocess.run(["reconcile", "morning", str(folder), "--db", str(db), "--out", str(out)], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-per-night", type=int, default=3000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--history", type=int, default=NIGHTS - 1, help="judged nights in the store first")
    args = parser.parse_args()
    folders = corpus(args.runs_per_night, args.history + 1)
    with tempfile.TemporaryDirectory() as scratch_name:
        scratch = Path(scratch_name)
        nine = scratch / "nine.duckdb"
        built = [morning(folder, nine, scratch / "out") for folder in folders[:-1]]
        print(f"{args.history} nights, one morning each: {', '.join(f'{t:.1f}' for t in built)} s")
        warm, alone = [], []
        for _ in range(args.pairs):
            shutil.copy(nine, scratch / "tenth.duckdb")
            warm.append(morning(folders[-1], scratch / "tenth.duckdb", scratch / "out"))
            (scratch / "tenth.duckdb").unlink()
            alone.append(morning(folders[-1], scratch / "alone.duckdb", scratch / "out"))
            (scratch / "alone.duckdb").unlink()
        ratio = statistics.median(a / b for a, b in zip(warm, alone))
        ratios = ", ".join(f"{a / b:.2f}" for a, b in zip(warm, alone))
        print(f"night added to the {args.history}: {statistics.median(warm):.1f} s; alone in a fresh store: "
              f"{statistics.median(alone):.1f} s; ratio {ratio:.2f} (pairs: {ratios}; target ≤ 1.2)")


if __name__ == "__main__":
    main()
