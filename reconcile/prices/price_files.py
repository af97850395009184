"""Price files: a user's overrides (CSV or TOML) and the dated corrections shipped with reconcile.

Both become rows shaped like ``prices`` (dollars per million tokens per disjoint bucket). An
override names a model as its callers write it (a prefix; provider ``*`` for any) and wins over
every other price. A correction amends genai-prices' own entry (its provider and model ids) for
a dated period in which that entry is known to be wrong, with the provider's page as its source;
outside its period the library's price stands. ``price_corrections.toml`` holds them.
"""

from __future__ import annotations

import csv
import datetime as dt
import functools
import hashlib
import tomllib
from decimal import Decimal, InvalidOperation
from importlib import resources
from pathlib import Path

from reconcile.errors import BadInput

OVERRIDE_COLUMNS = ("provider", "model", "from", "to", "input", "output", "cache_read", "cache_write_5m",
                    "cache_write_1h")
CORRECTIONS = "reconcile-corrections"


@functools.lru_cache(maxsize=1)
def corrections() -> tuple[str, list[list]]:
    """(version, rows) of the shipped corrections; the version is a hash of the file, so a changed
    file is loaded again into a store that holds an older one."""
    text = resources.files("reconcile.prices").joinpath("price_corrections.toml").read_text(encoding="utf-8")
    version = hashlib.sha256(text.encode()).hexdigest()[:12]
    entries = tomllib.loads(text)["price"]
    return version, [_override_row(f"price_corrections.toml [[price]] #{number}", entry, CORRECTIONS)
                     for number, entry in enumerate(entries, 1)]


def read_override_rows(path: Path) -> list[list]:
    """A price file's rows in ``prices``' column order (without the version), validated."""
    if not path.is_file():
        what = "is a folder" if path.is_dir() else "does not exist"
        raise BadInput(f"The price file {path} {what}. Give a CSV or TOML file with columns "
                       f"{', '.join(OVERRIDE_COLUMNS)} (docs/costs.md).")
    try:
        records = _read_toml(path) if path.suffix.lower() == ".toml" else _read_csv(path)
    except OSError as exc:
        raise BadInput(f"Cannot read the price file {path}: {exc.strerror or exc}. Check its permissions.") from exc
    except UnicodeDecodeError as exc:
        raise BadInput(f"The price file {path} is not UTF-8 text (byte {exc.start}); save it as UTF-8 CSV or TOML.") from exc
    return [_override_row(where, record, str(path)) for where, record in records]


def _read_csv(path: Path) -> list[tuple[str, dict]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("provider", "model", "input", "output") if c not in (reader.fieldnames or [])]
        if missing:
            raise BadInput(f"{path}:1: the header lacks {', '.join(missing)}; columns are {', '.join(OVERRIDE_COLUMNS)}")
        return [(f"{path}:{number}", row) for number, row in enumerate(reader, 2)]


def _read_toml(path: Path) -> list[tuple[str, dict]]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path}: not valid TOML: {exc}") from exc
    entries = data.get("price")
    if not isinstance(entries, list):
        raise BadInput(f"{path}: expected [[price]] tables with keys {', '.join(OVERRIDE_COLUMNS)}")
    return [(f"{path} [[price]] #{number}", entry) for number, entry in enumerate(entries, 1)]


def _override_row(where: str, record: dict, source: str) -> list:
    def price(key: str, required: bool = False) -> Decimal | None:
        raw = record.get(key)
        if raw in (None, ""):
            if required:
                raise BadInput(f"{where}: {key!r} is missing; give the price in dollars per million tokens")
            return None
        try:
            value = Decimal(str(raw))
        except InvalidOperation as exc:
            raise BadInput(f"{where}: {key} = {raw!r} is not a number; give dollars per million tokens, e.g. 3.75") from exc
        if value < 0:
            raise BadInput(f"{where}: {key} = {raw!r} is negative")
        return value

    for key in ("provider", "model"):
        if not str(record.get(key) or "").strip():
            raise BadInput(f"{where}: {key!r} is missing (use * as the provider to match any)")
    start, end = _date(where, record, "from"), _date(where, record, "to")
    if start is not None and end is not None and end <= start:
        raise BadInput(f"{where}: to = {end} is not after from = {start}; a price period ends after it starts")
    uncached, output = price("input", True), price("output", True)
    read, write_5m, write_1h = price("cache_read"), price("cache_write_5m"), price("cache_write_1h")
    read = uncached if read is None else read  # a price of 0 (free cache reads) is a price, not a missing one
    write_5m = uncached if write_5m is None else write_5m
    write_1h = write_5m if write_1h is None else write_1h
    return [str(record["provider"]).strip(), str(record["model"]).strip(), start, end,
            uncached, read, write_5m, write_1h, output, None, None, None, None, None, None, source]


def _date(where: str, record: dict, key: str) -> dt.date | None:
    value = record.get(key) or None
    if value is None or isinstance(value, dt.date):
        return value
    try:
        return dt.date.fromisoformat(str(value))
    except ValueError as exc:
        raise BadInput(f"{where}: {key} = {value!r} is not a date like 2026-11-01") from exc


