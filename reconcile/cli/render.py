"""Turning library results into terminal output: tables, JSON, CSV."""

from __future__ import annotations

import io
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from reconcile.analyses.coverage import Coverage
from reconcile.display import literal
from reconcile.errors import BadInput
from reconcile.sheets import NUMERIC_KINDS, Column, Sheet, json_rows, to_csv, write_parquet
# (re-exported: the commands import them from here)
from reconcile.cli.values import blob_text, cell_text, iso_duration, print_csv, print_json, to_jsonable  # noqa: F401


class LiteralConsole(Console):
    """A rich console for which every ``str`` is data: no markup, no emoji, control characters escaped.

    Transcripts are evidence: a tool result holding ``[/INST]`` or ``:x:`` is printed as it is. On a
    terminal a line of prose folds between its words at the edge; off one (a pipe, a log) it stays one line.
    """

    def __init__(self, **options):
        super().__init__(highlight=False, soft_wrap=True, markup=False, emoji=False, **options)

    def _prose(self, line: str) -> Text:
        """A line of words, folded between words at the terminal's edge (never padded with spaces); one indented
        (an item under a heading) folds under its own first word, a hanging indent."""
        return Text(folded(literal(line), self.width) if self.is_terminal else literal(line))

    def print(self, *objects, **options) -> None:
        options.pop("markup", None)
        shown = [self._prose(o) if isinstance(o, str) else o for o in objects]
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


def folded(text: str, width: int) -> str:
    """``text`` folded between words into lines of ``width`` at most (a word longer than a line is cut); an indented
    line's continuation lines hang two places further in. Lines already short enough are left as they are."""
    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = len(line) - len(line.lstrip(" "))
        hang = indent + 2 if indent else 0
        out += textwrap.wrap(line.strip(" "), max(width, hang + 20), initial_indent=" " * indent,
                             subsequent_indent=" " * hang, break_on_hyphens=False) or [line]
    return "\n".join(out)


def _fold(text: str, width: int) -> str:
    """``folded`` on a terminal; off one (a pipe, a log) a title or a note stays one line."""
    return folded(text, width) if console.is_terminal else text


def table(columns: list[str], rows: list[tuple] | list[list], title: str | None = None,
          right: set[str] | None = None, header: bool = True, text_min: int | None = None,
          fold_names: bool = False) -> Table:
    """A terminal table whose ids, dates and figures are never broken across lines.

    Figures (``right``) are right-aligned; a column whose every cell is one word (a run id, a date,
    a model name) keeps its whole width; only prose folds, and then only between words. A table too
    wide for the terminal runs past its edge (``needed_width``) rather than cut a value. ``text_min``: the
    narrowest a column of prose may fold to (``TEXT_MIN_WIDTH`` unless a narrow terminal needs less).
    ``fold_names``: a column of one-word names (a tool, a model) may fold too, at ``NAME_MIN_WIDTH``
    (the last resort of :func:`fitted_table`; figures and moments still never break).
    """
    right = right or set()
    text_min = TEXT_MIN_WIDTH if text_min is None else text_min
    out = Table(title=Text(_fold(literal(title), console.width)) if title else None, title_justify="left", show_header=header,
                header_style="bold")
    cells = [[literal(_shortened(cell_text(v))) for v in row] for row in rows]
    needed = 1
    for index, name in enumerate(columns):
        values = [row[index] for row in cells if index < len(row)]
        widest = max((len(line) for cell in values for line in cell.splitlines() or [""]), default=0)
        names = fold_names and name not in right and any(len(cell) > NAME_MIN_WIDTH and not _MOMENT.fullmatch(cell)
                                                         for cell in values)
        if not names and (name in right or not any(_spaced(cell) for cell in values)):
            heading = max((len(word) for word in literal(name).split()), default=0)
            width = max(widest, heading, 1)
            # the column never wraps, its header included: break the header between words ourselves,
            # in HEADER_LINES lines at most
            while len(_header_lines(name, width)) > HEADER_LINES:
                width += 1
            header_text = "\n".join(_header_lines(name, width)) or literal(name)
            out.add_column(Text(header_text), justify="right" if name in right else "left", no_wrap=True,
                           min_width=width)
        else:
            # as narrow as its longest word (as rich measures it), and never narrower than a readable line
            width = max(min(widest, text_min), *(len(word) for cell in [literal(name), *values]
                                                       for word in cell.split()), 1) if not names \
                else max(min(widest, NAME_MIN_WIDTH), *(len(word) for word in literal(name).split()), 1)
            out.add_column(Text(literal(name)), justify="left", overflow="fold", min_width=width)
        needed += width + 3
    out.needed_width = needed  # the narrowest the table can be with whole values and readable words
    for row in cells:  # Text, not str: a value is shown literally, never read as rich markup ("[a-z]")
        out.add_row(*[Text(cell) for cell in row])
    return out


