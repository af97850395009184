"""Options every command shares, and how a command finds its configuration and store."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from reconcile import store
from reconcile.analyses.costs import cost_source
from reconcile.config import Config, load_config
from reconcile.engines.dataset import reading
from reconcile.engines.export import dataset_location
from reconcile.engines.object_store import RemoteDataset
from reconcile.cli.render import Output
from reconcile.store import DEFAULT_DB
from reconcile.when import Window, window

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
NightOption = Annotated[str | None, typer.Option(
    "--night", metavar="DATE", show_default=False,
    help="The night to judge, named by its evening's date (2026-11-28: from its noon to the next noon in --tz). "
         "Default: the latest night in the store.")]


def from_parquet_folder(text: str) -> Path | RemoteDataset:
    """--from-parquet as typed (a file:// URL keeps its host: a Path would fold file://h/x into file:/h/x;
    an object store's URL stays a URL)."""
    return dataset_location(text, "--from-parquet")


def to_folder(text: str) -> Path | RemoteDataset:
    return dataset_location(text, "--to")


# What a dataset option's parser gives: a local Path or a RemoteDataset (s3://…). Not annotated as Path:
# typer makes a Path-annotated option's value a Path again, whatever its parser returned.
DatasetLocation = object

FromParquetOption = Annotated[DatasetLocation | None, typer.Option(
    "--from-parquet", metavar="DIR", show_default=False, parser=from_parquet_folder,
    help="Read the dataset reconcile export --to wrote there (a folder, a file:// URL, or s3://, s3a://, gs://, abfss://) instead of the store.")]
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
    "--cost-source", callback=cost_source,  # checked at parse time, by the function the analyses use too
    help="ours (reconcile's prices), harness (the harness's own record), or auto: ours where every call could be "
         "priced, else the harness's.")]


def configured(config_file: Path | None, db: Path | None, settings: list[str] | None = None) -> tuple[Config, Path]:
    """The configuration (with ``--set`` overrides) and the store path it leads to."""
    config = load_config(config_file, overrides=settings or [])
    return config, store.db_path(db, config)


WideOption = Annotated[bool, typer.Option(
    "--wide", help="Show every column (by default a table leaves out the less-read columns and those with "
                   "nothing in them, and says which).")]


# Option groups, declared once: a command takes one parameter of a group's type (``source: Source``) and
# ``@grouped`` gives it the group's options, building the group from their values before the command runs.


@dataclass(frozen=True)
class Store:
    """``--db`` and ``--config``: the store, and the configuration that may name it."""

    db: Path | None = None
    config_file: Path | None = None

    def configured(self, settings: list[str] | None = None) -> tuple[Config, Path]:
        """The configuration (with ``--set`` overrides) and the store path it leads to."""
        return configured(self.config_file, self.db, settings)

    @property
    def path(self) -> Path:
        return self.configured()[1]

    def reading(self, scope: Window | None = None, path: Path | None = None):
        """The store (at ``path``, else the one configured), read-only."""
        return reading(path or self.path, None)


@dataclass(frozen=True)
class Source(Store):
    """``Store``, and ``--from-parquet``, ``--engine``, ``--master``, ``--remote``: where the tables are read."""

    from_parquet: Path | None = None
    engine: str = "duckdb"
    master: str | None = None
    remote: str | None = None

    def reading(self, scope: Window | None = None, path: Path | None = None):
        """The tables, read-only: the store, or the export pruned to ``scope``'s days, in the engine chosen."""
        scope = scope or Window()
        return reading(path or self.path, self.from_parquet, scope.since, scope.until, self.engine, self.master,
                       self.remote)

    @property
    def described(self) -> str:
        """What the tables were read from, as a note says it."""
        return str(self.from_parquet) if self.from_parquet else "the store"


_STORE_OPTIONS = {"config_file": (ConfigOption, None), "db": (DbOption, None)}
_GROUPS: dict[type, tuple[dict[str, tuple[Any, Any]], Callable[..., Any]]] = {  # (option: (alias, default)), build
    Store: (_STORE_OPTIONS, Store),
    Source: ({**_STORE_OPTIONS, "from_parquet": (FromParquetOption, None), "engine": (EngineOption, "duckdb"),
              "master": (MasterOption, None), "remote": (RemoteOption, None)}, Source),
    Window: ({"since": (SinceOption, None), "until": (UntilOption, None), "tz": (TzOption, None)},
             lambda since, until, tz: window(since, until, tz)),  # --tz is window()'s zone
    Output: ({"json_out": (JsonOption, False), "csv_out": (CsvOption, False), "parquet": (ParquetOption, None)},
             lambda json_out, csv_out, parquet: Output(json_out, csv_out, parquet)),
}


def grouped(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give ``command`` the options of each group it takes (a parameter typed ``Store``, ``Source``, ``Window`` or
    ``Output``), in that parameter's place; the command receives the group built from their values.

    Put it under ``@app.command()``. A value a group refuses (a ``--since`` that is no time) is a
    ``BadInput``, reported as every other.
    """
    signature = inspect.signature(command, eval_str=True)
    parameters, groups = [], {}
    for parameter in signature.parameters.values():
        group = _GROUPS.get(parameter.annotation)
        if group is None:
            parameters.append(parameter.replace(kind=inspect.Parameter.KEYWORD_ONLY))
            continue
        groups[parameter.name] = group
        parameters += [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation, default=default)
                       for name, (annotation, default) in group[0].items()]

    @functools.wraps(command)
    def run(**values: Any) -> Any:
        for name, (declared, build) in groups.items():
            values[name] = build(**{option: values.pop(option) for option in declared})
        return command(**values)

    run.__signature__ = signature.replace(parameters=parameters)  # what Typer reads
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    return run
