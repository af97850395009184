"""Reading a file as numbered lines into a temp table, in bulk.

The fast path is DuckDB's CSV reader with a delimiter that never occurs in JSON text, which
keeps file order and yields blank lines as NULL rows, so ``row_number()`` is the line number.
Files DuckDB refuses whole (invalid UTF-8, a line over 64 MB) take a slower path that decodes
in Python and marks the bad lines, so one bad byte costs one line, not the file.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb
import pyarrow as pa

MAX_LINE_BYTES = 64 * 1024 * 1024
RAW_KEEP_CHARS = 4096  # how much of a rejected line the rejects table keeps

_READ_LINES = f"""
create or replace temp table {{table}} as
select row_number() over () as line_no, line, cast(null as varchar) as read_error
from read_csv(?, columns={{{{'line': 'VARCHAR'}}}}, delim=chr(1), quote='', escape='', header=false,
              auto_detect=false, strict_mode=false, max_line_size={MAX_LINE_BYTES})
"""


def load_lines(con: duckdb.DuckDBPyConnection, path: Path, table: str = "_lines") -> int:
    """Create temp table ``table(line_no, line, read_error)``; return the number of lines."""
    try:
        con.execute(_READ_LINES.format(table=table), [str(path)])
    except duckdb.InvalidInputException:
        _load_lines_slowly(con, path, table)
    return con.execute(f"select count(*) from {table}").fetchall()[0][0]


def _load_lines_slowly(con: duckdb.DuckDBPyConnection, path: Path, table: str) -> None:
    data = gzip.open(path).read() if _is_gzip(path) else path.read_bytes()
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    lines, errors = [], []
    for raw in raw_lines:  # the rare path only: a file DuckDB's reader refused whole
        raw = raw.removesuffix(b"\r")
        try:
            lines.append(raw.decode("utf-8") or None)
            errors.append(None)
        except UnicodeDecodeError as exc:
            lines.append(raw.decode("utf-8", errors="replace"))
            errors.append(f"not valid UTF-8 (byte {exc.start}: {raw[exc.start:exc.start + 1]!r})")
    frame = pa.table({"line_no": pa.array(range(1, len(lines) + 1), pa.int64()),
                      "line": pa.array(lines, pa.string()), "read_error": pa.array(errors, pa.string())})
    con.register("_slow_lines", frame)
    con.execute(f"create or replace temp table {table} as select * from _slow_lines")
    con.unregister("_slow_lines")


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as handle:
        return handle.read(2) == b"\x1f\x8b"


def ends_with_newline(path: Path) -> bool:
    """Whether the file's last byte is a newline (a missing one means the writer stopped mid-line)."""
    if _is_gzip(path):
        with gzip.open(path) as handle:
            last = b""
            while chunk := handle.read(1 << 20):
                last = chunk[-1:]
            return last in (b"", b"\n")
    with open(path, "rb") as handle:
        handle.seek(0, 2)
        if handle.tell() == 0:
            return True
        handle.seek(-1, 2)
        return handle.read(1) == b"\n"


def read_head(path: Path, size: int = 65536) -> bytes:
    """The first ``size`` bytes of a file, decompressed if it is gzip."""
    if _is_gzip(path):
        with gzip.open(path) as handle:
            return handle.read(size)
    with open(path, "rb") as handle:
        return handle.read(size)
