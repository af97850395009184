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


def read_document(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Create temp table ``_doc(j JSON)`` with the file's one JSON document, or raise BadInput."""
    con.execute(
        "create or replace temp table _doc as select content from read_text(?)", [str(path)]
    )
    valid = con.execute("select json_valid(content) from _doc").fetchall()[0][0]
    if not valid:
        raise BadInput(f"{path}: not valid JSON (a document format needs the whole file to parse). "
                       "Is it truncated? Re-export it, or check it with: python -m json.tool FILE")
    con.execute("create or replace temp table _doc as select content::json as j from _doc")


def finish_records(con: duckdb.DuckDBPyConnection) -> None:
    """Turn ``_records(record_no, decision, note, raw)`` into the ``_checked``/``_outcome`` pair."""
    con.execute(
        """create or replace temp table _checked as
        select record_no as line_no, raw as line, false as blank,
               case when decision = 'reject' then note end as reason
        from _records"""
    )
    con.execute(
        """create or replace temp table _outcome as
        select record_no as line_no, decision, note from _records where decision <> 'reject'"""
    )
