"""Ingest files into the canonical store: discover, detect, load each file in one transaction.

Files are loaded in path order, so that a run kept in several files belongs to the first of them
(``bookkeeping``), and the store after any sequence of ingests equals a fresh ingest of the files
as they are now: an unchanged file (same SHA-256, same format) is left alone, a changed one
replaces its earlier rows, a file that is gone from a folder being ingested is forgotten, and a
file whose runs another file outranked or gave up is loaded again.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import date, datetime, timezone
from pathlib import Path

import duckdb

from ..errors import BadInput, InternalError, StoreError, UnknownFormat
from ..pricing import resolve as resolve_prices
from .bookkeeping import forget_file, recorded, stamps, unchanged_by_stamp
from .discovery import discover, vanished
from .files import Aliases, Source, inspect
from .lines import load_lines_many
from .ranges import EARLIEST, LATEST, set_window
from .result import FileResult, IngestReport, PassedOver

ProgressHook = Callable[[Path, int, int], None]  # (file about to load, its position, files in all)

BATCH_FILES = 400  # files of a batch-capable format loaded per statement set and transaction
BATCH_BYTES = 256 * 1024 * 1024


def ingest(con: duckdb.DuckDBPyConnection, paths: Iterable[str | Path], format: str | None = None,
           progress: ProgressHook | None = None, window: tuple[date, date] | None = None,
           discovered: list[tuple[Path, bool]] | None = None) -> IngestReport:
    """Load every recognised file under ``paths``; unchanged files are left as they are.

    ``window`` is the ``[earliest, latest)`` a recorded timestamp must fall in (``ranges``).
    ``discovered``: ``(file, named explicitly)`` pairs someone else listed (a shard of a distributed
    ingest), loaded instead of walking ``paths``.
    """
    forced = _forced_format(format)
    set_window(con, *(window or (EARLIEST, LATEST)))
    report = IngestReport()
    found, folders = (discovered, []) if discovered is not None else discover(paths, report.passed_over)
    queue: list[tuple[str, bool, bool]] = []  # (path, named explicitly, must reload even if unchanged)
    for path, explicit in found:
        heapq.heappush(queue, (str(path), explicit, False))
    for path in vanished(con, folders):
        _in_transaction(con, lambda p=path: _requeue(queue, forget_file(con, p)))
        report.forgotten.append(path)
    done, known = 0, stamps(con)  # files loaded during this ingest are new: their stamps are not needed
    while queue:
        group, fmt = _next_group(con, queue, forced, report, known)
        if not group:
            continue
        if progress:
            progress(Path(group[0][0]), done, done + len(queue) + len(group))
        done += len(group)
        results, reloads = load_files(con, group, fmt, forced is not None)
        again = {str(path) for path in reloads}  # taken over by a fuller copy: its result is the one after
        report.files = [f for f in report.files if f.path not in again] + [f for f in results if f.path not in again]
        _requeue(queue, reloads)
    report.files.sort(key=lambda f: f.path)
    if any(f.loaded for f in report.files):
        resolve_prices(con)  # new models or days: price them once, here, not in every query
    return report


def _requeue(queue: list, paths: Iterable[str]) -> None:
    for path in paths:
        if os.path.exists(path):
            heapq.heappush(queue, (path, False, True))


def _next_group(con: duckdb.DuckDBPyConnection, queue: list, forced, report: IngestReport,
                known: dict) -> tuple[list[tuple[Path, bool]], object]:
    """The next file in path order and, for a format that batches, the next ones of the same format.

    A file once loaded that is no longer of any format (emptied, overwritten) is forgotten, as a
    fresh ingest would not have its runs.
    """
    from ..formats import FORMATS
    from ..formats.detect import Unreadable, detect

    path, explicit, reload = heapq.heappop(queue)
    while queue and queue[0][0] == path:  # queued twice (found, and to reload): once is enough
        reload = heapq.heappop(queue)[2] or reload
    same = None if reload else unchanged_by_stamp(known, path, forced.name if forced else None)
    if same:
        report.files.append(FileResult(path, same, "unchanged", 0, 0, 0, 0))
        return [], None  # the same size and modification time as when it loaded: not even opened
    try:
        fmt, found = (forced, "") if forced else detect(Path(path))
    except Unreadable as exc:
        report.files.append(FileResult(path, "unknown", "unreadable", 0, 0, 0, 0, [str(exc)]))
        return [], None
    if fmt is None:
        if explicit:
            raise UnknownFormat(f"{path}: not a format reconcile reads (found {found}). Known formats: "
                                f"{', '.join(FORMATS)}. Use --format NAME to force one.")
        report.passed_over.append(PassedOver(path, f"not a recognised format: {found}"))
        if recorded(con, path) is not None:
            _in_transaction(con, lambda: _requeue(queue, forget_file(con, path)))
            report.forgotten.append(path)
        return [], None
    group = [(Path(path), reload)]
    size = _size(path)
    while fmt.batch and queue and len(group) < BATCH_FILES and size < BATCH_BYTES:
        following, _, again = queue[0]
        try:
            if forced is None and detect(Path(following))[0] is not fmt:
                break
        except Unreadable:
            break  # reported when its turn comes
        heapq.heappop(queue)
        group.append((Path(following), again))
        size += _size(following)
    return group, fmt


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _forced_format(name: str | None):
    from ..formats import FORMATS

    if name is None:
        return None
    if name not in FORMATS:
        raise BadInput(f"--format {name!r} is not a known format. Known formats: {', '.join(FORMATS)}.")
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
    results, todo = [], []
    for path, reload in group:
        source = inspect(path)
        if source.error:
            results.append(FileResult(str(path), fmt.name, "unreadable", 0, 0, 0, 0, [source.error]))
            continue
        previous = recorded(con, str(path))
        if previous == (source.sha256, fmt.name) and not reload:
            results.append(FileResult(str(path), fmt.name, "unchanged", 0, 0, 0, 0))
            if source.mtime_ns is not None:  # same content, now a stamp to trust: next time it is not read
                con.execute("update ingested_files set mtime_ns = ? where path = ?", [source.mtime_ns, str(path)])
        else:
            todo.append((source, previous is not None))
    if not todo:
        return results, []
    if len(todo) > 1:
        try:
            loaded, reloads = _load_transaction(con, todo, fmt, forced)
            return results + loaded, reloads
        except (InternalError, UnknownFormat):
            pass  # one of them is bad: find out which, file by file
    reloads = []
    for item in todo:
        loaded, again = _load_transaction(con, [item], fmt, forced)
        results += loaded
        reloads += again
    return results, reloads


def _load_transaction(con: duckdb.DuckDBPyConnection, todo: list[tuple[Source, bool]], fmt,
                      forced: bool) -> tuple[list[FileResult], list[str]]:
    sources = [source for source, _ in todo]
    where = sources[0].path if len(sources) == 1 else f"a batch of {len(sources)} files from {sources[0].path}"
    with Aliases(sources, decompress=getattr(fmt, "input", None) != "lines"), _store_failures(where):
        if getattr(fmt, "input", None) == "lines":
            # Outside the transaction: a file DuckDB's reader refuses must not abort it (see lines.py).
            load_lines_many(con, sources)
        con.execute("create or replace temp table _takeovers (path varchar)")
        con.execute("begin")
        try:
            reloads = []
            for source, replaced in todo:
                if replaced:
                    reloads += forget_file(con, str(source.path))
            counts = fmt.load(con, sources, forced)
            reloads += [row[0] for row in con.execute("select path from _takeovers").fetchall()]
            results = [_record(con, source, replaced, counts[number], fmt, forced)
                       for number, (source, replaced) in enumerate(todo, 1)]
            con.execute("commit")
        except duckdb.Error as exc:
            _rollback(con)
            if _store_failure(exc):
                raise  # the store, not the file: _store_failures says so
            raise InternalError(f"Loading {where} as {fmt.name} failed inside DuckDB; nothing was loaded. {exc}") from exc
        except BaseException:
            _rollback(con)
            raise
        finally:
            for table in ("_takeovers", "_lines", "_files"):
                try:
                    con.execute(f"drop table if exists {table}")
                except duckdb.Error:
                    pass
    loaded = {str(source.path) for source in sources}
    return results, [path for path in dict.fromkeys(reloads) if path not in loaded]


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    try:
        con.execute("rollback")
    except duckdb.Error:
        pass  # the failure already ended the transaction (or the database): nothing was committed


@contextmanager
def _store_failures(where) -> Iterator[None]:
    """A store that cannot be written (disk full, file too large, out of memory) is a StoreError, not a bug."""
    try:
        yield
    except duckdb.Error as exc:
        if not _store_failure(exc):
            raise
        raise StoreError(f"Writing the store failed while loading {where}: {_first_line(exc)}. Nothing from it "
                         "was saved (the transaction was rolled back). Free disk space or memory (or give "
                         "--db on a larger disk), then run the ingest again.") from exc


def _store_failure(exc: duckdb.Error) -> bool:
    """Whether DuckDB failed on the store itself (its disk, its memory), not on the data."""
    if isinstance(exc, (duckdb.IOException, duckdb.OutOfMemoryException, duckdb.FatalException)):
        return True
    return isinstance(exc, duckdb.TransactionException) and "Failed to commit" in str(exc)


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _record(con: duckdb.DuckDBPyConnection, source: Source, replaced: bool, counts, fmt, forced: bool) -> FileResult:
    """Check one file's accounting and write its record (only now: a file's record means it loaded)."""
    path = str(source.path)
    if forced and counts.lines and not counts.loaded:
        first = con.execute("select line, reason from rejects where path = ? order by line limit 1", [path]).fetchall()
        why = (f"line {first[0][0]}: {first[0][1]}" if first
               else f"every line was skipped: {counts.notes[0]}" if counts.notes else "every line was skipped")
        raise UnknownFormat(f"{path}: --format {fmt.name} expects a {fmt.description}; none of its {counts.lines} "
                            f"lines is one ({why}). Leave --format out to detect the format.")
    if counts.loaded + counts.rejected + counts.skipped != counts.lines:
        raise InternalError(f"{path}: accounting does not add up ({counts}); nothing was loaded")
    con.execute("insert into ingested_files by name select ? as path, ? as sha256, ? as format, ? as size_bytes, "
                "? as lines, ? as loaded, ? as rejected, ? as skipped, ? as ingested_at, ? as mtime_ns",
                [path, source.sha256, fmt.name, source.size, counts.lines, counts.loaded, counts.rejected,
                 counts.skipped, datetime.now(timezone.utc), source.mtime_ns])
    return FileResult(path, fmt.name, "replaced" if replaced else "loaded", counts.lines, counts.loaded,
                      counts.rejected, counts.skipped, counts.notes)


def _in_transaction(con: duckdb.DuckDBPyConnection, work: Callable[[], object]) -> None:
    con.execute("begin")
    try:
        work()
        con.execute("commit")
    except BaseException:
        con.execute("rollback")
        raise


__all__ = ["ingest", "discover", "IngestReport"]
