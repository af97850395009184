"""``reconcile ingest --engine spark PATH… --to DIR``: the same loaders, spread over Spark's executors.

1. The driver lists the files (names only) and cuts them into shards by folder, so that a Claude
   Code session and its ``subagents/`` folder land in one shard and provider exports in another.
2. Each shard is a row of a Spark DataFrame; ``mapInArrow`` runs, on an executor, the ordinary
   single-machine ingest of its files into a private DuckDB store and exports that store
   (``reconcile export``) into a staging folder beside DIR. Executors need reconcile installed and
   that folder on a file system they share with the driver.
3. One merge step, on the driver, settles what crosses files: the shards' tables are unioned into
   one store; the files that hold a run (or a provider's bucket) seen in more than one shard are
   taken out again and loaded once more, in path order, by the ordinary loader — the rule that a
   run kept in several files belongs to the first of them is the single-machine one, applied by
   the same code. The merged store is exported to DIR, incrementally (only changed days).

The merge reads every shard on one machine (in DuckDB, spilling to disk under the memory limit);
at the largest scales it is the step to move into Spark next (docs/scale-out.md).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from reconcile import store
from reconcile.engines.export import PARTITIONED, WHOLE, ExportResult, dataset_location, export
from reconcile.engines.object_store import RemoteDataset
from reconcile.errors import BadInput
from reconcile.ingest.driver import ingest
from reconcile.ingest.discovery import discover
from reconcile.ingest.result import PassedOver
from reconcile.sql_text import identifier


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
    grouped: dict[str, list[tuple[str, bool]]] = {}
    for path, explicit in files:
        grouped.setdefault(shard_key(path), []).append((str(path), explicit))
    keys = sorted(grouped)
    if tasks is None or tasks >= len(keys):
        return [grouped[key] for key in keys]
    weight = {key: sum(_bytes(path) for path, _ in grouped[key]) for key in keys}
    packed: list[list[str]] = [[] for _ in range(max(tasks, 1))]
    loads = [0] * len(packed)
    for key in sorted(keys, key=lambda k: (-weight[k], k)):
        lightest = min(range(len(packed)), key=lambda n: (loads[n], n))
        packed[lightest].append(key)
        loads[lightest] += weight[key]
    return [[file for key in sorted(shard) for file in grouped[key]] for shard in packed if shard]


def _bytes(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:  # unreadable: its shard reports it
        return 0


def distributed_ingest(paths: list[str], target: Path, master: str | None = None, remote: str | None = None,
                       window=None) -> dict:
    """Ingest ``paths`` on Spark into the dataset ``target``; return what was loaded and how it was merged.

    Every shard is verified before the dataset is touched (``verify_shards``): a shard the driver cannot
    read back, or files an executor could not read that the driver can, stop the ingest with the path
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
    if beside is not None:
        beside.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".reconcile-shards-", dir=beside))
    try:
        engine = SparkEngine(master=master, remote=remote)
        try:
            shards = shards_of(found, engine.parallelism())
            summaries = _run_shards(engine, shards, staging, window)
        finally:
            engine.close()
        verify_shards(shards, summaries, staging)
        merged = staging / "merged.duckdb"
        settled = _merge(merged, [staging / f"shard-{n}" for n in range(len(shards))], window)
        result: ExportResult = export(merged, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return {"to": str(target), "files": len(found), "shards": len(shards),
            "passed_over": len(passed_over) + sum(s["passed_over"] for s in summaries),
            "shard_results": summaries, "loaded_again_in_merge": settled, "export": result.to_json()}


def verify_shards(shards: list[list[tuple[str, bool]]], summaries: list[dict], staging: Path) -> None:
    """Refuse a distributed ingest whose shards do not account for the files they were given.

    Each shard must have reported, for every file it was given (loaded, or passed over as no format
    reconcile reads), and left a dataset the driver can read. A file an executor could not read but the
    driver can means the executors do not see the input where the driver does."""
    by_shard = {s["shard"]: s for s in summaries}
    for number, files in enumerate(shards):
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


def _run_shards(engine, shards: list[list[tuple[str, bool]]], staging: Path, window) -> list[dict]:
    import pyarrow as pa

    if not shards:
        return []
    spark = engine.spark
    rows = [(n, json.dumps(files)) for n, files in enumerate(shards)]
    frame = shard_frame(spark, rows)
    folder, limits = str(staging), json.dumps([str(d) for d in window] if window else None)

    def load(batches):  # runs on an executor
        for batch in batches:
            for shard, files in zip(batch.column("shard").to_pylist(), batch.column("files").to_pylist()):
                summary = ingest_shard(shard, json.loads(files), folder, limits)
                yield pa.RecordBatch.from_pylist([summary])

    try:
        return [row.asDict() for row in frame.mapInArrow(load, SHARD_SUMMARY).collect()]
    except Exception as exc:  # pyspark's wrapped Python worker errors
        if "No module named 'reconcile'" in str(exc):
            raise BadInput("the Spark executors cannot import reconcile: install reconcile on every executor (pip "
                           "install reconcile there, or ship it with spark-submit --py-files / an archive; "
                           "docs/scale-out.md); nothing was written") from None
        raise


# what an executor reports of its shard (integers as Arrow infers them: int64)
SHARD_SUMMARY = ("shard bigint, files bigint, lines bigint, loaded bigint, rejected bigint, skipped bigint, "
                 "passed_over bigint, unreadable string")


def ingest_shard(shard: int, files: list[tuple[str, bool]], staging: str, limits: str | None) -> dict:
    """One shard, on an executor: the single-machine ingest into a private store, exported to staging."""
    import datetime as dt

    window = tuple(dt.date.fromisoformat(d) for d in json.loads(limits)) if limits and json.loads(limits) else None
    work = tempfile.mkdtemp(prefix=f"reconcile-shard-{shard}-")
    try:
        db = os.path.join(work, "shard.duckdb")
        with store.connect(db) as con:
            report = ingest(con, [], window=window, discovered=[(Path(p), explicit) for p, explicit in files])
        export(db, Path(staging) / f"shard-{shard}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    totals = report.totals
    unreadable = [(f.path, f.notes[0] if f.notes else "cannot be read") for f in report.files if f.status == "unreadable"]
    return {"shard": shard, "files": totals["files"], **{k: totals[k] for k in ("lines", "loaded", "rejected",
                                                                                  "skipped", "passed_over")},
            "unreadable": json.dumps(unreadable)}


def _merge(db: Path, shards: list[Path], window) -> list[str]:
    """Union the shards into one store; load again, in path order, the files whose runs or buckets cross shards."""
    links = Path(tempfile.mkdtemp(prefix="reconcile-merge-"))  # plain names: a folder's own name is never a pattern
    present = []
    for number, shard in enumerate(s for s in shards if (s / "manifest.json").exists()):
        os.symlink(shard.resolve(), links / f"s{number}")
        present.append(links / f"s{number}")
    try:
        return _union_and_settle(db, present, window)
    finally:
        shutil.rmtree(links, ignore_errors=True)


def _union_and_settle(db: Path, present: list[Path], window) -> list[str]:
    with store.connect(db) as con:
        for name in [*PARTITIONED, *WHOLE]:
            for number, shard in enumerate(present):
                source = ("read_parquet(?, hive_partitioning = true, hive_types = {'day': 'VARCHAR'})"
                          if name in PARTITIONED else "read_parquet(?)")
                pattern = str(shard / name / "day=*" / "*.parquet") if name in PARTITIONED else str(shard / f"{name}.parquet")
                if name in PARTITIONED and not any((shard / name).glob("day=*")):
                    continue
                columns = ", ".join(identifier(c) for (c,) in con.execute(
                    "select column_name from information_schema.columns where table_name = ? order by ordinal_position",
                    [name]).fetchall())
                con.execute(f"create or replace temp table _part as select {columns}, {number} as shard from {source}",
                            [pattern])
                con.execute(f"insert into {name} select {columns} from _part"
                            + (" where not exists (select 1 from model_prices m where m.provider is not distinct from "
                               "_part.provider and m.model = _part.model and m.day = _part.day)"
                               if name == "model_prices" else ""))
                if name in _KEYS:  # what the settlement compares across shards, not the rows themselves
                    keys = _KEYS[name]
                    con.execute(f"create temp table if not exists _from_{name} as select {keys} from _part limit 0")
                    con.execute(f"insert into _from_{name} select {keys} from _part")
        crossing = _crossing_files(con)
        if crossing:
            _forget(con, crossing)
            ingest(con, [], window=window, discovered=[(Path(p), False) for p in crossing])
        for name in [*_KEYS, "_part"]:
            con.execute(f"drop table if exists {name if name == '_part' else '_from_' + name}")
    return crossing


# per table, the columns that say whether two shards loaded the same run, bucket or bill line
_KEYS = {"runs": "shard, run_id, source_file",
         "usage_buckets": "shard, provider, bucket_start, bucket_end, source_file",
         "billed_costs": "shard, provider, bucket_start, bucket_end, source_file"}


def _crossing_files(con) -> list[str]:
    """The files holding a run, or a provider's bucket or bill line, that more than one shard loaded."""
    tables = {name for (name,) in con.execute("select table_name from duckdb_tables() where temporary").fetchall()}
    queries = []
    if "_from_runs" in tables:
        queries.append("""select source_file from _from_runs where run_id in
                          (select run_id from _from_runs group by run_id having count(distinct shard) > 1)""")
    for name in ("_from_usage_buckets", "_from_billed_costs"):
        if name in tables:
            queries.append(f"""select b.source_file from {name} b join
                (select provider, bucket_start, bucket_end from {name} group by all having count(distinct shard) > 1) c
                on c.provider = b.provider and c.bucket_start = b.bucket_start and c.bucket_end = b.bucket_end""")
    if not queries:
        return []
    return sorted({path for (path,) in con.execute(" union ".join(queries)).fetchall() if path})


def _forget(con, files: list[str]) -> None:
    """Take the rows of ``files`` out of the merged store (they are loaded again), in one transaction."""
    con.execute("begin")
    con.execute("create or replace temp table _again as select unnest(?::varchar[]) as path", [files])
    for table in ("tool_calls", "run_tools", "steps"):
        con.execute(f"delete from {table} where run_id in (select run_id from runs where source_file in "
                    "(select path from _again))")
    for table, column in (("runs", "source_file"), ("usage_buckets", "source_file"), ("billed_costs", "source_file"),
                          ("rejects", "path"), ("ingested_files", "path"), ("ingest_deferrals", "path")):
        con.execute(f"delete from {table} where {column} in (select path from _again)")
    con.execute("commit")

