"""Tail reads (issue 59): a store built by any sequence of ingests of growing files equals one fresh ingest.

A writer plays a file of each line format forward — appends, half-written last lines, rotations,
truncations, rewrites in place, lines that are not JSON, late copies of earlier lines, deletions —
with ingests between, and some of them killed with SIGKILL mid-load; then the store is compared,
table by table, with a store made by one ingest of the final files. A few seconds of it run in the
default suite; ``-m slow`` runs more sequences, longer, with more kills.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import pytest

from reconcile import store
from reconcile.ingest.driver import ingest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
NOW = datetime(2026, 12, 6, 12, tzinfo=timezone.utc)  # the clock every compared ingest marks silent runs by
SPOTTER = FIXTURES / "realdata" / "spotter-real-sessions" / "projects" / "-home-marco-projects-spotter"
LINES = 400  # a source's first lines: enough for every kind of line, few enough for seconds


def _native_lines() -> list[bytes]:
    # the first 700 lines of the sample night's triage journal: runs that end, and runs still open at its end
    return (ROOT / "sample_runs" / "2026-11-28" / "triage.jsonl").read_bytes().splitlines(keepends=True)[:700]


FORMATS = {  # format: (the file's name in the folder, where its lines come from)
    "native": ("night/triage.jsonl", None),
    # a real session's first 400 lines (side chains, compactions, tool calls), and a sub-agent's transcript
    "claude_code": ("projects/-home-marco-projects-spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl",
                    SPOTTER / "4d5611e5-241a-462a-8d15-5122611a9569.jsonl"),
    "claude_code_subagent": ("projects/-home-marco-projects-spotter/4d5611e5-241a-462a-8d15-5122611a9569/subagents/"
                             "agent-a2898e3.jsonl",
                             SPOTTER / "4d5611e5-241a-462a-8d15-5122611a9569/subagents/agent-a2898e3.jsonl"),
    "claude_code_client": ("projects/-home-dev-acme-api/9cdbc8ec-ee76-4a58-ab15-24fcee5b116a.jsonl",
                           FIXTURES / "clients/claude_code/projects/-home-dev-acme-api/"
                                      "9cdbc8ec-ee76-4a58-ab15-24fcee5b116a.jsonl"),
    "codex": ("sessions/2026/02/23/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl",
              FIXTURES / "realdata/codex-cli/sessions/2026/02/23/"
                         "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"),
    # a Codex Desktop session of many turns (a task's calls and outputs cross every line inside it: it is read on
    # from a turn's first line)
    "codex_turns": ("sessions/2026/02/23/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
                    FIXTURES / "realdata/codex-cli/sessions/2026/02/23/"
                               "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"),
    "gemini_cli_jsonl": ("gemini/session.jsonl",
                         FIXTURES / "realdata/gemini-cli/VibeCodingTracker__tests__fixtures__sessions__gemini.jsonl"),
    "otel": ("otel/spans.jsonl", FIXTURES / "frameworks/pydantic_ai/hex/spans.jsonl"),  # a request a line
}


def _otel_lines(path: Path) -> list[bytes]:
    """A collector's file of many requests: the pydantic-ai traces again and again, each copy with trace ids of its
    own (a trace's lines interleave with another's, and some roots come lines after their spans)."""
    lines = path.read_bytes().splitlines(keepends=True)
    ids = sorted(set(re.findall(rb'"traceId":"([0-9a-f]{32})"', b"".join(lines))))
    copies = []
    for copy in range(12):
        for line in lines:
            for trace in ids:
                line = line.replace(trace, trace[:-4] + b"%04x" % copy)
            copies.append(line)
    return copies


def source_lines(fmt: str) -> list[bytes]:
    name, path = FORMATS[fmt]
    lines = (_native_lines() if path is None else _otel_lines(path) if fmt == "otel"
             else path.read_bytes().splitlines(keepends=True)[:LINES])
    return [line if line.endswith(b"\n") else line + b"\n" for line in lines]


# What the compared stores must agree on: every table a load writes, in full, less the times of the ingest;
# ingested_files less its digest (a file last read by its tail records a digest of its reads: docs/architecture.md);
# and the runs' kept totals (issue 60), which every ingest keeps equal to their definitions.
TABLES = {
    "runs": "*", "steps": "*", "tool_calls": "*", "run_tools": "*", "ingest_deferrals": "*",
    "run_totals": "*", "run_model_totals": "*", "request_cost_hours": "*", "journal_usage_minutes": "*",
    "rejects": "* exclude (ingested_at)",
    "ingested_files": "* exclude (ingested_at, sha256, mtime_ns)",
}


def differences(built: Path, fresh: Path) -> dict[str, tuple[int, int]]:
    """Per table, (rows only the built store has, rows only the fresh one has); empty when they are equal."""
    con = duckdb.connect()
    con.execute(f"attach '{built}' as built (read_only); attach '{fresh}' as fresh (read_only)")
    found = {}
    for table, columns in TABLES.items():
        one = f"select {columns} from built.{table}"
        two = f"select {columns} from fresh.{table}"
        only_built = con.execute(f"select count(*) from ({one} except all {two})").fetchone()[0]
        only_fresh = con.execute(f"select count(*) from ({two} except all {one})").fetchone()[0]
        if only_built or only_fresh:
            found[table] = (only_built, only_fresh)
    con.close()
    return found


class Writer:
    """A harness writing one file line by line, and the things that happen to files in the night."""

    def __init__(self, folder: Path, fmt: str, chance: random.Random):
        self.name, _ = FORMATS[fmt]
        self.path = folder / self.name
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.lines = source_lines(fmt)
        self.next = 0  # the next line to write
        self.half = 0  # bytes of the next line already written (a writer mid-line)
        self.written: list[bytes] = []  # whole lines in the current file
        self.rotations = 0
        self.chance = chance

    def append(self, count: int) -> None:
        with open(self.path, "ab") as out:
            for _ in range(count):
                if self.next >= len(self.lines):
                    return
                line = self.lines[self.next]
                out.write(line[self.half:])
                self.written.append(line)
                self.next, self.half = self.next + 1, 0

    def half_line(self) -> None:
        if self.next >= len(self.lines) or self.half:
            return
        line = self.lines[self.next]
        self.half = self.chance.randrange(1, max(2, len(line) - 1))
        with open(self.path, "ab") as out:
            out.write(line[:self.half])

    def rotate(self) -> None:
        """logrotate's way: the file is renamed beside itself and a new one started under its name."""
        if not self.path.exists():
            return
        self.rotations += 1
        self.path.rename(self.path.with_name(f"{self.path.stem}-{self.rotations}{self.path.suffix}"))
        self.written = []
        self.half = 0

    def truncate(self) -> None:
        """``> file``: emptied in place; the writer goes on from where it was."""
        with open(self.path, "wb"):
            pass
        self.written, self.half = [], 0

    def rewrite_in_place(self) -> None:
        """The same inode, the same size, one byte changed in its first line or in its last whole line."""
        if not self.written or self.half:
            return
        data = bytearray(self.path.read_bytes())
        where = self.chance.choice([0, len(data) - len(self.written[-1])])
        position = data.find(b'"', where) + 1  # inside the first string of that line
        if position <= 0 or data[position] in b'"\\\n':
            return
        data[position] = ord("x") if data[position] != ord("x") else ord("y")
        with open(self.path, "r+b") as out:
            out.write(bytes(data))
        self.written = [line for line in bytes(data).splitlines(keepends=True)]

    def garbage(self) -> None:
        if self.half:
            return
        with open(self.path, "ab") as out:
            out.write(b"this is not JSON {\n")
        self.written.append(b"this is not JSON {\n")

    def late_copy(self) -> None:
        """A line written again later (a writer retrying), possibly of a run that has ended."""
        if not self.written or self.half:
            return
        line = self.chance.choice(self.written)
        with open(self.path, "ab") as out:
            out.write(line)
        self.written.append(line)

    def delete(self) -> None:
        if self.path.exists():
            self.path.unlink()
        self.written, self.half = [], 0

    def touch(self) -> None:
        if self.path.exists():
            os.utime(self.path)


