"""Turning library results into terminal output: tables, JSON, CSV."""

from __future__ import annotations

import csv
import json
import sys
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

# Off a terminal (pipes, cron, CI logs) rich would wrap tables at 80 columns; give them room.
console = Console(highlight=False, soft_wrap=True, width=None if sys.stdout.isatty() else 200)


def to_jsonable(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(data), indent=2, ensure_ascii=False) + "\n")


def print_csv(columns: list[str], rows: list[tuple]) -> None:
    writer = csv.writer(sys.stdout)
    writer.writerow(columns)
    writer.writerows([[_cell(v) for v in row] for row in rows])


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    return str(value)


def table(columns: list[str], rows: list[tuple] | list[list], title: str | None = None,
          right: set[str] | None = None, header: bool = True) -> Table:
    right = right or set()
    out = Table(title=title, title_justify="left", show_header=header, header_style="bold")
    for name in columns:
        out.add_column(name, justify="right" if name in right else "left", overflow="fold")
    for row in rows:  # Text, not str: a value is shown literally, never read as rich markup ("[a-z]")
        out.add_row(*[Text(_cell(v)) for v in row])
    return out
