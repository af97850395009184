"""``--from-parquet DIR``: the logical tables bound to an export, in an in-memory DuckDB.

Every command that reads the store reads the same names (``runs``, ``steps``, ``step_view`` …);
here the canonical tables are views over the export's Parquet partitions (typed as the store
types them), the small whole tables are loaded, and the derived views are created on top, so
checks, costs and reports run unchanged. The dataset's folder is reached through a link with a
plain name, so its own name is never read as a pattern.

Pruning: given a window, the tables partitioned by a run's or a bucket's day read only the days
that can hold it. Only commands whose answer is about the window alone ask for it (cost, usage,
budgets, the finance report); the checks read the whole dataset, because some judge a run against
history (the week before, an idempotency key used by an earlier run).
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from reconcile.prices import pricing
from reconcile import store
from reconcile.engine import DuckDBEngine, Engine
from reconcile.errors import BadInput
from reconcile.engines.object_store import RemoteDataset, local_copy
from reconcile.engines.export import PARTITIONED, PRUNABLE, UNKNOWN_DAY, WHOLE, dataset_location, read_manifest
from reconcile.store.migrations import apply_migrations
from reconcile.store.views import create_views
from reconcile.formats import format_fact_rows
from reconcile.sql_text import identifier, insert_rows, string_literal


@contextmanager
def open_dataset(folder: Path, since: dt.datetime | None = None, until: dt.datetime | None = None
                 ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection whose logical tables are the export in ``folder``; with a window, pruned to its days."""
    with dataset_engine(folder, since, until) as engine:
        yield engine.connection


@contextmanager
def dataset_engine(folder: Path | RemoteDataset, since: dt.datetime | None = None, until: dt.datetime | None = None
                   ) -> Iterator[DuckDBEngine]:
    """The export in ``folder`` as a DuckDB engine (pruned to a window's days); a file of it that cannot be
    read is named by its path under ``folder``, not by the link it is read through. A dataset in an object
    store is read from a temporary copy of the days the window needs (object_store.py)."""
    location = dataset_location(folder, "--from-parquet")
    days = _days(since, until)
    if isinstance(location, RemoteDataset):
        manifest = read_manifest(location)
        with local_copy(location, manifest, lambda name, all_days: _kept(name, all_days, days)) as copy:
            with _bound(copy, manifest, days, location.url) as engine:
                yield engine
        return
    if not location.is_dir():
        raise BadInput(f"--from-parquet {location}: {'is a file' if location.exists() else 'does not exist'}; "
                       "give the folder reconcile export --to wrote.")
    with _bound(location, read_manifest(location), days, str(location)) as engine:
        yield engine


def _kept(name: str, all_days: list[str], days: tuple[str, str] | None) -> list[str]:
    """The days of table ``name`` a window reads (what _bind_partitioned's filter keeps)."""
    if days is None or name not in PRUNABLE:
        return all_days
    kept = [day for day in all_days if day != UNKNOWN_DAY and days[0] <= day <= days[1]]
    # none in the window: one day all the same, so the table's files exist to be read (the filter drops its rows)
    return kept or all_days[:1]


@contextmanager
def _bound(folder: Path, manifest: dict, days: tuple[str, str] | None, shown: str) -> Iterator[DuckDBEngine]:
    links = tempfile.mkdtemp(prefix="reconcile-dataset-")
    root = os.path.join(links, "dataset")
    os.symlink(folder.resolve(), root)
    con = duckdb.connect(":memory:", config={**store.EVERY_CONNECTION, "memory_limit": store.memory_limit()})
    engine = DuckDBEngine(con, files=(root, shown, "--from-parquet"))
    try:
        with engine.naming_unreadable_files():
            con.execute(store.SESSION_SETTINGS)
            apply_migrations(con)
            for name in PARTITIONED:
                _bind_partitioned(con, name, root, manifest, days if name in PRUNABLE else None, shown)
            create_views(con, kept=False)  # nothing is kept in an export: run_totals is a view over its steps
            insert_rows(con, "format_facts", format_fact_rows())  # what the formats of this install record
            pricing.ensure_snapshot(con)  # the shipped prices come with the install, before the data's own
            for name in WHOLE:  # the user's overrides and the prices the store resolved came with the data
                con.execute(f"insert into {name} select * from read_parquet(?)",
                            [os.path.join(root, f"{name}.parquet")])
        yield engine
    except duckdb.IOException as exc:
        raise BadInput(f"--from-parquet {shown}: a file of the export cannot be read ({exc}); export again.") from exc
    finally:
        con.close()
        shutil.rmtree(links, ignore_errors=True)


