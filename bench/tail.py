"""Benchmark: a grown file's ingest against that file's fresh load (issue 59).

    python bench/tail.py native        # a 1 M-line native journal, a store holding it, 40 chunks of 200 lines
    python bench/tail.py claude_code   # a ~100 MB Claude Code session, a store holding it, 40 chunks of 200 lines

Writes bench/data/tail-<kind>/ (git-ignored) and prints the two commands to time as a pair: A appends
the next chunk of 200 new lines to the file and ingests it into the store that holds the file so far
(the file grows by 200 lines each run, as a night's journal does); B loads the file as it is into a
new store. Their ratio, pair by pair, is the figure (bench/RESULTS.md). Each chunk's lines are new
(new run ids, new message ids), so nothing of them is a repeat.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

CHUNKS = 40
CHUNK_LINES = 200


def native(folder: Path) -> Path:
    from ingest import write_journal  # bench/ingest.py: runs of ~20 steps written through reconcile.journal

    journal = folder / "journal.jsonl"
    write_journal(journal, 50_000)
    for number in range(CHUNKS):  # whole runs (run ids no one else has) up to the first end from line 200 on
        chunk = folder / f"chunk-{number}.jsonl"
        write_journal(chunk, 20, seed=100 + number, first=10_005_000 + number * 20)  # (a new file: Journal appends)
        lines = chunk.read_bytes().splitlines(keepends=True)
        ends = [n for n, line in enumerate(lines, 1) if n >= CHUNK_LINES and b'"run_end"' in line]
        chunk.write_bytes(b"".join(lines[:ends[0]]))
    return journal


_IDS = re.compile(rb'"(msg_|req_|toolu_)([A-Za-z0-9_]+)"')
_UUID = re.compile(rb'"(uuid|parentUuid|leafUuid|tool_use_id)":"([0-9a-f-]{36})"')


def _copy(lines: list[bytes], session: bytes, number: int) -> list[bytes]:
    """The lines as another stretch of the same session: its ids made new, its session id the one given."""
    tag = f"c{number}".encode()
    out = []
    for line in lines:
        line = _IDS.sub(lambda m: b'"' + m.group(1) + m.group(2) + tag + b'"', line)
        line = _UUID.sub(lambda m: b'"' + m.group(1) + b'":"' + m.group(2)[:-len(tag)] + tag + b'"', line)
        out.append(re.sub(rb'"sessionId":"[^"]*"', b'"sessionId":"' + session + b'"', line))
    return out


def claude_code(folder: Path) -> Path:
    """One session of ~100 MB: the largest real session's lines again and again, each stretch with new ids."""
    real = HERE.parent / "tests" / "fixtures" / "realdata" / "spotter-real-sessions" / "projects"
    biggest = max(real.rglob("*.jsonl"), key=lambda p: p.stat().st_size)
    lines = biggest.read_bytes().splitlines(keepends=True)
    session = b"5e55105e-0000-4000-8000-00000000b1e0"
    project = folder / "projects" / "-bench-tail"
    project.mkdir(parents=True, exist_ok=True)
    path = project / f"{session.decode()}.jsonl"
    number, size = 0, 0
    with open(path, "wb") as out:
        while size < 100 * 1024 * 1024:
            data = b"".join(_copy(lines, session, number))
            out.write(data)
            size += len(data)
            number += 1
    pool = [line for n in range(number, number + CHUNKS * CHUNK_LINES // max(len(lines), 1) + 2)
            for line in _copy(lines, session, n)]
    for chunk in range(CHUNKS):
        (folder / f"chunk-{chunk}.jsonl").write_bytes(b"".join(pool[chunk * CHUNK_LINES:(chunk + 1) * CHUNK_LINES]))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=["native", "claude_code"])
    args = parser.parse_args()
    folder = HERE / "data" / f"tail-{args.kind}"
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    path = native(folder) if args.kind == "native" else claude_code(folder)
    reconcile = shlex.quote(str(Path(sys.executable).with_name("reconcile")))
    grown, fresh = folder / "grown.duckdb", folder / "fresh.duckdb"
    subprocess.run([Path(sys.executable).with_name("reconcile"), "ingest", str(path), "--db", str(grown)], check=True)
    (folder / "next").write_text("0\n")
    q = shlex.quote
    append = (f"n=$(cat {q(str(folder / 'next'))}); cat {q(str(folder))}/chunk-$n.jsonl >> {q(str(path))}; "
              f"echo $((n+1)) > {q(str(folder / 'next'))}")
    print(json.dumps({
        "A (grown)": f"sh -c '{append}; exec {reconcile} ingest {q(str(path))} --db {q(str(grown))}'",
        "B (fresh)": f"sh -c 'rm -f {q(str(fresh))} {q(str(fresh))}.wal; exec {reconcile} ingest {q(str(path))} "
                     f"--db {q(str(fresh))}'",
        "file": str(path), "bytes": path.stat().st_size}, indent=2))


if __name__ == "__main__":
    main()
