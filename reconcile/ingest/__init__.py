"""Ingest files into the canonical store: discover, detect, load each file in one transaction."""

from __future__ import annotations

import glob
import hashlib
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from ..errors import BadInput, InternalError, UnknownFormat
from .lines import load_lines_many
from ..pricing import resolve as resolve_prices
from .result import FileResult, IngestReport, PassedOver

ProgressHook = Callable[[Path, int, int], None]  # (file about to load, its position, files in all)

_SKIP_DIRS = {".git", "__pycache__", ".venv", "node_modules"}


def discover(paths: Iterable[str | Path]) -> list[tuple[Path, bool]]:
    """Expand files, folders (recursively) and globs into ``(file, named_explicitly)`` pairs."""
    found: dict[Path, bool] = {}
    for raw in paths:
        text = str(raw)
        path = Path(text).expanduser()
        if path.is_file():
            found[path.resolve()] = True
        elif path.is_dir():
            for child in sorted(path.rglob("*")):
                if child.is_file() and not _SKIP_DIRS.intersection(child.relative_to(path).parts):
                    found.setdefault(child.resolve(), False)
        elif any(ch in text for ch in "*?["):
            matches = sorted(glob.glob(str(Path(text).expanduser()), recursive=True))
            if not matches:
                raise BadInput(f"No file matches {text!r}. Check the pattern, or quote it so the shell leaves it alone.")
            for match in matches:
                for child, _ in discover([match]):
                    found.setdefault(child, False)
        else:
            raise BadInput(f"No such file or folder: {text}. Give a journal file, a folder or a glob.")
    return sorted(found.items())


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


BATCH_FILES = 400  # files of a batch-capable format loaded per statement set and transaction
BATCH_BYTES = 256 * 1024 * 1024


def ingest(con: duckdb.DuckDBPyConnection, paths: Iterable[str | Path], format: str | None = None,
           progress: ProgressHook | None = None) -> IngestReport:
    """Load every recognised file under ``paths``; unchanged files are left as they are."""
    from ..formats import FORMATS
    from ..formats.detect import detect

    forced = _forced_format(format)
    report = IngestReport()
    found_files = discover(paths)
    pending: dict[str, list[Path]] = {}  # files of each batch-capable format, loaded together
    pending_bytes: dict[str, int] = {}
    for position, (path, explicit) in enumerate(found_files):
        fmt, found = (forced, "") if forced else detect(path)
        if fmt is None:
            if explicit:
                known = ", ".join(FORMATS)
                raise UnknownFormat(
                    f"{path}: not a format reconcile reads (found {found}). Known formats: {known}. "
                    f"Use --format NAME to force one."
                )
            report.passed_over.append(PassedOver(str(path), f"not a recognised format: {found}"))
            continue
        if progress:
            progress(path, position, len(found_files))
        if not fmt.batch:
            report.files += load_files(con, [path], fmt, forced is not None)
            continue
        pending.setdefault(fmt.name, []).append(path)
        pending_bytes[fmt.name] = pending_bytes.get(fmt.name, 0) + path.stat().st_size
        if len(pending[fmt.name]) >= BATCH_FILES or pending_bytes[fmt.name] >= BATCH_BYTES:
            report.files += load_files(con, pending.pop(fmt.name), fmt, forced is not None)
            pending_bytes.pop(fmt.name)
    for name, batch in pending.items():
        report.files += load_files(con, batch, FORMATS[name], forced is not None)
    report.files.sort(key=lambda f: f.path)
    if any(f.loaded for f in report.files):
        resolve_prices(con)  # new models or days: price them once, here, not in every query
    return report


def _forced_format(name: str | None):
    from ..formats import FORMATS

    if name is None:
        return None
    if name not in FORMATS:
        raise BadInput(f"--format {name!r} is not a known format. Known formats: {', '.join(FORMATS)}.")
    return FORMATS[name]


