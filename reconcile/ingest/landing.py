"""The shared landing: one path from any format's staged tables into the store.

A format's staging SQL (see ``reconcile.formats.base``) leaves ``_stage_records``,
``_stage_runs``, ``_stage_steps`` and, if it has them, ``_stage_calls`` and ``_stage_tools``.
Everything after that is the same for every format and lives here, once:

1. the input: lines (validated, typed), documents or text, and the files they came from;
2. ownership: a run kept in several files is loaded from its fullest copy (most steps; the first in
   path order among equals); every record of another copy is noted "run X was already loaded from F";
3. canonical arguments, argument hashes and idempotency keys, in one pass over all calls;
4. tool steps take what their call knows (tool name, arguments, key) and their catalogue entry
   (side effect); result sizes are estimated from result text (UTF-8 bytes / 4) where the format
   gives text rather than sizes; a result with no text and no size stays unknown (NULL);
5. the final answer — where the format does not mark it — is the last main-thread model step
   with text that asks for no tool and after which no step asks for one;
6. inserts into ``runs``, ``run_tools``, ``steps``, ``tool_calls``;
7. accounting (every line or record loaded, skipped or rejected with its reason), where the next read of
   a grown file may go on from (``tail``), and clean-up.

The caller (``reconcile.ingest``) owns the transaction.
"""

from __future__ import annotations

import duckdb

from reconcile.store.canonical import canonicalize_column, idempotency_key_sql
from reconcile.errors import InternalError
from reconcile.ingest.accounting import account_records, record_outcomes
from reconcile.ingest.inputs import describe_files, read_input
from reconcile.ingest.result import FileCounts
from reconcile.ingest.ownership import settle_ownership
from reconcile.ingest.ranges import create_staging_macros
from reconcile.ingest.staged_guards import ARGS_TEXT, guard_staged
from reconcile.ingest.tail import check_continued, check_tail, create_tail_macros, resume_points

# Staged columns that are not columns of the target table: what the landing consumes.
STAGING_ONLY = {
    "_stage_records": {"file_no", "record_no", "decision", "note", "run_id", "raw"},
    "_stage_runs": {"file_no"},
    "_stage_steps": {"file_no", "args", "result_text", "main_thread"},
    "_stage_calls": {"file_no", "args", "hosted"},  # hosted: the provider ran it inside its response (no ask)
    "_stage_tools": {"file_no"},
}
REQUIRED = {
    "_stage_records": ("file_no", "record_no", "decision", "note", "run_id"),
    "_stage_runs": ("file_no", "run_id", "status"),
    "_stage_steps": ("file_no", "run_id", "idx", "kind"),
    "_stage_calls": ("file_no", "run_id", "step_idx", "call_position", "call_id", "tool_name", "args"),
    "_stage_tools": ("file_no", "run_id", "name"),
}
_EMPTY = {
    "_stage_calls": "file_no integer, run_id varchar, step_idx integer, call_position integer, call_id varchar, "
                    "tool_name varchar, args json",
    "_stage_tools": "file_no integer, run_id varchar, name varchar, side_effect boolean, allow_repeat boolean, "
                    "schema_tokens integer",
}
TARGET = {"_stage_runs": "runs", "_stage_steps": "steps", "_stage_calls": "tool_calls", "_stage_tools": "run_tools"}
ESTIMATED_TOKENS = "ceil(octet_length(encode({text})) / 4)::bigint"  # as reconcile.journal.estimate_tokens
# A result's structure (DuckDB's json_structure: key order as first seen, arrays' items merged) where its text is a
# JSON object or array; the few distinct structures are then described, sorted, once each (_result_shapes).
# A result over SHAPE_TEXT_BYTES is not described (its structure would cost memory in proportion, and the distinct
# structures are held at once); one DuckDB cannot describe (nested past its parser's depth) has none: try().
SHAPE_TEXT_BYTES = 64 * 1024
STRUCTURE = ("case when left(ltrim({text}), 1) in ('{{', '[') "
             f"and octet_length(encode({{text}})) <= {SHAPE_TEXT_BYTES} "
             "and json_valid({text}) then try(json_structure({text})) end")
