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

from .money import usd
from .outputs import write_output

MONEY_KINDS = {"money": 2, "money4": 4, "signed_money": 2}
NUMERIC_KINDS = {"count", "share", "number", "decimal", "seconds", *MONEY_KINDS}


@dataclass(frozen=True)
class Column:
    """``key`` names the value in each row (and the export's column); ``header`` is what people read."""

    key: str
    header: str
    kind: str = "text"  # text, count, bool, decimal, money, money4, signed_money, share, number, seconds, time
    unknown: str = ""  # what a missing value reads as, e.g. "unknown" for a cost nobody could know

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

    def cells(self) -> list[list[str]]:
        """The rows as people read them."""
        return [[c.unknown if row.get(c.key) is None else shown(row.get(c.key), c.kind, self.zone)
                 for c in self.columns] for row in self.rows]


def shown(value: Any, kind: str, zone: str = "UTC") -> str:
    """One value formatted for a terminal or a report; unknown (None) is an empty cell, never 0."""
    if value is None or value == "":
        return ""
    if kind in MONEY_KINDS:
        return usd(int(value), signed=kind == "signed_money", places=MONEY_KINDS[kind])
    if kind == "bool":
        return "yes" if value else "no"
    if kind == "count":
        return f"{value:,}"
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
    writer.writerow([c.export_key for c in sheet.columns])
    for row in sheet.rows:
        writer.writerow([_csv_cell(exported(row.get(c.key), c.kind)) for c in sheet.columns])
    return out.getvalue()


def _csv_cell(value: Any) -> Any:
    if value is None:
        return ""
    return format(value, "f") if isinstance(value, Decimal) else value  # 0.000000000, never 0E-9


def write_parquet(sheet: Sheet, path: Path) -> Path:
    """The sheet as a Parquet file: money decimal(20,6) dollars, counts int64, moments UTC timestamps."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    arrays, fields = [], []
    for column in sheet.columns:
        values = [row.get(column.key) for row in sheet.rows]
        kind = column.kind
        if kind in MONEY_KINDS:
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
    buffer = pa.BufferOutputStream()
    pq.write_table(pa.Table.from_arrays(arrays, schema=pa.schema(fields)), buffer)
    return write_binary(path, buffer.getvalue().to_pybytes())


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
