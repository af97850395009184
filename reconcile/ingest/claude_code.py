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
from .accounting import owner_elsewhere, record_outcome
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
    """Load one Claude Code transcript (its lines already in ``_lines``) in the caller's transaction."""
    lines = check_lines(con, path, FIELDS)
    run_id, parent = run_identity(path)
    owner = owner_elsewhere(con, run_id, source)
    con.execute(
        f"""create or replace temp table _cc as
        select line_no, j, type, ts,
               case when side then coalesce(j.agentId, 'sidechain-' || sum(case when side and j.parentUuid is null
                   then 1 else 0 end) over (order by line_no)) end as agent_label
        from (select line_no, j, j.type as type, (j.timestamp)::timestamptz as ts,
                     coalesce(j.isSidechain, false) and j.type in ('user', 'assistant') as side
              from (select line_no, json_transform(line, {structure_sql(FIELDS)}) as j from _checked
                    where reason is null and not blank))"""
    )
    keep = "type in ('user', 'assistant') or (type = 'system' and j.subtype = 'compact_boundary')"
    con.execute(
        f"""create or replace temp table _outcome as
        select line_no,
               case when $owner is not null then 'skip' when {keep} then 'load' else 'skip' end as decision,
               case when $owner is not null then 'run ' || $run || ' was already loaded from ' || $owner
                    when {keep} then null else 'not a conversation line (' || coalesce(type, '?')
                    || coalesce('/' || j.subtype, '') || ')' end as note
        from _cc""",
        {"owner": owner, "run": run_id},
    )
    if owner is None:
        # A subagent's own transcript is all side-chain lines: then they are its main thread.
        all_side = not con.execute("select count(*) from _cc where type in ('user', 'assistant') "
                                   "and agent_label is null").fetchall()[0][0]
        _insert_steps(con, run_id, all_side)
        _insert_run(con, run_id, parent, source, all_side)
    counts = record_outcome(con, source, lines)
    con.execute("drop table _lines; drop table _checked; drop table _cc; drop table _outcome")
    con.execute("drop table if exists _cc_model; drop table if exists _cc_steps")
    return counts