SHAPE_CHARS = 2000  # a shape longer than this keeps its start, its count of paths and a digest of the whole


def land(con: duckdb.DuckDBPyConnection, fmt, sources: list, forced: bool) -> dict[int, FileCounts]:
    """Stage ``sources`` (``files.Source``) with ``fmt``'s SQL and land the result; counts by file number."""
    before = _temp_tables(con) - {"_lines", "_files"}  # those two are this load's input
    views_before = _temp_views(con)
    try:
        describe_files(con, sources, lines=fmt.input == "lines")
        read_input(con, fmt)
        create_staging_macros(con)
        if fmt.input == "lines" or getattr(fmt, "tail_text", False):
            if fmt.input != "lines":  # the text format's staging fills it with its lines (for their offsets)
                con.execute("create or replace temp table _lines (file_no integer, line_no bigint, line varchar, "
                            "read_error varchar)")
            create_tail_macros(con)
        try:
            fmt.stage(con)
        except (duckdb.OutOfMemoryException, duckdb.InterruptException):
            raise  # the file needs more memory than the limit, or Ctrl-C: not a broken format (the ingest says which)
        except duckdb.Error as exc:
            raise InternalError(f"the {fmt.name} staging SQL failed: {exc}") from exc
        columns = _check_staged(con, fmt)
        check_tail(con, sources)  # a late line for a run kept from before a tail read's start: read whole instead
        _canonical_arguments(con)
        guard_staged(con, columns)
        check_continued(con, sources)
        settle_ownership(con)
        _land_calls(con)
        _land_steps(con, columns["_stage_steps"])
        _land_runs(con, fmt, columns["_stage_runs"])
        counts = _account(con, fmt)
        for number, resume in resume_points(con, fmt, sources).items():
            counts[number].resume = resume
        return counts
    finally:
        try:
            for view in _temp_views(con) - views_before:
                con.execute(f'drop view if exists "{view}"')
            for table in _temp_tables(con) - before:
                con.execute(f'drop table if exists "{table}"')
        except duckdb.Error:
            pass  # the transaction failed: its rollback takes the scratch tables with it


def _temp_views(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("select view_name from duckdb_views() where temporary and not internal").fetchall()}


def _temp_tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("select table_name from duckdb_tables() where temporary").fetchall()}


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [row[0] for row in con.execute(f"select column_name from (describe {table})").fetchall()]


def _check_staged(con: duckdb.DuckDBPyConnection, fmt) -> dict[str, list[str]]:
    """Every staged table exists (optional ones empty), with its required columns and no stray one."""
    present = _temp_tables(con)
    columns = {}
    for table, required in REQUIRED.items():
        if table not in present:
            if table not in _EMPTY:
                raise InternalError(f"the {fmt.name} staging SQL did not create {table}")
            con.execute(f"create temp table {table} ({_EMPTY[table]})")
        columns[table] = _columns(con, table)
        missing = [c for c in required if c not in columns[table]]
        if missing:
            raise InternalError(f"the {fmt.name} staging SQL left {table} without {', '.join(missing)}")
        if table in TARGET:
            allowed = set(_columns(con, TARGET[table])) | STAGING_ONLY[table]
            stray = [c for c in columns[table] if c not in allowed]
            if stray:
                raise InternalError(f"the {fmt.name} staging SQL gave {table} columns {TARGET[table]} does not have: "
                                    f"{', '.join(stray)}")
    # Typed once here, so a staging SQL may write `null as note` and still be updated later.
    raw = ", raw::varchar as raw" if "raw" in columns["_stage_records"] else ""
    con.execute(f"""create or replace temp table _stage_records as
                    select file_no::integer as file_no, record_no::bigint as record_no, decision::varchar as decision,
                           note::varchar as note, run_id::varchar as run_id{raw} from _stage_records""")
    return columns


