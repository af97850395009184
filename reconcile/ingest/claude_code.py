"""Loader for Claude Code session transcripts (``~/.claude/projects/<project>/<session>.jsonl``).

One file is one run. The run id is the session, named by the file (``<session>.jsonl``) as
ccusage names it; a subagent transcript (``<session>/subagents/agent-*.jsonl``) is a child run
``<session>/<file>`` whose ``parent_run_id`` is the session. Inline side-chain lines (older
versions) stay in their session's run as steps labelled ``sidechain-N`` (one label per side chain).

- One API response is written as several lines sharing ``message.id`` and ``requestId``: they
  form one model step, with the usage of the last line (earlier lines carry provisional output
  counts) and the content blocks of all of them.
- ``tool_result`` blocks in user lines are tool steps, paired to the ``tool_use`` by id;
  ``is_error`` gives status ``error``.
- ``system``/``compact_boundary`` lines are compaction events.
- Lines of other types (``progress`` copies of subagent messages, ``file-history-snapshot``,
  other ``system`` lines, ``summary``, …) are skipped and counted.
- The final answer is the last main-thread assistant text with no later ``tool_use``.

Status (a session has no budgets): ``succeeded`` when the session's last message is that final
answer, ``cancelled`` when it is the user's "[Request interrupted by user…]", else ``running``
(the transcript stops mid-work). See ``docs/formats.md``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..canonical import canonicalize_column, idempotency_key_sql
from .accounting import record_outcomes
from .result import FileCounts
from .validate import Field, check_lines, structure_sql

FORMAT = "claude_code"
CONVERSATION = "{type} in ('user', 'assistant')"
CONVERSATION_TYPES = ("user", "assistant")

FIELDS = [
    Field("type", "str", "true"),
    Field("subtype", "str"),
    Field("timestamp", "ts", CONVERSATION),
    Field("sessionId", "str"),
    Field("agentId", "str"),
    Field("isSidechain", "bool"),
    Field("isMeta", "bool"),
    Field("uuid", "str"),
    Field("parentUuid", "str"),
    Field("requestId", "str"),
    Field("message", "object", CONVERSATION),
    Field("message.id", "str"),
    Field("message.model", "str"),
    Field("message.stop_reason", "str"),
    Field("message.content", "any"),
    *(Field(f"message.usage.{name}", "count") for name in ("input_tokens", "cache_creation_input_tokens",
                                                            "cache_read_input_tokens", "output_tokens")),
    Field("message.usage.cache_creation.ephemeral_5m_input_tokens", "count"),
    Field("message.usage.cache_creation.ephemeral_1h_input_tokens", "count"),
    Field("compactMetadata.preTokens", "count"),
]


def run_identity(path: Path) -> tuple[str, str | None]:
    """(run id, parent run id) from where the file lives, as ccusage groups sessions."""
    if path.parent.name == "subagents":
        session = path.parent.parent.name
        return f"{session}/{path.stem}", session
    return path.stem, None


def load_claude_code(con: duckdb.DuckDBPyConnection, path: Path, source: str) -> FileCounts:
    """Load one transcript (its lines already in ``_lines`` as file 1) in the caller's transaction."""
    return load_claude_code_batch(con)[1]