def fitted_table(columns: list[str], rows: list[tuple] | list[list], title: str | None = None,
                 right: set[str] | None = None, header: bool = True, width: int | None = None,
                 ids: set[str] | None = None) -> Table:
    """:func:`table`, made to fit ``width`` (the terminal's) when it can: the ``ids`` columns cut to their
    shortest unique prefix, prose folded narrower, then long names folded; a table that cannot fit even
    so runs past the edge and says so under it."""
    width = width or console.width
    out = table(columns, rows, title, right, header)
    if out.needed_width <= width:
        return out
    short = [columns.index(name) for name in ids or () if name in columns]
    rows = _shortened_columns(rows, short) if short else rows
    for options in ({}, {"text_min": NARROW_TEXT_MIN}, {"text_min": NARROW_TEXT_MIN, "fold_names": True}):
        out = table(columns, rows, title, right, header, **options)
        if out.needed_width <= width:
            return out
    out.caption = Text(f"too wide for {width} columns: --csv (or --json) shows every value whole")  # as wide as the table
    out.caption_justify = "left"
    return out


def folded_path(path: str, width: int) -> str:
    """A path folded onto lines of at most ``width`` characters, each break after a separator (``/`` or ``\\``);
    a part longer than a line is cut where the line ends. A path is one word to a table, which never folds it, so
    the width it takes would depend on where the files live."""
    width = max(width, 8)
    lines, line = [], ""
    for part in re.split(r"(?<=[/\\])", path):
        if line and len(line) + len(part) > width:
            lines.append(line)
            line = ""
        line += part
        while len(line) > width:
            lines.append(line[:width])
            line = line[width:]
    return "\n".join([*lines, line] if line else lines)


def _header_lines(name: str, width: int) -> list[str]:
    return textwrap.wrap(literal(name), width, break_long_words=False, break_on_hyphens=False)


def _spaced(cell: str) -> bool:
    """True for prose (a cell with a space between words), which may fold between its words.

    A moment ("2026-11-28 22:02:13", with or without its zone) is one value, never prose.
    """
    return any(ch.isspace() for ch in cell.strip()) and not _MOMENT.fullmatch(cell.strip())


_MOMENT = re.compile(r"\d{4}-\d\d-\d\d([ T]\d\d:\d\d(:\d\d(\.\d+)?)?)?( ?(Z|UTC|[+-]\d\d:?\d\d|[A-Z]{2,5}))?")


def shown_columns(sheet: Sheet, wide: bool = False) -> tuple[list[Column], list[str]]:
    """The columns a compact table shows, and the headers of those it leaves out.

    Compact (the default) leaves out the columns marked ``wide`` and those with nothing to read in
    any row (every cell blank or zero; "unknown" is something to read); ``wide`` shows every column.
    """
    if wide or not sheet.rows:
        return list(sheet.columns), []
    kept, hidden = [], []
    cells = sheet.cells()
    for index, column in enumerate(sheet.columns):
        # nothing to read: every cell blank, or a zero count; an "unknown" cost is something to read
        empty = all(row[index] == "" or (column.kind in NUMERIC_KINDS and source.get(column.key) == 0)
                    for row, source in zip(cells, sheet.rows))
        headline = column.key in sheet.headline  # the figure the table is for: shown, even where blank
        (hidden if not headline and (column.wide or empty) else kept).append(column)
    # the raw figures only the exports carry are not columns "left out" of a compact table, nor the sum of parts
    # that stands in for them on a narrow terminal
    rest = sheet.parts[1] if sheet.parts else None
    return kept, [c.header for c in hidden if not c.export_only and c.key != rest]