def _insert_steps(con: duckdb.DuckDBPyConnection, run_id: str, all_side: bool) -> None:
    # One model step per API response: the lines sharing message.id and requestId.
    con.execute(
        """create or replace temp table _cc_model as
        select coalesce(c.j.message.id || '|' || c.j.requestId, 'line ' || c.line_no) as response,
               min(c.line_no) as line_no, min(c.ts) as first_ts, max(c.ts) as last_ts,
               arg_max(c.j.message.usage, c.line_no) as usage, arg_max(c.j.message.model, c.line_no) as model,
               arg_max(c.j.message.stop_reason, c.line_no) as stop_reason, any_value(c.j.message.id) as response_id,
               any_value(c.j.requestId) as request_id, any_value(c.agent_label) as agent_label,
               min(p.asked_ts) as asked_at
        from _cc c
        left join (select j.uuid as uuid, ts as asked_ts from _cc) p on p.uuid = c.j.parentUuid
        where c.type = 'assistant'
        group by all"""
    )
    con.execute(
        """create or replace temp table _cc_blocks as
        select c.line_no, b.position, c.type, c.ts, c.agent_label, coalesce(c.j.message.id || '|' || c.j.requestId,
               'line ' || c.line_no) as response, b.block
        from _cc c, (select unnest(c.j.message.content::json[]) as block,
                            generate_subscripts(c.j.message.content::json[], 1) as position) b
        where c.type in ('user', 'assistant') and json_type(c.j.message.content) = 'ARRAY'"""
    )
    con.execute(
        """create or replace temp table _cc_results as
        select b.line_no, b.position, b.ts, b.agent_label, b.block ->> 'tool_use_id' as call_id,
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
            select line_no, 0 as position, 'model' as kind, response from _cc_model
            union all select line_no, position, 'tool', null from _cc_results
            union all select line_no, 0, 'event', null from _cc where type = 'system' and j.subtype = 'compact_boundary'
        )
        select row_number() over (order by line_no, position) - 1 as idx, * from items"""
    )
    con.execute(
        """create or replace temp table _cc_calls as
        select s.idx as step_idx, row_number() over (partition by b.response order by b.line_no, b.position) - 1 as call_position,
               b.block ->> 'id' as call_id, b.block ->> 'name' as tool_name, b.block -> 'input' as args, b.ts,
               row_number() over () as cid
        from _cc_blocks b join _cc_steps s on s.kind = 'model' and s.response = b.response
        where b.type = 'assistant' and b.block ->> 'type' = 'tool_use'"""
    )
    canonicalize_column(con, "_cc_calls", "cid", "args", "_cc_canon")
    key = idempotency_key_sql("$run", "c.step_idx", "c.tool_name", "sha256(k.canonical)")
    con.execute(
        f"""insert into tool_calls by name
        select $run as run_id, c.step_idx, c.call_position::integer as call_position, c.call_id, c.tool_name,
               k.canonical as args_json, sha256(k.canonical) as args_hash, {key} as idempotency_key
        from _cc_calls c left join _cc_canon k on k.doc = c.cid""",
        {"run": run_id},
    )
    con.execute(
        """insert into steps by name
        with model_text as (
            select response, nullif(string_agg(block ->> 'text', '' order by line_no, position), '') as text,
                   count(*) filter (where block ->> 'type' = 'tool_use') as tool_uses
            from _cc_blocks where type = 'assistant' group by response
        ),
        main_thread as (
            select s.idx, m.agent_label, t.text, coalesce(t.tool_uses, 0) as tool_uses
            from _cc_steps s join _cc_model m using (response) left join model_text t using (response)
            where s.kind = 'model'
        ),
        final_step as (
            select max(idx) as idx from main_thread a
            where (a.agent_label is null or $all_side) and a.text is not null and a.tool_uses = 0
              and not exists (select 1 from main_thread b where (b.agent_label is null or $all_side)
                              and b.idx > a.idx and b.tool_uses > 0)
        )
        select $run as run_id, s.idx::integer as idx, 'model' as kind, m.first_ts as started_at,
               date_diff('millisecond', coalesce(m.asked_at, m.first_ts), m.last_ts) as ms, m.agent_label,
               m.line_no::integer as source_line, m.model, 'anthropic' as provider, m.request_id, m.response_id,
               m.usage.input_tokens as input_uncached, m.usage.cache_read_input_tokens as cache_read,
               coalesce(m.usage.cache_creation.ephemeral_5m_input_tokens,
                        m.usage.cache_creation_input_tokens - coalesce(m.usage.cache_creation.ephemeral_1h_input_tokens, 0))
                   as cache_write_5m,
               coalesce(m.usage.cache_creation.ephemeral_1h_input_tokens, 0) as cache_write_1h,
               m.usage.output_tokens as output_tokens, m.stop_reason as finish_reason,
               s.idx = f.idx as is_final, t.text as output_text, sha256(t.text) as output_sha256,
               coalesce(m.usage.input_tokens, 0) + coalesce(m.usage.cache_read_input_tokens, 0)
                   + coalesce(m.usage.cache_creation_input_tokens, 0) as context_tokens
        from _cc_steps s join _cc_model m using (response)
        left join model_text t using (response)
        cross join final_step f
        where s.kind = 'model'""",
        {"run": run_id, "all_side": all_side},
    )
    con.execute(
        """insert into steps by name
        select $run as run_id, s.idx::integer as idx, 'tool' as kind, r.ts as started_at,
               date_diff('millisecond', c.ts, r.ts) as ms, r.agent_label, r.line_no::integer as source_line,
               case when r.is_error then left(r.text, 200) end as error, c.tool_name, r.call_id,
               k.canonical as args_json, sha256(k.canonical) as args_hash,
               case when r.is_error then 'error' else 'ok' end as tool_status,
               ceil(octet_length(encode(coalesce(r.text, ''))) / 4)::bigint as result_tokens,
               octet_length(encode(coalesce(r.text, ''))) as result_bytes, sha256(coalesce(r.text, '')) as result_hash,
               left(r.text, 1000) as result_preview, false as bounded
        from _cc_steps s
        join _cc_results r on r.line_no = s.line_no and r.position = s.position
        left join _cc_calls c on c.call_id = r.call_id
        left join _cc_canon k on k.doc = c.cid
        where s.kind = 'tool'""",
        {"run": run_id},
    )
    con.execute(
        """insert into steps by name
        select $run as run_id, s.idx::integer as idx, 'event' as kind, c.ts as started_at, 0 as ms,
               c.line_no::integer as source_line, 'compaction' as event,
               c.j.compactMetadata.preTokens as tokens_before, 'compact_boundary' as detail
        from _cc_steps s join _cc c using (line_no)
        where s.kind = 'event'""",
        {"run": run_id},
    )
    con.execute("drop table _cc_blocks; drop table _cc_results; drop table _cc_calls; drop table _cc_canon")


def _insert_run(con: duckdb.DuckDBPyConnection, run_id: str, parent: str | None, source: str, all_side: bool) -> None:
    con.execute(
        """insert into runs by name
        with last_message as (
            select arg_max(type, line_no) as type,
                   arg_max(case when type = 'user' and json_type(j.message.content) = 'VARCHAR' then j.message.content ->> '$'
                                when type = 'user' then j.message.content -> 0 ->> 'text' end, line_no) as user_text,
                   max(ts) as ts
            from _cc where type in ('user', 'assistant') and (agent_label is null or $all_side)
                       and not coalesce(j.isMeta, false)
        ),
        final as (select output_text, idx from steps where run_id = $run and is_final),
        outcome as (
            select case
                       when l.type = 'user' and l.user_text like '[Request interrupted by user%' then 'cancelled'
                       when l.type = 'assistant' and (select max(idx) from steps where run_id = $run and kind = 'model'
                                                      and (agent_label is null or $all_side)) = (select idx from final)
                           then 'succeeded'
                       else 'running'
                   end as status, l.ts
            from last_message l
        )
        select $run as run_id, 'claude_code' as source_format, $source as source_file, 1 as source_line,
               'claude-code' as agent, (select arg_min(model, idx) from steps where run_id = $run and model is not null
                                        and model <> '<synthetic>') as model,
               'anthropic' as provider, (select min(ts) from _cc) as started_at,
               case when o.status <> 'running' then o.ts end as ended_at, o.status,
               case o.status when 'succeeded' then coalesce((select finish_reason from steps where run_id = $run and is_final), 'end_turn')
                             when 'cancelled' then 'interrupted by user' end as stop_reason,
               (select output_text from final) as final_output, $parent as parent_run_id
        from outcome o""",
        {"run": run_id, "parent": parent, "source": source, "all_side": all_side},
    )
