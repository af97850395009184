"""Turning library results into terminal output: tables, JSON, CSV."""

from __future__ import annotations

import csv
import io
import json
import sys
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..display import literal
from ..errors import BadInput
from ..sheets import NUMERIC_KINDS, Sheet, to_csv, write_parquet


class LiteralConsole(Console):
    """A rich console for which every ``str`` is data: no markup, no emoji, control characters escaped.

    Transcripts are evidence: a tool result holding ``[/INST]`` or ``:x:`` is printed as it is.
    """

    def __init__(self, **options):
        super().__init__(highlight=False, soft_wrap=True, markup=False, emoji=False, **options)

    def print(self, *objects, **options) -> None:
        options.pop("markup", None)
        shown = [Text(literal(o)) if isinstance(o, str) else o for o in objects]
        needed = max([getattr(o, "needed_width", 0) for o in objects], default=0)
        if needed <= self.width:
            return super().print(*shown, **options)
        narrow = self._width  # too wide for the terminal: let lines run on rather than cut figures or words
        self._width = needed
        try:
            super().print(*shown, **options)
        finally:
            self._width = narrow


# Off a terminal (pipes, cron, CI logs) rich would wrap tables at 80 columns; give them room.
console = LiteralConsole(width=None if sys.stdout.isatty() else 200)


def to_jsonable(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")  # 0.000000000, never 0E-9
    if isinstance(value, dict):
        return {k: to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(to_jsonable(data), indent=2, ensure_ascii=False) + "\n")


def print_csv(columns: list[str], rows: list[tuple]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([[_cell(v) for v in row] for row in rows])


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")  # 0.000000001, never 1E-9
    return str(value)


def table(columns: list[str], rows: list[tuple] | list[list], title: str | None = None,
          right: set[str] | None = None, header: bool = True) -> Table:
    right = right or set()
    out = Table(title=Text(literal(title)) if title else None, title_justify="left", show_header=header,
                header_style="bold")
    cells = [[literal(_shortened(_cell(v))) for v in row] for row in rows]
    needed = 1
    for index, name in enumerate(columns):  # a figure is never broken across lines ("$1.56" / "18")
        shown = [literal(name), *[row[index] for row in cells if index < len(row)]]
        if name in right:  # figures keep their whole width; only text columns fold when the terminal is narrow
            width = max(len(line) for cell in shown for line in cell.splitlines() or [""])
            out.add_column(Text(literal(name)), justify="right", no_wrap=True)
        else:
            width = min(max((len(word) for cell in shown for word in cell.split()), default=1), TEXT_MIN_WIDTH)
            out.add_column(Text(literal(name)), justify="left", overflow="fold", min_width=width)
        needed += width + 3
    out.needed_width = needed  # the narrowest the table can be with whole figures and readable words
    for row in cells:  # Text, not str: a value is shown literally, never read as rich markup ("[a-z]")
        out.add_row(*[Text(cell) for cell in row])
    return out


def sheet_table(sheet: Sheet) -> Table:
    """A :class:`~reconcile.sheets.Sheet` as a terminal table: figures right-aligned and never wrapped."""
    return table([c.header for c in sheet.columns], sheet.cells(), title=sheet.title,
                 right={c.header for c in sheet.columns if c.kind in NUMERIC_KINDS})


def rendered(sheet: Sheet) -> str:
    """The sheet's table as text, laid out as :data:`console` would print it."""
    capture = LiteralConsole(width=console.width, record=True, file=io.StringIO())
    capture.print(sheet_table(sheet))
    return capture.export_text()


def one_format(json_out: bool = False, csv_out: bool = False, parquet: Path | None = None) -> None:
    """Refuse two output formats at once (which one would win is a guess)."""
    if sum([bool(json_out), bool(csv_out), parquet is not None]) > 1:
        raise BadInput("choose one of --json, --csv and --parquet FILE")


def output(sheet: Sheet, json_out: bool = False, csv_out: bool = False, parquet: Path | None = None,
           json_data: Any = None) -> bool:
    """Print ``sheet`` as a table, or as JSON (``json_data`` when given), CSV on stdout, or a Parquet file.

    Returns True when it printed the table, so a command adds its other tables and notes only then.
    """
    one_format(json_out, csv_out, parquet)
    if json_out:
        print_json(sheet.rows if json_data is None else json_data)
    elif csv_out:
        sys.stdout.write(to_csv(sheet))
    elif parquet is not None:
        written = write_parquet(sheet, parquet)
        LiteralConsole(stderr=True).print(f"wrote {len(sheet.rows)} row(s) to {written}")
    else:
        console.print(sheet_table(sheet))
        for note in sheet.notes:
            console.print(note)
        return True
    return False


# A text column narrower than this would break most words; the table runs past the terminal instead.
TEXT_MIN_WIDTH = 24

# A table cell is for reading: a 20 MB tool result would take minutes to lay out and bury the table.
# --json (and sql --csv) carry whole values.
CELL_CHARS = 2000


def _shortened(text: str) -> str:
    if len(text) <= CELL_CHARS:
        return text
    return f"{text[:CELL_CHARS]}… ({len(text) - CELL_CHARS:,} more characters; --json shows them all)"
