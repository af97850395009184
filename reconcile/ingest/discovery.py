"""Finding the files to ingest: files, folders (recursively) and globs; and the ones that are gone.

A folder is walked without following links to folders (a link loop cannot trap the walk); a
folder that cannot be read, and a link that leads nowhere, are passed over with the reason. A
file once ingested from under a folder being ingested again, that is no longer there, is gone:
its runs go with it, as a fresh ingest of the folder would have it.
"""

from __future__ import annotations

import glob
import os
import stat
from collections.abc import Iterable
from pathlib import Path

import duckdb

from reconcile.errors import BadInput
from reconcile.ingest.files import on_disk, stored_name
from reconcile.ingest.result import PassedOver

SKIP_DIRS = {".git", "__pycache__", ".venv", "node_modules"}
GLOB_CHARACTERS = "*?["


def discover(paths: Iterable[str | Path], passed_over: list[PassedOver]) -> tuple[list[tuple[Path, bool]], list[Path]]:
    """``(file, named_explicitly)`` pairs in path order, and the folders walked."""
    found: dict[Path, bool] = {}
    folders: list[Path] = []
    for raw in paths:
        text = str(raw)
        path = Path(text).expanduser()
        kind = _kind(path)
        if kind == "file":
            found[path.resolve()] = True
        elif kind == "folder":
            folders.append(path.resolve())
            for child in _walk(path, passed_over):
                found.setdefault(child, False)
        elif kind != "missing":
            raise BadInput(f"{text}: {kind}. Give a journal file, a folder or a glob.")
        elif any(ch in text for ch in GLOB_CHARACTERS):
            matches = sorted(glob.glob(str(path), recursive=True))
            if not matches:
                raise BadInput(f"No file matches {text!r}. Check the pattern, or quote it so the shell leaves it alone.")
            for match in matches:
                matched = Path(match)
                kind = _kind(matched)
                if kind == "file":
                    found.setdefault(matched.resolve(), False)
                elif kind == "folder":
                    folders.append(matched.resolve())
                    for child in _walk(matched, passed_over):
                        found.setdefault(child, False)
                elif kind != "missing":
                    passed_over.append(PassedOver(stored_name(match), kind))
        else:
            raise BadInput(f"No such file or folder: {text}. Give a journal file, a folder or a glob.")
    return sorted(found.items()), folders


def _walk(top: Path, passed_over: list[PassedOver]) -> list[Path]:
    files = []

    def unreadable(error: OSError) -> None:
        passed_over.append(PassedOver(stored_name(str(error.filename)), f"cannot read the folder: {error.strerror}"))

    for folder, subfolders, names in os.walk(top, onerror=unreadable, followlinks=False):
        linked = sorted(d for d in subfolders if os.path.islink(os.path.join(folder, d)))
        for name in linked:  # os.walk lists a link to a folder with the folders, and does not enter it
            passed_over.append(PassedOver(stored_name(Path(folder) / name), "a link to a folder, not followed (a link may "
                                          "loop back); give the folder itself to ingest it"))
        subfolders[:] = sorted(d for d in subfolders if d not in SKIP_DIRS and d not in linked)
        for name in sorted(names):
            child = Path(folder) / name
            kind = _kind(child)
            if kind == "file":
                files.append(child.resolve())
            else:
                passed_over.append(PassedOver(stored_name(child), "a link to a folder, not followed" if kind == "folder" else kind))
    return files


def _kind(path: Path) -> str:
    """``file``, ``folder`` or ``missing`` (links followed); else why the path cannot be ingested."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError) as exc:
        if os.path.islink(path):
            return "a symbolic link that leads nowhere (broken, or a loop)"
        if isinstance(exc, FileNotFoundError):
            return "missing"
        return f"cannot look at it: {getattr(exc, 'strerror', None) or exc}"
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "folder"
    return "not a regular file (a pipe, socket or device): there is nothing to load"


def vanished(con: duckdb.DuckDBPyConnection, folders: list[Path]) -> list[str]:
    """Files ingested from under ``folders`` that are no longer there."""
    gone = []
    for folder in folders:
        prefix = str(folder).rstrip(os.sep) + os.sep
        rows = con.execute("select path from ingested_files where starts_with(path, ?) order by path", [prefix]).fetchall()
        gone += [path for (path,) in rows if not os.path.exists(on_disk(path))]
    return gone