def sheet_table(sheet: Sheet, wide: bool = False, width: int | None = None) -> Table:
    """A :class:`~reconcile.sheets.Sheet` as a terminal table: figures right-aligned and never wrapped.

    Compact unless ``wide`` (:func:`shown_columns`), and made to fit ``width`` (the terminal's) as
    ccusage fits a narrow one: ids shortened to their shortest unique prefix (``fe5e1c67…``), prose
    folded narrower, then columns left out — ``sheet.drop_first``, then from the right. A note under
    the table names what it left out; a table that cannot fit even so says so and runs past the edge.
    """
    columns, hidden = shown_columns(sheet, wide)
    cells = sheet.cells()
    if wide:
        return _sheet_layout(sheet, columns, cells, hidden, width=10**6)  # --wide: the note on one line
    width = width or console.width
    # off a terminal (a pipe, a log) ids stay whole, so that an id copied from the log is the id; other columns still
    # leave a table wider than the page
    shortened = _short_ids(sheet, cells) if console.is_terminal else cells
    attempts = [(cells, None), (shortened, None), (shortened, NARROW_TEXT_MIN)]
    for rows, text_min in attempts:
        out = _sheet_layout(sheet, columns, rows, hidden, text_min, width=width)
        if out.needed_width <= width:
            return out
    rows, dropped = shortened, []
    if sheet.parts:  # parts of a whole (runs by status): the first of them kept, the rest summed in one column
        keys, rest = sheet.parts
        parts = [c for c in columns if c.key in keys[1:]]
        summed = next(c for c in sheet.columns if c.key == rest)
        if parts:
            at = columns.index(parts[0])
            columns = [*columns[:at], summed, *[c for c in columns[at:] if c not in parts]]
            hidden = hidden + [c.header for c in parts]
            out = _sheet_layout(sheet, columns, rows, hidden, NARROW_TEXT_MIN, width=width)
            if out.needed_width <= width:
                return out
    for column in _drop_order(sheet, columns):
        dropped.append(column)
        out = _sheet_layout(sheet, [c for c in columns if c not in dropped], rows,
                            hidden + [c.header for c in dropped], NARROW_TEXT_MIN, width=width)
        if out.needed_width <= width:
            return out
    # the headline alone is still too wide: long one-word names (an MCP tool's) fold rather than lose a figure
    out = _sheet_layout(sheet, [c for c in columns if c not in dropped], rows, hidden + [c.header for c in dropped],
                        NARROW_TEXT_MIN, width=width, fold_names=True)
    if out.needed_width <= width:
        return out
    out = _sheet_layout(sheet, columns, shortened, hidden, NARROW_TEXT_MIN,
                        f"too wide for {width} columns: --wide or --csv shows every column whole", width=10**6)
    return out


def _sheet_layout(sheet: Sheet, columns: list[Column], cells: list[list[str]], hidden: list[str],
                  text_min: int | None = None, too_wide: str | None = None, width: int | None = None,
                  fold_names: bool = False) -> Table:
    keep = [sheet.columns.index(c) for c in columns]
    out = table([c.header for c in columns], [[row[i] for i in keep] for row in cells], title=sheet.title,
                right={c.header for c in columns if c.kind in NUMERIC_KINDS}, text_min=text_min,
                fold_names=fold_names)
    said = [f"not shown: {', '.join(hidden)} (--wide shows every column)"] if hidden else []
    caption = "; ".join(said + ([too_wide] if too_wide else []))
    out.caption = Text(_fold(literal(caption), width or console.width)) if caption else None
    out.caption_justify = "left"
    return out


def _drop_order(sheet: Sheet, columns: list[Column]) -> list[Column]:
    """The columns a narrow terminal leaves out, first to last: ``drop_first``, then right to left; never the first
    column nor a ``headline`` one."""
    kept = set(sheet.headline) | ({sheet.parts[0][0], sheet.parts[1]} if sheet.parts else set())
    first = [c for key in sheet.drop_first for c in columns[1:] if c.key == key and c.key not in kept]
    return first + [c for c in reversed(columns[1:]) if c not in first and c.key not in kept]


