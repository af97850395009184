"""Guards over a format's staged tables before they land: a value outside its declared range (``ranges``), arguments
the canonicalizer refused, a tool call with no name. Each rejects the record that holds it (or its run's, for a
run-level value) with the value and the reason, and removes what it rejected from the staged tables.
"""

from __future__ import annotations

import duckdb

from reconcile.ingest.ranges import guard_sql

ARGS_TEXT = "{t}.args::json::varchar"  # a call's arguments as the canonicalizer reads them


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [row[0] for row in con.execute(f"select column_name from (describe {table})").fetchall()]


def guard_staged(con: duckdb.DuckDBPyConnection, columns: dict[str, list[str]]) -> None:
    """A staged value outside its declared range (``ranges``) rejects its record, or its run's, with the value.

    A step's record is the one its ``source_line`` names; a run-level value (a start time, a
    limit, a ledger count) rejects every record of the run. What was rejected is removed from
    staging, so nothing out of range is stored and nothing is stored changed.
    """
    con.execute("create or replace temp table _out_of_range (file_no integer, run_id varchar, record_no bigint, "
                "reason varchar)")
    for table in ("_stage_runs", "_stage_steps", "_stage_calls", "_stage_tools"):
        reason = guard_sql(table, columns[table])
        if reason is None:
            continue
        record = "source_line" if "source_line" in columns[table] and table != "_stage_runs" else "null"
        con.execute(f"insert into _out_of_range select file_no, run_id, {record}, reason "
                    f"from (select *, {reason} as reason from {table}) where reason is not null")
    _guard_arguments(con, "source_line" in columns["_stage_steps"])
    _guard_names(con, "source_line" in columns["_stage_steps"])
    if not con.execute("select count(*) from _out_of_range").fetchall()[0][0]:
        return
    con.execute(
        """update _stage_records set decision = 'reject', note = o.reason
        from (select file_no, run_id, record_no, min(reason) as reason from _out_of_range group by all) o
        where _stage_records.file_no = o.file_no and _stage_records.run_id = o.run_id
          and (o.record_no is null or _stage_records.record_no = o.record_no) and _stage_records.decision = 'load'"""
    )
    whole = "select file_no, run_id from _out_of_range where record_no is null"
    for table in ("_stage_runs", "_stage_steps", "_stage_calls", "_stage_tools"):
        con.execute(f"delete from {table} where (file_no, run_id) in ({whole})")
    con.execute("""delete from _stage_steps where (file_no, run_id, source_line) in
                   (select file_no, run_id, record_no from _out_of_range where record_no is not null)"""
                if "source_line" in columns["_stage_steps"] else "select 1")
    con.execute("""delete from _stage_calls c where not exists (select 1 from _stage_steps s where s.file_no = c.file_no
                   and s.run_id = c.run_id and s.idx = c.step_idx and s.kind = 'model')""")
    con.execute("delete from _stage_calls where step_idx is not null and (call_id is null or tool_name is null)")
    con.execute("delete from _stage_tools where name is null")


def _guard_arguments(con: duckdb.DuckDBPyConnection, lines: bool) -> None:
    """Arguments the canonicalizer refused (nested too deep) reject the record that holds them.

    That is the tool step's own record where the format gives a tool step its arguments (a tool
    span, a TOOL observation), else the record of the model step that asked for the call.
    """
    where = "s.source_line" if lines else "null"
    own_args = "args" in _columns(con, "_stage_steps")
    own = ("and not exists (select 1 from _stage_steps t where t.kind = 'tool' and t.file_no = c.file_no "
           "and t.run_id = c.run_id and t.call_id = c.call_id and t.args is not null)" if own_args else "")
    own_problems = (f"""union all
        select s.file_no, s.run_id, {where}, 'tool arguments ' || k.problem
        from _canon k join _stage_steps s on k.text = {ARGS_TEXT.format(t="s")}
        where s.kind = 'tool' and k.problem is not null""" if own_args else "")
    con.execute(
        f"""insert into _out_of_range
        select s.file_no, s.run_id, {where}, 'tool arguments ' || k.problem
        from _canon k
        join _stage_calls c on k.text = {ARGS_TEXT.format(t="c")}
        join _stage_steps s on s.file_no = c.file_no and s.run_id = c.run_id and s.idx = c.step_idx and s.kind = 'model'
        where k.problem is not null {own}
        {own_problems}"""
    )


def _guard_names(con: duckdb.DuckDBPyConnection, lines: bool) -> None:
    """A call without an id or a tool name, or a catalogue entry without a name, rejects the record that holds it.

    The store keys calls by id and tool by name: such a call could be neither paired nor named. A
    format's staging should reject it with a reason of its own; this is the net under every format,
    so one such record is never the whole file's failure. The record is the tool step's own where it
    carries the call's arguments (as in ``_guard_arguments``), else the asking model step's; a nameless
    catalogue entry rejects its run.
    """
    where = "coalesce(t.source_line, s.source_line)" if lines else "null"
    own = ("left join (select file_no, run_id, call_id, min(source_line) as source_line from _stage_steps "
           "where kind = 'tool' and args is not null group by all) t on t.file_no = c.file_no and t.run_id = c.run_id "
           "and t.call_id = c.call_id" if lines and "args" in _columns(con, "_stage_steps")
           else "left join (select null::integer as file_no, null::integer as source_line) t on false")
    con.execute(
        f"""insert into _out_of_range
        select c.file_no, c.run_id, {where},
               'tool call ' || (c.call_position + 1) || ' of step ' || c.step_idx
               || case when c.call_id is null then ' has no call id' else ' (' || left(c.call_id, 80) || ') has no tool name' end
        from _stage_calls c
        join _stage_steps s on s.file_no = c.file_no and s.run_id = c.run_id and s.idx = c.step_idx and s.kind = 'model'
        {own}
        where c.call_id is null or c.tool_name is null
        union all
        select distinct file_no, run_id, null, 'a tool in the run''s catalogue has no name' from _stage_tools where name is null"""
    )
