"""Options every command shares."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..store import DEFAULT_DB

DbOption = Annotated[
    Path,
    typer.Option("--db", envvar="RECONCILE_DB", help=f"The store (a DuckDB file). Default ./{DEFAULT_DB}, or $RECONCILE_DB."),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]

DEFAULT_DB_PATH = Path(DEFAULT_DB)