def _short_ids(sheet: Sheet, cells: list[list[str]]) -> list[list[str]]:
    """``cells`` with each id column's values cut to the shortest prefix (``ID_PREFIX`` or more) unique in the column."""
    return _shortened_columns(cells, [index for index, column in enumerate(sheet.columns) if column.is_id])


def _shortened_columns(rows: list, indexes: list[int]) -> list[list]:
    out = [list(row) for row in rows]
    for index in indexes:
        values = {str(row[index]) for row in rows}
        length = unique_prefix_length(values)
        for row in out:
            if len(str(row[index])) > length + 1:
                row[index] = str(row[index])[:length] + "…"
    return out


def unique_prefix_length(values: set[str], least: int = 0) -> int:
    """The shortest length (``ID_PREFIX`` at least) at which the prefixes of ``values`` are as many as the values."""
    length = max(least, ID_PREFIX)
    longest = max((len(v) for v in values), default=0)
    while length < longest and len({v[:length] for v in values}) < len(values):
        length += 1
    return length


def rendered(sheet: Sheet, wide: bool = False) -> str:
    """The sheet's table as text, laid out as :data:`console` would print it."""
    capture = LiteralConsole(width=console.width, record=True, file=io.StringIO())
    capture.print(sheet_table(sheet, wide))
    return capture.export_text()


@dataclass(frozen=True)
class Output:
    """``--json``, ``--csv``, ``--parquet FILE``: how a command gives its table (a table on the terminal when none
    is chosen). Two at once are refused (which one would win is a guess)."""

    json: bool = False
    csv: bool = False
    parquet: Path | None = None

    def __post_init__(self) -> None:
        if sum([bool(self.json), bool(self.csv), self.parquet is not None]) > 1:
            raise BadInput("choose one of --json, --csv and --parquet FILE")

    @property
    def as_table(self) -> bool:
        return not (self.json or self.csv or self.parquet is not None)


def output(sheet: Sheet, given: Output = Output(), json_data: Any = None, wide: bool = False) -> bool:
    """Print ``sheet`` as a table, or as JSON (``json_data`` when given), CSV on stdout, or a Parquet file.

    Returns True when it printed the table, so a command adds its other tables and notes only then.
    """
    if given.json:
        print_json(json_rows(sheet) if json_data is None else json_data)  # json_data holds the same rows
    elif given.csv:
        sys.stdout.write(to_csv(sheet))
    elif given.parquet is not None:
        written = write_parquet(sheet, given.parquet)
        LiteralConsole(stderr=True).print(f"wrote {len(sheet.rows)} row(s) to {written}")
    else:
        console.print(sheet_table(sheet, wide))
        for note in sheet.notes:
            console.print(note)
        return True
    return False


def empty_window(found: Coverage, sheet: Sheet, given: Output, json_data: Any = None) -> None:
    """A listing command's answer for a window with no runs: the one line (exit 0), and, for --json, --csv
    or --parquet, the empty result in the shape a full one has, on stdout (or in the file), the line on stderr."""
    if not given.as_table:
        output(sheet, given, json_data=json_data)
        LiteralConsole(stderr=True).print(found.empty_line())
    else:
        console.print(found.empty_line())


# A header over a narrow column of figures breaks between words into at most this many lines.
HEADER_LINES = 2

# A column of prose is folded between its words, but no narrower than this (a line too short to read);
# a terminal too narrow for the table at that width may fold it to NARROW_TEXT_MIN.
TEXT_MIN_WIDTH = 24
NARROW_TEXT_MIN = 12
NAME_MIN_WIDTH = 16

# An id in a narrow terminal: its first ID_PREFIX characters (more where two would read alike), as ccusage
# shows them; ``reconcile show`` takes any unambiguous prefix.
ID_PREFIX = 8

# A table cell is for reading: a 20 MB tool result would take minutes to lay out and bury the table.
# --json (and sql --csv) carry whole values.
CELL_CHARS = 2000


def _shortened(text: str) -> str:
    if len(text) <= CELL_CHARS:
        return text
    return f"{text[:CELL_CHARS]}… ({len(text) - CELL_CHARS:,} more characters; --json shows them all)"
