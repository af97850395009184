"""Benchmark: the warm loop over a Claude Code folder, next to ccusage (issue 48, target 2).

    python bench/warm_loop.py                # the 40-copy folder of bench/claude_code.py (278 MB), 9 pairs
    python bench/warm_loop.py --copies 40 --runs 15

A store holds the folder already (one cold ingest first). Then, pair by pair: one session grows
(a turn's lines appended, with new message and request ids, as Claude Code appends them) and
``reconcile runs FOLDER -n 5 --sort cost`` loads what changed and lists the runs; ccusage
(``claude session --offline --json``, reading the whole folder, as it always does) runs beside
it. Also timed: the same with nothing changed (a stat per file), and the two commands the loop
took before (``ingest`` then ``runs``). Medians of the pairs and of their ratios are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import claude_code  # noqa: E402  (the corpus builder and ccusage's path)


def wall(command: list[str], env: dict | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
    return time.perf_counter() - started


def grow(session: Path, turn: int) -> None:
    """Append the session's last assistant line again, with fresh ids, as one more turn."""
    lines = session.read_text().splitlines()
    last = next(json.loads(line) for line in reversed(lines) if '"type":"assistant"' in line.replace(" ", ""))
    last["uuid"] = f"grown-{turn}-{last.get('uuid', '')}"
    if isinstance(last.get("message"), dict):
        last["message"]["id"] = f"msg_grown{turn}"
    last["requestId"] = f"req_grown{turn}"
    with session.open("a") as handle:
        handle.write(json.dumps(last) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=40)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    if not claude_code.CCUSAGE.exists():
        raise SystemExit("ccusage not installed: npm install --prefix bench/data/node ccusage@20.0.24")
    corpus = HERE / "data" / "cc-corpus"
    files, size = claude_code.build_corpus(corpus, args.copies)
    folder = str(corpus / "projects")
    session = max((p for p in Path(folder).rglob("*.jsonl") if "subagents" not in p.parts), key=os.path.getsize)
    print(f"corpus: {files} files, {size / 1e6:.0f} MB; growing {session.name}")
    theirs = [str(claude_code.CCUSAGE), "claude", "session", "--offline", "--json"]
    env = dict(os.environ, CLAUDE_CONFIG_DIR=str(corpus))
    with tempfile.TemporaryDirectory() as scratch:
        db = os.path.join(scratch, "cc.duckdb")
        ours = ["reconcile", "runs", folder, "-n", "5", "--sort", "cost", "--db", db]
        two = [["reconcile", "ingest", folder, "--db", db], ["reconcile", "runs", "-n", "5", "--sort", "cost", "--db", db]]
        wall(ours)  # the cold ingest, not timed here (bench/claude_code.py times it)
        cases = {"one session grown: runs PATH": lambda turn: (grow(session, turn), wall(ours))[1],
                 "one session grown: ingest, then runs": lambda turn: (grow(session, turn),
                                                                       sum(wall(c) for c in two))[1],
                 "nothing changed: runs PATH": lambda turn: wall(ours)}
        print(f"{'reconcile':<40} {'ours s':>7} {'ccusage s':>9} {'ratio':>6}")
        turn = 0
        for name, run in cases.items():
            a, b = [], []
            for _ in range(args.runs):
                turn += 1
                b.append(wall(theirs, env))
                a.append(run(turn))
            ratio = statistics.median(x / y for x, y in zip(a, b))
            print(f"{name:<40} {statistics.median(a):7.2f} {statistics.median(b):9.2f} {ratio:6.2f}")


if __name__ == "__main__":
    main()