def _canonical_arguments(con: duckdb.DuckDBPyConnection) -> None:
    """``_canon(text, canonical, problem)``: the canonical text of every distinct argument text.

    Keyed by the arguments' JSON text (``ARGS_TEXT``): equal texts have one canonical form, and a
    format whose tool steps repeat their call's arguments (or a harness that calls a tool with the
    same arguments again) canonicalises each text once; no copy of the staged steps is numbered.
    """
    own = ("union all select " + ARGS_TEXT.format(t="s") + " from _stage_steps s where s.kind = 'tool' and s.args is not null"
           if "args" in _columns(con, "_stage_steps") else "")
    con.execute(
        f"""create or replace temp table _args as
        select row_number() over () as doc, text from (
            select distinct text from (select {ARGS_TEXT.format(t="c")} as text from _stage_calls c where c.args is not null
                                       {own}))"""
    )
    canonicalize_column(con, "_args", "doc", "text", "_canon_docs")
    con.execute("""create or replace temp table _canon as
                   select a.text, k.canonical, k.problem from _args a join _canon_docs k using (doc)""")
    con.execute("drop table _args; drop table _canon_docs")


# The text an argument value is canonicalised and joined by: JSON as DuckDB writes it back (a text staged as
# VARCHAR is parsed, so a value that is not JSON fails here as it did before).


def _land_calls(con: duckdb.DuckDBPyConnection) -> None:
    """The calls, with their canonical arguments, hashes and idempotency keys; the run catalogues."""
    given_key = "c.idempotency_key" if "idempotency_key" in _columns(con, "_stage_calls") else "null"
    key = idempotency_key_sql("c.run_id", "c.step_idx", "c.tool_name", "sha256(k.canonical)")
    con.execute(
        f"""create or replace temp table _landed_calls as
        select c.run_id, c.step_idx::integer as step_idx, c.call_position::integer as call_position, c.call_id,
               c.tool_name, k.canonical as args_json, sha256(k.canonical) as args_hash,
               coalesce({given_key}, {key}) as idempotency_key
        from _stage_calls c left join _canon k on k.text = {ARGS_TEXT.format(t='c')}
        where c.step_idx is not null"""
    )
    con.execute("insert into tool_calls by name select * from _landed_calls")
    tools = set(_columns(con, "_stage_tools"))
    # whether a tool changes the world is a fact only where the format says it (NULL: unknown); allow_repeat is
    # a loop detector's exemption, which a format that names none does not grant
    side_effect = "side_effect" if "side_effect" in tools else "null::boolean as side_effect"
    allow_repeat = "coalesce(allow_repeat, false) as allow_repeat" if "allow_repeat" in tools else "false as allow_repeat"
    flags = f"{side_effect}, {allow_repeat}"
    size = ", schema_tokens::integer as schema_tokens" if "schema_tokens" in tools else ""
    con.execute(f"create or replace temp table _landed_tools as select run_id, name, {flags}{size} from _stage_tools")
    con.execute("insert into run_tools by name select * from _landed_tools")


def _final_steps(con: duckdb.DuckDBPyConnection, staged: list[str]) -> None:
    """``_final(run_id, idx)``: the detected final answer of each run (formats that do not mark one)."""
    main = "coalesce(s.main_thread, true)" if "main_thread" in staged else "true"
    text = "s.output_text" if "output_text" in staged else "null"
    # a call the provider ran inside its response (a hosted web search) leaves the harness nothing to run: no ask
    hosted = "where not coalesce(hosted, false)" if "hosted" in _columns(con, "_stage_calls") else ""
    con.execute(
        f"""create or replace temp table _final as
        with asks as (select run_id, step_idx, count(*) as calls from _stage_calls {hosted} group by all),
        model as (
            select s.run_id, s.idx, {main} as main, coalesce({text}, '') <> '' as has_text, a.calls is not null as asks
            from _stage_steps s left join asks a on a.run_id = s.run_id and a.step_idx = s.idx
            where s.kind = 'model'
            {"union all select run_id, idx, main, has_text, asks from _prior_model" if _prior(con) else ""}
        ),
        last_ask as (select run_id, max(idx) filter (where main and asks) as idx from model group by run_id)
        select m.run_id, max(m.idx) as idx
        from model m join last_ask l using (run_id)
        where m.main and m.has_text and not m.asks and m.idx > coalesce(l.idx, -1)
        group by m.run_id"""
    )


