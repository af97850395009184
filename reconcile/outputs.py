"""Writing what a command produces (reports, findings): one place that checks where, and writes whole.

A report is written to a temporary file beside its target and renamed over it, so a failure
midway (a full disk, an interrupt) leaves the previous report, never half of a new one. Where it
cannot be written — a folder given as the file, a file given as the folder, no permission, a
read-only file system — the error names the path and the fix.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from reconcile.errors import BadInput


def check_file_target(path: Path, option: str = "--out") -> None:
    """Refuse an output file path that is a folder, before any work is done for it."""
    if path.is_dir():
        raise BadInput(f"{option} {path} is a folder; give the file to write, e.g. {option} {path / 'report.html'}")


def check_folder_target(path: Path, option: str = "--out") -> None:
    """Refuse an output folder path that is an existing file."""
    if path.exists() and not path.is_dir():
        raise BadInput(f"{option} {path} is a file, not a folder; give a folder for the reports "
                       f"(it is created if missing), e.g. {option} {path.with_suffix('')}-reports")


def make_folder(path: Path, option: str = "--out") -> Path:
    check_folder_target(path, option)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BadInput(_cannot(path, exc, option)) from exc
    return path


def write_output(path: Path, text: str | bytes, option: str = "--out") -> Path:
    """Write ``text`` (or bytes) to ``path`` whole (temporary file, then rename), creating its folder."""
    check_file_target(path, option)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
        try:
            with os.fdopen(handle, "wb") as raw:  # on the disk before it takes the name: a crash leaves the old file
                raw.write(text if isinstance(text, bytes) else text.encode("utf-8"))
                raw.flush()
                os.fsync(raw.fileno())
            os.chmod(temporary, 0o644)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        raise BadInput(_cannot(path, exc, option)) from exc
    return path


def _cannot(path: Path, exc: OSError, option: str) -> str:
    blocking = next((parent for parent in path.parents if parent.exists() and not parent.is_dir()), None)
    if blocking is not None:
        return f"Cannot write {option} {path}: {blocking} is a file, not a folder. Give a path under a folder."
    return (f"Cannot write {option} {path}: {exc.strerror or exc}. Give a path in a folder you can write to "
            "(with free space).")
