"""The end of every line-based loader: rejects recorded, and lines = loaded + rejected + skipped.

A loader leaves two temp tables: ``_checked(line_no, line, blank, reason)`` with a reason for each
line that failed the structural checks, and ``_outcome(line_no, decision, note)`` with one row
for every other non-blank line, ``decision`` being ``load``, ``skip`` or ``reject``.
"""

from __future__ import annotations

import duckdb

from .lines import RAW_KEEP_CHARS
from .result import FileCounts


def record_outcome(con: duckdb.DuckDBPyConnection, source: str, lines: int) -> FileCounts:
    con.execute(
        f"""insert into rejects by name
        select $source as path, c.line_no as line, coalesce(c.reason, o.note) as reason,
               left(c.line, {RAW_KEEP_CHARS}) as raw, now() as ingested_at
        from _checked c left join _outcome o using (line_no)
        where c.reason is not null or o.decision = 'reject'""",
        {"source": source},
    )
    loaded, skipped = con.execute(
        "select count(*) filter (where decision = 'load'), count(*) filter (where decision = 'skip') from _outcome"
    ).fetchall()[0]
    blank = con.execute("select count(*) from _checked where blank").fetchall()[0][0]
    rejected = con.execute("select count(*) from rejects where path = $source", {"source": source}).fetchall()[0][0]
    notes = [row[0] for row in con.execute(
        "select note || case when count(*) > 1 then ' (' || count(*) || ' lines)' else '' end "
        "from _outcome where decision = 'skip' and note is not null group by note order by min(line_no) limit 20"
    ).fetchall()]
    if blank:
        notes.append(f"{blank} blank line(s)")
    return FileCounts(lines=lines, loaded=loaded, rejected=rejected, skipped=skipped + blank, notes=notes)


def owner_elsewhere(con: duckdb.DuckDBPyConnection, run_id: str, source: str) -> str | None:
    """The other file a run id was already loaded from, if any."""
    rows = con.execute("select source_file from runs where run_id = ? and source_file <> ? limit 1",
                       [run_id, source]).fetchall()
    return rows[0][0] if rows else None
