"""Whole-document JSON formats (Langfuse, SWE-agent, OpenHands, OTLP): read, then account by record.

The file is read by DuckDB (``read_text``) and parsed once as JSON. A document format counts
*records* where a line format counts lines: each record (a trace, an observation, a trajectory
entry, an event) is loaded, skipped (structure that is not a step) or rejected, and a reject's
"line" is the record's number, its reason naming the record. Records are then accounted by the
same code as lines (``accounting.record_outcome``).
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..errors import BadInput
from .accounting import record_outcomes
from .result import FileCounts


def read_document(con: duckdb.DuckDBPyConnection, path: Path, shape_sql: str, expected: str) -> bool:
    """Create temp table ``_doc(j JSON)`` with the file's one JSON document.

    Returns False for a file that is not valid JSON (a truncated export): the caller records it
    as one rejected record. A document of the wrong shape (``shape_sql`` over ``j`` is false) is
    a format the user forced by mistake: BadInput naming what was expected and what was found.
    """
    con.execute("create or replace temp table _doc as select content from read_text(?)", [str(path)])
    if not con.execute("select json_valid(content) from _doc").fetchall()[0][0]:
        return False
    con.execute("create or replace temp table _doc as select content::json as j from _doc")
    if not con.execute(f"select coalesce({shape_sql}, false) from _doc").fetchall()[0][0]:
        found = con.execute(
            "select case json_type(j) when 'OBJECT' then 'an object with keys ' || array_to_string(json_keys(j)[:6], ', ')"
            " else lower(json_type(j)) end from _doc").fetchall()[0][0]
        raise BadInput(f"{path}: expected {expected}, found {found}. Check --format, or leave it out to detect it.")
    return True


def invalid_document(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Records for a file that is not valid JSON: one, rejected."""
    con.execute(
        """create or replace temp table _records as
        select 1 as record_no, left(content, 4096) as raw, 'reject' as decision,
               'not valid JSON: a document format needs the whole file to parse (truncated export?)' as note
        from _doc"""
    )


def finish_records(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Turn ``_records(record_no, decision, note, raw)`` into ``_files``/``_checked``/``_outcome``."""
    con.execute("create or replace temp table _files as select 1 as file_no, ? as path", [str(path)])
    con.execute(
        """create or replace temp table _checked as
        select 1 as file_no, record_no as line_no, raw as line, false as blank,
               case when decision = 'reject' then note end as reason
        from _records"""
    )
    con.execute(
        """create or replace temp table _outcome as
        select 1 as file_no, record_no as line_no, decision, note from _records where decision <> 'reject'"""
    )


def finish_document(con: duckdb.DuckDBPyConnection, path: Path, scratch: tuple[str, ...] = ()) -> FileCounts:
    """Account for ``_records`` (rejects recorded, counts returned) and drop the loader's scratch tables."""
    finish_records(con, path)
    counts = record_outcomes(con)[1]
    for table in ("_doc", "_records", "_checked", "_outcome", "_files", *scratch):
        con.execute(f"drop table if exists {table}")
    return counts


def reject_document(con: duckdb.DuckDBPyConnection, path: Path) -> FileCounts:
    """The counts of a file that is not valid JSON: one record, rejected."""
    invalid_document(con, path)
    return finish_document(con, path)
