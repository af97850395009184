"""The merge of a distributed ingest: the shards' exports made into one dataset, reading as little as it can.

Shards that share no run, provider bucket or bill line are disjoint, so their union needs no row read:
a day's partition of the merged dataset is the shards' files for that day side by side, its row count
the sum of theirs, and its fingerprint (a sum of row hashes, ``export.py``) the sum of theirs. Those
shards are merged from their manifests, and their files moved (renames, on the file system the shards
were staged on).

What crosses shards is settled as a single machine would: shards linked by a run or bucket they
share form a group; each group's shards are unioned in a private DuckDB store, the files holding what
they share are loaded again in path order by the ordinary loader (``_union_and_settle``), and the
store is exported as one more disjoint part (``settle_part``). A file's runs are all in its shard, so
no other shard holds a run of a group: the groups are settled apart, on a distributed ingest each in
a task of its own on Spark's executors.

On the driver: the key columns of ``runs``, ``usage_buckets`` and ``billed_costs``, read to find what
crosses, and the small whole tables (deferrals, prices), unioned. Into the dataset, as an export
would: only the days whose fingerprint changed are written, the days gone are removed, the manifest last.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reconcile import store
from reconcile.engines.export import (MANIFEST, PARTITIONED, WHOLE, ExportResult, export, install, new_manifest,
                                      read_manifest, write_manifest)
from reconcile.engines.object_store import RemoteDataset
from reconcile.errors import BadInput
from reconcile.ingest.driver import ingest
from reconcile.sql_text import identifier


def merge_shards(shards: list[Path], staging: Path, target: Path | RemoteDataset, previous: dict | None,
                 window=None, settle=None) -> tuple[ExportResult, list[str], int]:
    """Merge the exported ``shards`` (folders in ``staging``) into ``target``, whose manifest is ``previous``;
    return what was written, the files loaded again to settle what crosses shards, and how many shards were read.

    Shards linked by a run or bucket they share form a group, settled on its own (no run of it is in any other
    shard): ``settle(jobs)`` runs ``settle_part`` on each job (on Spark's executors, one task each); without
    it they run here, one after the other."""
    with _plain_names(shards) as linked:
        crossing = _crossing(linked)
    groups = _groups(crossing)
    jobs = [json.dumps({"shards": [str(shards[n]) for n in group], "files": files, "limits": window_text(window),
                        "out": str(staging / f"settled-{number}")}) for number, (group, files) in enumerate(groups)]
    (settle or (lambda todo: [settle_part(job) for job in todo]))(jobs)
    settled_parts = [staging / f"settled-{number}" for number in range(len(groups))]
    for part, (group, _) in zip(settled_parts, groups):
        if not (part / MANIFEST).is_file():
            raise BadInput(f"settling shards {', '.join(map(str, group))}: the result is not in {part} as the driver "
                           "sees it; the folder beside --to must be one file system the driver and every executor "
                           "share; nothing was written")
    touched = {n for group, _ in groups for n in group}
    parts = [shard for number, shard in enumerate(shards) if number not in touched] + settled_parts
    whole = staging / "whole.duckdb"
    with _plain_names(parts) as linked:
        with store.connect(whole) as con:
            _union(con, linked, list(WHOLE))
    export(whole, staging / "whole")
    result = _assemble(parts, staging / "whole", staging / "out", target, previous)
    if isinstance(target, RemoteDataset):
        target.upload(staging / "out", result.written, result.removed)
    else:
        install(staging / "out", target, result.written, result.removed)
    return result, sorted({path for _, path, _ in crossing}), len(touched)


# what an executor reports of a settled group
SETTLED = "files bigint"


def settle_part(job: str) -> dict:
    """One group of shards, wherever it runs: unioned into a private store, the files crossing them loaded again
    in path order, and the store exported to the job's folder (a part of the merge like any shard)."""
    spec = json.loads(job)
    work = Path(tempfile.mkdtemp(prefix="reconcile-settle-"))
    try:
        with _plain_names([Path(s) for s in spec["shards"]]) as linked:
            _union_and_settle(work / "settled.duckdb", linked, spec["files"], window_of(spec["limits"]))
        export(work / "settled.duckdb", Path(spec["out"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return {"files": len(spec["files"])}


def _groups(crossing: list[tuple[int, str, str]]) -> list[tuple[list[int], list[str]]]:
    """The shards linked by the runs and buckets they share (each shard in one group), with the files to load
    again in each, in path order."""
    leader: dict[int, int] = {}

    def find(n: int) -> int:
        while leader.setdefault(n, n) != n:
            leader[n] = leader[leader[n]]
            n = leader[n]
        return n

    first_of: dict[str, int] = {}
    for shard, _, key in crossing:
        leader[find(shard)] = find(first_of.setdefault(key, shard))
    members: dict[int, tuple[set[int], set[str]]] = {}
    for shard, path, _ in crossing:
        group = members.setdefault(find(shard), (set(), set()))
        group[0].add(shard)
        group[1].add(path)
    return sorted((sorted(shards), sorted(files)) for shards, files in members.values())


def window_text(window) -> str:
    """A window as a task is sent it (JSON: its two days, or null)."""
    return json.dumps([str(d) for d in window] if window else None)


def window_of(text: str | None):
    import datetime as dt

    days = json.loads(text) if text else None
    return tuple(dt.date.fromisoformat(d) for d in days) if days else None


def _assemble(parts: list[Path], whole: Path, out: Path, target, previous: dict | None) -> ExportResult:
    """The merged dataset's changed days, whole tables and manifest, laid out in ``out`` from the parts' files."""
    manifests = [read_manifest(part) for part in parts]
    result, tables = ExportResult(target), {}
    out.mkdir()
    for name in PARTITIONED:
        days: dict[str, dict] = {}
        for manifest in manifests:
            for day, facts in manifest["tables"][name]["days"].items():
                total = days.setdefault(day, {"rows": 0, "fingerprint": "0"})
                total["rows"] += facts["rows"]
                total["fingerprint"] = str(int(total["fingerprint"]) + int(facts["fingerprint"]))
        days = dict(sorted(days.items()))
        old = ((previous or {}).get("tables", {}).get(name) or {}).get("days", {})
        changed = [day for day, facts in days.items() if old.get(day) != facts]
        for day in changed:
            folder = out / name / f"day={day}"
            folder.mkdir(parents=True)
            for number, part in enumerate(parts):  # each part's files side by side, named by their part
                for file in sorted((part / name / f"day={day}").glob("*.parquet")):
                    _link(file, folder / f"part-{number}-{file.name}")
        result.rows[name] = sum(facts["rows"] for facts in days.values())
        result.written[name], result.removed[name] = changed, sorted(set(old) - set(days))
        result.unchanged[name] = len(days) - len(changed)
        tables[name] = {"partitioned_by": "day", "rows": result.rows[name], "days": days}
    unioned = read_manifest(whole)
    for name in WHOLE:
        tables[name] = unioned["tables"][name]
        os.replace(whole / tables[name]["file"], out / tables[name]["file"])
        result.rows[name], result.written[name] = tables[name]["rows"], ["all"]
    files = sorted((entry for manifest in manifests for entry in manifest["source_files"]), key=lambda e: e["path"])
    write_manifest(out, new_manifest(tables, files))
    return result


def _link(file: Path, to: Path) -> None:
    """Another name for a part's file in the merged layout: a hard link (a kept shard's export stays whole for
    the next run; an export never rewrites a file in place, it replaces it), else a copy."""
    try:
        os.link(file, to)
    except OSError:  # another file system, or one without hard links
        shutil.copyfile(file, to)


@contextmanager
def _plain_names(folders: list[Path]) -> Iterator[list[Path]]:
    """The folders under plain names (links ``s0``, ``s1``…): DuckDB reads a path as a glob, and a folder's
    own name is data, never a pattern."""
    links = Path(tempfile.mkdtemp(prefix="reconcile-merge-"))
    try:
        linked = []
        for number, folder in enumerate(folders):
            os.symlink(Path(folder).resolve(), links / f"s{number}")
            linked.append(links / f"s{number}")
        yield linked
    finally:
        shutil.rmtree(links, ignore_errors=True)


def _source(shard: Path, name: str) -> tuple[str, str] | None:
    """How to read a table of an exported shard, and the path pattern; None when the shard has no rows of it."""
    if name in PARTITIONED:
        if not any((shard / name).glob("day=*")):
            return None
        return ("read_parquet(?, hive_partitioning = true, hive_types = {'day': 'VARCHAR'})",
                str(shard / name / "day=*" / "*.parquet"))
    return "read_parquet(?)", str(shard / f"{name}.parquet")


# per table, the columns that say whether two shards loaded the same run, bucket or bill line
_KEYS = {"runs": "run_id, source_file",
         "usage_buckets": "provider, bucket_start, bucket_end, source_file",
         "billed_costs": "provider, bucket_start, bucket_end, source_file"}


def _crossing(shards: list[Path]) -> list[tuple[int, str, str]]:
    """(shard, file, what) for each file holding a run, or a provider's bucket or bill line, that more than one
    shard loaded (``what`` names it); only the key columns are read."""
    import duckdb

    con = duckdb.connect(":memory:", config={**store.EVERY_CONNECTION, "memory_limit": store.memory_limit()})
    try:
        queries = []
        for name, keys in _KEYS.items():
            sources = [(number, source) for number, shard in enumerate(shards)
                       if (source := _source(shard, name)) is not None]
            for number, (how, pattern) in sources:
                con.execute(f"create temp table if not exists _from_{name} as select 0 as shard, {keys} from {how} "
                            "limit 0", [pattern])
                con.execute(f"insert into _from_{name} select {number}, {keys} from {how}", [pattern])
            if not sources:
                continue
            if name == "runs":
                queries.append("""select shard, source_file, 'run ' || run_id as key from _from_runs where run_id in
                                  (select run_id from _from_runs group by run_id having count(distinct shard) > 1)""")
            else:
                queries.append(f"""select b.shard, b.source_file,
                           '{name} ' || coalesce(b.provider, '') || ' ' || b.bucket_start || ' ' || b.bucket_end as key
                    from _from_{name} b join
                    (select provider, bucket_start, bucket_end from _from_{name} group by all
                     having count(distinct shard) > 1) c
                    on c.provider is not distinct from b.provider and c.bucket_start = b.bucket_start
                       and c.bucket_end = b.bucket_end""")
        if not queries:
            return []
        return [(shard, path, key) for shard, path, key in con.execute(" union ".join(queries) + " order by all").fetchall()
                if path]
    finally:
        con.close()


def _union(con, shards: list[Path], names: list[str]) -> None:
    """Insert the rows of ``names`` from every shard into the store (a price resolved by several shards once)."""
    for name in names:
        columns = ", ".join(identifier(c) for (c,) in con.execute(
            "select column_name from information_schema.columns where table_name = ? order by ordinal_position",
            [name]).fetchall())
        for shard in shards:
            source = _source(shard, name)
            if source is None:
                continue
            con.execute(f"insert into {name} select {columns} from {source[0]} p"
                        + (" where not exists (select 1 from model_prices m where m.provider is not distinct from "
                           "p.provider and m.model = p.model and m.day = p.day)" if name == "model_prices" else ""),
                        [source[1]])


def _union_and_settle(db: Path, shards: list[Path], crossing: list[str], window) -> None:
    """Union the shards into one store; take out the rows of the ``crossing`` files and load those files again,
    in path order, as a single machine would."""
    with store.connect(db) as con:
        _union(con, shards, [*PARTITIONED, *WHOLE])
        if crossing:
            _forget(con, crossing)
            ingest(con, [], window=window, discovered=[(Path(p), False) for p in crossing])


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

