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
MINIMUMS = "reconcile-cache-minimums"  # the shortest prompt each provider caches (cache_minimums.toml)
MINIMUM_KEYS = ("provider", "model", "from", "to", "tokens")


@functools.lru_cache(maxsize=1)
def corrections() -> tuple[str, list[list]]:
    """(version, rows) of the shipped corrections; the version is a hash of the file, so a changed
    file is loaded again into a store that holds an older one."""
    text = resources.files("reconcile.prices").joinpath("price_corrections.toml").read_text(encoding="utf-8")
    version = hashlib.sha256(text.encode()).hexdigest()[:12]
    entries = tomllib.loads(text)["price"]
    return version, [_override_row(f"price_corrections.toml [[price]] #{number}", entry, CORRECTIONS)
                     for number, entry in enumerate(entries, 1)]


@functools.lru_cache(maxsize=1)
def shipped_minimums() -> tuple[str, list[list]]:
    """(version, rows) of the shipped minimum cacheable prompt lengths, in ``cache_minimums``' column order (without
    the version); the version is a hash of the file, so a changed file is loaded again."""
    text = resources.files("reconcile.prices").joinpath("cache_minimums.toml").read_text(encoding="utf-8")
    version = hashlib.sha256(text.encode()).hexdigest()[:12]
    entries = tomllib.loads(text)["minimum"]
    return version, [_minimum_row(f"cache_minimums.toml [[minimum]] #{number}", entry, MINIMUMS)
                     for number, entry in enumerate(entries, 1)]


def read_minimum_rows(path: Path) -> list[list]:
    """A price file's minimum cacheable prompt lengths, in ``cache_minimums``' column order (without the version):
    its ``[[cache_minimum]]`` tables (TOML), and the ``min_cache_tokens`` of its price rows (TOML or CSV), which hold
    for the row's provider and model. The file has been read by ``read_override_rows`` first (its errors said)."""
    records = _read_toml(path, minimums=True) if path.suffix.lower() == ".toml" else []
    rows = [_minimum_row(where, record, str(path)) for where, record in records]
    price_records = _read_toml(path) if path.suffix.lower() == ".toml" else _read_csv(path)
    return rows + [_minimum_row(where, {**record, "tokens": record["min_cache_tokens"]}, str(path))
                   for where, record in price_records if record.get("min_cache_tokens") not in (None, "")]


def _minimum_row(where: str, record: dict, source: str) -> list:
    for key in ("provider", "model"):
        if record.get(key) is None:
            raise BadInput(f"{where}: {key!r} is missing (provider * matches any; model '' every model of it)")
    raw = record.get("tokens")
    try:
        tokens = int(str(raw))
    except ValueError:
        raise BadInput(f"{where}: the minimum cacheable prompt length {raw!r} is not a whole number of tokens; "
                       "give one such as 1024") from None
    if not 0 <= tokens <= 100_000_000:
        raise BadInput(f"{where}: the minimum cacheable prompt length {tokens} is out of range (0 to 100,000,000 tokens)")
    start, end = _date(where, record, "from"), _date(where, record, "to")
    if start is not None and end is not None and end <= start:
        raise BadInput(f"{where}: to = {end} is not after from = {start}; a period ends after it starts")
    return [str(record["provider"]).strip(), str(record["model"]).strip(), start, end, tokens, source]


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


def _read_toml(path: Path, minimums: bool = False) -> list[tuple[str, dict]]:
    """A TOML price file's ``[[price]]`` tables (with ``minimums``, its ``[[cache_minimum]]`` tables instead)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise BadInput(f"{path}: not valid TOML: {exc}") from exc
    table = "cache_minimum" if minimums else "price"
    entries = data.get(table, [])
    if not isinstance(entries, list) or not all(isinstance(entry, dict) for entry in entries) or (
            not minimums and not entries and not data.get("cache_minimum")):
        raise BadInput(f"{path}: expected [[price]] tables with keys {', '.join(OVERRIDE_COLUMNS)} (and optionally "
                       f"[[cache_minimum]] tables with keys {', '.join(MINIMUM_KEYS)})")
    return [(f"{path} [[{table}]] #{number}", entry) for number, entry in enumerate(entries, 1)]


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


