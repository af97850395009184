"""The ingest's queue of files, in path order: the next file, or the next group of a format that loads files in batches;
a file unchanged since it loaded (not even opened), one that is no journal or transcript at all, one of no format
reconcile reads (passed over, or forgotten if it once loaded); a file queued again when its runs' owner was forgotten.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Iterable
from pathlib import Path

import duckdb

from reconcile import durability
from reconcile.formats import FORMATS
from reconcile.formats.detect import Foreign, Unreadable, detect
from reconcile.ingest.bookkeeping import forget_file, recorded, unchanged_by_stamp
from reconcile.ingest.failures import record_failure
from reconcile.ingest.files import Source, held, inspect, on_disk, stored_name
from reconcile.ingest.result import FileResult, IngestReport, PassedOver

# A batch's statements cost about the same for 40 files as for 2,000 (0.8 s a batch of Claude Code
# sessions), so small files go in large batches; the bytes bound a batch's memory (about 7x its bytes).
BATCH_FILES = 2000  # files of a batch-capable format loaded per statement set and transaction
BATCH_BYTES = 256 * 1024 * 1024


def not_given(con: duckdb.DuckDBPyConnection, found: list[tuple[Path, bool]]) -> list[str]:
    """Files the store holds that are not among ``found`` (in path order)."""
    return [path for (path,) in con.execute(
        "select path from ingested_files where path not in (select unnest($given)) order by path",
        {"given": [stored_name(path) for path, _ in found]}).fetchall()]


def requeue(queue: list, paths: Iterable[str]) -> None:
    for stored in paths:  # names as the store keeps them
        path = on_disk(stored)
        if os.path.exists(path):
            heapq.heappush(queue, (path, False, True))


def next_group(con: duckdb.DuckDBPyConnection, queue: list, forced, report: IngestReport,
                known: dict, hold: float | None = None) -> tuple[list[tuple[Path, bool]], object]:
    """The next file in path order and, for a format that batches, the next ones of the same format.

    A file once loaded that is no longer of any format (emptied, overwritten) is forgotten, as a
    fresh ingest would not have its runs.
    """

    path, explicit, reload = _pop(queue)
    if _unchanged(known, path, reload, forced, report) or held(path, hold, report):
        return [], None
    try:
        fmt, found = (forced, "") if forced else detect(Path(path))
    except Unreadable as exc:
        _failed(con, queue, report, path, "unreadable", str(exc))
        return [], None
    if fmt is None:
        if explicit and isinstance(found, Foreign):  # no text at all: no lines to count, no format to force
            _failed(con, queue, report, path, "failed", f"not a journal or transcript ({found})", lines=False)
            return [], None
        if explicit:  # named, so meant to be loaded: a failure, where a folder's odd file is passed over
            _failed(con, queue, report, path, "failed", f"not a format reconcile reads (found {found}). Known formats: "
                    f"{', '.join(FORMATS)}. Use --format NAME to force one.")
            return [], None
        report.passed_over.append(PassedOver(stored_name(path), f"not a recognised format: {found}"))
        if recorded(con, stored_name(path)) is not None:
            name = stored_name(path)
            with durability.unit(con, f"forgetting {name}"):
                requeue(queue, forget_file(con, name))
            report.forgotten.append(name)
        return [], None
    group = [(Path(path), reload)]
    size = _size(path)
    while fmt.batch and queue and len(group) < BATCH_FILES and size < BATCH_BYTES:
        following, follower_explicit, again = _pop(queue)
        if _unchanged(known, following, again, forced, report) or held(following, hold, report):
            continue  # a follower is held to its stamp as the first file is: an unchanged one is not opened
        try:
            other = forced is None and detect(Path(following))[0] is not fmt
        except Unreadable:
            other = True  # reported when its turn comes
        if other:
            heapq.heappush(queue, (following, follower_explicit, again))
            break
        group.append((Path(following), again))
        size += _size(following)
    return group, fmt


def _pop(queue: list) -> tuple[str, bool, bool]:
    """The next queued file; queued twice (found, and to reload), it is taken once, to reload."""
    path, explicit, reload = heapq.heappop(queue)
    while queue and queue[0][0] == path:
        _, again_explicit, again = heapq.heappop(queue)
        explicit, reload = explicit or again_explicit, reload or again
    return path, explicit, reload


def _unchanged(known: dict, path: str, reload: bool, forced, report: IngestReport) -> bool:
    """True (and reported) when ``path`` has the size and modification time it had when it loaded: not even opened."""
    same = None if reload else unchanged_by_stamp(known, path, forced.name if forced else None)
    if not same:
        return False
    report.files.append(FileResult(stored_name(path), same, "unchanged", 0, 0, 0, 0))
    return True


def _failed(con: duckdb.DuckDBPyConnection, queue: list, report: IngestReport, path: str, status: str,
            why: str, lines: bool = True) -> None:
    # its lines, read but not loaded (a file of no text has none: nothing of it is a rejected line)
    source = inspect(Path(path)) if status == "failed" and lines else Source(Path(path))
    result, reloads = record_failure(con, source, "unknown", status, why)
    report.files.append(result)
    requeue(queue, reloads)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0