def _bind_partitioned(con, name: str, root: str, manifest: dict, days: tuple[str, str] | None, folder: str) -> None:
    """Replace the empty table ``name`` by a view over its partitions (under ``root``, the link to ``folder``),
    each column typed as the store's."""
    if not manifest["tables"].get(name, {}).get("rows"):
        return  # no partition: the empty table stands
    columns = con.execute("select column_name, data_type from information_schema.columns where table_name = ? "
                          "order by ordinal_position", [name]).fetchall()
    pattern = os.path.join(root, name, "day=*", "*.parquet")  # only our own names are patterns
    source = (f"read_parquet({string_literal(pattern)}, hive_partitioning = true, "
              "hive_types = {'day': 'VARCHAR'})")
    written = {row[0] for row in con.execute(f"describe select * from {source}").fetchall()}
    missing = [column for column, _ in columns if column not in written]
    if missing:  # a dataset another version wrote: say which columns, not a binder error
        raise BadInput(f"--from-parquet {folder}: the files of table {name} have no column {', '.join(missing)}, "
                       f"which this version of reconcile reads; export the store again with it "
                       f"(reconcile export --to {folder})")
    typed = ", ".join(f"cast({identifier(column)} as {kind}) as {identifier(column)}" for column, kind in columns)
    where = "true" if days is None else f"day <> '{UNKNOWN_DAY}' and day between '{days[0]}' and '{days[1]}'"
    con.execute(f"drop table {name}")
    con.execute(f"create view {name} as select {typed} from {source} where {where}")


def _days(since: dt.datetime | None, until: dt.datetime | None) -> tuple[str, str] | None:
    """The UTC days a window [since, until) touches, and one more each side (a provider's bucket that
    starts the day before may reach into it); None when unbounded on both sides."""
    if since is None and until is None:
        return None
    day = dt.timedelta(days=1)
    first = (since.astimezone(dt.timezone.utc) - day).date().isoformat() if since else "0000-00-00"
    last = (until.astimezone(dt.timezone.utc) + day).date().isoformat() if until else "9999-99-99"
    return first, last


@contextmanager
def reading(db: Path, from_parquet: Path | None, since: dt.datetime | None = None,
            until: dt.datetime | None = None, engine: str = "duckdb", master: str | None = None,
            remote: str | None = None) -> Iterator[Engine]:
    """The engine every reading command asks: the store at ``db`` read-only, or with ``from_parquet`` the
    export there (pruned to the window given) — in DuckDB, or with ``engine`` spark in a Spark session.
    The one place an engine is chosen."""
    if engine not in ("duckdb", "spark"):
        raise BadInput(f"--engine {engine!r}: the engines are duckdb and spark")
    if engine != "spark" and (master or remote):
        raise BadInput("--master and --remote choose a Spark cluster: give them with --engine spark")
    if engine == "spark":
        if from_parquet is None:
            raise BadInput("--engine spark reads an export: write one with reconcile export --to DIR, then give "
                           "--from-parquet DIR")
        if master and remote:
            raise BadInput("give --master (a cluster) or --remote (Spark Connect), not both")
        from reconcile.engines.spark_dataset import open_spark_dataset

        spark = open_spark_dataset(from_parquet, master=master, remote=remote, days=_days(since, until))
        try:
            yield spark
        finally:
            spark.close()
    elif from_parquet is None:
        with store.connect(db, read_only=True) as con:
            yield DuckDBEngine(con)
    else:
        with dataset_engine(from_parquet, since, until) as engine:
            yield engine