def load_claude_code_batch(con: duckdb.DuckDBPyConnection) -> dict[int, FileCounts]:
    """Load every transcript in ``_lines``/``_files`` in one set of statements; counts by file number.

    Planning a statement costs more than running it on one small file, so a folder of thousands
    of sessions is loaded many files per statement (see ``bench/RESULTS.md``).
    """
    check_lines(con, FIELDS)
    paths = con.execute("select file_no, path from _files").fetchall()
    con.execute("create or replace temp table _cc_files (file_no integer, run_id varchar, parent_run_id varchar)")
    con.executemany("insert into _cc_files values (?, ?, ?)",
                    [[number, *run_identity(Path(path))] for number, path in paths])
    con.execute(
        """create or replace temp table _cc_files as
        select c.*, f.path as source,
               coalesce((select any_value(r.source_file) from runs r where r.run_id = c.run_id and r.source_file <> f.path),
                        -- two files of one batch with the same run id: the first one owns it
                        (select arg_min(g.path, e.file_no) from _cc_files e join _files g using (file_no)
                         where e.run_id = c.run_id and e.file_no < c.file_no)) as owner
        from _cc_files c join _files f using (file_no)"""
    )
    con.execute(
        f"""create or replace temp table _cc as
        select file_no, line_no, j, type, ts,
               case when side then coalesce(j.agentId, 'sidechain-' || sum(case when side and j.parentUuid is null
                   then 1 else 0 end) over (partition by file_no order by line_no)) end as agent_label
        from (select file_no, line_no, j, j.type as type, (j.timestamp)::timestamptz as ts,
                     coalesce(j.isSidechain, false) and j.type in ('user', 'assistant') as side
              from (select file_no, line_no, json_transform(line, {structure_sql(FIELDS)}) as j from _checked
                    where reason is null and not blank))"""
    )
    keep = "type in ('user', 'assistant') or (type = 'system' and j.subtype = 'compact_boundary')"
    con.execute(
        f"""create or replace temp table _outcome as
        select c.file_no, c.line_no,
               case when f.owner is not null then 'skip' when {keep} then 'load' else 'skip' end as decision,
               case when f.owner is not null then 'run ' || f.run_id || ' was already loaded from ' || f.owner
                    when {keep} then null else 'not a conversation line (' || coalesce(type, '?')
                    || coalesce('/' || j.subtype, '') || ')' end as note
        from _cc c join _cc_files f using (file_no)"""
    )
    # Loading goes on for the files whose runs no other file owns. A subagent's own transcript is
    # all side-chain lines: then they are its main thread.
    con.execute("delete from _cc where file_no in (select file_no from _cc_files where owner is not null)")
    con.execute(
        """create or replace temp table _cc_files as
        select f.*, not exists (select 1 from _cc c where c.file_no = f.file_no and c.type in ('user', 'assistant')
                                and c.agent_label is null) as all_side
        from _cc_files f"""
    )
    _insert_steps(con)
    _insert_runs(con)
    counts = record_outcomes(con)
    for table in ("_lines", "_checked", "_cc", "_outcome", "_cc_files", "_cc_model", "_cc_steps", "_files"):
        con.execute(f"drop table if exists {table}")
    return counts


