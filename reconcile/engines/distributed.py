"""``reconcile ingest --engine spark PATH… --to DIR``: the same loaders, spread over Spark's executors.

1. The driver lists the files (names only) and cuts them into shards by folder, so that a Claude
   Code session and its ``subagents/`` folder land in one shard and provider exports in another.
2. Each shard is a row of a Spark DataFrame; ``mapInArrow`` runs, on an executor, the ordinary
   single-machine ingest of its files into a private DuckDB store and exports that store
   (``reconcile export``) into a staging folder beside DIR. Executors need reconcile installed and
   that folder on a file system they share with the driver.
3. The merge (``merge.py``) makes the shards one dataset without reading their rows where it can:
   shards that share no run or provider bucket are disjoint, so the driver adds up their manifests
   (rows and fingerprints per day) and moves their files into DIR. Shards linked by a run or bucket
   they share form a group, settled in a task of its own on the executors: unioned, and the files
   holding what they share loaded once more, in path order, by the ordinary loader (the
   single-machine rule for a run kept in several files, applied by the same code). Only the days
   whose fingerprint changed are written.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from reconcile import store
from reconcile.engines.export import dataset_location, export, previous_manifest
from reconcile.engines.kept_shards import KeptShards, stamp
from reconcile.engines.merge import SETTLED, merge_shards, settle_part, window_of, window_text
from reconcile.engines.object_store import RemoteDataset
from reconcile.errors import BadInput
from reconcile.version import __version__
from reconcile.ingest.driver import ingest
from reconcile.ingest.discovery import discover
from reconcile.ingest.result import PassedOver


def shard_key(path: Path) -> str:
    """The folder a file is sharded by: its own, except that a ``subagents`` folder goes with the
    folder holding its session (``<project>/<session>/subagents/agent-1.jsonl`` → ``<project>``)."""
    parts = path.parts
    if "subagents" in parts:
        at = len(parts) - 1 - parts[::-1].index("subagents")
        return str(Path(*parts[: max(at - 1, 1)]))
    return str(path.parent)


def shards_of(files: list[tuple[Path, bool]], tasks: int | None = None) -> list[list[tuple[str, bool]]]:
    """The files cut into shards: grouped by folder (``shard_key``; a group is never split), and with ``tasks``
    the groups packed into at most that many shards of about equal bytes — the largest group first, each
    into the lightest shard so far — so no task gets several large folders while another idles."""
    placed, _ = place(files, tasks)
    return [placed[n] for n in sorted(placed)]


def place(files: list[tuple[Path, bool]], tasks: int | None = None,
          kept: dict[str, int] | None = None) -> tuple[dict[int, list[tuple[str, bool]]], dict[str, int]]:
    """``shards_of`` for a dataset that kept its shards: each folder group stays in the shard ``kept`` names; a
    new group goes to a shard of its own while there are fewer than ``tasks``, else (the largest first) to the
    lightest. Returns the shards by number, and each group's shard."""
    grouped: dict[str, list[tuple[str, bool]]] = {}
    for path, explicit in files:
        grouped.setdefault(shard_key(path), []).append((str(path), explicit))
    numbers = {key: (kept or {})[key] for key in grouped if key in (kept or {})}
    fresh = sorted(key for key in grouped if key not in numbers)
    used = set(numbers.values())
    if tasks is None or len(used) + len(fresh) <= tasks:  # a shard a group
        free = (n for n in range(len(used) + len(fresh) + 1) if n not in used)
        numbers.update({key: next(free) for key in fresh})
    else:
        weight = {key: sum(_bytes(path) for path, _ in grouped[key]) for key in grouped}
        loads = {n: 0 for n in (used | set(range(max(tasks, 1))))}
        for key, number in numbers.items():
            loads[number] += weight[key]
        for key in sorted(fresh, key=lambda k: (-weight[k], k)):
            numbers[key] = lightest = min(loads, key=lambda n: (loads[n], n))
            loads[lightest] += weight[key]
    placed: dict[int, list[tuple[str, bool]]] = {}
    for key in sorted(grouped):
        placed.setdefault(numbers[key], []).extend(grouped[key])
    return placed, numbers


