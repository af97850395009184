"""A table of results that a terminal shows and a spreadsheet takes: one shape, three outputs.

A ``Sheet`` holds typed columns and rows of raw values (micro-dollars, counts, shares, UTC
moments). The terminal table formats them for people (dollars with cents, thousands separators,
percentages); CSV and Parquet carry the values themselves, money as exact dollars (a Decimal with
six places, never a float), moments as UTC ISO 8601, so a pivot table sums what the store holds.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from reconcile.money import amount_text, usd
from reconcile.outputs import write_output

MONEY_KINDS = {"money": 2, "money4": 4, "signed_money": 2}
# A row may say what its missing values mean, {key: words}, where the column's "unknown" would mislead:
# a tool result has no model cost (blank), a format that records no catalogue has a tax "not recorded".
MISSING_AS = "_missing_as"
ID_KEYS = frozenset({"run_id", "parent_run_id", "root_run_id", "session_id", "parent_id"})
NUMERIC_KINDS = {"count", "share", "number", "decimal", "seconds", *MONEY_KINDS}


@dataclass(frozen=True)
class Column:
    """``key`` names the value in each row (and the export's column); ``header`` is what people read."""

    key: str
    header: str
    kind: str = "text"  # text, count, bool, decimal, money, money4, signed_money, share, number, seconds, time
    unknown: str | None = None  # what a missing value reads as; by default "unknown" for money, else blank
    wide: bool = False  # shown in a terminal table only with --wide (CSV, JSON and Parquet always carry it)
    kind_of: str | None = None  # a column of mixed measures: the row key that names each cell's kind
    table_only: bool = False  # words for people (the exports carry the same facts as figures in other columns)
    export_only: bool = False  # a raw figure for CSV and JSON: in a table only with --wide, and not named as left out

    @property
    def is_id(self) -> bool:
        """An identifier (a run's, a session's): a narrow terminal shows its shortest unique prefix."""
        return self.key in ID_KEYS

    def kind_in(self, row: dict[str, Any]) -> str:
        """This column's kind in ``row`` (its own, unless ``kind_of`` names a row key that says otherwise)."""
        return (row.get(self.kind_of) or self.kind) if self.kind_of else self.kind

    @property
    def missing(self) -> str:
        """What a person reads where the value is None: money nobody could know is "unknown", never blank."""
        if self.unknown is not None:
            return self.unknown
        return "unknown" if self.kind in MONEY_KINDS else ""

    @property
    def export_key(self) -> str:
        return f"{self.key.removesuffix('_micros')}_usd" if self.kind in MONEY_KINDS else self.key


@dataclass
class Sheet:
    columns: list[Column]
    rows: list[dict[str, Any]]
    title: str | None = None
    zone: str = "UTC"  # the zone moments are shown in (exports stay UTC)
    notes: list[str] = field(default_factory=list)
    totals: list[dict[str, Any]] = field(default_factory=list)  # under the rows in a table; never in CSV or Parquet
    # where a terminal is too narrow for every column: the keys left out first (then the others, right to
    # left; the first column always stays)
    drop_first: tuple[str, ...] = ()
    # the figure the table is named for and what a reader needs to read it: kept whatever the width (the first
    # column always is); the others leave before them
    headline: tuple[str, ...] = ()
    # columns that add up to a whole (runs by status), and the column that sums all of them but the first: on a
    # terminal too narrow for every part, the first part and that sum stand in for them, so the row still adds up
    parts: tuple[tuple[str, ...], str] | None = None

    def cells(self) -> list[list[str]]:
        """The rows (and the totals under them) as people read them."""
        return [[missing_cell(row, c) if row.get(c.key) is None
                 else shown(row.get(c.key), c.kind_in(row), self.zone) for c in self.columns]
                for row in [*self.rows, *self.totals]]


def bounds_keys(key: str) -> tuple[str, str]:
    """Where a money figure's bounds are kept beside it: ``cost_micros`` -> ``cost_low_micros``, ``cost_high_micros``."""
    stem = key.removesuffix("_micros")
    return f"{stem}_low_micros", f"{stem}_high_micros"


def missing_cell(row: dict[str, Any], column: Column) -> str:
    """What a cell reads where its value is not known exactly: a money figure with bounds beside it is a range or
    "at least" (never its known part alone, never blank); else what the row says it means, else the column's word."""
    said = row.get(MISSING_AS, {})
    if column.key in said:
        return said[column.key]
    if column.kind in MONEY_KINDS:
        low_key, high_key = bounds_keys(column.key)
        if row.get(low_key) is not None:
            text = amount_text(None, row[low_key], row.get(high_key), places=MONEY_KINDS[column.kind],
                               unknown=column.missing)
            return text
    return column.missing


def shown(value: Any, kind: str, zone: str = "UTC") -> str:
    """One value formatted for a terminal or a report; unknown (None) is an empty cell, never 0."""
    if value is None or value == "":
        return ""
    if kind in MONEY_KINDS:
        return usd(int(value), signed=kind == "signed_money", places=MONEY_KINDS[kind])
    if kind == "bool":
        return "yes" if value else "no"
    if kind == "count":  # a whole count; a quantile of counts between two ranks keeps a tenth ("8.8")
        return f"{int(value):,}" if float(value).is_integer() else f"{value:,.1f}"
    if kind == "share":
        return f"{value:.1%}"
    if kind in ("number", "seconds"):
        return f"{value:,.1f}"
    if kind == "decimal":  # a price or a multiplier: as given, no rounding, no trailing zeros
        return format(Decimal(str(value)).normalize(), "f")
    if kind == "time" and isinstance(value, datetime):
        return value.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S")
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def exported(value: Any, kind: str) -> Any:
    """One value as CSV and Parquet carry it: exact dollars, UTC ISO moments, lists joined."""
    if value is None:
        return None
    if kind in MONEY_KINDS:
        return Decimal(int(value)).scaleb(-6).quantize(Decimal("0.000001"))
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return value


def to_csv(sheet: Sheet) -> str:
    """The sheet as CSV with a header of export keys; lines end in ``\\n`` (not CRLF)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    columns = export_columns(sheet)
    writer.writerow([c.export_key for c in columns])
    for row in sheet.rows:
        writer.writerow([_csv_cell(exported(row.get(c.key), c.kind_in(row))) for c in columns])
    return out.getvalue()


def every_key(columns: list[Column], rows: list[dict[str, Any]]) -> list[Column]:
    """``columns`` and, for every other key the rows hold, a ``wide`` column: so CSV carries what JSON does.

    The kind is read from the name and the values: ``*_micros`` money, whole numbers counts, other
    numbers numbers, True/False yes/no, anything else text.
    """
    have = {c.key for c in columns} | {c.export_key for c in columns}
    extra: dict[str, Column] = {}
    for row in rows:
        for key, value in row.items():
            if key in have or key in extra or key.startswith("_") or value is None and not key.endswith("_micros"):
                continue
            kind = ("money" if key.endswith("_micros") else "bool" if isinstance(value, bool)
                    else "count" if isinstance(value, int) else "number" if isinstance(value, float) else "text")
            column = Column(key, key.removesuffix("_micros").replace("_", " "), kind, wide=True, export_only=True)
            if column.export_key not in have:
                extra[key] = column
                have.add(column.export_key)
    return [*columns, *extra.values()]


def in_dollars(value: Any) -> Any:
    """A report for ``--json``: every ``*_micros`` figure as exact dollars under ``*_usd``, as CSV has it.

    Only figures move (a number or None); a ``*_micros`` key holding a list or an object is left as it is.
    """
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if isinstance(key, str) and key.endswith("_micros") and (item is None or isinstance(item, (int, float))
                                                                      and not isinstance(item, bool)):
                target = f"{key.removesuffix('_micros')}_usd"
                if target in value:
                    continue  # the report says it in dollars already ("billed_usd")
                dollars = exported(item, "money")
                out[target] = None if dollars is None else float(dollars)
            elif isinstance(key, str) and key.endswith("_usd") and isinstance(item, Decimal):
                out[key] = float(item)  # dollars the store keeps as a decimal: a JSON number, as every *_usd is
            else:
                out[key] = in_dollars(item)
        return out
    if isinstance(value, (list, tuple)):
        return [in_dollars(item) for item in value]
    return value


def export_columns(sheet: Sheet) -> list[Column]:
    """The columns CSV, JSON and Parquet carry: all but the words a table adds for people."""
    return [c for c in sheet.columns if not c.table_only]


def json_rows(sheet: Sheet) -> list[dict[str, Any]]:
    """The rows as ``--json`` carries them: the CSV's keys and units (money exact dollars under ``*_usd``).

    Money is a JSON number written with the same digits as the CSV (``9.273578``: a reader that parses
    numbers as decimals gets the exact amount); a list stays a list; moments are UTC ISO 8601.
    """
    columns = export_columns(sheet)
    return [{c.export_key: _json_cell(row.get(c.key), c.kind_in(row)) for c in columns} for row in sheet.rows]


def _json_cell(value: Any, kind: str) -> Any:
    if isinstance(value, (list, tuple)):
        return list(value)
    value = exported(value, kind)
    return float(value) if isinstance(value, Decimal) and kind in MONEY_KINDS else value


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    return format(value, "f") if isinstance(value, Decimal) else value  # 0.000000000, never 0E-9


def write_parquet(sheet: Sheet, path: Path) -> Path:
    """The sheet as a Parquet file: money decimal(20,6) dollars, counts int64, moments UTC timestamps."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = pa.BufferOutputStream()
    pq.write_table(sheet_arrow(sheet), buffer)
    return write_binary(path, buffer.getvalue().to_pybytes())


def sheet_arrow(sheet: Sheet):
    """The sheet as an Arrow table, typed as its Parquet file is (the notebook's frames read it too)."""
    import pyarrow as pa

    arrays, fields = [], []
    for column in export_columns(sheet):
        values = [row.get(column.key) for row in sheet.rows]
        kind = column.kind
        if column.kind_of:  # mixed measures (steps, seconds, dollars): each in its own unit, as a float
            typ, values = pa.float64(), [None if row.get(column.key) is None
                                         else float(exported(row.get(column.key), column.kind_in(row)))
                                         for row in sheet.rows]
        elif kind in MONEY_KINDS:
            typ, values = pa.decimal128(20, 6), [exported(v, kind) for v in values]
        elif kind == "count":
            typ = pa.int64()
        elif kind == "bool":
            typ = pa.bool_()
        elif kind == "decimal":
            typ, values = pa.decimal128(20, 9), [None if v is None else Decimal(str(v)) for v in values]
        elif kind in ("share", "number", "seconds"):
            typ, values = pa.float64(), [None if v is None else float(v) for v in values]
        elif kind == "time":
            typ = pa.timestamp("us", tz="UTC")
        else:
            typ, values = pa.string(), [None if v is None else str(exported(v, kind)) for v in values]
        arrays.append(pa.array(values, type=typ))
        fields.append(pa.field(column.export_key, typ))
    return pa.Table.from_arrays(arrays, schema=pa.schema(fields))


def rows_parquet(columns: list[str], rows: list[tuple]) -> bytes:
    """Query rows as Parquet bytes, each column's type inferred from its Python values (Decimal stays decimal)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = [name if columns.count(name) == 1 else f"{name}_{i}" for i, name in enumerate(columns)]
    table = pa.Table.from_arrays([_query_column([row[i] for row in rows]) for i in range(len(names))], names=names) \
        if rows else pa.table({name: pa.array([], type=pa.string()) for name in names})
    buffer = pa.BufferOutputStream()
    pq.write_table(table, buffer)
    return buffer.getvalue().to_pybytes()


def _query_column(values: list) -> Any:
    """One query column as an Arrow array; integers past int64 (HUGEINT, UHUGEINT) as decimal(38, 0), else as text."""
    import pyarrow as pa

    big = [v for v in values if isinstance(v, int) and not isinstance(v, bool) and not -2**63 <= v < 2**63]
    if not big:
        return pa.array(values)
    if all(abs(v) < 10**38 for v in big):
        return pa.array([None if v is None else Decimal(v) for v in values], pa.decimal128(38, 0))
    return pa.array([None if v is None else str(v) for v in values], pa.string())


def write_binary(path: Path, data: bytes) -> Path:
    return write_output(path, data, option="--parquet")
