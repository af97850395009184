"""What a distributed ingest keeps between runs, so that a second run costs what changed.

Inside the dataset, in ``DIR/.reconcile-kept/`` (a hidden folder, which Spark, Hive and the readers of
the dataset pass by; the driver and the executors must share it, as they share the staging folder):

- ``shard-N.duckdb``: shard N's store — the ordinary single-machine store, with each file's checkpoint, so
  a file that grew is read by its tail, a file that is as it was costs a ``stat``, and a file no longer
  given is forgotten (``ingest(..., exactly=True)``);
- ``shard-N/``: that store's export (``reconcile export``: only the days whose rows changed are written);
- ``state.json``: the shard each folder group is in (a group stays in its shard from run to run; a new
  one goes to a new shard while there are fewer shards than tasks, else to the lightest), and for each
  shard the files it was given — their device, inode, size and modification time — when its export was
  last merged into the dataset.

A shard whose files are all as recorded is not sent to an executor: its export is merged as it is. Any
other shard is ingested again into its kept store and exported. Before its task starts a shard's files
are taken out of ``state.json``, and they are written back only after the dataset holding its export is
installed, so a run stopped anywhere leaves that shard to be ingested again, never trusted. Everything kept
is dropped, and built again, when the reconcile version, the store's schema or the ``--since``/``--until``
window differs from the run that kept it. A dataset in an object store keeps nothing: each run loads every
file (docs/scale-out.md).
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
from pathlib import Path

from reconcile.engines.export import KEPT_SHARDS as KEPT
from reconcile.errors import BadInput
from reconcile.store.migrations import MIGRATIONS
from reconcile.version import __version__

STATE = "state.json"


def stamp(path: str) -> list[int] | None:
    """A file's identity and size and modification time as a run records them (None: it cannot be read)."""
    try:
        status = os.stat(path)
    except OSError:
        return None
    return [status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns]


class KeptShards:
    """The kept folder of one dataset, locked for the length of one distributed ingest."""

    def __init__(self, dataset: Path, window_text: str) -> None:
        self.folder = dataset / KEPT
        self.folder.mkdir(parents=True, exist_ok=True)
        self._lock = open(self.folder / "lock", "a+")  # noqa: SIM115 — held until close()
        try:
            fcntl.flock(self._lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            self._lock.close()
            if exc.errno in (errno.EAGAIN, errno.EACCES):
                raise BadInput(f"another distributed ingest into {dataset} is running; wait for it to finish, "
                               "then ingest again; nothing was written") from None
            raise
        self.key = {"reconcile_version": __version__, "schema_version": len(MIGRATIONS), "window": window_text}
        state = self._read()
        if {k: state.get(k) for k in self.key} != self.key:  # another version or window kept it: start over
            for item in self.folder.iterdir():
                if item.name != "lock":
                    shutil.rmtree(item) if item.is_dir() else item.unlink()
            state = {}
        self.groups: dict[str, int] = {k: int(n) for k, n in state.get("groups", {}).items()}
        self.shards: dict[int, dict] = {int(n): facts for n, facts in state.get("shards", {}).items()}

    def close(self) -> None:
        self._lock.close()

    def store(self, shard: int) -> str:
        return str(self.folder / f"shard-{shard}.duckdb")

    def unchanged(self, shard: int, files: list[tuple[str, bool]]) -> bool:
        """Whether ``files`` are the files shard ``shard`` was given last time, each as it was then."""
        recorded = (self.shards.get(shard) or {}).get("files")
        if recorded is None or set(recorded) != {path for path, _ in files}:
            return False
        return all(stamp(path) == recorded[path] for path, _ in files)

    def summary(self, shard: int) -> dict:
        """What an unchanged shard reports: its files, all unchanged, and those no format reads, passed over."""
        facts = self.shards[shard]
        files, passed_over = len(facts["files"]), facts.get("passed_over", 0)
        return {"shard": shard, "files": files - passed_over, "lines": 0, "loaded": 0, "rejected": 0, "skipped": 0,
                "passed_over": passed_over, "unchanged": files - passed_over, "unreadable": "[]"}

    def begin(self, placed: dict[int, list[tuple[str, bool]]], groups: dict[str, int], todo: list[int]) -> None:
        """Record the groups' shards, and take the files of the shards about to be ingested out of the state."""
        self.groups = dict(groups)
        for number in todo:
            self.shards.pop(number, None)
        self.shards = {n: facts for n, facts in self.shards.items() if n in placed}
        self._write()

    def done(self, placed: dict[int, list[tuple[str, bool]]], stamps: dict[str, list[int] | None],
             summaries: list[dict]) -> None:
        """The dataset holding every shard's export is installed: record what each shard was given, and drop the
        stores of shards no longer given any file."""
        passed = {s["shard"]: s["passed_over"] for s in summaries}
        for number, files in placed.items():
            recorded = {path: stamps.get(path) for path, _ in files}
            if any(value is None for value in recorded.values()):  # a file that cannot be read is tried again
                self.shards.pop(number, None)
                continue
            self.shards[number] = {"files": recorded,
                                   "passed_over": passed.get(number, self.shards.get(number, {}).get("passed_over", 0))}
        for item in self.folder.iterdir():
            number = _shard_number(item.name)
            if number is not None and number not in placed:
                shutil.rmtree(item) if item.is_dir() else item.unlink()
        self._write()

    def _read(self) -> dict:
        try:
            state = json.loads((self.folder / STATE).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return state if isinstance(state, dict) else {}

    def _write(self) -> None:
        state = {**self.key, "groups": dict(sorted(self.groups.items())),
                 "shards": {str(n): facts for n, facts in sorted(self.shards.items())}}
        temporary = self.folder / f"{STATE}.new"
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(state, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.folder / STATE)


def _shard_number(name: str) -> int | None:
    """N of ``shard-N``, ``shard-N.duckdb`` and its ``.wal``; None for anything else."""
    if not name.startswith("shard-"):
        return None
    digits = name[len("shard-"):].split(".", 1)[0]
    return int(digits) if digits.isdigit() else None
