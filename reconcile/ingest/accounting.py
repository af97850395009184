"""The end of every loader: rejects recorded, and lines = loaded + rejected + skipped, per file.

A loader leaves two temp tables: ``_checked(file_no, line_no, line, blank, reason)`` with a
reason for each line that failed the structural checks, and ``_outcome(file_no, line_no,
decision, note)`` with one row for every other non-blank line, ``decision`` being ``load``,
``skip`` or ``reject``. ``_files(file_no, path, …)`` says which file each number is.
"""

from __future__ import annotations

import duckdb

from reconcile.ingest.lines import RAW_KEEP_CHARS
from reconcile.ingest.result import FileCounts


def record_outcomes(con: duckdb.DuckDBPyConnection) -> dict[int, FileCounts]:
    """Insert every file's rejects; return each file's counts by file number."""
    con.execute(
        f"""insert into rejects by name
        select f.path, c.line_no as line, coalesce(c.reason, o.note) as reason,
               left(c.line, {RAW_KEEP_CHARS}) as raw, now() as ingested_at
        from _checked c join _files f using (file_no) left join _outcome o using (file_no, line_no)
        where c.reason is not null or o.decision = 'reject'"""
    )
    rows = con.execute(
        """select f.file_no,
                  (select count(*) from _checked c where c.file_no = f.file_no) as lines,
                  (select count(*) from _outcome o where o.file_no = f.file_no and o.decision = 'load') as loaded,
                  (select count(*) from _checked c left join _outcome o using (file_no, line_no)
                   where c.file_no = f.file_no and (c.reason is not null or o.decision = 'reject')) as rejected,
                  (select count(*) from _outcome o where o.file_no = f.file_no and o.decision = 'skip')
                  + (select count(*) from _checked c where c.file_no = f.file_no and c.blank) as skipped
           from _files f"""
    ).fetchall()
    counts = {number: FileCounts(lines, loaded, rejected, skipped) for number, lines, loaded, rejected, skipped in rows}
    notes = con.execute(
        """select file_no, note, count(*)
           from _outcome where decision = 'skip' and note is not null
           group by file_no, note order by file_no, min(line_no)"""
    ).fetchall()
    for number, note, count in notes:
        counts[number].notes.append(note + (f" ({count} lines)" if count > 1 else ""))
        counts[number].skipped_by[note] = count
    for number, blank in con.execute("select file_no, count(*) from _checked where blank group by file_no").fetchall():
        counts[number].notes.append(f"{blank} blank line(s)")
        counts[number].skipped_by["blank line"] = blank
    return counts


def account_records(con: duckdb.DuckDBPyConnection, invalid_documents: bool = False) -> dict[int, FileCounts]:
    """Accounting for a record format: ``_stage_records`` (and ``_input_rejects``, files that are not JSON)."""
    columns = {row[0] for row in con.execute("select column_name from (describe _stage_records)").fetchall()}
    raw = "r.raw" if "raw" in columns else "null"
    rejects = "select file_no, 1, raw, 'reject', reason from _input_rejects" if invalid_documents else ""
    con.execute(
        f"""create or replace temp table _landing_records as
        select r.file_no, r.record_no, {raw}::varchar as raw, r.decision, r.note from _stage_records r
        {"union all " + rejects if rejects else ""}"""
    )
    con.execute(
        """create or replace temp table _checked as
        select file_no, record_no as line_no, raw as line, false as blank,
               case when decision = 'reject' then note end as reason
        from _landing_records"""
    )
    con.execute("create or replace temp table _outcome as select file_no, record_no as line_no, decision, note "
                "from _landing_records where decision <> 'reject'")
    return record_outcomes(con)
