"""``reconcile export --to DIR``: the canonical tables as Parquet, partitioned by day, with a manifest.

The layout is hive's, one folder per table and per UTC day (``steps/day=2026-11-28/…``), so any
engine that reads partitioned Parquet (DuckDB, Spark, Trino) can read it and prune by day:

- a run, its steps, tool calls and tool catalogue share the day the run started (a run is never
  split across days); a run with no start time goes to ``day=unknown``;
- provider usage and billed costs by the day their bucket starts; ingested files and rejects by
  the day they were ingested;
- small tables that are not about a day (ingest deferrals, price overrides, resolved prices) are
  one file each.

Exports are incremental: each (table, day) partition's row count and content fingerprint go into
``manifest.json``, and a later export rewrites only the partitions whose fingerprint changed (and
removes the days that have no rows any more). Every changed partition is written beside the dataset
first and flushed to disk; only when all are written are they moved into place, and the manifest
last, so a reader never sees half a day, and a full disk leaves the dataset exactly as it was.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import shutil
import tempfile
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import duckdb

from reconcile import durability, store
from reconcile.version import __version__
from reconcile.errors import BadInput
from reconcile.engines.object_store import SCHEMES, RemoteDataset
from reconcile.store.migrations import MIGRATIONS
from reconcile.prices.pricing import SHIPPED
from reconcile.sql_text import identifier, string_literal

MANIFEST = "manifest.json"
KEPT_SHARDS = ".reconcile-kept"  # a distributed ingest's kept shards (engines/kept_shards.py), inside its dataset
FORMAT = "reconcile-export"
UNKNOWN_DAY = "unknown"

# table -> how its rows get a day: a timestamp column of its own, or the run they belong to
BY_RUN = "run"
PARTITIONED = {
    "runs": "started_at", "steps": BY_RUN, "tool_calls": BY_RUN, "run_tools": BY_RUN,
    "usage_buckets": "bucket_start", "billed_costs": "bucket_start",
    "ingested_files": "ingested_at", "rejects": "ingested_at", "usage_replacements": "replaced_at",
}
# the tables whose day says when their facts happened (not when they were ingested): a window prunes them
PRUNABLE = frozenset(name for name, by in PARTITIONED.items() if by in (BY_RUN, "started_at", "bucket_start"))
# table -> which rows: the user's price overrides travel with the data (the shipped prices come with the install)
WHOLE = {"ingest_deferrals": "true", "model_prices": "true", "prices": f"source not in {SHIPPED!r}"}


@dataclass
class ExportResult:
    """What one export did, per table: partitions written, kept as they were, removed."""

    target: Path | RemoteDataset
    rows: dict[str, int] = field(default_factory=dict)
    written: dict[str, list[str]] = field(default_factory=dict)
    unchanged: dict[str, int] = field(default_factory=dict)
    removed: dict[str, list[str]] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"to": str(self.target), "tables": {
            name: {"rows": self.rows[name], "written": self.written.get(name, []),
                   "unchanged": self.unchanged.get(name, 0), "removed": self.removed.get(name, [])}
            for name in self.rows}}


# URL schemes of remote file systems and web servers: a dataset there is not read or written (object stores are)
_REMOTE = ("wasb", "wasbs", "hdfs", "http", "https")
_SCHEME = re.compile(r"^([a-z][a-z0-9+.-]*):/")


def dataset_location(value: str | Path | RemoteDataset, option: str) -> Path | RemoteDataset:
    """Where a dataset option points: a local folder (a path, or a ``file://`` URL: ``file:///data/runs``, or
    ``file:/data/runs`` as a shell-typed URL reaches us through a Path), or a folder in an object store
    (``s3://``, ``s3a://``, ``gs://``, ``abfss://``). Any other URL is refused in words, never taken for a
    local folder named ``hdfs:``."""
    if isinstance(value, RemoteDataset):
        return value
    text = str(value)
    scheme = _SCHEME.match(text)
    if scheme is None:
        return Path(value)
    shown = text if "://" in text else text.replace(":/", "://", 1)  # as typed, before a Path folded it
    if scheme.group(1) == "file":
        rest = text[len("file:"):]
        if rest.startswith("//"):
            host, _, rest = rest[2:].partition("/")
            if host not in ("", "localhost"):
                raise BadInput(f"{option} {text}: a file URL names this machine's files (file:///path); "
                               f"{host!r} is another host")
            rest = "/" + rest
        return Path(urllib.parse.unquote(rest))
    if scheme.group(1) in SCHEMES:
        bucket = shown.split("://", 1)[1].split("/", 1)[0]
        # abfss://container@account.dfs.core.windows.net is Azure's spelling; elsewhere '@' or ':' is a credential
        credential = ":" in bucket or ("@" in bucket and scheme.group(1) not in ("abfs", "abfss"))
        if not bucket or credential:  # the URL is not echoed: it may hold a secret
            raise BadInput(f"{option} {scheme.group(1)}://…: name the bucket and the folder ({scheme.group(1)}://bucket/folder); "
                           "credentials go in the environment, never in the URL")
        return RemoteDataset(shown, option)
    if scheme.group(1) in _REMOTE:
        raise BadInput(f"{option} {shown}: datasets on {scheme.group(1)}:// are not read or written; use a folder, "
                       "or an object store (s3://, s3a://, gs://, abfss://; docs/scale-out.md)")
    return Path(value)


def export(db: str | Path, target: Path) -> ExportResult:
    """Export the store at ``db`` to ``target`` (created if needed); rewrite only what changed."""
    target = dataset_location(target, "--to")
    if isinstance(target, RemoteDataset):
        return _export_remote(db, target)
    previous = previous_manifest(target)
    store.connect(db, read_only=True).close()  # refuses what is not a store; upgrades an older one
    created = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(":memory:", config={**store.EVERY_CONNECTION, "memory_limit": store.memory_limit()})
    try:
        con.execute(store.SESSION_SETTINGS)
        con.execute(f"attach {string_literal(str(Path(db).resolve()))} as source (read_only)")
        con.execute("use source")
        con.execute("begin transaction")  # one snapshot of the store for every table
        con.execute(f"create temp table _run_days as select run_id, {_day('started_at')} as day from runs")
        result = ExportResult(target)
        tables: dict[str, dict] = {}
        staging = Path(tempfile.mkdtemp(prefix=".export-", dir=target))
        staged: list[Path] = []  # flushed to disk before any is moved into place
        with _dataset_failures(target, staging, created):
            for name, by in PARTITIONED.items():
                tables[name] = _export_partitioned(con, name, by, staging, (previous or {}).get("tables", {}).get(name),
                                                   result, staged)
            for name, where in WHOLE.items():
                tables[name] = _export_whole(con, name, where, staging, result, staged)
            files = con.execute("""select path, sha256, format, lines, loaded, rejected, skipped,
                                          ingested_at::varchar, status, reason
                                   from ingested_files order by path""").fetchall()
            con.execute("commit")
            manifest = new_manifest(tables, [dict(zip(SOURCE_FILE_FIELDS, row)) for row in files])
            write_manifest(staging, manifest)
            for path in staged:
                _fsync(path)
    finally:
        con.close()
    install(staging, target, result.written, result.removed)  # every byte is on disk: now the renames
    return result


def previous_manifest(target: Path | RemoteDataset) -> dict | None:
    """The manifest of the dataset an export will update (None for a new or empty folder); a folder that is a
    file, or holds files but no manifest, is refused before anything is written."""
    if isinstance(target, RemoteDataset):
        text = target.manifest_text()
        if text is None and target.has_files():
            raise BadInput(f"--to {target}: the folder has files but no {MANIFEST}; give an empty or new folder, "
                           "or one a previous export wrote.")
        return None if text is None else parse_manifest(text, target.child(MANIFEST))
    if target.exists() and not target.is_dir():
        raise BadInput(f"--to {target}: is a file; give a folder for the dataset (it is created if missing).")
    if (target / MANIFEST).exists():
        return read_manifest(target)
    if target.exists() and any(item.name != KEPT_SHARDS for item in target.iterdir()):  # a first run kept its shards
        raise BadInput(f"--to {target}: the folder has files but no {MANIFEST}; give an empty or new folder, "
                       "or one a previous export wrote.")
    return None


# what the manifest says of each ingested file (the columns of ingested_files it lists)
SOURCE_FILE_FIELDS = ("path", "sha256", "format", "lines", "loaded", "rejected", "skipped", "ingested_at", "status",
                      "reason")


def new_manifest(tables: dict[str, dict], source_files: list[dict]) -> dict:
    """A manifest for ``tables`` (per table: its rows, and its days or its file) and the files ingested."""
    return {"format": FORMAT, "schema_version": len(MIGRATIONS), "reconcile_version": __version__,
            "exported_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
            "partitioned_by": "day (UTC)", "tables": tables, "source_files": source_files}


def write_manifest(folder: Path, manifest: dict) -> None:
    _write_durably(folder / MANIFEST, (json.dumps(manifest, indent=1, default=str) + "\n").encode())


def install(staging: Path, target: Path, written: dict[str, list[str]], removed: dict[str, list[str]]) -> None:
    """Move a staged export (the dataset's layout: changed days, whole tables, the manifest) into ``target``
    on the same file system: renames, which need no space; the removed days deleted; the manifest last."""
    for name, days in written.items():
        for day in days:
            staged = staging / name / f"day={day}" if day != "all" else staging / f"{name}.parquet"
            final = target / staged.relative_to(staging)
            final.parent.mkdir(parents=True, exist_ok=True)
            if final.is_dir():
                shutil.rmtree(final)
            os.replace(staged, final)
    for name, days in removed.items():
        for day in days:
            shutil.rmtree(target / name / f"day={day}", ignore_errors=True)
    os.replace(staging / MANIFEST, target / MANIFEST)
    shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def _dataset_failures(target: Path, staging: Path, created: bool) -> Iterator[None]:
    """A dataset that cannot be written (a full disk, an I/O error) is left exactly as it was, and says so."""
    try:
        yield
    except (duckdb.IOException, OSError) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if created:
            shutil.rmtree(target, ignore_errors=True)
        raise BadInput(f"Writing the dataset {target} failed: {durability.first_line(exc)}. Nothing in it was changed (the export is "
                       "written beside it and moved in only when whole). Free disk space, then export again.") from exc
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created:
            shutil.rmtree(target, ignore_errors=True)
        raise


def _export_remote(db: str | Path, target: RemoteDataset) -> ExportResult:
    """Export into a local mirror that holds only the dataset's manifest (so only changed partitions are
    written), then upload what changed, the manifest last."""
    previous = previous_manifest(target)
    with tempfile.TemporaryDirectory(prefix="reconcile-export-") as mirror:
        if previous is not None:
            (Path(mirror) / MANIFEST).write_text(json.dumps(previous), encoding="utf-8")
        result = export(db, Path(mirror))
        target.upload(Path(mirror), result.written, result.removed)
    result.target = target
    return result


def read_manifest(folder: Path | RemoteDataset) -> dict:
    """The manifest of an export (a local folder or one in an object store), checked to be one this version reads."""
    if isinstance(folder, RemoteDataset):
        text = folder.manifest_text()
        if text is None:
            raise BadInput(f"{folder}: no {MANIFEST}; give a folder that reconcile export --to wrote.")
        return parse_manifest(text, folder.child(MANIFEST))
    path = Path(folder) / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput(f"{folder}: no {MANIFEST}; give a folder that reconcile export --to wrote.") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: not a readable export manifest ({exc}); export again with reconcile export --to.") from exc
    return parse_manifest(text, str(path))


def parse_manifest(text: str, path: str) -> dict:
    """A manifest's text, checked: reconcile's format, this version's store schema."""
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as exc:
        raise BadInput(f"{path}: not a readable export manifest ({exc}); export again with reconcile export --to.") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        found = manifest.get("format") if isinstance(manifest, dict) else type(manifest).__name__
        raise BadInput(f"{path}: not a reconcile export manifest (format {found!r}).")
    if manifest.get("schema_version") != len(MIGRATIONS):
        raise BadInput(f"{path}: exported with store schema {manifest.get('schema_version')}, this reconcile reads "
                       f"schema {len(MIGRATIONS)}; export again from the store with this version.")
    return manifest


def _export_partitioned(con, name: str, by: str, staging: Path, before: dict | None, result: ExportResult,
                        staged: list) -> dict:
    if by == BY_RUN:  # a row whose run is missing (never, in a store) would otherwise have no day
        source = (f"(select coalesce(d.day, '{UNKNOWN_DAY}') as day, t.* from {name} t "
                  "left join _run_days d using (run_id))")
    else:
        source = f"(select {_day(by)} as day, t.* from {name} t)"
    columns = _columns(con, name)
    days = {day: {"rows": rows, "fingerprint": fingerprint} for day, rows, fingerprint in con.execute(
        f"select day, count(*), sum(hash(row({columns})))::varchar from {source} group by day order by day").fetchall()}
    old = (before or {}).get("days", {})
    changed = sorted(day for day, facts in days.items() if old.get(day) != facts)
    gone = sorted(set(old) - set(days))
    if changed:
        con.execute("create or replace temp table _changed as select unnest(?::varchar[]) as day", [changed])
        con.execute(f"copy (select day, {columns} from {source} where day in (select day from _changed)) "
                    f"to {string_literal(str(staging / name))} (format parquet, partition_by (day), compression zstd)")
        staged += [staging / name / f"day={day}" for day in changed]
    result.rows[name] = sum(facts["rows"] for facts in days.values())
    result.written[name], result.removed[name] = changed, gone
    result.unchanged[name] = len(days) - len(changed)
    return {"partitioned_by": "day", "rows": result.rows[name], "days": days}


def _export_whole(con, name: str, where: str, staging: Path, result: ExportResult, staged: list) -> dict:
    path = staging / f"{name}.parquet"
    con.execute(f"copy (select {_columns(con, name)} from {name} where {where}) to {string_literal(str(path))} "
                "(format parquet, compression zstd)")
    staged.append(path)
    rows = con.execute(f"select count(*) from {name} where {where}").fetchall()[0][0]
    result.rows[name], result.written[name] = rows, ["all"]
    return {"partitioned_by": None, "rows": rows, "file": path.name}


def _columns(con, name: str) -> str:
    """The table's columns, in order, quoted (the export's column order is the store's)."""
    names = [row[0] for row in con.execute("select column_name from information_schema.columns where table_name = ? "
                                           "and table_catalog = 'source' order by ordinal_position", [name]).fetchall()]
    return ", ".join(identifier(n) for n in names)


def _day(column: str) -> str:
    return f"coalesce(({column})::date::varchar, '{UNKNOWN_DAY}')"  # the session's zone is UTC


def _write_durably(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _fsync(path: Path) -> None:
    """Flush a staged file (or every file of a staged folder) to the disk before it is moved into place."""
    for item in ([path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())):
        with open(item, "rb") as handle:
            os.fsync(handle.fileno())
