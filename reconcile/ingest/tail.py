"""Reading a grown line file from where its open runs begin, not from its first line.

A file of a line format is checkpointed in the transaction that loads its rows (``file_checkpoints``):
its identity (device, inode), a digest of its first bytes, the offset just past its last newline
and a digest of the bytes before it (and of a last line still without its newline), and the
*resume line*: the first line of the earliest run that was still open — before it, every run had
ended, and no run's lines cross it. The rows of the lines before it are kept as they are; a later
ingest re-reads from it: its runs' rows and its lines' rejects are replaced, and the lines before it
keep their outcomes (``prefix_*``), so lines read = loaded + rejected + skipped still holds for
the file.

The checkpoint is trusted only when all of it holds: the same device and inode, the same first
bytes, the file no shorter, the guarded bytes unchanged, no runs of the file deferred to another
file or taken from one. Otherwise, and whenever a re-read line belongs to a run that had ended
before the resume line (a late line for a finished run), the file is read whole, as a fresh
ingest would read it, and ``ingest -v`` says why. Because the checkpoint commits with the rows, a
kill at any moment leaves the two in agreement: the next ingest neither re-reads what was kept
nor skips what was not.

A format that says when a run has ended (``TranscriptFormat.settled``) is read from its first open run;
a format whose file is one open run (a Claude Code, Codex or Gemini CLI session: ``continues``) goes on
inside it from a line its staging chooses, with the state it keeps there (``_tail_state``); a text format
of one record per line (OpenTelemetry JSON Lines: ``tail_text``) gives its own spans (its traces). Any other
format is read whole, and ``-v`` says so.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from dataclasses import dataclass, fields
from pathlib import Path

import duckdb

from reconcile.ingest.files import CHUNK, LineCounter, Source, on_disk, stamp
from reconcile.ingest.marks import HEAD_BYTES, MarkFinder


@dataclass
class Checkpoint:
    """A row of ``file_checkpoints``."""

    path: str
    device: int
    inode: int
    size_bytes: int
    end_offset: int
    head_bytes: int
    head_sha256: str
    guard_offset: int
    guard_sha256: str
    resume_line: int
    resume_offset: int
    prefix_loaded: int
    prefix_rejected: int
    prefix_skipped: int
    state: str | None = None  # a continued format's state at resume_line (JSON; the format's own keys)


COLUMNS = [f.name for f in fields(Checkpoint)]


def reads_tails(fmt) -> bool:
    """Whether a grown file of ``fmt`` is read by its tail: a line format whose runs end (``settled``) or that goes
    on inside a run (``continues``), or a text format of one record per line that gives its own spans (``tail_text``)."""
    if getattr(fmt, "tail_text", False):
        return True
    return getattr(fmt, "input", None) == "lines" and bool(getattr(fmt, "settled", None) or getattr(fmt, "continues", False))


class TailConflict(Exception):
    """A line read again belongs to a run that had ended before the resume line: the file is read whole."""


def checkpoints(con: duckdb.DuckDBPyConnection, paths: list[str], format_name: str) -> dict[str, tuple[Checkpoint, str]]:
    """The checkpoints of ``paths`` (with each file's recorded digest) that the store can trust: files that loaded
    as ``format_name``, none of whose runs is deferred to another file or taken from one."""
    rows = con.execute(
        f"""select {", ".join("c." + c for c in COLUMNS)}, f.sha256 from file_checkpoints c
        join ingested_files f on f.path = c.path and f.status = 'loaded' and f.format = $format
        where c.path in (select unnest($paths))
          and not exists (select 1 from ingest_deferrals d where d.path = c.path or d.owner = c.path)""",
        {"paths": paths, "format": format_name}).fetchall()
    return {row[0]: (Checkpoint(*row[:-1]), row[-1]) for row in rows}


UNCHANGED = "unchanged"


def read_tail(path: str, checkpoint: Checkpoint, folder: str, sha256: str) -> Source | str:
    """The part of ``path`` from the checkpoint's resume line on, copied into ``folder``, as a ``Source``.

    Returns why the file must be read whole instead when the checkpoint cannot be trusted, or
    ``UNCHANGED`` when the file holds what it held (its time changed, its bytes did not). One open
    handle reads all of it: the identity, the first bytes and the guarded bytes are checked on the bytes
    that are copied, so what is loaded is what was checked. ``sha256``: the file's digest as recorded.
    """
    if checkpoint.resume_offset == 0:  # (a copy of all of it would only cost a temporary file its size)
        return "a run still open when it was last read begins on its first line"
    try:
        handle = open(on_disk(path), "rb")
    except OSError as exc:
        return f"it cannot be opened ({exc.strerror or exc})"
    with handle:
        status = os.fstat(handle.fileno())
        if (status.st_dev, status.st_ino) != (checkpoint.device, checkpoint.inode):
            return "another file has its name now (rotated or replaced)"
        if status.st_size < checkpoint.size_bytes:
            return "it is shorter than when it was last read (truncated)"
        head = handle.read(HEAD_BYTES)
        if hashlib.sha256(head[:checkpoint.head_bytes]).hexdigest() != checkpoint.head_sha256:
            return "its first bytes changed (rewritten)"
        start = min(checkpoint.resume_offset, checkpoint.guard_offset)
        handle.seek(start)
        guard, content = hashlib.sha256(), hashlib.sha256()
        marks, counter = MarkFinder(start), LineCounter()
        copy = os.path.join(folder, "tail.txt")
        offset, size = start, 0
        with open(copy, "wb") as out:
            while True:
                data = handle.read(CHUNK)
                if not data:
                    break
                low, high = offset, offset + len(data)
                if high > checkpoint.guard_offset and low < checkpoint.size_bytes:
                    guard.update(data[max(0, checkpoint.guard_offset - low):checkpoint.size_bytes - low])
                if high > checkpoint.resume_offset:
                    part = data[max(0, checkpoint.resume_offset - low):]
                    out.write(part)
                    content.update(part)
                    counter.feed(part)
                    size += len(part)
                marks.feed(data)
                offset = high
        if offset < checkpoint.size_bytes or guard.hexdigest() != checkpoint.guard_sha256:
            return "the bytes before where it was last read changed (rewritten in place)"
        if offset == checkpoint.size_bytes:
            return UNCHANGED
        source = Source(Path(copy), shown=Path(path), size=offset, first_line=checkpoint.resume_line,
                        carry=checkpoint.state)
        source.alias = copy
        source.lines, source.raw_cr, source.newline_at_end = counter.result()
        source.sha256 = "tail:" + hashlib.sha256(f"{sha256}\x1e{checkpoint.resume_offset}\x1e{content.hexdigest()}"
                                                 .encode()).hexdigest()
        source.mtime_ns = _stamp(path)
        if not source.raw_cr:
            source.mark = marks.mark(status.st_dev, status.st_ino, *_head(head, marks.end))
            if source.mark is not None:
                source.mark.start, source.mark.bom = checkpoint.resume_offset, head.startswith(b"\xef\xbb\xbf")
        return source


def _head(head: bytes, end: int) -> tuple[str, int]:
    """The digest of a file's first bytes (up to its last newline) and how many it covers."""
    count = min(len(head), end)
    return hashlib.sha256(head[:count]).hexdigest(), count


def _stamp(path: str) -> int | None:
    try:
        return stamp(Path(on_disk(path)))
    except OSError:
        return None


def forget_tail(con: duckdb.DuckDBPyConnection, path: str, checkpoint: Checkpoint) -> None:
    """Delete what a tail read from the checkpoint's resume line replaces: its runs and its lines' rejects.

    Where the checkpoint continues a run still open (``state`` names it and its steps before the resume
    line), that run's later steps and calls and its row go, its earlier steps stay. The file's record and
    checkpoint go too (they are written again with the new rows). The caller owns the transaction.
    """
    params = {"path": path, "line": checkpoint.resume_line}
    if checkpoint.state is not None:
        state = json.loads(checkpoint.state)
        run = {"run": state["run_id"], "steps": state["steps"]}
        con.execute("delete from steps where run_id = $run and idx >= $steps", run)
        con.execute("delete from tool_calls where run_id = $run and step_idx >= $steps", run)
        con.execute("delete from runs where run_id = $run and source_file = $path", {"run": run["run"], "path": path})
    again = "select run_id from runs where source_file = $path and source_line >= $line"
    for table in ("steps", "tool_calls", "run_tools"):
        con.execute(f"delete from {table} where run_id in ({again})", params)
    con.execute("delete from runs where source_file = $path and source_line >= $line", params)
    con.execute("delete from rejects where path = $path and line >= $line", params)
    con.execute("delete from ingested_files where path = ?", [path])
    con.execute("delete from file_checkpoints where path = ?", [path])


def check_tail(con: duckdb.DuckDBPyConnection, sources: list[Source]) -> None:
    """Raise ``TailConflict`` if a staged line of a tail read belongs to a run kept from before its resume line."""
    tails = [(number, source.name, source.first_line) for number, source in enumerate(sources, 1) if source.first_line > 1]
    if not tails:
        return
    tables = {row[0] for row in con.execute("select table_name from duckdb_tables() where temporary").fetchall()}
    if "_tail_conflicts" in tables:  # what a continued format found it cannot go on from (its staging says why)
        hit = con.execute("select line, reason from _tail_conflicts order by line limit 1").fetchall()
        if hit:
            raise TailConflict(f"line {hit[0][0]:,} {hit[0][1]}")
    hit = con.execute(
        """select t.path, r.record_no, r.run_id
        from _stage_records r
        join (select unnest($numbers) as file_no, unnest($paths) as path, unnest($lines) as line) t using (file_no)
        join runs k on k.run_id = r.run_id and k.source_file = t.path and k.source_line < t.line
        order by r.record_no limit 1""",
        {"numbers": [t[0] for t in tails], "paths": [t[1] for t in tails], "lines": [t[2] for t in tails]}).fetchall()
    if hit:
        path, line, run = hit[0]
        raise TailConflict(f"line {line:,} belongs to run {run}, which had ended before the line it was read from")


def check_continued(con: duckdb.DuckDBPyConnection, sources: list[Source]) -> None:
    """Raise ``TailConflict`` if a continued run cannot be landed on its kept steps: the range guards rejected it
    whole (its kept steps would stand alone), or another file holds a copy of it (which copy is the fuller is
    decided on whole runs)."""
    carried = [(number, json.loads(source.carry)["run_id"]) for number, source in enumerate(sources, 1)
               if source.carry is not None]
    if not carried:
        return
    for number, run in carried:
        staged = con.execute("select count(*) from _stage_runs where file_no = ? and run_id = ?", [number, run])
        if not staged.fetchall()[0][0]:
            raise TailConflict(f"run {run} was rejected whole when read again")
        elsewhere = con.execute("select source_file from runs where run_id = ? limit 1", [run]).fetchall()
        if elsewhere:
            raise TailConflict(f"run {run} is kept in {elsewhere[0][0]} too")


# Where a file's next tail read may start: the largest line no span crosses, at or below the file's cap — a
# span's first line, the cap itself, or the first line this load read. One rule for every format: a format gives
# the spans that must not be cut (a run, a response, a call and its result, a message's copies) in
# ``_tail_spans(file_no, first, last)`` and its cap in ``_tail_caps(file_no, cap)``.
TAIL_MACROS = [
    """create or replace temp macro resume_lines() as table
    with ordered as (
        select file_no, first, max(last) over (partition by file_no order by first
                                               rows between unbounded preceding and 1 preceding) as reach
        from _tail_spans),
    candidates as (
        select file_no, first as line from ordered where coalesce(reach, 0) < first
        union all select c.file_no, c.cap from _tail_caps c
            where not exists (select 1 from _tail_spans s where s.file_no = c.file_no and s.first < c.cap
                              and c.cap <= s.last)
        union all select file_no, first_line from _files)
    select c.file_no, max(c.line) as line from candidates c join _tail_caps k using (file_no)
    where c.line <= k.cap group by c.file_no""",
    # each file's first line read and its last whole line (a last line without its newline is not whole yet)
    """create or replace temp macro file_ends() as table
    select f.file_no, f.first_line, max(l.line_no) - case when any_value(f.newline_at_end) then 0 else 1 end as end_line
    from _files f join _lines l using (file_no) group by f.file_no, f.first_line""",
]


def create_tail_macros(con: duckdb.DuckDBPyConnection) -> None:
    """The macros, for a load of a line format (over ``_files`` and ``_lines``). DuckDB binds a macro's tables
    when it is made and again when it is used: the span and cap tables are made empty first, for the format to
    replace."""
    con.execute("create temp table if not exists _tail_spans (file_no integer, first bigint, last bigint)")
    con.execute("create temp table if not exists _tail_caps (file_no integer, cap bigint)")
    for statement in TAIL_MACROS:
        con.execute(statement)


@dataclass
class Resume:
    """Where the next tail read of a file goes on from, found by the load that just ran."""

    line: int
    offset: int  # from the start of what this load read
    loaded: int  # the outcomes of this load's lines before ``line``
    rejected: int
    skipped: int
    state: str | None = None  # a continued format's state at ``line``


def resume_points(con: duckdb.DuckDBPyConnection, fmt, sources: list[Source]) -> dict[int, Resume]:
    """Each marked file's next resume line: the largest line L no open run starts before and no run crosses.

    A run is open unless the format's ``settled`` condition holds for its staged row (an end record);
    a run deferred to another file, or rejected whole, is open. L is the first line of this load, a
    run's first line, or the line after the last newline. Its byte offset is checked against the
    newline the read found: a file whose lines the reader changed (a ``\\r\\n`` ending, bytes that are
    not UTF-8) has none, and is read whole next time. Needs the landing's staged tables and
    ``_lines``, ``_checked`` and ``_outcome``.
    """
    marked = [(n, s) for n, s in enumerate(sources, 1) if s.mark is not None]
    continued = getattr(fmt, "continues", False)
    if not marked or not reads_tails(fmt):
        return {}
    if continued:  # the format chose each file's resume line and its state there (``_tail_state``)
        has = con.execute("select count(*) from duckdb_tables() where temporary and table_name = '_tail_state'")
        if not has.fetchall()[0][0]:
            return {}
    con.execute("create or replace temp table _tail_files (file_no integer, first_line bigint, end_line bigint, "
                "bom integer)")
    con.execute("insert into _tail_files select unnest($n), unnest($first), unnest($end), unnest($bom)",
                {"n": [n for n, _ in marked], "first": [s.first_line for _, s in marked],
                 "end": [s.first_line - 1 + s.lines - (0 if s.newline_at_end else 1) for _, s in marked],
                 "bom": [3 if s.first_line == 1 and s.mark.bom else 0 for _, s in marked]})
    if not continued and not getattr(fmt, "tail_text", False):  # a run's lines are a span; the cap: the first line of
        # the first run still open (a text format's staging gives its own spans and caps)
        con.execute(
            f"""create or replace temp table _tail_spans as
            select file_no, run_id, min(record_no) as first, max(record_no) as last
            from _stage_records where run_id is not null and file_no in (select file_no from _tail_files) group by all""")
        con.execute(
            f"""create or replace temp table _tail_caps as
            select t.file_no, least(t.end_line + 1, (select min(s.first) from _tail_spans s where s.file_no = t.file_no
                   and not exists (select 1 from _stage_runs r where r.file_no = s.file_no and r.run_id = s.run_id
                                   and {fmt.settled}))) as cap
            from _tail_files t""")
    rows = con.execute(
        f"""with chosen as ({CHOSEN_BY_STATE if continued else CHOSEN_BY_RUNS}),
        bytes as (
            select t.file_no, ch.line,
                   coalesce(sum(strlen(coalesce(l.line, '')) + 1) filter (where l.line_no < ch.line), 0) + t.bom as offset,
                   coalesce(sum(strlen(coalesce(l.line, '')) + 1) filter (where l.line_no <= t.end_line), 0) + t.bom as ends,
                   count(*) filter (where l.read_error is not null) as unread
            from _tail_files t join chosen ch using (file_no) left join _lines l using (file_no)
            group by t.file_no, ch.line, t.bom, t.end_line),
        outcomes as (
            select c.file_no,
                   count(*) filter (where o.decision = 'load') as loaded,
                   count(*) filter (where c.reason is not null or o.decision = 'reject') as rejected,
                   count(*) filter (where c.reason is null and (o.decision = 'skip' or c.blank)) as skipped
            from _checked c join chosen ch using (file_no) left join _outcome o using (file_no, line_no)
            where c.line_no < ch.line group by c.file_no)
        select b.file_no, b.line, b.offset, b.ends, b.unread, coalesce(o.loaded, 0), coalesce(o.rejected, 0),
               coalesce(o.skipped, 0), ch.state
        from bytes b left join outcomes o using (file_no) join chosen ch using (file_no)""").fetchall()
    con.execute("drop table _tail_files")
    found = {}
    for number, line, offset, ends, unread, loaded, rejected, skipped, state in rows:
        source = sources[number - 1]
        start = source.mark.start
        if unread or start + ends != source.mark.end:
            continue  # the reader changed some line's bytes: no offset can be trusted
        found[number] = Resume(line, start + offset, loaded, rejected, skipped, state)
    return found


# The resume line of a format whose runs end (``settled``), by the one rule.
CHOSEN_BY_RUNS = """select file_no, line, null::json as state from resume_lines()
            where file_no in (select file_no from _tail_files)"""
# A continued format's own choice, kept only where it lies in what this load read and has a state.
CHOSEN_BY_STATE = """select s.file_no, s.line, s.state from _tail_state s join _tail_files t using (file_no)
            where s.state is not null and s.line between t.first_line and t.end_line + 1"""


def record_checkpoints(con: duckdb.DuckDBPyConnection, entries: list[tuple[Source, Resume, Checkpoint | None]]) -> None:
    """Write each file's checkpoint (in the caller's transaction, beside its rows)."""
    rows = []
    for source, resume, before in entries:
        mark = source.mark
        prefix = (before.prefix_loaded, before.prefix_rejected, before.prefix_skipped) if before else (0, 0, 0)
        rows.append([source.name, mark.device, mark.inode, mark.size, mark.end, mark.head_bytes, mark.head,
                     mark.guard_from, mark.guard, resume.line, resume.offset, prefix[0] + resume.loaded,
                     prefix[1] + resume.rejected, prefix[2] + resume.skipped, resume.state])
    if rows:  # one statement, the columns side by side (a batch may hold thousands of files)
        columns = list(zip(*rows))
        con.execute(f"insert into file_checkpoints ({', '.join(COLUMNS)}) select "
                    + ", ".join(f"unnest(${name})" for name in COLUMNS),
                    {name: list(values) for name, values in zip(COLUMNS, columns)})


def tail_folder() -> str:
    import tempfile

    return tempfile.mkdtemp(prefix="reconcile-tail-")


def remove_folder(folder: str) -> None:
    shutil.rmtree(folder, ignore_errors=True)


