"""Soak: ``reconcile watch`` over a 12-hour night on an accelerated clock (issue 49).

    python bench/watch_soak.py                       # 1 M lines over 12 simulated hours, 4 rounds an hour
    python bench/watch_soak.py --lines 10000000      # the issue's 10 M lines

The harness writes one journal an hour (rotation, as docs/watch.md advises for big nights), appending a
quarter of the hour's lines before each round; the watch's clock is the simulated one. Printed per
simulated hour: the lines in the store, the round's time, and the process's resident memory (current
and peak); at the end the rounds' median, 95th percentile and slowest (issue 60: p95 ≤ 2 s at 10 M lines). The claim is that memory stays flat (bounded by DuckDB's memory limit and the open round,
not by the night's length) and a round's time grows with the hour's file, not with the night.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ingest import write_journal  # noqa: E402

HOURS = 12
ROUNDS_AN_HOUR = 4
LINES_A_RUN = 20  # write_journal's runs are about 20 lines


def rss_mb() -> float:
    """Resident memory now (from /proc), in MB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 1e6


def main() -> None:
    from reconcile.watch import Watch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=1_000_000)
    args = parser.parse_args()
    start = datetime(2026, 11, 30, 20, 0, tzinfo=timezone.utc)
    runs_an_hour = max(1, args.lines // HOURS // LINES_A_RUN)
    with tempfile.TemporaryDirectory() as scratch:
        scratch = Path(scratch)
        sources = scratch / "sources"
        live = scratch / "live"
        sources.mkdir()
        live.mkdir()
        print(f"writing {HOURS} hourly journals of {runs_an_hour:,} runs …", flush=True)
        hours = [sources / f"hour{hour:02d}.jsonl" for hour in range(HOURS)]
        with ProcessPoolExecutor(max_workers=2) as pool:  # the writer is Python: both cores
            counts = list(pool.map(write_journal, hours, [runs_an_hour] * HOURS, range(1, HOURS + 1),
                                   [hour * runs_an_hour for hour in range(HOURS)],
                                   [start + timedelta(hours=hour) for hour in range(HOURS)]))
        total = sum(counts) + 2 * runs_an_hour * HOURS  # the steps, and each run's start and end
        print(f"about {total:,} lines in all", flush=True)
        clock = {"now": start}
        said: list[dict] = []
        watch = Watch(scratch / "w.duckdb", [str(live)], said.append, clock=lambda: clock["now"])
        print(f"{'hour':>4} {'lines loaded':>13} {'round s':>8} {'rss MB':>7} {'peak MB':>8}")
        written, rounds = 0, []
        for hour, source in enumerate(hours):
            target = live / source.name
            size = source.stat().st_size
            with source.open("rb") as reading:
                for part in range(1, ROUNDS_AN_HOUR + 1):  # streamed: the writer holds no night in memory
                    chunk = reading.read(max(0, size * part // ROUNDS_AN_HOUR - reading.tell()))
                    chunk += reading.readline()  # to the end of the line it cut
                    with target.open("ab") as handle:
                        handle.write(chunk)
                    written += chunk.count(b"\n")
                    clock["now"] = start + timedelta(hours=hour, minutes=60 * part // ROUNDS_AN_HOUR)
                    began = time.perf_counter()
                    watch.round()
                    took = time.perf_counter() - began
                    rounds.append(took)
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3
            print(f"{hour + 1:>4} {written:>13,} {took:>8.2f} {rss_mb():>7.0f} {peak:>8.0f}", flush=True)
        ordered = sorted(rounds)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        print(f"rounds: {len(rounds)}; median {ordered[len(ordered) // 2]:.2f} s, p95 {p95:.2f} s, "
              f"slowest {ordered[-1]:.2f} s")
        print(f"alerts said: {len(said)}")


if __name__ == "__main__":
    main()
