"""An export (``reconcile export --to DIR``) bound in Spark: the logical tables and the views the checks read."""

from __future__ import annotations

from pathlib import Path

import duckdb

from reconcile.prices import pricing
from reconcile.engines.export import PARTITIONED, PRUNABLE, WHOLE, dataset_location, read_manifest
from reconcile.engines.object_store import RemoteDataset
from reconcile.store.migrations import apply_migrations
from reconcile.store import FROZEN_VIEWS
from reconcile.store.views import VIEWS
from reconcile.formats import format_fact_rows
from reconcile.engines.spark import SparkEngine
from reconcile.errors import BadInput

_SPARK_TYPES = {"VARCHAR": "string", "INTEGER": "int", "BIGINT": "bigint", "DOUBLE": "double", "BOOLEAN": "boolean",
                "TIMESTAMP WITH TIME ZONE": "timestamp", "DATE": "date", "JSON": "string"}


def open_spark_dataset(folder: Path | RemoteDataset, master: str | None = None, remote: str | None = None,
                       days: tuple[str, str] | None = None) -> SparkEngine:
    """A Spark engine whose logical tables are the export in ``folder``, with the documented views on top;
    with ``days`` (first, last) the tables of a run's or a bucket's day read only those partitions."""
    folder = dataset_location(folder, "--from-parquet")
    manifest = read_manifest(folder)  # in an object store: read here; Spark reads the Parquet through its own FS
    if isinstance(folder, RemoteDataset):
        place = folder.child
    else:  # absolute: a Spark Connect server resolves a relative path in its own working folder, not ours
        place = (lambda root: lambda name: str(root / name))(folder.resolve())
    engine = SparkEngine(master=master, remote=remote)
    try:
        schemas = _store_schemas()
        for name in PARTITIONED:
            if manifest["tables"].get(name, {}).get("rows"):
                engine.bind(name, place(name), partitioned=True, days=days if name in PRUNABLE else None)
                _require_columns(engine, name, schemas[name], folder)
            else:  # no partition was written: an empty table of the store's shape
                engine.register(name, [], _ddl(schemas[name]))
        for name in WHOLE:
            engine.bind(name, place(f"{name}.parquet"), partitioned=False)
        engine.register_arrow("prices", _prices(folder))  # the data's overrides and the install's shipped prices
        engine.register("format_facts", format_fact_rows(),
                        "format string, fact string, recorded boolean, how string, inferred boolean")
        for name, sql in VIEWS.items():  # in dependency order: a view built on a frozen one reads its rows
            engine.run(sql)
            if name in FROZEN_VIEWS:  # priced once, as store.frozen_views does in DuckDB
                engine.freeze(name)
    except BaseException:
        engine.close()
        raise
    return engine


def _require_columns(engine: SparkEngine, name: str, columns: dict[str, str], folder: Path | RemoteDataset) -> None:
    """A dataset another version wrote: name the columns its files lack, not an unresolved column in a view."""
    written = set(engine.columns(f"select * from {name}"))
    missing = [column for column in columns if column not in written]
    if missing:
        raise BadInput(f"--from-parquet {folder}: the files of table {name} have no column {', '.join(missing)}, "
                       f"which this version of reconcile reads; export the store again with it "
                       f"(reconcile export --to {folder})")


def _prices(folder: Path | RemoteDataset):
    """``prices`` as the DuckDB reader has it: the shipped prices (snapshot and corrections) and the export's own."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if isinstance(folder, RemoteDataset):  # a small file: read on the driver, through the object store's FS
        own = pq.read_table(pa.BufferReader(folder.read_bytes("prices.parquet")))
    else:
        own = pq.read_table(str(folder / "prices.parquet"))
    con = duckdb.connect(":memory:")
    try:
        apply_migrations(con)
        pricing.ensure_snapshot(con)
        con.register("_own_prices", own)
        con.execute("insert into prices select * from _own_prices")
        return con.sql("select * from prices").to_arrow_table()
    finally:
        con.close()


def _store_schemas() -> dict[str, dict[str, str]]:
    """Each canonical table's columns and their Spark types, read off an empty store of this version."""
    con = duckdb.connect(":memory:")
    try:
        apply_migrations(con)
        rows = con.execute("select table_name, column_name, data_type from information_schema.columns "
                           "order by table_name, ordinal_position").fetchall()
    finally:
        con.close()
    schemas: dict[str, dict[str, str]] = {}
    for table, column, kind in rows:
        spark_type = _SPARK_TYPES.get(kind) or (kind.lower() if kind.startswith("DECIMAL") else "string")
        schemas.setdefault(table, {})[column] = spark_type
    return schemas


def _ddl(columns: dict[str, str]) -> str:
    """Columns as Spark DDL (``a string, b boolean``)."""
    return ", ".join(f"`{column}` {kind}" for column, kind in columns.items())
