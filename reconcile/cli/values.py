"""Query values as JSON and CSV carry them: exactly, losing nothing (moments ISO 8601, decimals whole, BLOBs as text)."""

from __future__ import annotations

import csv
import json
import math
import sys
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any
from uuid import UUID


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
    writer.writerows([[cell_text(v) for v in row] for row in rows])


def cell_text(value: Any) -> str:
    """One query value as CSV and the table carry it: as ``to_jsonable`` writes it, a list, struct or map as JSON."""
    if value is None:
        return ""
    if isinstance(value, (dict, list, tuple)):
        return json.dumps(to_jsonable(value), ensure_ascii=False, allow_nan=False)
    if isinstance(value, (bool, int, str)):
        return str(value)
    shown = to_jsonable(value)
    return shown if isinstance(shown, str) else str(value)
