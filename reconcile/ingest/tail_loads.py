"""The driver's tail loads: each grown line file loaded from its checkpoint on (``tail``), and what ``ingest -v``
says of how a changed file was read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb

from reconcile.ingest.failures import FILE_FAILURES, reason
from reconcile.ingest.files import stamp, stored_name
from reconcile.ingest.result import FileResult
from reconcile.ingest.tail import (UNCHANGED, Checkpoint, TailConflict, checkpoints, read_tail, reads_tails,
                                   remove_folder, tail_folder)


def said_whole(results: list[FileResult], why: dict[str, str], fmt) -> list[FileResult]:
    """Say, for ``ingest -v``, why a file loaded before was read whole rather than from where it was left."""
    for result in results:
        if result.status == "replaced":
            because = why.get(result.path) or getattr(fmt, "whole", None)
            result.read = f"read whole: {because}" if because else "read whole"
    return results


def load_tails(con: duckdb.DuckDBPyConnection, group: list[tuple[Path, bool]], fmt, forced: bool, load: Callable
               ) -> tuple[list[FileResult], list[str], list[tuple[Path, bool]], dict[str, str]]:
    """Load each grown file of ``group`` from its checkpoint on (``tail``), each in its own transaction (``load``:
    the driver's transaction for a list of sources, given ``tail=`` the checkpoint).

    Returns the results, the files to load again, the files left to read whole and, by stored name,
    why a checkpointed file must be read whole (for ``ingest -v``).
    """
    results, reloads, rest, why = [], [], [], {}
    if not reads_tails(fmt):
        return results, reloads, group, why
    marks = checkpoints(con, [stored_name(path) for path, reload in group if not reload], fmt.name)
    for path, reload in group:
        mark = marks.get(stored_name(path))
        if mark is None:
            rest.append((path, reload))
            continue
        checkpoint, sha256 = mark
        try:
            folder = tail_folder()
        except OSError as exc:  # no room for the copy in the temporary folder: the file is read whole, in place
            why[checkpoint.path] = f"its new lines could not be copied ({exc.strerror or exc})"
            rest.append((path, reload))
            continue
        try:
            try:
                found = read_tail(str(path), checkpoint, folder, sha256)
            except OSError as exc:
                found = f"its new lines could not be copied ({exc.strerror or exc})"
            if found == UNCHANGED:  # its time changed, its bytes did not: a stamp to trust next time
                results.append(FileResult(checkpoint.path, fmt.name, "unchanged", 0, 0, 0, 0))
                con.execute("update ingested_files set mtime_ns = ? where path = ?", [_stamp(path), checkpoint.path])
                continue
            if isinstance(found, str):
                why[checkpoint.path] = found
                rest.append((path, reload))
                continue
            try:
                loaded, again = load(con, [(found, ("tail", fmt.name))], fmt, forced, tail=checkpoint)
            except TailConflict as exc:
                why[checkpoint.path] = str(exc)
                rest.append((path, reload))
                continue
            except FILE_FAILURES as exc:  # read whole, the failure (if it is one) is recorded as for any file
                why[checkpoint.path] = f"its new lines could not be loaded ({reason(exc)})"
                rest.append((path, reload))
                continue
            results += loaded
            reloads += again
        finally:
            remove_folder(folder)
    return results, reloads, rest, why


def _stamp(path: Path) -> int | None:
    try:
        return stamp(path)
    except OSError:
        return None


def read_from(tail: Checkpoint) -> str:
    return f"read from line {tail.resume_line:,} on (the lines before it are as they were loaded)"