def _bytes(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:  # unreadable: its shard reports it
        return 0


def distributed_ingest(paths: list[str], target: Path, master: str | None = None, remote: str | None = None,
                       window=None) -> dict:
    """Ingest ``paths`` on Spark into the dataset ``target``; return what was loaded and how it was merged.

    A local dataset keeps its shards' stores between runs (``kept_shards``): a shard whose files are all as
    they were is not sent to an executor, and in the others a grown file is read by its tail.
    Every shard ingested is verified before the dataset is touched (``verify_shards``): a shard the driver
    cannot read back, or files an executor could not read that the driver can, stop the ingest with the path
    named, and the dataset stays as it was. The staging folder is removed on every exit."""
    from reconcile.engines.spark import SparkEngine

    target = dataset_location(target, "--to")
    if isinstance(target, RemoteDataset):  # the shards are staged in TMPDIR, which the executors must share then
        beside = None
    else:
        target = target.resolve()
        beside = target.parent
    passed_over: list[PassedOver] = []
    found, _ = discover(paths, passed_over)
    if not found:  # the dataset is rebuilt from the files given: none would leave it empty
        raise BadInput(f"no file to ingest in {', '.join(paths) or 'nothing given'}: a distributed ingest rebuilds "
                       f"{target} from the files it is given; nothing was written")
    previous = previous_manifest(target)  # a --to that cannot take the dataset is refused before the cluster works
    if beside is not None:
        beside.mkdir(parents=True, exist_ok=True)
    created = beside is not None and not target.exists()  # a first run that fails leaves no folder behind
    kept = KeptShards(target, window_text(window)) if beside is not None else None
    try:
        staging = Path(tempfile.mkdtemp(prefix=".reconcile-shards-", dir=beside))
        try:
            engine = SparkEngine(master=master, remote=remote)
            try:
                require_reconcile_on_executors(engine)
                placed, groups = place(found, engine.parallelism(), kept.groups if kept else None)
                stamps = {path: stamp(path) for files in placed.values() for path, _ in files}
                todo = {n: files for n, files in placed.items() if not (kept and kept.unchanged(n, files))}
                if kept:
                    kept.begin(placed, groups, list(todo))
                exports = kept.folder if kept else staging
                summaries = _run_shards(engine, todo, exports, window, kept)
                verify_shards(todo, summaries, exports)
                summaries += [kept.summary(n) for n in placed if n not in todo]
                result, settled, read = merge_shards(  # what crosses shards is settled on the executors too
                    [exports / f"shard-{n}" for n in sorted(placed)], staging, target, previous, window,
                    settle=lambda jobs: on_executors(engine, jobs, lambda _, job: settle_part(job), SETTLED))
                if kept:
                    kept.done(placed, stamps, summaries)
            finally:
                engine.close()
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        if created:
            shutil.rmtree(target, ignore_errors=True)
        raise
    finally:
        if kept:
            kept.close()
    return {"to": str(target), "files": len(found), "shards": len(placed), "shards_ingested": len(todo),
            "kept": str(kept.folder) if kept else None,
            "passed_over": len(passed_over) + sum(s["passed_over"] for s in summaries),
            "shard_results": sorted(summaries, key=lambda s: s["shard"]), "loaded_again_in_merge": settled,
            "shards_read_in_merge": read, "export": result.to_json()}


def require_reconcile_on_executors(engine) -> None:
    """One tiny job before any work: the executors import reconcile, and the version this driver runs (two
    versions could load the same file differently). Exit 2 saying what to install where, else."""
    answers = on_executors(engine, ["version"], lambda _, __: {"version": executor_version()}, "version string")
    theirs = sorted({a["version"] for a in answers})
    if theirs != [__version__]:
        raise BadInput(f"the Spark executors run reconcile {', '.join(theirs)}, this driver {__version__}: install the "
                       "same version on every executor (docs/scale-out.md); nothing was written")


def executor_version() -> str:
    """The reconcile version where this runs (on an executor: imported there, never sent from the driver)."""
    from reconcile import version

    return version.__version__


def verify_shards(shards: dict[int, list[tuple[str, bool]]], summaries: list[dict], staging: Path) -> None:
    """Refuse a distributed ingest whose shards do not account for the files they were given.

    Each shard must have reported, for every file it was given (loaded, or passed over as no format
    reconcile reads), and left a dataset the driver can read. A file an executor could not read but the
    driver can means the executors do not see the input where the driver does."""
    by_shard = {s["shard"]: s for s in summaries}
    for number, files in shards.items():
        where = shard_key(Path(files[0][0])) if files else "?"
        summary = by_shard.get(number)
        if summary is None:
            raise BadInput(f"shard {number} ({where}): no executor reported on it; nothing was written")
        unreadable = json.loads(summary["unreadable"] or "[]")
        blind = [(path, why) for path, why in unreadable if os.access(path, os.R_OK)]
        if blind:
            raise BadInput(f"the executors cannot read {blind[0][0]} ({blind[0][1]}), which the driver can: every "
                           "executor must see the input at the path the driver gives (a shared file system); "
                           "nothing was written")
        if summary["files"] + summary["passed_over"] != len(files):
            raise BadInput(f"shard {number} ({where}): {len(files)} file(s) given, {summary['files']} ingested and "
                           f"{summary['passed_over']} passed over; nothing was written")
        if not (staging / f"shard-{number}" / "manifest.json").is_file():
            raise BadInput(f"shard {number} ({where}): its output is not in {staging / f'shard-{number}'} as the driver "
                           "sees it; the folder beside --to must be one file system the driver and every executor "
                           "share; nothing was written")


def shard_frame(spark, rows: list[tuple[int, str]]):
    """One partition per shard (so one task each): by range over the shard numbers 0…n-1, which cuts exactly
    there, where hash partitioning put several shards in one task and left others empty."""
    return spark.createDataFrame(rows, "shard int, files string").repartitionByRange(len(rows), "shard")


def _run_shards(engine, shards: dict[int, list[tuple[str, bool]]], exports: Path, window,
                kept: KeptShards | None) -> list[dict]:
    folder, limits = str(exports), window_text(window)
    numbers = sorted(shards)
    jobs = [json.dumps({"shard": n, "files": shards[n], "store": kept.store(n) if kept else None}) for n in numbers]

    def task(_, job):
        spec = json.loads(job)
        return ingest_shard(spec["shard"], spec["files"], folder, limits, kept_store=spec["store"])

    return on_executors(engine, jobs, task, SHARD_SUMMARY)


def on_executors(engine, payloads: list[str], task, schema: str) -> list[dict]:
    """``task(number, payload)`` for each payload, each in a task of its own on Spark's executors; the dicts
    they return (``schema``: their columns as Spark DDL), in no particular order."""
    import pyarrow as pa

    if not payloads:
        return []
    frame = shard_frame(engine.spark, list(enumerate(payloads)))

    def run(batches):  # runs on an executor
        for batch in batches:
            for number, payload in zip(batch.column("shard").to_pylist(), batch.column("files").to_pylist()):
                yield pa.RecordBatch.from_pylist([task(number, payload)])

    try:
        return [row.asDict() for row in frame.mapInArrow(run, schema).collect()]
    except Exception as exc:  # pyspark's wrapped Python worker errors
        if "No module named 'reconcile'" in str(exc):
            raise BadInput("the Spark executors cannot import reconcile: install reconcile on every executor (pip "
                           "install reconcile there, or ship it with spark-submit --py-files / an archive; "
                           "docs/scale-out.md); nothing was written") from None
        raise


# what an executor reports of its shard (integers as Arrow infers them: int64)
SHARD_SUMMARY = ("shard bigint, files bigint, lines bigint, loaded bigint, rejected bigint, skipped bigint, "
                 "passed_over bigint, unchanged bigint, unreadable string")


def ingest_shard(shard: int, files: list[tuple[str, bool]], staging: str, limits: str | None,
                 kept_store: str | None = None) -> dict:
    """One shard, on an executor: the single-machine ingest into a private store, exported to ``staging``.

    With ``kept_store`` (a local dataset's ``kept_shards``) the store is that one, kept from the run before: it
    is made to hold exactly ``files`` (an unchanged file costs a stat, a grown one its tail, one no longer given
    is forgotten), and its export in ``staging`` is brought up to date (only changed days are written)."""
    window = window_of(limits)
    work = tempfile.mkdtemp(prefix=f"reconcile-shard-{shard}-")
    try:
        db = kept_store or os.path.join(work, "shard.duckdb")
        with store.connect(db, keep_totals=False) as con:  # a shard is exported, never read: nothing kept
            report = ingest(con, [], window=window, discovered=[(Path(p), explicit) for p, explicit in files],
                            exactly=kept_store is not None, keep_totals=False)
        export(db, Path(staging) / f"shard-{shard}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    totals = report.totals
    unreadable = [(f.path, f.notes[0] if f.notes else "cannot be read") for f in report.files if f.status == "unreadable"]
    return {"shard": shard, "files": totals["files"], **{k: totals[k] for k in ("lines", "loaded", "rejected",
                                                                                  "skipped", "passed_over", "unchanged")},
            "unreadable": json.dumps(unreadable)}
