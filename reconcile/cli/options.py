"""Options every command shares, and how a command finds its configuration and store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .. import store
from ..config import Config, load_config
from ..store import DEFAULT_DB

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
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
CostSourceOption = Annotated[str, typer.Option(
    "--cost-source", help="ours (reconcile's prices), harness (the harness's own record), or auto: ours where "
                          "every call could be priced, else the harness's.")]

DEFAULT_DB_PATH = None


def configured(config_file: Path | None, db: Path | None, settings: list[str] | None = None) -> tuple[Config, Path]:
    """The configuration (with ``--set`` overrides) and the store path it leads to."""
    config = load_config(config_file, overrides=settings or [])
    return config, store.db_path(db, config)
