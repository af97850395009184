"""Benchmark: every stage of the morning job at a given size, next to DuckDB's bare load and ccusage.

    python bench/run.py --size 1M                # about 1 M journal lines; corpora cached in bench/data/
    python bench/run.py --size 1M --size 2M      # and how each stage's time grows (its exponent)
    python bench/run.py --size 20k --no-ccusage --out results.md

For each size it writes (once, then reuses) three corpora: native journals (files of at most 1 M
lines, written through reconcile.journal), the provider exports that bill them, and a Claude Code
folder (copies of the real sessions in tests/fixtures/realdata/, fresh ids per copy). Each stage
runs as its own process; its wall time and peak memory (the kernel's accounting of the finished
child, as /usr/bin/time reports it) are printed with its ratio to the bare load: a typed
``read_json`` of the same journals into a file-backed DuckDB store, with no checks at all.
ccusage (npm ``ccusage@20.0.24`` in bench/data/node) is timed on the Claude Code folder when it is
installed. The machine's noise is real: compare ratios, and repeat before quoting a figure.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "sample_runs"))

import claude_code  # noqa: E402  (bench/claude_code.py: the corpus builder and ccusage's path)
from ingest import TYPED_COLUMNS, write_journal  # noqa: E402

LINES_PER_RUN = 20  # what write_journal writes on average (5-14 turns, a tool step for most)
LINES_PER_FILE = 1_000_000
CC_LINES_PER_COPY = 25_000  # a Claude Code copy for this many journal lines (40 copies at 1 M)
CC_MAX_COPIES = 140
BARE = """
import sys, duckdb
con = duckdb.connect(sys.argv[1])
con.execute("create table t as select * from read_json(?, format='newline_delimited', columns=?) limit 0",
            [sys.argv[2], {columns!r}])
for path in sys.argv[2:]:
    con.execute("insert into t select * from read_json(?, format='newline_delimited', columns=?)", [path, {columns!r}])
"""


def parse_size(text: str) -> int:
    """``20k``, ``1M``, ``2.5M`` or a plain number of journal lines."""
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    number = text[:-1] if scale > 1 else text
    try:
        value = int(float(number) * scale)
    except ValueError:
        raise SystemExit(f"--size {text!r}: give a number of lines such as 20k, 1M or 3M") from None
    if value < 1_000:
        raise SystemExit(f"--size {text!r}: at least 1k lines")
    return value


def build(size: int, folder: Path) -> dict[str, Path]:
    """The corpora for ``size`` lines, written once under ``folder`` (a marker file says they are whole)."""
    paths = {"native": folder / "native", "provider": folder / "provider", "claude_code": folder / "claude_code"}
    if (folder / "COMPLETE").exists():
        return paths
    shutil.rmtree(folder, ignore_errors=True)
    paths["native"].mkdir(parents=True)
    runs, per_file = max(1, size // LINES_PER_RUN), LINES_PER_FILE // LINES_PER_RUN
    for number, first in enumerate(range(0, runs, per_file)):
        write_journal(paths["native"] / f"night-{number:03d}.jsonl", min(per_file, runs - first), seed=number + 1,
                      first=first)
    _provider_exports(paths["native"], paths["provider"])
    claude_code.build_corpus(paths["claude_code"], cc_copies(size))
    (folder / "COMPLETE").write_text(f"{size} lines\n")
    return paths


def cc_copies(size: int) -> int:
    return max(1, min(CC_MAX_COPIES, size // CC_LINES_PER_COPY))


def _provider_exports(journals: Path, out: Path) -> None:
    """The provider's bill for the journals: their usage summed by day and model, as the admin APIs export it."""
    import duckdb
    from provider_exports import REPORTED_NAME, Provider, write_exports

    con = duckdb.connect()
    rows = con.execute(
        """select ts::timestamptz::date, model, sum(usage.input_uncached), sum(usage.cache_read),
                  sum(usage.cache_write_5m), sum(usage.cache_write_1h), sum(usage.output), count(*)
           from read_json(?, format='newline_delimited', columns={'type': 'VARCHAR', 'kind': 'VARCHAR',
                'ts': 'VARCHAR', 'model': 'VARCHAR', 'usage': 'STRUCT(input_uncached BIGINT, cache_read BIGINT,
                cache_write_5m BIGINT, cache_write_1h BIGINT, output BIGINT)'})
           where type = 'step' and kind = 'model' group by all""", [[str(p) for p in sorted(journals.glob("*.jsonl"))]]
    ).fetchall()
    provider = Provider()
    for day, model, *buckets, requests in rows:
        usage = provider.usage[("anthropic", day, REPORTED_NAME.get(model, model), None, None, None)]
        for name, value in zip(("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output"), buckets):
            usage[name] = int(value or 0)
        usage["requests"] = requests
    write_exports(provider, out)
    for empty in out.glob("openai_*.json"):  # the bench's journals are all Anthropic's: no OpenAI bill
        empty.unlink()


