"""Reading files as numbered lines into a temp table, in bulk.

The fast path is DuckDB's CSV reader with a delimiter that never occurs in JSON text, which
keeps file order and yields blank lines as NULL rows, so ``row_number()`` is the line number. It
reads the files' aliases (``files.Aliases``), never their own names. Its result is held to the
line count ``files.inspect`` took from the bytes: a file it would split differently (a raw
``\\r`` inside a line), a file DuckDB refuses whole (invalid UTF-8, a line over 64 MB) or one whose
count disagrees takes the exact path, which splits the bytes on ``\\n`` and marks the lines that
are not UTF-8 — so one bad byte costs one line, not the file. Many files are read in one pass
(``load_lines_many``), which is what makes a folder of thousands of small transcripts fast.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
import zlib
from pathlib import Path

import duckdb

from reconcile.sql_text import insert_rows
from reconcile.ingest.files import GZIP_MAGIC, Source

MAX_LINE_BYTES = 64 * 1024 * 1024
RAW_KEEP_CHARS = 4096  # how much of a rejected line the rejects table keeps
BOM_SQL = "chr(65279)"

_READ_OPTIONS = (f"columns={{'line': 'VARCHAR'}}, delim=chr(1), quote='', escape='', header=false, "
                 f"auto_detect=false, strict_mode=false, max_line_size={MAX_LINE_BYTES}")


def load_lines_many(con: duckdb.DuckDBPyConnection, sources: list[Source], settle: Callable[[], None] | None = None
                    ) -> None:
    """Read files as numbered lines: ``_lines(file_no, line_no, line, read_error)`` and ``_files``.

    ``_files(file_no, path, alias, newline_at_end)`` numbers the files from 1 in the order given. With
    ``settle``, the sources' facts (lines, a raw CR, the last newline) are still being found on another
    thread: the fast reader reads every file meanwhile, and ``settle()`` is waited for before they are used.
    """
    con.execute("create or replace temp table _files (file_no integer, path varchar, alias varchar, newline_at_end boolean)")
    insert_rows(con, "_files", [[n, s.name, s.alias, s.newline_at_end] for n, s in enumerate(sources, 1)])
    con.execute("create or replace temp table _lines (file_no integer, line_no bigint, line varchar, read_error varchar)")
    fast = [s for s in sources if not s.raw_cr]
    if len(fast) == 1:  # one file: the table's row ids are its line numbers (insertion order is kept)
        number = sources.index(fast[0]) + 1
        try:
            con.execute(f"create or replace temp table _one_file as select line from read_csv(?, {_READ_OPTIONS})",
                        [fast[0].alias])
            con.execute("insert into _lines select ?, rowid + 1, line, null from _one_file", [number])
        except duckdb.InvalidInputException:
            pass  # the count below disagrees: the exact path reads it
        con.execute("drop table if exists _one_file")
    elif fast:
        try:
            con.execute(
                f"""insert into _lines
                select f.file_no, (r.g - min(r.g) over (partition by r.filename) + 1)::bigint, r.line, null
                from (select filename, row_number() over () as g, line
                      from read_csv(?, {_READ_OPTIONS}, filename=true)) r
                join _files f on f.alias = r.filename""",
                [[s.alias for s in fast]],
            )
        except duckdb.InvalidInputException:
            con.execute("delete from _lines")
            for source in fast:  # one by one: only the file DuckDB refuses takes the exact path
                number = sources.index(source) + 1
                try:
                    con.execute(f"""insert into _lines select ? as file_no, row_number() over () as line_no, line, null
                                    from read_csv(?, {_READ_OPTIONS})""", [number, source.alias])
                except duckdb.InvalidInputException:
                    con.execute("delete from _lines where file_no = ?", [number])
    if settle is not None:
        settle()  # (its last-newline facts reach _files when the load describes the files, after this)
    counted = dict(con.execute("select file_no, count(*) from _lines group by file_no").fetchall())
    for number, source in enumerate(sources, 1):
        if counted.get(number, 0) != source.lines or source.raw_cr:  # a raw CR, a refused file, any disagreement
            con.execute("delete from _lines where file_no = ?", [number])
            _load_lines_exactly(con, number, source)
    for number, source in enumerate(sources, 1):  # a tail read's lines keep the file's numbers
        if source.first_line > 1:
            con.execute("update _lines set line_no = line_no + ? where file_no = ?", [source.first_line - 1, number])
    # A UTF-8 byte-order mark (as some Windows tools write) marks the encoding; it is not part of the first line.
    con.execute(f"update _lines set line = substr(line, 2) where line_no = 1 and starts_with(line, {BOM_SQL})")


def _load_lines_exactly(con: duckdb.DuckDBPyConnection, number: int, source: Source) -> None:
    import pyarrow as pa  # the rare path only

    with open(source.path, "rb") as handle:
        data = handle.read()
    if data[:2] == GZIP_MAGIC:
        data = gzip.decompress(data)
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    lines, errors = [], []
    for raw in raw_lines:  # the rare path only: a file the fast reader would not split exactly
        raw = raw.removesuffix(b"\r")
        try:
            lines.append(raw.decode("utf-8") or None)
            errors.append(None)
        except UnicodeDecodeError as exc:
            lines.append(raw.decode("utf-8", errors="replace"))
            errors.append(f"not valid UTF-8 (byte {exc.start}: {raw[exc.start:exc.start + 1]!r})")
    frame = pa.Table.from_arrays([pa.array([number] * len(lines), pa.int32()), pa.array(range(1, len(lines) + 1), pa.int64()),
                                  pa.array(lines, pa.string()), pa.array(errors, pa.string())],
                                 names=["file_no", "line_no", "line", "read_error"])  # not pa.table: it imports pandas
    con.register("_slow_lines", frame)
    con.execute("insert into _lines select * from _slow_lines")
    con.unregister("_slow_lines")


def read_head(path: Path, size: int = 65536) -> bytes:
    """The first ``size`` bytes of a file (decompressed if it is gzip), and on to the end of the first line.

    A transcript's first line can be far longer than ``size`` (a pasted file); a sniffer that saw
    only part of it would not recognise the format. The first line is read whole up to
    ``MAX_LINE_BYTES``. A broken gzip stream gives what could be read before the break.
    """
    with open(path, "rb") as handle:
        head = handle.read(size)
        if head[:2] != GZIP_MAGIC:
            while b"\n" not in head and len(head) < MAX_LINE_BYTES:
                more = handle.read(max(size, len(head)))
                if not more:
                    break
                head += more
            return head
        inflate, out, packed = zlib.decompressobj(16 + zlib.MAX_WBITS), b"", head
        try:
            while packed and (len(out) < size or (b"\n" not in out and len(out) < MAX_LINE_BYTES)):
                out += inflate.decompress(packed, max(size, len(out)))
                packed = inflate.unconsumed_tail or handle.read(size)
        except zlib.error:
            pass  # a broken stream: what came before the break is still the file's head
        return out
