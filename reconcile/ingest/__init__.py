"""Ingest files into the canonical store: discover, detect, load each file in one transaction."""

from __future__ import annotations

import glob
import hashlib
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from ..errors import BadInput, InternalError, UnknownFormat
from .detect import FORMATS, Format, detect
from .lines import load_lines
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


def ingest(con: duckdb.DuckDBPyConnection, paths: Iterable[str | Path], format: str | None = None,
           progress: ProgressHook | None = None) -> IngestReport:
    """Load every recognised file under ``paths``; unchanged files are left as they are."""
    forced = _forced_format(format)
    report = IngestReport()
    found_files = discover(paths)
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
        report.files.append(ingest_file(con, path, fmt, forced=forced is not None))
    return report


def _forced_format(name: str | None) -> Format | None:
    if name is None:
        return None
    if name not in FORMATS:
        raise BadInput(f"--format {name!r} is not a known format. Known formats: {', '.join(FORMATS)}.")
    return FORMATS[name]


def ingest_file(con: duckdb.DuckDBPyConnection, path: Path, fmt: Format, forced: bool = False) -> FileResult:
    """Load one file in one transaction; a changed file replaces its earlier rows atomically.

    With a format the user forced, a file none of whose lines is of that format is an error
    (nothing is loaded), not a file full of rejects.
    """
    source = str(path)
    sha = file_sha256(path)
    previous = con.execute("select sha256 from ingested_files where path = ?", [source]).fetchall()
    if previous and previous[0][0] == sha:
        return FileResult(source, fmt.name, "unchanged", 0, 0, 0, 0)
    if fmt.reads_lines:
        # Outside the transaction: a file DuckDB's reader refuses must not abort it (see lines.py).
        load_lines(con, path)
    con.execute("begin")
    try:
        _forget_file(con, source)
        counts = fmt.load(con, path, source)
        if forced and counts.rejected and not counts.loaded:
            first = con.execute("select reason from rejects where path = ? order by line limit 1", [source]).fetchall()
            raise UnknownFormat(f"{path}: --format {fmt.name} expects a {fmt.description}; none of its {counts.lines} "
                                f"lines is one (line 1: {first[0][0] if first else '?'}). "
                                "Leave --format out to detect the format.")
        if counts.loaded + counts.rejected + counts.skipped != counts.lines:
            raise InternalError(f"{source}: accounting does not add up ({counts}); nothing was loaded")
        con.execute(
            "insert into ingested_files values (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [source, sha, fmt.name, path.stat().st_size, counts.lines, counts.loaded, counts.rejected,
             counts.skipped, datetime.now(timezone.utc)],
        )
        con.execute("commit")
    except duckdb.Error as exc:
        con.execute("rollback")
        raise InternalError(f"Loading {source} as {fmt.name} failed inside DuckDB; nothing was loaded. {exc}") from exc
    except BaseException:
        con.execute("rollback")
        raise
    return FileResult(source, fmt.name, "replaced" if previous else "loaded", counts.lines, counts.loaded,
                      counts.rejected, counts.skipped, counts.notes)


def _forget_file(con: duckdb.DuckDBPyConnection, source: str) -> None:
    owned = "select run_id from runs where source_file = $source"
    for table in ("steps", "tool_calls", "run_tools"):
        con.execute(f"delete from {table} where run_id in ({owned})", {"source": source})
    con.execute("delete from runs where source_file = $source", {"source": source})
    con.execute("delete from rejects where path = $source", {"source": source})
    con.execute("delete from ingested_files where path = $source", {"source": source})


__all__ = ["ingest", "ingest_file", "discover", "IngestReport", "FORMATS"]
