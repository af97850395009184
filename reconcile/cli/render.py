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

from ..display import literal


class LiteralConsole(Console):
    """A rich console for which every ``str`` is data: no markup, no emoji, control characters escaped.

    Transcripts are evidence: a tool result holding ``[/INST]`` or ``:x:`` is printed as it is.
    """

    def __init__(self, **options):
        super().__init__(highlight=False, soft_wrap=True, markup=False, emoji=False, **options)

    def print(self, *objects, **options) -> None:
        options.pop("markup", None)
        super().print(*[Text(literal(o)) if isinstance(o, str) else o for o in objects], **options)


# Off a terminal (pipes, cron, CI logs) rich would wrap tables at 80 columns; give them room.
console = LiteralConsole(width=None if sys.stdout.isatty() else 200)


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
    out = Table(title=Text(literal(title)) if title else None, title_justify="left", show_header=header,
                header_style="bold")
    for name in columns:
        out.add_column(Text(literal(name)), justify="right" if name in right else "left", overflow="fold")
    for row in rows:  # Text, not str: a value is shown literally, never read as rich markup ("[a-z]")
        out.add_row(*[Text(literal(_shortened(_cell(v)))) for v in row])
    return out


# A table cell is for reading: a 20 MB tool result would take minutes to lay out and bury the table.
# --json (and sql --csv) carry whole values.
CELL_CHARS = 2000


def _shortened(text: str) -> str:
    if len(text) <= CELL_CHARS:
        return text
    return f"{text[:CELL_CHARS]}… ({len(text) - CELL_CHARS:,} more characters; --json shows them all)"
