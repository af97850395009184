"""Options every command shares, and how a command finds its configuration and store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from reconcile import store
from reconcile.config import Config, load_config
from reconcile.store import DEFAULT_DB

DbOption = Annotated[
    Path | None,
    typer.Option("--db", envvar="RECONCILE_DB", show_default=False,
                 help=f"The store (a DuckDB file). Default: $RECONCILE_DB, else db in reconcile.toml, else ./{DEFAULT_DB}."),
]
ConfigOption = Annotated[
    Path | None,
    typer.Option("--config", envvar="RECONCILE_CONFIG", show_default=False,
                 help="The configuration file. Default: ./reconcile.toml, else [tool.reconcile] in ./pyproject.toml."),
]
SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a check setting: KEY=VALUE, format.NAME.KEY=VALUE or agent.NAME.KEY=VALUE "
                               "(repeatable)."),
]
ChecksDirOption = Annotated[
    list[Path] | None, typer.Option("--checks-dir", help="A folder of your own .sql checks (repeatable).")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table: the --csv columns under the "
                                                         "same names and units (money in exact dollars, *_usd), "
                                                         "totals apart from the rows.")]
CsvOption = Annotated[bool, typer.Option("--csv", help="Print CSV (money in exact dollars, times in UTC) instead of a table.")]
ParquetOption = Annotated[Path | None, typer.Option("--parquet", metavar="FILE", show_default=False,
                                                   help="Write the table to this Parquet file instead of printing it.")]
SinceOption = Annotated[str | None, typer.Option(
    "--since", metavar="WHEN", show_default=False,
    help="Runs started at or after WHEN: 2026-11-28, 2026-11-28T22:00Z, today, yesterday, 12h, 7d, 2w.")]
UntilOption = Annotated[str | None, typer.Option(
    "--until", metavar="WHEN", show_default=False,
    help="Runs started before WHEN; a day (2026-11-28, today, yesterday) means up to its end.")]
TzOption = Annotated[str | None, typer.Option(
    "--tz", envvar="RECONCILE_TZ", metavar="ZONE", show_default=False,
    help="The time zone days and --since/--until are read in (IANA name, e.g. Europe/Paris). Default: the "
         "local zone.")]
FromParquetOption = Annotated[Path | None, typer.Option(
    "--from-parquet", metavar="DIR", show_default=False,
    help="Read the dataset reconcile export --to wrote there instead of the store.")]
EngineOption = Annotated[str, typer.Option(
    "--engine", help="duckdb (built in), or spark: run on Apache Spark over --from-parquet DIR (needs "
                     "reconcile[spark]).")]
MasterOption = Annotated[str | None, typer.Option(
    "--master", metavar="URL", show_default=False,
    help="With --engine spark: the cluster to run on (local[*], spark://host:7077, yarn). Default: local[*].")]
RemoteOption = Annotated[str | None, typer.Option(
    "--remote", metavar="URL", show_default=False,
    help="With --engine spark: a Spark Connect server (sc://host:15002) instead of --master.")]
CostSourceOption = Annotated[str, typer.Option(
    "--cost-source", help="ours (reconcile's prices), harness (the harness's own record), or auto: ours where "
                          "every call could be priced, else the harness's.")]

def configured(config_file: Path | None, db: Path | None, settings: list[str] | None = None) -> tuple[Config, Path]:
    """The configuration (with ``--set`` overrides) and the store path it leads to."""
    config = load_config(config_file, overrides=settings or [])
    return config, store.db_path(db, config)
WideOption = Annotated[bool, typer.Option(
    "--wide", help="Show every column (by default a table leaves out the less-read columns and those with "
                   "nothing in them, and says which).")]