def _prior(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether this load continues runs whose earlier model steps are kept (``_prior_model``, a tail read)."""
    return "_prior_model" in _temp_tables(con) and con.execute("select count(*) from _prior_model").fetchall()[0][0] > 0


def _refinalize_prior(con: duckdb.DuckDBPyConnection) -> None:
    """The kept model steps of a continued run are its final answer or not as the whole run now decides."""
    con.execute(
        """update steps set is_final = p.final
        from (select p.run_id, p.idx, coalesce(f.idx = p.idx, false) as final
              from _prior_model p left join _final f using (run_id)) p
        where steps.run_id = p.run_id and steps.idx = p.idx and steps.kind = 'model'
          and steps.is_final is distinct from p.final"""  # (the one or two that change, not every kept step)
    )


def _result_shapes(con: duckdb.DuckDBPyConnection, text: str) -> None:
    """``_shapes(structure, shape)``: each distinct structure of the staged tool results, as its sorted key paths
    and value types — a key order or an array's length is no change of shape; a number is a number."""
    con.execute(
        f"""create or replace temp table _shapes as
        with structures as (select distinct {STRUCTURE.format(text=text)} as structure from _stage_steps s
                            where s.kind = 'tool'),
        nodes as (select x.structure, regexp_replace(j.fullkey, '\\[[0-9]+\\]', '[]', 'g') as path,
                         case when j.type in ('OBJECT', 'ARRAY') then lower(j.type)
                              else case j.value ->> '$' when 'VARCHAR' then 'string' when 'BOOLEAN' then 'boolean'
                                   when 'NULL' then 'null' when 'JSON' then 'any'
                                   else 'number' end end as type
                  from structures x, json_tree(x.structure) j where x.structure is not null),
        described as (select structure, string_agg(distinct path || ' ' || type, ', ' order by path || ' ' || type)
                                            as shape, count(distinct path || ' ' || type) as paths
                      from nodes group by structure)
        select structure, case when length(shape) <= {SHAPE_CHARS} then shape
                               else left(shape, {SHAPE_CHARS - 60}) || ' … (' || paths || ' paths, '
                                    || left(sha256(shape), 12) || ')' end as shape
        from described"""
    )


def _land_steps(con: duckdb.DuckDBPyConnection, staged: list[str]) -> None:
    steps_columns = _columns(con, "steps")
    has = set(staged)
    text = "s.result_text" if "result_text" in has else "null::varchar"
    # a preview the harness wrote (native journals) is the whole result when it parses: a cut object or array never does
    shaped = f"coalesce({text}, s.result_preview)" if "result_preview" in has else text
    _result_shapes(con, shaped)
    own = "k.canonical" if "args" in has else "null"  # a tool step's own arguments, where the format gives them

    def given(column: str) -> str:
        return f"s.{column}" if column in has else "null"

    computed = {
        "tool_name": f"case when s.kind = 'tool' then coalesce({given('tool_name')}, c.tool_name) else {given('tool_name')} end",
        "args_json": f"case when s.kind = 'tool' then coalesce({own}, c.args_json) end",
        "args_hash": f"case when s.kind = 'tool' then coalesce(sha256({own}), c.args_hash) end",
        "idempotency_key": f"case when s.kind = 'tool' then coalesce({given('idempotency_key')}, c.idempotency_key) end",
        "side_effect": f"case when s.kind = 'tool' then coalesce({given('side_effect')}, t.side_effect) end",
        "result_tokens": f"case when s.kind = 'tool' then coalesce({given('result_tokens')}, {ESTIMATED_TOKENS.format(text=text)}) end",
        "result_bytes": f"case when s.kind = 'tool' then coalesce({given('result_bytes')}, octet_length(encode({text}))) end",
        "result_hash": f"case when s.kind = 'tool' then coalesce({given('result_hash')}, sha256({text})) end",
        "result_preview": f"case when s.kind = 'tool' then coalesce({given('result_preview')}, left({text}, 1000)) end",
        "output_sha256": f"case when s.kind = 'model' then coalesce({given('output_sha256')}, sha256({given('output_text')})) end",
        "result_shape": f"case when s.kind = 'tool' then coalesce({given('result_shape')}, sh.shape) end",
    }
    final_join, prior = "", False
    if "is_final" not in has:
        _final_steps(con, staged)
        prior = _prior(con)
        computed["is_final"] = "case when s.kind = 'model' then fin.idx is not null end"
        final_join = "left join _final fin on fin.run_id = s.run_id and fin.idx = s.idx"
    select = [f"{computed[c]} as {c}" if c in computed else f"s.{c}" for c in steps_columns if c in computed or c in has]
    con.execute(
        f"""insert into steps by name
        select {", ".join(select)}
        from _stage_steps s
        {"left join _canon k on s.kind = 'tool' and k.text = " + ARGS_TEXT.format(t="s") if "args" in has else ""}
        left join (select * from _landed_calls qualify row_number() over (partition by run_id, call_id order by step_idx) = 1) c
            on s.kind = 'tool' and c.run_id = s.run_id and c.call_id = s.call_id
        left join _landed_tools t on s.kind = 'tool' and t.run_id = s.run_id
            and t.name = coalesce({given('tool_name')}, c.tool_name)
        left join _shapes sh on s.kind = 'tool' and sh.structure = {STRUCTURE.format(text=shaped)}
        {final_join}"""
    )
    if prior:
        _refinalize_prior(con)


def _land_runs(con: duckdb.DuckDBPyConnection, fmt, staged: list[str]) -> None:
    has = set(staged)
    computed = {
        "source_format": "$format",
        "source_file": "f.path",
        "source_line": "coalesce(s.source_line, 1)" if "source_line" in has else "1",
        "status_inferred": "s.status_inferred" if "status_inferred" in has else "$inferred",
    }
    step_columns = _columns(con, "_stage_steps")
    if "final_output" not in has and "output_text" in step_columns:
        # a continued run's answer may be a kept step: read from the steps as stored (the new ones are, by now)
        computed["final_output"] = (f"(select any_value(x.output_text) from {'steps' if _prior(con) else '_stage_steps'} "
                                    "x join _final fin on fin.run_id = x.run_id and fin.idx = x.idx where x.run_id = s.run_id)"
                                    if "is_final" not in step_columns else
                                    "(select arg_max(x.output_text, x.idx) from _stage_steps x "
                                    "where x.run_id = s.run_id and x.is_final)")
    select = [f"{computed[c]} as {c}" if c in computed else f"s.{c}"
              for c in _columns(con, "runs") if c in computed or c in has]
    params = {"format": fmt.name}
    if "status_inferred" not in has:  # else the staging says per run whether its status was inferred
        params["inferred"] = "run_status" in fmt.inferred
    con.execute(
        f"""insert into runs by name select {", ".join(select)} from _stage_runs s join _files f using (file_no)""", params)
    # each run landed numbered anew: what is kept of a run's rows (its priced totals) is written again for these alone
    con.execute("insert or replace into run_loads select s.run_id, nextval('run_load') from _stage_runs s "
                "join _files f using (file_no)")


def _account(con: duckdb.DuckDBPyConnection, fmt) -> dict[int, FileCounts]:
    if fmt.input == "lines":
        con.execute("create or replace temp table _outcome as select file_no, record_no as line_no, decision, note "
                    "from _stage_records")
        return record_outcomes(con)
    return account_records(con, invalid_documents=fmt.input in ("document", "text"))