OPERATIONS = (["append"] * 8 + ["half_line"] * 2 + ["rotate", "truncate", "rewrite_in_place", "garbage",
                                                      "late_copy", "touch"] + ["delete"] * 1)


def killed_ingest(folder: Path, db: Path, chance: random.Random) -> None:
    """``reconcile ingest`` in a process killed with SIGKILL at a random moment of its work."""
    process = subprocess.Popen([sys.executable, "-m", "reconcile.cli", "ingest", str(folder), "--db", str(db)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    time.sleep(chance.uniform(0.3, 1.5))  # (its start takes ~0.5 s: some kills land mid-load, some after)
    process.send_signal(signal.SIGKILL)
    process.wait()


def play(fmt: str, seed: int, steps: int, kills: int, tmp_path: Path) -> tuple[Path, Path, list[str]]:
    """Play a random night for ``fmt``; return the built store, the fresh one and the statuses the ingests gave."""
    chance = random.Random(f"{fmt}-{seed}")
    folder = tmp_path / "files"
    folder.mkdir()
    writer = Writer(folder, fmt, chance)
    built = tmp_path / "built.duckdb"
    writer.append(chance.randrange(1, 40))
    kill_at, statuses = set(chance.sample(range(steps), kills)), []
    for step in range(steps):
        operation = chance.choice(OPERATIONS)
        if operation == "append":
            writer.append(chance.randrange(1, 60))
        else:
            getattr(writer, operation)()
        if step in kill_at:
            killed_ingest(folder, built, chance)
        elif chance.random() < 0.7:
            with store.connect(built) as con:
                statuses += [f.status for f in ingest(con, [folder], now=NOW).files]
    writer.append(chance.randrange(0, 20))
    with store.connect(built) as con:
        statuses += [f.status for f in ingest(con, [folder], now=NOW).files]
    fresh = tmp_path / "fresh.duckdb"
    with store.connect(fresh) as con:
        ingest(con, [folder], now=NOW)
    return built, fresh, statuses


# a night that reads some files by their tail: a native journal and a Claude Code session in the default suite, the
# other formats read by their tail under -m slow (the README's command stays under five minutes), and every format,
# longer, with SIGKILLs, under -m slow below
@pytest.mark.parametrize("fmt,seed", [("native", 1),
                                      *(pytest.param(fmt, seed, marks=pytest.mark.slow)
                                        for fmt, seed in (("claude_code", 1), ("codex_turns", 5), ("gemini_cli_jsonl", 4),
                                                          ("otel", 3)))])
def test_a_night_of_tail_reads_ends_where_a_fresh_ingest_would(fmt, seed, tmp_path):
    built, fresh, statuses = play(fmt, seed=seed, steps=8, kills=0, tmp_path=tmp_path)
    assert "grown" in statuses  # some loads were tail reads
    assert differences(built, fresh) == {}


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(2, 8))
@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_longer_nights_with_kills_end_where_a_fresh_ingest_would(fmt, seed, tmp_path):
    built, fresh, _ = play(fmt, seed=seed, steps=30, kills=3, tmp_path=tmp_path)
    assert differences(built, fresh) == {}


def _journal(path: Path, lines: list[bytes]) -> None:
    with open(path, "ab") as out:
        out.write(b"".join(lines))


def _checkpoint(db: Path) -> tuple | None:
    with store.connect(db, read_only=True) as con:
        rows = con.execute("select resume_line, prefix_loaded + prefix_rejected + prefix_skipped from file_checkpoints")
        found = rows.fetchall()
    return found[0] if found else None


def _run(run_id: str, end: bool = True) -> list[bytes]:
    """A small native run's lines, written by the journal writer."""
    import io

    from journals import StepClock, write_simple_run
    from reconcile.journal import Journal

    buffer = io.StringIO()
    with Journal(buffer, clock=StepClock()) as journal:
        write_simple_run(journal, run_id, end=end)
    return buffer.getvalue().encode().splitlines(keepends=True)


def test_a_grown_journal_is_read_from_its_first_open_run_and_ingest_v_says_so(tmp_path, capsys):
    from reconcile.cli import main

    journal, db = tmp_path / "night.jsonl", tmp_path / "s.duckdb"
    first, second = _run("r1"), _run("r2", end=False)
    _journal(journal, first + second)
    assert main(["ingest", str(journal), "--db", str(db)]) == 0
    assert _checkpoint(db) == (len(first) + 1, len(first))  # r1 ended; r2 is open from its first line
    _journal(journal, _run("r3"))
    capsys.readouterr()
    assert main(["ingest", str(journal), "--db", str(db), "-v"]) == 0
    out = capsys.readouterr().out
    assert f"read from line {len(first) + 1:,} on (the lines before it are as they were loaded)" in out
    assert "grown" in out
    journal.rename(tmp_path / "night-1.jsonl")  # rotated: another file under the name
    _journal(journal, first + _run("r4"))
    assert main(["ingest", str(journal), "--db", str(db), "-v"]) == 0
    assert "read whole: another file has its name now (rotated or replaced)" in capsys.readouterr().out


@pytest.mark.slow  # the default suite keeps a newcomer's run under 5 minutes; CI runs it (pytest -m slow)
def test_a_late_line_for_a_run_that_had_ended_reads_the_file_whole(tmp_path):
    journal, db = tmp_path / "night.jsonl", tmp_path / "s.duckdb"
    first = _run("r1")
    _journal(journal, first + _run("r2"))
    with store.connect(db) as con:
        ingest(con, [journal], now=NOW)
        _journal(journal, [first[1]])  # r1's step again: an exact repeat of a line before the resume line
        report = ingest(con, [journal], now=NOW)
    assert report.files[0].status == "replaced"
    assert report.files[0].read.startswith("read whole: line ")
    assert "belongs to run r1, which had ended" in report.files[0].read
    fresh = tmp_path / "fresh.duckdb"
    with store.connect(fresh) as con:
        ingest(con, [journal], now=NOW)
    assert differences(db, fresh) == {}


@pytest.mark.slow  # the default suite keeps a newcomer's run under 5 minutes; CI runs it (pytest -m slow)
def test_an_end_record_on_a_last_line_without_its_newline_is_read_again_when_whole(tmp_path):
    """The boundary: a run whose end line has no newline yet is not settled; the resume line stays before it."""
    journal, db = tmp_path / "night.jsonl", tmp_path / "s.duckdb"
    lines = _run("r1")
    _journal(journal, lines[:-1] + [lines[-1].rstrip(b"\n")])
    with store.connect(db) as con:
        ingest(con, [journal], now=NOW)
        assert con.execute("select status from runs").fetchall() == [("succeeded",)]
    assert _checkpoint(db) == (1, 0)  # the run's end is not past a newline: nothing before line 1 is settled
    _journal(journal, [b"\n"] + _run("r2"))
    with store.connect(db) as con:
        ingest(con, [journal], now=NOW)
    fresh = tmp_path / "fresh.duckdb"
    with store.connect(fresh) as con:
        ingest(con, [journal], now=NOW)
    assert differences(db, fresh) == {}
    assert _checkpoint(db)[0] == len(lines) + len(_run("r2")) + 1  # both ended: the line after the last newline


def test_lines_the_reader_changes_leave_no_checkpoint(tmp_path):
    """CRLF endings: the line reader drops the CR, so no offset could be trusted; the file is read whole."""
    journal, db = tmp_path / "night.jsonl", tmp_path / "s.duckdb"
    _journal(journal, [line.replace(b"\n", b"\r\n") for line in _run("r1")])
    with store.connect(db) as con:
        report = ingest(con, [journal], now=NOW)
    assert report.files[0].loaded and _checkpoint(db) is None


def _sessions() -> list[Path]:
    """Every real session of a format read on inside its run: Claude Code's, Codex's and Gemini CLI's JSON Lines."""
    roots = [FIXTURES / "realdata" / "spotter-real-sessions", FIXTURES / "realdata" / "claude-code-viewer",
             FIXTURES / "clients" / "claude_code", FIXTURES / "realdata" / "codex-cli", FIXTURES / "clients" / "codex_cli"]
    gemini = sorted((FIXTURES / "realdata" / "gemini-cli").glob("*.jsonl"))
    return sorted(path for root in roots for path in root.rglob("*.jsonl")) + gemini


def grow_in_chunks(source: Path, tmp_path: Path, chance: random.Random, chunks: int) -> tuple[Path, Path, list[str]]:
    """Write ``source`` (under its own folder names) in ``chunks`` pieces, ingesting after each; the built store,
    a fresh one and how each grown file was read."""
    relative = source.relative_to(FIXTURES)
    target = tmp_path / "files" / relative
    target.parent.mkdir(parents=True)
    data = source.read_bytes()
    cuts = sorted(chance.sample(range(1, max(len(data), 2)), min(chunks, max(len(data) - 1, 1))))
    built, reads = tmp_path / "built.duckdb", []
    with store.connect(built) as con:
        for start, end in zip([0, *cuts], [*cuts, len(data)]):
            with open(target, "ab") as out:
                out.write(data[start:end])
            report = ingest(con, [tmp_path / "files"], now=NOW)
            reads += [f.read or f.status for f in report.files]
    fresh = tmp_path / "fresh.duckdb"
    with store.connect(fresh) as con:
        ingest(con, [tmp_path / "files"], now=NOW)
    return built, fresh, reads


@pytest.mark.slow
@pytest.mark.parametrize("name", ["4d5611e5-241a-462a-8d15-5122611a9569.jsonl", "agent-a2898e3.jsonl",
                                  "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl",
                                  "VibeCodingTracker__tests__fixtures__sessions__gemini.jsonl"])
def test_a_real_session_written_in_pieces_is_read_by_its_tail_and_ends_as_fresh(name, tmp_path):
    source = next(path for path in _sessions() if path.name == name)
    built, fresh, reads = grow_in_chunks(source, tmp_path, random.Random(name), chunks=6)
    assert any(read.startswith("read from line") for read in reads), reads  # the tails were read as tails
    assert differences(built, fresh) == {}


@pytest.mark.slow
@pytest.mark.parametrize("source", _sessions(), ids=lambda path: path.name[:24])
def test_every_real_session_written_in_pieces_ends_as_fresh(source, tmp_path):
    built, fresh, _ = grow_in_chunks(source, tmp_path, random.Random(source.name), chunks=8)
    assert differences(built, fresh) == {}


@pytest.mark.slow  # the default suite keeps a newcomer's run under 5 minutes; CI runs it (pytest -m slow)
def test_a_tail_that_cannot_be_copied_is_read_whole_and_says_why(tmp_path, monkeypatch):
    """A full temporary folder is no failure of the file: it is read whole, in place, and -v says why."""
    from reconcile.ingest import tail_loads

    journal, db = tmp_path / "night.jsonl", tmp_path / "s.duckdb"
    _journal(journal, _run("r1"))
    with store.connect(db) as con:
        ingest(con, [journal], now=NOW)
        _journal(journal, _run("r2"))

        def full(*args):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(tail_loads, "read_tail", full)
        report = ingest(con, [journal], now=NOW)
    assert report.files[0].status == "replaced"
    assert report.files[0].read == "read whole: its new lines could not be copied (No space left on device)"
    fresh = tmp_path / "fresh.duckdb"
    with store.connect(fresh) as con:
        ingest(con, [journal], now=NOW)
    assert differences(db, fresh) == {}


CODEX = FIXTURES / "realdata" / "codex-cli" / "sessions" / "2026" / "02" / "23"


@pytest.mark.slow  # the default suite keeps a newcomer's run under 5 minutes; CI runs it (pytest -m slow)
def test_a_codex_rollout_goes_on_from_a_turn_and_an_end_event_for_a_kept_call_reads_it_whole(tmp_path):
    """A rollout of many turns is read on from a turn's first line; an end event naming a call made before that
    line (0.171 writes an interrupted command's after the turn) would change a kept step: the file is read whole."""
    source = CODEX / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    folder = tmp_path / "sessions"
    folder.mkdir()
    rollout, db = folder / source.name, tmp_path / "built.duckdb"
    _journal(rollout, lines[:170])
    with store.connect(db) as con:
        ingest(con, [folder], now=NOW)
        resume = con.execute("select resume_line from file_checkpoints").fetchall()[0][0]
        opening = json.loads(lines[resume - 1])
        assert resume > 1 and opening["payload"]["type"] == "message" and opening["payload"]["role"] == "user"
        _journal(rollout, lines[170:240])
        grown = ingest(con, [folder], now=NOW).files[0]
        assert (grown.status, grown.read) == ("grown", f"read from line {resume:,} on (the lines before it are as "
                                                       "they were loaded)")
        kept = next(json.loads(line)["payload"]["call_id"] for line in lines[:resume - 1]
                    if json.loads(line)["payload"].get("type") == "function_call")
        late = {"timestamp": "2026-02-23T12:30:00.000Z", "type": "event_msg",
                "payload": {"type": "exec_command_end", "call_id": kept, "exit_code": 1}}
        _journal(rollout, [json.dumps(late).encode() + b"\n"])
        whole = ingest(con, [folder], now=NOW).files[0]
    assert whole.status == "replaced"
    assert re.fullmatch(rf"read whole: line [\d,]+ names call {kept}, made before the line it was read from", whole.read)
    fresh = tmp_path / "fresh.duckdb"
    with store.connect(fresh) as con:
        ingest(con, [folder], now=NOW)
    assert differences(db, fresh) == {}


def test_a_codex_task_of_one_request_after_another_has_no_line_to_go_on_from_and_v_says_so(tmp_path):
    source = CODEX / "rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
    lines = source.read_bytes().splitlines(keepends=True)
    folder = tmp_path / "sessions"
    folder.mkdir()
    _journal(folder / source.name, lines[:40])
    with store.connect(tmp_path / "built.duckdb") as con:
        ingest(con, [folder], now=NOW)
        _journal(folder / source.name, lines[40:])
        read = ingest(con, [folder], now=NOW).files[0].read
    assert read == ("read whole: when it was last read no line after the model first spoke was free of a call "
                    "awaiting its output (inside one task, each call's output starts the next request): there was "
                    "no line to go on from")


@pytest.mark.slow  # the default suite keeps a newcomer's run under 5 minutes; CI runs it (pytest -m slow)
def test_an_otel_file_goes_on_from_its_first_open_trace_and_a_late_span_of_a_trace_read_before_reads_it_whole(
        tmp_path):
    """OTLP JSON Lines: a trace is open until its root span (exported last) and a run of it are in; a span of a
    trace already read (a child that ended after its root) would change kept runs: the file is read whole."""
    lines = _otel_lines(FIXTURES / "frameworks" / "pydantic_ai" / "hex" / "spans.jsonl")
    folder = tmp_path / "otel"
    folder.mkdir()
    spans, db = folder / "spans.jsonl", tmp_path / "built.duckdb"
    _journal(spans, lines[:20])
    with store.connect(db) as con:
        ingest(con, [folder], now=NOW)
        resume = con.execute("select resume_line from file_checkpoints").fetchall()[0][0]
        _journal(spans, lines[20:40])
        grown = ingest(con, [folder], now=NOW).files[0]
        assert (grown.status, grown.read) == ("grown", f"read from line {resume:,} on (the lines before it are as they "
                                                       "were loaded)")
        _journal(spans, lines[:1])  # a span of a trace read before, written again
        late = ingest(con, [folder], now=NOW).files[0]
    assert late.status == "replaced"
    assert re.fullmatch(r"read whole: line 41 holds a span of trace [0-9a-f]+, whose runs were read before the line "
                        r"it was read from", late.read)
    fresh = tmp_path / "fresh.duckdb"
    with store.connect(fresh) as con:
        ingest(con, [folder], now=NOW)
    assert differences(db, fresh) == {}
