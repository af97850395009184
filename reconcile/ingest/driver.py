"""Ingest files into the canonical store: discover, detect, load each file in one transaction.

Files are loaded in path order, so that a run kept in several files belongs to the first of them
(``bookkeeping``), and the store after any sequence of ingests equals a fresh ingest of the files
as they are now: an unchanged file (same SHA-256, same format) is left alone, a changed one
replaces its earlier rows, a file that is gone from a folder being ingested is forgotten, and a
file whose runs another file outranked or gave up is loaded again.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from datetime import date, datetime, timezone
from pathlib import Path

import duckdb

from reconcile import durability
from reconcile.errors import BadInput, InternalError, Interrupted, UnknownFormat, did_you_mean, is_interrupt
from reconcile.prices.pricing import resolve as resolve_prices
from reconcile.store import kept_totals
from reconcile.sql_text import insert_rows
from reconcile.store.status import ABANDON_SQL, ABANDONED_AFTER_SECONDS
from reconcile.ingest.bookkeeping import forget_file, pending_reloads, recorded_many, stamps
from reconcile.ingest.discovery import discover, vanished
from reconcile.ingest.queue import next_group, not_given, requeue
from reconcile.display import with_article
from reconcile.ingest.failures import FILE_FAILURES, load_failure, reason, record_failure, store_failure, store_failures
from reconcile.ingest.files import Aliases, Source, held, inspect, peeked, settle, stored_name
from reconcile.ingest.lines import load_lines_many
from reconcile.ingest.ranges import EARLIEST, LATEST, set_window
from reconcile.ingest.result import FileResult, IngestReport
from reconcile.ingest.tail import Checkpoint, forget_tail, record_checkpoints
from reconcile.ingest.tail_loads import load_tails, read_from, said_whole
from reconcile.formats import FORMATS, format_fact_rows

ProgressHook = Callable[[Path, int, int], None]  # (file about to load, its position, files in all)



def ingest(con: duckdb.DuckDBPyConnection, paths: Iterable[str | Path], format: str | None = None,
           progress: ProgressHook | None = None, window: tuple[date, date] | None = None,
           discovered: list[tuple[Path, bool]] | None = None, hold_unfinished: float | None = None,
           abandoned_after: float = ABANDONED_AFTER_SECONDS, now: datetime | None = None,
           exactly: bool = False, keep_totals: bool = True) -> IngestReport:
    """Load every recognised file under ``paths``; unchanged files are left as they are.

    ``window`` is the ``[earliest, latest)`` a recorded timestamp must fall in (``ranges``).
    ``discovered``: ``(file, named explicitly)`` pairs someone else listed (a shard of a distributed
    ingest), loaded instead of walking ``paths``; with ``exactly``, the store is to hold those files and no
    other: any other it holds is forgotten (a distributed ingest's kept shard store). ``hold_unfinished``: a file whose last line has no newline
    yet and that changed within that many seconds is passed over this time, its earlier rows kept (a writer
    mid-line: ``reconcile watch`` loads it when the line is whole). Last, every run with no end record is
    running or ``abandoned`` as of now (``abandoned_after``: seconds of silence for a run without a wall-clock
    budget; ``store.status``) as of ``now`` (the clock's; ``reconcile watch`` passes its own): time passes for
    unchanged files too. ``keep_totals``: the kept run totals are brought up to date at the end (``store.kept_totals``).
    """
    forced = _forced_format(format)
    durability.begin(con, "the ingest")  # what an earlier process left in the log is written (or we stop here)
    set_window(con, *(window or (EARLIEST, LATEST)))
    _in_transaction(con, lambda: record_format_facts(con), "recording what each format records")
    report = IngestReport()
    found, folders = (discovered, []) if discovered is not None else discover(paths, report.passed_over)
    queue: list[tuple[str, bool, bool]] = []  # (path, named explicitly, must reload even if unchanged)
    for path, explicit in found:
        heapq.heappush(queue, (str(path), explicit, False))
    gone = vanished(con, folders) if not exactly else not_given(con, found)
    for path in gone:
        _in_transaction(con, lambda p=path: requeue(queue, forget_file(con, p)), f"forgetting {path}")
        report.forgotten.append(path)
    requeue(queue, pending_reloads(con))  # owners forgotten by an ingest that stopped before these were loaded again
    done, known = 0, stamps(con)  # files loaded during this ingest are new: their stamps are not needed
    while queue:
        group, fmt = next_group(con, queue, forced, report, known, hold_unfinished)
        if not group:
            continue
        if progress:
            progress(Path(group[0][0]), done, done + len(queue) + len(group))
        done += len(group)
        results, reloads = load_files(con, group, fmt, forced is not None)
        again = {str(path) for path in reloads}  # taken over by a fuller copy: its result is the one after
        report.files = [f for f in report.files if f.path not in again] + [f for f in results if f.path not in again]
        requeue(queue, reloads)
    report.files.sort(key=lambda f: f.path)
    _in_transaction(con, lambda: con.execute(ABANDON_SQL, {"now": now or datetime.now(timezone.utc),
                                                           "after": float(abandoned_after)}),
                    "marking the runs silent past their budget abandoned")
    if any(f.loaded for f in report.files):
        before = durability.mark(con)
        resolve_prices(con, refresh=False)  # new models or days: price them once, here, not in every query
        durability.save(con, "the prices of the models just loaded", before)
    if keep_totals:  # (a distributed ingest's shard keeps none: it is exported, not read)
        kept_totals.refresh(con)  # the runs loaded, reloaded or forgotten: their priced totals kept
    return report


def _forced_format(name: str | None):

    if name is None:
        return None
    if name not in FORMATS:
        raise BadInput(f"--format {name!r} is not a known format.{did_you_mean(name, FORMATS)} "
                       f"Known formats: {', '.join(FORMATS)}.")
    return FORMATS[name]


def load_files(con: duckdb.DuckDBPyConnection, group: list[tuple[Path, bool]], fmt,
               forced: bool = False) -> tuple[list[FileResult], list[str]]:
    """Load files of one format in one transaction: each file is whole or absent, never half.

    An unchanged file (same SHA-256 and format as when last ingested) is left alone unless it
    must be reloaded; a changed one replaces its earlier rows; a file that cannot be read is
    reported, not loaded. With a format the user forced, a file none of whose lines is of that
    format is an error (nothing is loaded). If a batch fails, its files are retried one by one so
    the failure is pinned on one file. Returns the results and the files to load again.
    """
    results, reloads, group, why = load_tails(con, group, fmt, forced, _load_transaction)
    if not group:
        return results, reloads
    beside = _load_beside_inspection(con, group, fmt, forced)
    if beside is not None:
        return results + beside[0], reloads + beside[1]
    todo = []
    sources = list(zip(_inspected([path for path, _ in group]), [reload for _, reload in group]))
    known = recorded_many(con, [source.name for source, _ in sources if not source.error])
    stamped = []  # same content, now a stamp to trust: next time the file is not read
    for source, reload in sources:
        if source.error:
            result, again = record_failure(con, source, fmt.name, "unreadable", source.error)
            results.append(result)
            reloads += again
            continue
        previous = known.get(source.name)
        if previous == (source.sha256, fmt.name) and not reload:
            results.append(FileResult(source.name, fmt.name, "unchanged", 0, 0, 0, 0))
            if source.mtime_ns is not None:
                stamped.append(source)
        else:
            todo.append((source, previous))
    if stamped:  # one statement, not one a file
        con.execute("update ingested_files f set mtime_ns = s.mtime from (select unnest($paths) as path, "
                    "unnest($mtimes) as mtime) s where f.path = s.path",
                    {"paths": [s.name for s in stamped], "mtimes": [s.mtime_ns for s in stamped]})
    if len(todo) > 1:
        try:
            loaded, again = _load_transaction(con, todo, fmt, forced)
            return results + said_whole(loaded, why, fmt), reloads + again
        except FILE_FAILURES:
            pass  # one of them is bad: find out which, file by file
    for source, previous in todo:
        try:
            loaded, again = _load_transaction(con, [(source, previous)], fmt, forced)
        except FILE_FAILURES as exc:  # that file's failure, recorded; the others load
            result, again = record_failure(con, source, fmt.name, "failed", reason(exc))
            loaded = [result]
        results += said_whole(loaded, why, fmt)
        reloads += again
    return results, reloads


def _inspected(paths: list[Path]) -> list:
    """``inspect`` of each path, two at a time: reading, inflating and hashing release the GIL, so a second
    file's bytes are read while the first's are hashed (a folder of many files, a night of several journals)."""
    if len(paths) < 2:
        return [inspect(path) for path in paths]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(len(paths), INSPECT_THREADS)) as pool:
        return list(pool.map(inspect, paths))


INSPECT_THREADS = 2


class _Unsettled(Exception):
    """A file's inspection, made while its lines were read, found what the read could not assume."""


def _load_beside_inspection(con: duckdb.DuckDBPyConnection, group: list[tuple[Path, bool]], fmt,
                            forced: bool) -> tuple[list[FileResult], list[str]] | None:
    """New files of a line format, loaded while they are hashed and counted, not after (issue 48).

    DuckDB reads the lines and ``inspect`` reads the bytes at once (both release the GIL): the
    inspection's facts are waited for only where they are used (the line count, a raw CR, the last
    newline; the hash when the file is recorded). A file the store has seen (its hash decides whether
    it is read at all) or any surprise (unreadable, a failure to pin on one file) gives None: the
    caller loads the batch the usual way, inspecting first, with the same result.
    """
    if getattr(fmt, "input", None) != "lines" or recorded_many(con, [stored_name(path) for path, _ in group]):
        return None
    try:
        sources = [peeked(path) for path, _ in group]
    except OSError:
        return None
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=INSPECT_THREADS) as pool:
        found = [pool.submit(inspect, path) for path, _ in group]

        def settle_all() -> None:
            for source, future in zip(sources, found):
                facts = future.result()
                if facts.error or facts.gzip != source.gzip:
                    raise _Unsettled(source.name)
                settle(source, facts)

        try:
            return _load_transaction(con, [(source, None) for source in sources], fmt, forced, settle_all)
        except (_Unsettled, duckdb.Error, *FILE_FAILURES):  # (a store failure is a StoreError by now: not caught)
            return None


def _load_transaction(con: duckdb.DuckDBPyConnection, todo: list[tuple[Source, tuple | None]], fmt,
                      forced: bool, settle: Callable[[], None] | None = None,
                      tail: Checkpoint | None = None) -> tuple[list[FileResult], list[str]]:
    """Load ``todo`` in one transaction; with ``tail``, one file from that checkpoint on (its copy in ``todo``)."""
    sources = [source for source, _ in todo]
    where = sources[0].name if len(sources) == 1 else f"a batch of {len(sources)} files from {sources[0].name}"
    aliases = Aliases(sources, decompress=getattr(fmt, "input", None) != "lines")
    with aliases, store_failures(where, aliases.inputs):
        if getattr(fmt, "input", None) == "lines":
            # Outside the transaction: a file DuckDB's reader refuses must not abort it (see lines.py).
            try:
                load_lines_many(con, sources, settle)
            except BaseException as exc:
                if is_interrupt(exc):  # staged only: nothing to undo
                    raise Interrupted(where) from exc
                raise
        con.execute("create or replace temp table _takeovers (path varchar)")
        before = durability.mark(con)
        con.execute("begin")
        try:
            reloads = []
            for source, previous in todo:
                if tail is not None:
                    forget_tail(con, source.name, tail)
                elif previous:
                    reloads += forget_file(con, source.name)
            counts = fmt.load(con, sources, forced)
            reloads += [row[0] for row in con.execute("select path from _takeovers").fetchall()]
            results = _record(con, todo, counts, fmt, forced, tail)
            con.execute("delete from pending_reloads where path in (select unnest($paths))",
                        {"paths": [source.name for source, _ in todo]})
            con.execute("commit")
        except duckdb.InterruptException as exc:  # Ctrl-C while DuckDB ran the load: nothing of it is kept
            _rollback(con)
            raise Interrupted(where) from exc
        except duckdb.Error as exc:
            _rollback(con)
            if store_failure(exc, aliases.inputs):
                durability.undo(con, before)  # a commit's own checkpoint may have failed after the log was written
                raise  # the store, not the file: store_failures says so
            raise load_failure(exc, fmt.name) from exc
        except BaseException as exc:
            _rollback(con)
            if is_interrupt(exc):  # Ctrl-C in Python, or DuckDB's RuntimeError for the query it stopped
                raise Interrupted(where) from exc
            raise
        finally:
            for table in ("_takeovers", "_lines", "_files"):
                try:
                    con.execute(f"drop table if exists {table}")
                except duckdb.Error:
                    pass
    durability.save(con, where, before)
    loaded = {source.name for source in sources}
    return results, [path for path in dict.fromkeys(reloads) if path not in loaded]


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("rollback")
    except duckdb.Error:
        pass  # the failure already ended the transaction (or the database): nothing was committed


def _record(con: duckdb.DuckDBPyConnection, todo: list[tuple[Source, tuple | None]], counts, fmt,
            forced: bool, tail: Checkpoint | None = None) -> list[FileResult]:
    """Check each file's accounting and write the records and checkpoints, in one statement each (only now: a
    record means it loaded). After a tail read the record counts the lines kept from before it too."""
    results = []
    before = (tail.resume_line - 1, tail.prefix_loaded, tail.prefix_rejected, tail.prefix_skipped) if tail else (0, 0, 0, 0)
    for number, (source, previous) in enumerate(todo, 1):
        path, count = source.name, counts[number]
        # blank lines are skipped wherever they are: a file of nothing else is no evidence of a wrong format, and
        # loads nothing, as an empty file does
        blank_only = count.skipped_by.get("blank line", 0) == count.lines
        if forced and count.lines and not count.loaded and not before[1] and not blank_only:
            first = con.execute("select line, reason from rejects where path = ? order by line limit 1", [path]).fetchall()
            why = (f"line {first[0][0]}: {first[0][1]}" if first
                   else f"every line was skipped: {count.notes[0]}" if count.notes else "every line was skipped")
            raise UnknownFormat(f"{path}: --format {fmt.name} expects {with_article(fmt.description)}; none of its {count.lines} "
                                f"lines is one ({why}). Leave --format out to detect the format.")
        if count.loaded + count.rejected + count.skipped != count.lines:
            raise InternalError(f"{path}: accounting does not add up ({count}); nothing was loaded")
        status, why = "replaced" if previous and previous[0] else "loaded", None
        if tail is not None:
            status = "grown"
        if count.rejected and not count.loaded and not before[1]:  # nothing of it could be read: failed, never "loaded"
            first = con.execute("select line, reason from rejects where path = ? order by line limit 1", [path]).fetchall()
            unit = "record" if getattr(fmt, "input", None) == "document" else "line"
            status = "failed"
            why = (f"nothing of it could be read as {fmt.name}: every {unit} it holds was rejected"
                   + (f" ({unit} {first[0][0]}: {first[0][1]})" if first else "") + "; see its rejected lines")
        results.append(FileResult(path, fmt.name, status, count.lines, count.loaded, count.rejected, count.skipped,
                                  [*count.notes, *([why] if why else [])], count.skipped_by,
                                  read_from(tail) if tail is not None and status == "grown" else None))
    sources = [source for source, _ in todo]
    totals = [(before[0] + r.lines, before[1] + r.loaded, before[2] + r.rejected, before[3] + r.skipped) for r in results]
    # the lists are unnested side by side: one row a file
    con.execute("insert into ingested_files by name select unnest($path) as path, unnest($sha256) as sha256, "
                "$format as format, unnest($size)::bigint as size_bytes, unnest($lines)::bigint as lines, "
                "unnest($loaded)::bigint as loaded, unnest($rejected)::bigint as rejected, "
                "unnest($skipped)::bigint as skipped, $now as ingested_at, unnest($mtime)::bigint as mtime_ns, "
                "unnest($status) as status, unnest($reason) as reason",
                {"status": ["failed" if r.status == "failed" else "loaded" for r in results],
                 "reason": [r.notes[-1] if r.status == "failed" else None for r in results],
                 "path": [s.name for s in sources], "sha256": [s.sha256 for s in sources], "format": fmt.name,
                 "size": [s.size for s in sources], "lines": [t[0] for t in totals],
                 "loaded": [t[1] for t in totals], "rejected": [t[2] for t in totals],
                 "skipped": [t[3] for t in totals], "now": datetime.now(timezone.utc),
                 # a failed file's stamp is not kept: the next ingest reads it again (and says again that it failed)
                 "mtime": [None if r.status == "failed" else s.mtime_ns for s, r in zip(sources, results)]})
    record_checkpoints(con, [(s, counts[n].resume, tail) for n, (s, r) in enumerate(zip(sources, results), 1)
                             if s.mark is not None and counts[n].resume is not None and r.status != "failed"])
    return results


def _in_transaction(con: duckdb.DuckDBPyConnection, work: Callable[[], object], what: str) -> None:
    with durability.unit(con, what):
        work()


__all__ = ["ingest", "discover", "IngestReport"]


def record_format_facts(con: duckdb.DuckDBPyConnection) -> bool:
    """Write what each installed format records into ``format_facts`` if the store says otherwise; True if written.

    The store's views and the checks read the table; the formats are known here, at the ingest.
    The caller owns the transaction.
    """
    rows = sorted(format_fact_rows())
    held = con.execute("select format, fact, recorded, how, inferred from format_facts order by all").fetchall()
    if [tuple(row) for row in rows] == held:
        return False
    con.execute("delete from format_facts")
    insert_rows(con, "format_facts", rows)
    return True