def load_files(con: duckdb.DuckDBPyConnection, paths: list[Path], fmt, forced: bool = False) -> list[FileResult]:
    """Load files of one format in one transaction: each file is whole or absent, never half.

    Unchanged files (same SHA-256 as when last ingested) are left alone; a changed file replaces
    its earlier rows. With a format the user forced, a file none of whose lines is of that
    format is an error (nothing is loaded), not a file full of rejects. Several files of a
    format that can batch go through one transaction; if such a batch fails, its files are
    retried one by one so the failure is pinned on one file.
    """
    results, todo = [], []
    for path in paths:
        source, sha = str(path), file_sha256(path)
        previous = con.execute("select sha256 from ingested_files where path = ?", [source]).fetchall()
        if previous and previous[0][0] == sha:
            results.append(FileResult(source, fmt.name, "unchanged", 0, 0, 0, 0))
        else:
            todo.append((path, sha, bool(previous)))
    if not todo:
        return results
    if len(todo) > 1:
        try:
            return results + _load_transaction(con, todo, fmt, forced)
        except (InternalError, UnknownFormat):
            pass  # one of them is bad: find out which, file by file
    for item in todo:
        results += _load_transaction(con, [item], fmt, forced)
    return results


def _load_transaction(con: duckdb.DuckDBPyConnection, todo: list[tuple[Path, str, bool]], fmt,
                      forced: bool) -> list[FileResult]:
    paths = [path for path, _, _ in todo]
    if getattr(fmt, "input", None) == "lines":
        # Outside the transaction: a file DuckDB's reader refuses must not abort it (see lines.py).
        load_lines_many(con, paths)
    con.execute("begin")
    try:
        for path, _, replaced in todo:
            if replaced:
                _forget_file(con, str(path))
        counts = fmt.load(con, paths, forced)
        results = []
        for number, (path, sha, replaced) in enumerate(todo, 1):
            source, file_counts = str(path), counts[number]
            if forced and file_counts.rejected and not file_counts.loaded:
                first = con.execute("select reason from rejects where path = ? order by line limit 1",
                                    [source]).fetchall()
                raise UnknownFormat(f"{path}: --format {fmt.name} expects a {fmt.description}; none of its "
                                    f"{file_counts.lines} lines is one (line 1: {first[0][0] if first else '?'}). "
                                    "Leave --format out to detect the format.")
            if file_counts.loaded + file_counts.rejected + file_counts.skipped != file_counts.lines:
                raise InternalError(f"{source}: accounting does not add up ({file_counts}); nothing was loaded")
            con.execute(
                "insert into ingested_files values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [source, sha, fmt.name, path.stat().st_size, file_counts.lines, file_counts.loaded,
                 file_counts.rejected, file_counts.skipped, datetime.now(timezone.utc)],
            )
            results.append(FileResult(source, fmt.name, "replaced" if replaced else "loaded", file_counts.lines,
                                      file_counts.loaded, file_counts.rejected, file_counts.skipped, file_counts.notes))
        con.execute("commit")
    except duckdb.Error as exc:
        con.execute("rollback")
        where = paths[0] if len(paths) == 1 else f"a batch of {len(paths)} files from {paths[0]}"
        raise InternalError(f"Loading {where} as {fmt.name} failed inside DuckDB; nothing was loaded. {exc}") from exc
    except BaseException:
        con.execute("rollback")
        raise
    return results


def _forget_file(con: duckdb.DuckDBPyConnection, source: str) -> None:
    owned = "select run_id from runs where source_file = $source"
    for table in ("steps", "tool_calls", "run_tools"):
        con.execute(f"delete from {table} where run_id in ({owned})", {"source": source})
    con.execute("delete from runs where source_file = $source", {"source": source})
    con.execute("delete from rejects where path = $source", {"source": source})
    con.execute("delete from usage_buckets where source_file = $source", {"source": source})
    con.execute("delete from billed_costs where source_file = $source", {"source": source})
    con.execute("delete from ingested_files where path = $source", {"source": source})


__all__ = ["ingest", "discover", "IngestReport"]