def measure(command: list[str], env: dict | None = None) -> tuple[float, float, str | None]:
    """(wall seconds, peak resident MB, why it failed or None) of one child process."""
    with tempfile.TemporaryFile() as errors:  # a file, not a pipe: a chatty stderr cannot stall the child
        started = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        code = os.waitstatus_to_exitcode(status)
        if code in (0, 1):  # 1: a check found something, which is the job, not a failure
            return wall, usage.ru_maxrss / 1024, None
        errors.seek(0)
        lines = errors.read().decode(errors="replace").strip().splitlines()
    return wall, usage.ru_maxrss / 1024, f"exit {code}: {lines[-1][:300] if lines else 'no message'}"


def stages(paths: dict[str, Path], work: Path, size: int) -> list[tuple]:
    """(name, command, environment, what to do first) of every stage, in the order the morning runs them."""
    rc = [sys.executable, "-m", "reconcile.cli"]
    db, fresh, cc_db = work / "night.duckdb", work / "morning.duckdb", work / "cc.duckdb"
    journals = [str(p) for p in sorted(paths["native"].glob("*.jsonl"))]
    exports = [str(p) for p in sorted(paths["provider"].glob("*.json"))]
    usage = [arg for export in exports for arg in ("--usage", export)]
    sessions = work / "claude_code"
    cc_env = dict(os.environ, CLAUDE_CONFIG_DIR=str(sessions))
    ccusage = [str(claude_code.CCUSAGE), "claude", "session", "--offline", "--json"]
    copies = cc_copies(size)

    def copy_sessions() -> None:  # a working copy: the re-run adds sessions to it
        shutil.copytree(paths["claude_code"], sessions)

    def a_tenth_new() -> None:  # the next night: a tenth more sessions
        claude_code.build_corpus(sessions, max(1, copies // 10), first=copies)

    found = [
        ("bare typed read_json", [sys.executable, "-c", BARE.format(columns=TYPED_COLUMNS), str(work / "bare.duckdb"),
                                  *journals], None, None),
        ("ingest (journals + provider exports)", [*rc, "ingest", *journals, *exports, "--db", str(db)], None, None),
        ("check (all checks)", [*rc, "check", "--db", str(db)], None, None),
        ("cost", [*rc, "cost", "--db", str(db)], None, None),
        ("budgets", [*rc, "budgets", "--db", str(db)], None, None),
        ("replay (budgets' recommendations)", [*rc, "replay", "--db", str(db)], None, None),
        ("replay (a step and a spend ceiling)", [*rc, "replay", "--set", "max_steps=5", "--set", "max_cost_usd=0.02",
                                                 "--db", str(db)], None, None),
        ("replay (the three seed detectors)", [*rc, "replay", "--detector", "all", "--base", "none", "--db", str(db)],
         None, None),
        ("report finance", [*rc, "report", "finance", "--db", str(db), "--out", str(work / "finance.html")], None, None),
        ("report morning", [*rc, "report", "morning", "--db", str(db), "--out", str(work / "morning.html")], None, None),
        ("morning (the whole job, fresh store)", [*rc, "morning", str(paths["native"]), *usage, "--db", str(fresh),
                                                   "--out", str(work / "out"), "--exit-zero"], None, None),
        ("claude code: ingest, cold", [*rc, "ingest", str(sessions / "projects"), "--db", str(cc_db)], None,
         copy_sessions),
        ("claude code: check", [*rc, "check", "--db", str(cc_db)], None, None),
        ("ccusage session, cold", ccusage, cc_env, None),
        ("claude code: re-ingest, a tenth new", [*rc, "ingest", str(sessions / "projects"), "--db", str(cc_db)], None,
         a_tenth_new),
        ("claude code: check again", [*rc, "check", "--db", str(cc_db)], None, None),
        ("ccusage session, a tenth new", ccusage, cc_env, None),
    ]
    return found


def run_size(size: int, ccusage: bool, data: Path) -> list[tuple[str, float, float]]:
    paths = build(size, data / f"run-{size}")
    work = data / f"work-{size}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    results = []
    for name, command, env, before in stages(paths, work, size):
        if before:
            before()
        if name.startswith("ccusage") and not (ccusage and claude_code.CCUSAGE.exists()):
            continue
        wall, peak, failed = measure(command, env)
        results.append((name, wall, peak, failed))  # a failed stage is reported, and the next ones still run
        print(f"{size:,} lines: {name}: {wall:.1f} s, {peak:,.0f} MB" + (f", FAILED ({failed})" if failed else ""),
              file=sys.stderr, flush=True)
    shutil.rmtree(work, ignore_errors=True)
    return results


def table(size: int, results: list[tuple[str, float, float, str | None]]) -> str:
    bare = results[0][1]
    lines = [f"### {size:,} journal lines", "", "| stage | wall s | peak MB | ÷ bare load |", "|---|---:|---:|---:|"]
    lines += [f"| {name} | {wall:.2f} | {peak:,.0f} | {wall / bare:.2f}× |" if not failed else
              f"| {name} | failed after {wall:.2f} s: {failed} | {peak:,.0f} | — |" for name, wall, peak, failed in results]
    return "\n".join(lines)


def exponents(by_size: dict[int, list[tuple[str, float, float, str | None]]]) -> str:
    """How each stage's time grows between the smallest and the largest size: t ∝ size^k (failed stages: none)."""
    small, large = min(by_size), max(by_size)
    lines = [f"### Growth from {small:,} to {large:,} lines (t ∝ size^k)", "", "| stage | k |", "|---|---:|"]
    for (name, t1, _, failed1), (_, t2, _, failed2) in zip(by_size[small], by_size[large]):
        k = "—" if failed1 or failed2 else f"{math.log(t2 / t1) / math.log(large / small):.2f}"
        lines.append(f"| {name} | {k} |")
    return "\n".join(lines)


def header() -> str:
    import duckdb

    return (f"Measured {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, DuckDB {duckdb.__version__}, "
            f"ccusage {'20.0.24' if claude_code.CCUSAGE.exists() else 'not installed'}.")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", action="append", default=None, help="journal lines: 20k, 1M, 3M, 10M (repeatable)")
    parser.add_argument("--no-ccusage", action="store_true", help="skip ccusage even when it is installed")
    parser.add_argument("--out", type=Path, help="also write the tables (markdown) to this file")
    parser.add_argument("--data", type=Path, default=HERE / "data", help="where corpora are kept (default bench/data)")
    args = parser.parse_args()
    sizes = sorted({parse_size(s) for s in args.size or ["1M"]})
    by_size = {size: run_size(size, not args.no_ccusage, args.data) for size in sizes}
    text = "\n\n".join([header(), *(table(size, results) for size, results in by_size.items()),
                        *([exponents(by_size)] if len(sizes) > 1 else [])])
    print(text)
    if args.out:
        args.out.write_text(text + "\n")
    if any(failed for results in by_size.values() for *_, failed in results):
        raise SystemExit("some stages failed: see their rows")


if __name__ == "__main__":
    main()
