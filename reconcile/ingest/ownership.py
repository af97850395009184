"""Which file a run kept in several files is loaded from: its fullest copy (see ``settle_ownership``)."""

from __future__ import annotations

import duckdb

from reconcile.ingest.bookkeeping import forget_file


def settle_ownership(con: duckdb.DuckDBPyConnection) -> None:
    """A run kept in several files belongs to the fullest copy: the one with most steps (a session resumed
    into a new file, or appended to, holds the older copy and more), the first in path order among equals —
    as a fresh ingest would have it, whatever the order the files came in.

    Here: a run a better copy of this batch staged, or a stored file holds better, is skipped ("already
    loaded from …") and the deferral recorded; a run a stored file holds worse is taken over — that file
    is forgotten (``_takeovers``) and loaded again after.
    """
    con.execute(
        """create or replace temp table _copies as
        select s.file_no, s.run_id, f.path, coalesce(n.steps, 0) as steps
        from (select distinct file_no, run_id from _stage_runs) s join _files f using (file_no)
        left join (select file_no, run_id, count(*) as steps from _stage_steps group by all) n using (file_no, run_id)"""
    )
    # the stored copy of a staged run, from another file (rare): its steps counted only then, never the whole store
    con.execute(
        """create or replace temp table _held as
        select r.run_id, r.source_file as path, 0::bigint as steps from runs r
        where exists (select 1 from _copies c where c.run_id = r.run_id and c.path <> r.source_file)"""
    )
    if con.execute("select count(*) from _held").fetchone()[0]:
        con.execute(
            """update _held set steps = n.steps
            from (select run_id, count(*) as steps from steps where run_id in (select run_id from _held)
                  group by run_id) n where n.run_id = _held.run_id"""
        )
    # The owner is the fullest copy of all, this batch's and the stored one alike (a copy of this batch better than
    # this file's is not the owner when the stored copy is better still: a fresh ingest would defer to that one).
    con.execute(
        """create or replace temp table _owners as
        with best as (
            select run_id, arg_min(path, [-steps, file_no]) as path, max(steps) as steps from _copies group by run_id
        ),
        claimed as (
            select s.file_no, s.run_id, s.path, h.path as stored, b.path as best,
                   h.path is not null and (h.steps > b.steps or (h.steps = b.steps and h.path < b.path)) as stored_best
            from _copies s join best b using (run_id) left join _held h using (run_id)
        )
        select file_no, run_id, path,
               case when stored_best then stored when best <> path then best end as owner,
               case when stored is not null and not stored_best and best = path then stored end as outranked
        from claimed"""
    )
    for (outranked,) in con.execute("select distinct outranked from _owners where outranked is not null").fetchall():
        forget_file(con, outranked)  # its runs are this file's now; it is loaded again after
        con.execute("insert into _takeovers values (?)", [outranked])
    con.execute("insert into ingest_deferrals select path, run_id, owner from _owners where owner is not null")
    con.execute("delete from _owners where owner is null")
    con.execute(
        """update _stage_records set decision = 'skip', note = 'run ' || o.run_id || ' was already loaded from ' || o.owner
        from _owners o where _stage_records.file_no = o.file_no and _stage_records.run_id = o.run_id
          and _stage_records.decision <> 'reject'"""
    )
    for table in ("_stage_runs", "_stage_steps", "_stage_calls", "_stage_tools"):
        con.execute(f"delete from {table} where exists (select 1 from _owners o "
                    f"where o.file_no = {table}.file_no and o.run_id = {table}.run_id)")
