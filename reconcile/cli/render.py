"""Turning library results into terminal output: tables, JSON, CSV."""

from __future__ import annotations

import csv
import io
import json
import math
import sys
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import UUID

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
    """``value`` (as DuckDB hands it to Python) in strict JSON's terms, losing nothing.

    Moments, dates and times are ISO 8601; an interval an ISO 8601 duration (``P3DT2H0M0S``); a
    Decimal a string with all its places; a UUID its text; a BLOB DuckDB's own text for it
    (:func:`blob_text`, which ``'…'::blob`` reads back); NaN and the infinities the strings
    ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` (strict JSON has no such numbers); integers of any size
    stay numbers. Lists, structs and maps keep their shape (a map key that JSON cannot take, such
    as a BLOB or a date, becomes its text).
    """
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, Decimal):
        return format(value, "f")  # 0.000000000, never 0E-9
    if isinstance(value, (bytes, bytearray, memoryview)):
        return blob_text(bytes(value))
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, timedelta):
        return iso_duration(value)
    if isinstance(value, UUID):
        return str(value)
    if isinstance(value, dict):
        return {_json_key(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    return value


def _json_key(key: Any) -> Any:
    shown = to_jsonable(key)
    return shown if isinstance(shown, (str, int, float, bool)) or shown is None else json.dumps(shown)


def blob_text(data: bytes) -> str:
    """A BLOB as DuckDB writes it (``blob::varchar``): printable ASCII as itself, any other byte and
    ``\\``, ``"`` and ``'`` as ``\\xHH``. Lossless: ``select '<text>'::blob`` gives the bytes back."""
    return "".join(_BLOB_BYTES[b] for b in data)


_BLOB_BYTES = [chr(b) if 0x20 <= b <= 0x7E and chr(b) not in "\\\"'" else f"\\x{b:02X}" for b in range(256)]


def iso_duration(value: timedelta) -> str:
    """An interval as an ISO 8601 duration: ``P3DT2H0M0.5S``, ``-P1DT0H0M0S`` (DuckDB hands months over as 30 days)."""
    sign = "-" if value < timedelta(0) else ""
    value = abs(value)
    minutes, seconds = divmod(value.seconds, 60)
    hours, minutes = divmod(minutes, 60)
    fraction = f".{value.microseconds:06d}".rstrip("0") if value.microseconds else ""
    return f"{sign}P{value.days}DT{hours}H{minutes}M{seconds}{fraction}S"


def print_json(data: Any) -> None:
    """``data`` as strict JSON on stdout (``to_jsonable``): values exactly, never escaped for display."""
    sys.stdout.write(json.dumps(to_jsonable(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n")


def print_csv(columns: list[str], rows: list[tuple]) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows([[_cell(v) for v in row] for row in rows])


def _cell(value: Any) -> str:
    """One query value as CSV and the table carry it: as ``to_jsonable`` writes it, a list, struct or map as JSON."""
    if value is None:
        return ""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(to_jsonable(value), ensure_ascii=False, allow_nan=False)
    if isinstance(value, (bool, int, str)):
        return str(value)
    shown = to_jsonable(value)
    return shown if isinstance(shown, str) else str(value)


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