def _insert_steps(con: duckdb.DuckDBPyConnection) -> None:
    # One model step per API response: the lines sharing message.id and requestId.
    con.execute(
        """create or replace temp table _cc_model as
        select c.file_no, coalesce(c.j.message.id || '|' || c.j.requestId, 'line ' || c.line_no) as response,
               min(c.line_no) as line_no, min(c.ts) as first_ts, max(c.ts) as last_ts,
               arg_max(c.j.message.usage, c.line_no) as usage, arg_max(c.j.message.model, c.line_no) as model,
               arg_max(c.j.message.stop_reason, c.line_no) as stop_reason, any_value(c.j.message.id) as response_id,
               any_value(c.j.requestId) as request_id, any_value(c.agent_label) as agent_label,
               min(p.asked_ts) as asked_at
        from _cc c
        left join (select file_no, j.uuid as uuid, ts as asked_ts from _cc) p
            on p.file_no = c.file_no and p.uuid = c.j.parentUuid
        where c.type = 'assistant'
        group by all"""
    )
    con.execute(
        """create or replace temp table _cc_blocks as
        select c.file_no, c.line_no, b.position, c.type, c.ts, c.agent_label,
               coalesce(c.j.message.id || '|' || c.j.requestId, 'line ' || c.line_no) as response, b.block
        from _cc c, (select unnest(c.j.message.content::json[]) as block,
                            generate_subscripts(c.j.message.content::json[], 1) as position) b
        where c.type in ('user', 'assistant') and json_type(c.j.message.content) = 'ARRAY'"""
    )
    con.execute(
        """create or replace temp table _cc_results as
        select b.file_no, b.line_no, b.position, b.ts, b.agent_label, b.block ->> 'tool_use_id' as call_id,
               coalesce((b.block ->> 'is_error')::boolean, false) as is_error,
               case json_type(b.block -> 'content')
                   when 'VARCHAR' then b.block ->> 'content'
                   when 'ARRAY' then array_to_string(list_transform(
                       list_filter((b.block -> 'content')::json[], lambda x: x ->> 'type' = 'text'),
                       lambda x: x ->> 'text'), chr(10))
               end as text
        from _cc_blocks b where b.type = 'user' and b.block ->> 'type' = 'tool_result'"""
    )
    con.execute(
        """create or replace temp table _cc_steps as
        with items as (
            select file_no, line_no, 0 as position, 'model' as kind, response from _cc_model
            union all select file_no, line_no, position, 'tool', null from _cc_results
            union all select file_no, line_no, 0, 'event', null from _cc
                      where type = 'system' and j.subtype = 'compact_boundary'
        )
        select row_number() over (partition by file_no order by line_no, position) - 1 as idx, i.*, f.run_id, f.all_side
        from items i join _cc_files f using (file_no)"""
    )
    con.execute(
        """create or replace temp table _cc_calls as
        select s.file_no, s.run_id, s.idx as step_idx,
               row_number() over (partition by b.file_no, b.response order by b.line_no, b.position) - 1 as call_position,
               b.block ->> 'id' as call_id, b.block ->> 'name' as tool_name, b.block -> 'input' as args, b.ts,
               row_number() over () as cid
        from _cc_blocks b join _cc_steps s on s.kind = 'model' and s.file_no = b.file_no and s.response = b.response
        where b.type = 'assistant' and b.block ->> 'type' = 'tool_use'"""
    )
    canonicalize_column(con, "_cc_calls", "cid", "args", "_cc_canon")
    key = idempotency_key_sql("c.run_id", "c.step_idx", "c.tool_name", "sha256(k.canonical)")
    con.execute(
        f"""insert into tool_calls by name
        select c.run_id, c.step_idx, c.call_position::integer as call_position, c.call_id, c.tool_name,
               k.canonical as args_json, sha256(k.canonical) as args_hash, {key} as idempotency_key
        from _cc_calls c left join _cc_canon k on k.doc = c.cid"""
    )
    con.execute(
        """insert into steps by name
        with model_text as (
            select file_no, response, nullif(string_agg(block ->> 'text', '' order by line_no, position), '') as text,
                   count(*) filter (where block ->> 'type' = 'tool_use') as tool_uses
            from _cc_blocks where type = 'assistant' group by file_no, response
        ),
        main_thread as (
            select s.file_no, s.idx, s.all_side, m.agent_label, t.text, coalesce(t.tool_uses, 0) as tool_uses
            from _cc_steps s join _cc_model m using (file_no, response) left join model_text t using (file_no, response)
            where s.kind = 'model' and (m.agent_label is null or s.all_side)
        ),
        final_step as (
            select a.file_no, max(a.idx) as idx from main_thread a
            where a.text is not null and a.tool_uses = 0
              and not exists (select 1 from main_thread b where b.file_no = a.file_no and b.idx > a.idx and b.tool_uses > 0)
            group by a.file_no
        )
        select s.run_id, s.idx::integer as idx, 'model' as kind, m.first_ts as started_at,
               date_diff('millisecond', coalesce(m.asked_at, m.first_ts), m.last_ts) as ms, m.agent_label,
               m.line_no::integer as source_line, m.model, 'anthropic' as provider, m.request_id, m.response_id,
               m.usage.input_tokens as input_uncached, m.usage.cache_read_input_tokens as cache_read,
               coalesce(m.usage.cache_creation.ephemeral_5m_input_tokens,
                        m.usage.cache_creation_input_tokens - coalesce(m.usage.cache_creation.ephemeral_1h_input_tokens, 0))
                   as cache_write_5m,
               coalesce(m.usage.cache_creation.ephemeral_1h_input_tokens, 0) as cache_write_1h,
               m.usage.output_tokens as output_tokens, m.stop_reason as finish_reason,
               s.idx is not distinct from f.idx as is_final, t.text as output_text, sha256(t.text) as output_sha256,
               coalesce(m.usage.input_tokens, 0) + coalesce(m.usage.cache_read_input_tokens, 0)
                   + coalesce(m.usage.cache_creation_input_tokens, 0) as context_tokens
        from _cc_steps s join _cc_model m using (file_no, response)
        left join model_text t using (file_no, response)
        left join final_step f using (file_no)
        where s.kind = 'model'"""
    )
    con.execute(
        """insert into steps by name
        select s.run_id, s.idx::integer as idx, 'tool' as kind, r.ts as started_at,
               date_diff('millisecond', c.ts, r.ts) as ms, r.agent_label, r.line_no::integer as source_line,
               case when r.is_error then left(r.text, 200) end as error, c.tool_name, r.call_id,
               k.canonical as args_json, sha256(k.canonical) as args_hash,
               case when r.is_error then 'error' else 'ok' end as tool_status,
               ceil(octet_length(encode(coalesce(r.text, ''))) / 4)::bigint as result_tokens,
               octet_length(encode(coalesce(r.text, ''))) as result_bytes, sha256(coalesce(r.text, '')) as result_hash,
               left(r.text, 1000) as result_preview, false as bounded
        from _cc_steps s
        join _cc_results r on r.file_no = s.file_no and r.line_no = s.line_no and r.position = s.position
        left join _cc_calls c on c.file_no = r.file_no and c.call_id = r.call_id
        left join _cc_canon k on k.doc = c.cid
        where s.kind = 'tool'"""
    )
    con.execute(
        """insert into steps by name
        select s.run_id, s.idx::integer as idx, 'event' as kind, c.ts as started_at, 0 as ms,
               c.line_no::integer as source_line, 'compaction' as event,
               c.j.compactMetadata.preTokens as tokens_before, 'compact_boundary' as detail
        from _cc_steps s join _cc c using (file_no, line_no)
        where s.kind = 'event'"""
    )
    con.execute("drop table _cc_blocks; drop table _cc_results; drop table _cc_calls; drop table _cc_canon")


