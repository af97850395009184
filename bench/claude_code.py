"""Benchmark: ingesting a large Claude Code folder, next to ccusage on the same folder.

    python bench/claude_code.py --copies 140      # about 1 GB; needs node + npm for the ccusage side

Replicates the real sessions in tests/fixtures/realdata/ (both Claude Code folders) into
bench/data/cc-corpus/projects/, giving every copy its own session, message and request ids so
nothing de-duplicates across copies, then times `reconcile ingest` of that folder and
`ccusage claude session --offline --json` (npm ccusage@20.0.24, installed into bench/data/node)
with CLAUDE_CONFIG_DIR pointing at it. Record the figures in bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

HERE = Path(__file__).resolve().parent
REAL = HERE.parent / "tests" / "fixtures" / "realdata"
SOURCES = [REAL / "spotter-real-sessions" / "projects", REAL / "claude-code-viewer" / "projects"]
CCUSAGE = HERE / "data" / "node" / "node_modules" / ".bin" / "ccusage"
_IDS = re.compile(r'"(msg_|req_)([A-Za-z0-9_]+)"')


def build_corpus(target: Path, copies: int, first: int = 0) -> tuple[int, int]:
    """Write ``copies`` copies of the real sessions (numbered from ``first``); return (files, bytes).

    From copy 0 the folder is written afresh; from a later copy, the copies are added to it.
    """
    if target.exists() and first == 0:
        shutil.rmtree(target)
    files = size = 0
    for copy in range(first, first + copies):
        for source in SOURCES:
            for path in sorted(source.rglob("*.jsonl")):
                relative = path.relative_to(source)
                project = f"{relative.parts[0]}-copy{copy:04d}"
                text = path.read_text()
                session_ids = {part for part in relative.parts if re.fullmatch(r"[0-9a-f-]{36}", part)}
                if re.fullmatch(r"[0-9a-f-]{36}", path.stem):
                    session_ids.add(path.stem)
                elif len(relative.parts) == 2:  # a session file not named by a UUID: rename it per copy too
                    relative = relative.with_name(f"{path.stem}-c{copy}{path.suffix}")
                for session in session_ids:  # a new session id for each copy, in names and in lines
                    fresh = str(uuid.uuid5(uuid.NAMESPACE_OID, f"{session}-{copy}"))
                    text = text.replace(session, fresh)
                    relative = Path(str(relative).replace(session, fresh))
                text = _IDS.sub(lambda m: f'"{m.group(1)}c{copy}_{m.group(2)}"', text)
                out = target / "projects" / project / Path(*relative.parts[1:])
                out.parent.mkdir(parents=True, exist_ok=True)
                out.write_text(text)
                files += 1
                size += len(text.encode())
    return files, size


def timed(command: list[str], env: dict | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=env)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20)
    args = parser.parse_args()
    corpus = HERE / "data" / "cc-corpus"
    started = time.perf_counter()
    files, size = build_corpus(corpus, args.copies)
    print(f"corpus: {files} files, {size / 1e6:.0f} MB ({time.perf_counter() - started:.0f} s to build)")
    db = HERE / "data" / "cc.duckdb"
    db.unlink(missing_ok=True)
    ours = timed([sys.executable, "-m", "reconcile.cli", "ingest", str(corpus / "projects"), "--db", str(db)])
    print(f"reconcile ingest:             {ours:.1f} s")
    if CCUSAGE.exists():
        env = dict(os.environ, CLAUDE_CONFIG_DIR=str(corpus))
        theirs = timed([str(CCUSAGE), "claude", "session", "--offline", "--json"], env)
        print(f"ccusage claude session --json: {theirs:.1f} s  (reconcile / ccusage = {ours / theirs:.2f})")
    else:
        print("ccusage not installed: npm install --prefix bench/data/node ccusage@20.0.24")


if __name__ == "__main__":
    main()
