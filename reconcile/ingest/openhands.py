"""Loader for OpenHands event streams (a JSON array of events, as the replay files record them).

One file is one run (run id = the file name). Records: one per event.

- An agent *action* carrying ``tool_call_metadata.model_response`` came from a model call: the
  response (by its id — one response may carry several tool calls) is a model step with that
  response's usage, and the action is a tool call (``tool_call_id``, ``function_name``, ``args``).
  The ``finish`` action is the final answer, not a tool call.
- An agent ``message`` action without metadata is a model step without usage.
- An *observation* answering an action (``cause`` = the action's id, same ``tool_call_id``) is
  a tool step; an ``error`` observation has status ``error``.
- User messages and other events (state changes, system events) are skipped (counted).

Usage is LiteLLM's: ``prompt_tokens`` includes cache reads and cache writes, so uncached input
is ``prompt_tokens`` − ``cache_read_input_tokens`` (or ``prompt_tokens_details.cached_tokens``)
− ``cache_creation_input_tokens``. Timestamps without an offset are read as UTC. Status:
``succeeded`` with a ``finish`` action, ``failed`` when the agent state turned to error,
otherwise ``running``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..canonical import canonicalize_column, idempotency_key_sql
from .accounting import owner_elsewhere
from .documents import finish_document, read_document, reject_document
from .result import FileCounts

FORMAT = "openhands"
OPENHANDS_SHAPE = "json_type(j) = 'ARRAY'"
OPENHANDS_EXPECTED = 'an OpenHands event stream (a JSON array of events)'

_EVENT = ('{"id": "BIGINT", "timestamp": "VARCHAR", "source": "VARCHAR", "action": "VARCHAR", "observation": "VARCHAR", '
          '"cause": "BIGINT", "message": "VARCHAR", "content": "VARCHAR", "args": "JSON", "extras": "JSON", '
          '"tool_call_metadata": {"function_name": "VARCHAR", "tool_call_id": "VARCHAR", "model_response": "JSON"}}')


def load_openhands(con: duckdb.DuckDBPyConnection, path: Path, source: str) -> FileCounts:
    if not read_document(con, path, OPENHANDS_SHAPE, OPENHANDS_EXPECTED):
        return reject_document(con, path)
    run_id = path.stem
    owner = owner_elsewhere(con, run_id, source)
    con.execute(
        f"""create or replace temp table _oh as
        select record_no, raw, e, try_cast(e.timestamp as timestamptz) as ts,
               e.source = 'agent' and e.action is not null and (e.tool_call_metadata.model_response is not null
                   or e.action = 'message') as is_model_action,
               e.observation is not null and e.cause is not null and e.observation not in ('agent_state_changed', 'null')
                   as is_result
        from (select row_number() over () as record_no, raw, json_transform(raw, '{_EVENT}') as e
              from (select unnest(j::json[]) as raw from _doc))"""
    )
    con.execute(
        """create or replace temp table _records as
        select record_no, raw::varchar as raw,
               case when e.id is null or ts is null then 'reject' when $owner is not null then 'skip'
                    when is_model_action or is_result then 'load' else 'skip' end as decision,
               case when e.id is null then 'event ' || record_no || ' has no integer "id"'
                    when ts is null then 'event ' || e.id || ': "timestamp" is ' || coalesce(e.timestamp, 'missing')
                    when $owner is not null then 'run ' || $run || ' was already loaded from ' || $owner
                    when not (is_model_action or is_result) then 'not a step (' || coalesce(e.source, '?') || ' '
                        || coalesce(e.action, e.observation, '?') || ')' end as note
        from _oh""",
        {"owner": owner, "run": run_id},
    )
    if owner is None:
        _insert(con, run_id, source)
    return finish_document(con, path, ("_oh",))


def _insert(con: duckdb.DuckDBPyConnection, run_id: str, source: str) -> None:
    con.execute(
        """create or replace temp table _oh_items as
        with loaded as (select o.* from _oh o join _records r using (record_no) where r.decision = 'load'),
        responses as (
            select coalesce(e.tool_call_metadata.model_response ->> 'id', 'event ' || e.id) as response,
                   min(record_no) as record_no, min(ts) as ts, any_value(e.tool_call_metadata.model_response) as mr,
                   bool_or(e.action = 'finish') as finish, string_agg(nullif(e.message, ''), chr(10)) as text
            from loaded where is_model_action group by all
        ),
        items as (
            select record_no, 0 as sub, 'model' as kind, response, null::bigint as event_id from responses
            union all select record_no, 1, 'tool', null, e.id from loaded where is_result
        )
        select row_number() over (order by record_no, sub) - 1 as idx, i.* from items i"""
    )
    con.execute(
        """create or replace temp table _oh_calls as
        select s.idx as step_idx, row_number() over (partition by s.idx order by a.record_no) - 1 as call_position,
               coalesce(a.e.tool_call_metadata.tool_call_id, 'event-' || a.e.id) as call_id,
               coalesce(a.e.tool_call_metadata.function_name, a.e.action) as tool_name, a.e.args as args,
               a.e.id as action_id, a.ts as asked_at, a.record_no as cid
        from _oh a join _oh_items s on s.kind = 'model'
             and s.response = coalesce(a.e.tool_call_metadata.model_response ->> 'id', 'event ' || a.e.id)
        where a.is_model_action and a.e.tool_call_metadata.tool_call_id is not null and a.e.action <> 'finish'"""
    )
    canonicalize_column(con, "_oh_calls", "cid", "args", "_oh_canon")
    key = idempotency_key_sql("$run", "c.step_idx", "c.tool_name", "sha256(k.canonical)")
    con.execute(
        f"""insert into tool_calls by name
        select $run as run_id, c.step_idx, c.call_position::integer as call_position, c.call_id, c.tool_name,
               k.canonical as args_json, sha256(k.canonical) as args_hash, {key} as idempotency_key
        from _oh_calls c left join _oh_canon k on k.doc = c.cid""",
        {"run": run_id},
    )
    con.execute(
        """insert into steps by name
        with responses as (
            select i.idx, i.record_no, o.ts, o.e.tool_call_metadata.model_response as mr,
                   bool_or(a.e.action = 'finish') as finish, string_agg(nullif(a.e.message, ''), chr(10)) as text
            from _oh_items i join _oh o using (record_no)
            join _oh a on a.is_model_action
                and coalesce(a.e.tool_call_metadata.model_response ->> 'id', 'event ' || a.e.id) = i.response
            where i.kind = 'model' group by all
        ),
        usage as (
            select *, coalesce(try_cast(mr ->> '$.usage.prompt_tokens' as bigint), 0) as prompt,
                   coalesce(try_cast(mr ->> '$.usage.cache_read_input_tokens' as bigint),
                            try_cast(mr ->> '$.usage.prompt_tokens_details.cached_tokens' as bigint), 0) as cached,
                   coalesce(try_cast(mr ->> '$.usage.cache_creation_input_tokens' as bigint), 0) as written
            from responses
        ),
        last_model as (select max(idx) as idx from _oh_items where kind = 'model')
        select $run as run_id, u.idx::integer as idx, 'model' as kind, u.ts as started_at, u.record_no::integer as source_line,
               mr ->> 'model' as model, mr ->> 'id' as response_id,
               case when mr is not null then greatest(prompt - cached - written, 0) end as input_uncached,
               case when mr is not null then cached end as cache_read,
               case when mr is not null then written end as cache_write_5m,
               case when mr is not null then 0 end as cache_write_1h,
               try_cast(mr ->> '$.usage.completion_tokens' as bigint) as output_tokens,
               try_cast(mr ->> '$.usage.completion_tokens_details.reasoning_tokens' as bigint) as reasoning_tokens,
               mr ->> '$.choices[0].finish_reason' as finish_reason,
               u.finish or (u.idx = l.idx and u.text is not null and mr is null) as is_final,
               left(coalesce(u.text, mr ->> '$.choices[0].message.content'), 4000) as output_text,
               case when mr is not null then prompt end as context_tokens
        from usage u cross join last_model l""",
        {"run": run_id},
    )
    con.execute(
        """insert into steps by name
        select $run as run_id, i.idx::integer as idx, 'tool' as kind, r.ts as started_at,
               date_diff('millisecond', c.asked_at, r.ts) as ms, r.record_no::integer as source_line,
               case when r.e.observation = 'error' then left(r.e.content, 200) end as error,
               coalesce(c.tool_name, r.e.observation) as tool_name,
               coalesce(c.call_id, r.e.tool_call_metadata.tool_call_id, 'event-' || r.e.cause) as call_id,
               k.canonical as args_json, sha256(k.canonical) as args_hash,
               case when r.e.observation = 'error' then 'error' else 'ok' end as tool_status,
               ceil(octet_length(encode(coalesce(r.e.content, ''))) / 4)::bigint as result_tokens,
               octet_length(encode(coalesce(r.e.content, ''))) as result_bytes, sha256(coalesce(r.e.content, '')) as result_hash,
               left(r.e.content, 1000) as result_preview, false as bounded
        from _oh_items i join _oh r on r.e.id = i.event_id
        left join _oh_calls c on c.action_id = r.e.cause
        left join _oh_canon k on k.doc = c.cid
        where i.kind = 'tool'""",
        {"run": run_id},
    )
    con.execute(
        """insert into runs by name
        with outcome as (
            select bool_or(e.action = 'finish') as finished,
                   bool_or(e.observation = 'agent_state_changed' and e.extras ->> 'agent_state' = 'error') as errored,
                   min(ts) as first_ts, max(ts) as last_ts
            from _oh
        )
        select $run as run_id, 'openhands' as source_format, $source as source_file, 1 as source_line, 'openhands' as agent,
               (select mode(model) from steps where run_id = $run and model is not null) as model,
               first_ts as started_at, case when finished or errored then last_ts end as ended_at,
               case when finished then 'succeeded' when errored then 'failed' else 'running' end as status,
               case when finished then 'finish' when errored then 'error' end as stop_reason,
               (select output_text from steps where run_id = $run and is_final order by idx desc limit 1) as final_output
        from outcome""",
        {"run": run_id, "source": source},
    )
    con.execute("drop table _oh_items; drop table _oh_calls; drop table _oh_canon")