def _insert_runs(con: duckdb.DuckDBPyConnection) -> None:
    con.execute(
        """insert into runs by name
        with last_message as (
            select c.file_no, arg_max(c.type, c.line_no) as type,
                   arg_max(case when c.type = 'user' and json_type(c.j.message.content) = 'VARCHAR'
                                    then c.j.message.content ->> '$'
                                when c.type = 'user' then c.j.message.content -> 0 ->> 'text' end, c.line_no) as user_text,
                   max(c.ts) as ts
            from _cc c join _cc_files f using (file_no)
            where c.type in ('user', 'assistant') and (c.agent_label is null or f.all_side)
              and not coalesce(c.j.isMeta, false)
            group by c.file_no
        ),
        step_facts as (
            select f.file_no, max(s.idx) filter (where s.kind = 'model' and (s.agent_label is null or f.all_side))
                       as last_model,
                   max(s.idx) filter (where s.is_final) as final_idx,
                   any_value(s.output_text) filter (where s.is_final) as final_text,
                   any_value(s.finish_reason) filter (where s.is_final) as final_reason,
                   arg_min(s.model, s.idx) filter (where s.model is not null and s.model <> '<synthetic>') as model
            from _cc_files f join steps s on s.run_id = f.run_id group by f.file_no
        ),
        outcome as (
            select l.file_no, l.ts, case
                       when l.type = 'user' and l.user_text like '[Request interrupted by user%' then 'cancelled'
                       when l.type = 'assistant' and sf.last_model = sf.final_idx then 'succeeded'
                       else 'running'
                   end as status
            from last_message l left join step_facts sf using (file_no)
        )
        select f.run_id, 'claude_code' as source_format, f.source as source_file, 1 as source_line,
               'claude-code' as agent, sf.model, 'anthropic' as provider,
               (select min(ts) from _cc c where c.file_no = f.file_no) as started_at,
               case when o.status <> 'running' then o.ts end as ended_at, coalesce(o.status, 'running') as status,
               case o.status when 'succeeded' then coalesce(sf.final_reason, 'end_turn')
                             when 'cancelled' then 'interrupted by user' end as stop_reason,
               sf.final_text as final_output, f.parent_run_id
        from _cc_files f left join outcome o using (file_no) left join step_facts sf using (file_no)
        where f.owner is null"""
    )
