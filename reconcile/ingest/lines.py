"""Reading a file as numbered lines into a temp table, in bulk.

The fast path is DuckDB's CSV reader with a delimiter that never occurs in JSON text, which
keeps file order and yields blank lines as NULL rows, so ``row_number()`` is the line number.
Files DuckDB refuses whole (invalid UTF-8, a line over 64 MB) take a slower path that decodes
in Python and marks the bad lines, so one bad byte costs one line, not the file. Many files can
be read in one pass (``load_lines_many``), which is what makes a folder of thousands of small
transcripts fast.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import duckdb
import pyarrow as pa

MAX_LINE_BYTES = 64 * 1024 * 1024
RAW_KEEP_CHARS = 4096  # how much of a rejected line the rejects table keeps

_READ_OPTIONS = (f"columns={{'line': 'VARCHAR'}}, delim=chr(1), quote='', escape='', header=false, "
                 f"auto_detect=false, strict_mode=false, max_line_size={MAX_LINE_BYTES}")


def load_lines_many(con: duckdb.DuckDBPyConnection, paths: list[Path]) -> None:
    """Read files as numbered lines in one pass.

    Creates ``_lines(file_no, line_no, line, read_error)`` and ``_files(file_no, path,
    newline_at_end)``, file numbers starting at 1 in the order given. A multi-file read keeps
    each file's rows contiguous and in order, so a global row number gives each file's line
    numbers. When DuckDB refuses the batch (a file with invalid UTF-8), files are read one by one.
    """
    con.execute("create or replace temp table _files (file_no integer, path varchar, newline_at_end boolean)")
    con.executemany("insert into _files values (?, ?, ?)",
                    [[n, str(p), ends_with_newline(p)] for n, p in enumerate(paths, 1)])
    try:
        con.execute(
            f"""create or replace temp table _lines as
            select f.file_no, (r.g - min(r.g) over (partition by r.filename) + 1)::bigint as line_no, r.line,
                   cast(null as varchar) as read_error
            from (select filename, row_number() over () as g, line
                  from read_csv(?, {_READ_OPTIONS}, filename=true)) r
            join _files f on f.path = r.filename""",
            [[str(p) for p in paths]],
        )
    except duckdb.InvalidInputException:
        con.execute("create or replace temp table _lines (file_no integer, line_no bigint, line varchar, read_error varchar)")
        for number, path in enumerate(paths, 1):
            _load_one(con, number, path)


def _load_one(con: duckdb.DuckDBPyConnection, number: int, path: Path) -> None:
    try:
        con.execute(f"""insert into _lines select ? as file_no, row_number() over () as line_no, line, null
                        from read_csv(?, {_READ_OPTIONS})""", [number, str(path)])
    except duckdb.InvalidInputException:
        _load_lines_slowly(con, number, path)


def _load_lines_slowly(con: duckdb.DuckDBPyConnection, number: int, path: Path) -> None:
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
    frame = pa.table({"file_no": pa.array([number] * len(lines), pa.int32()),
                      "line_no": pa.array(range(1, len(lines) + 1), pa.int64()),
                      "line": pa.array(lines, pa.string()), "read_error": pa.array(errors, pa.string())})
    con.register("_slow_lines", frame)
    con.execute("insert into _lines select * from _slow_lines")
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
