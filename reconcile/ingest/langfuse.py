"""Loader for Langfuse trace exports: ``{"trace": {...}, "observations": [...]}``.

One file is one trace is one run (run id = the trace id). GENERATION observations are model
steps, TOOL observations tool steps, in start-time order; SPAN, AGENT, CHAIN and EVENT
observations are structure and are skipped (counted) — unless they carry usage (an AGENT span
reporting ``gen_ai.usage.*``), which Langfuse counts into the trace and so do we, as a model
step. Steps are labelled with their parent observation's name, the nearest thing to a thread. Records: the trace is record 1, the
observations records 2, 3, … in file order.

Usage: Langfuse's ``usageDetails`` keys are additive buckets (``input``, ``output``,
``input_cache_read``, ``output_reasoning``, …; ``total`` is their sum), while
``prompt_details.*`` and ``completion_details.*`` are subsets of ``input``/``output``. So:
cache read = ``input_cache_read`` + ``prompt_details.cache_read`` (moved out of ``input``),
cache write = ``input_cache_creation``/``input_cache_write``, other ``input_*`` keys and unknown
keys count as uncached input, every ``output_*`` key as output; reasoning is
``output_reasoning`` or ``completion_details.reasoning``. ``costDetails.total`` is kept as the
trace's own cost. Langfuse does not link a TOOL observation to the generation that asked for
it: the call is inferred, asked by the latest generation that started before the tool.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..canonical import canonicalize_column, idempotency_key_sql
from .accounting import owner_elsewhere
from .documents import finish_document, read_document, reject_document
from .result import FileCounts

FORMAT = "langfuse"
LANGFUSE_SHAPE = "json_type(j, '$.trace') = 'OBJECT' and json_type(j, '$.observations') = 'ARRAY'"
LANGFUSE_EXPECTED = 'a Langfuse trace export ({"trace": {...}, "observations": [...]})'

_OBSERVATION = ('{"id": "VARCHAR", "type": "VARCHAR", "name": "VARCHAR", "parentObservationId": "VARCHAR", '
                '"startTime": "VARCHAR", "endTime": "VARCHAR", '
                '"model": "VARCHAR", "level": "VARCHAR", "statusMessage": "VARCHAR", "usageDetails": "JSON", '
                '"costDetails": "JSON", "input": "JSON", "output": "JSON", "toolDefinitions": "JSON"}')

_SUBSET = "k like 'prompt_details.%' or k like 'completion_details.%' or k = 'total'"
_CACHE_READ = "k in ('input_cache_read', 'cache_read_input_tokens')"
_CACHE_WRITE = "k in ('input_cache_creation', 'input_cache_write', 'cache_creation_input_tokens')"


def _usage_sum(condition: str) -> str:
    # coalesce: list_sum of an empty list is NULL, not 0
    return (f"coalesce(list_sum(list_transform(list_filter(json_keys(u), lambda k: {condition}), "
            f"lambda k: coalesce(try_cast(json_extract_string(u, '$.\"' || k || '\"') as bigint), 0))), 0)")


def load_langfuse(con: duckdb.DuckDBPyConnection, path: Path, source: str) -> FileCounts:
    if not read_document(con, path, LANGFUSE_SHAPE, LANGFUSE_EXPECTED):
        return reject_document(con, path)
    run_id = con.execute("select j ->> '$.trace.id' from _doc").fetchall()[0][0] or path.stem
    owner = owner_elsewhere(con, run_id, source)
    con.execute(
        f"""create or replace temp table _lf as
        select *, o.type = 'GENERATION' or (coalesce(o.type, '') <> 'TOOL'
                  and json_type(o.usageDetails) = 'OBJECT' and len(json_keys(o.usageDetails)) > 0) as is_model
        from (select row_number() over () + 1 as record_no, raw, json_transform(raw, '{_OBSERVATION}') as o
              from (select unnest((j -> 'observations')::json[]) as raw from _doc))"""
    )
    con.execute(
        """create or replace temp table _records as
        select 1 as record_no, (select j -> 'trace' from _doc)::varchar as raw,
               case when $owner is not null then 'skip' else 'load' end as decision,
               case when $owner is not null then 'run ' || $run || ' was already loaded from ' || $owner end as note
        union all
        select record_no, raw::varchar,
               case when reason is not null then 'reject' when $owner is not null then 'skip'
                    when is_model or o.type = 'TOOL' then 'load' else 'skip' end,
               coalesce(reason, case when $owner is not null then 'run ' || $run || ' was already loaded from ' || $owner
                                     when not (is_model or o.type = 'TOOL')
                                     then 'structure, not a step (' || coalesce(o.type, '?') || ')' end)
        from (select *, case
                  when o.id is null then 'observation has no "id"'
                  when o.type is null then 'observation ' || o.id || ' has no "type"'
                  when try_cast(o.startTime as timestamptz) is null
                      then 'observation ' || o.id || ': "startTime" is ' || coalesce(o.startTime, 'missing')
                  when o.usageDetails is not null and json_type(o.usageDetails) <> 'OBJECT'
                      then 'observation ' || o.id || ': "usageDetails" is not an object'
                  when o.usageDetails is not null and not list_bool_and(list_transform(json_keys(o.usageDetails),
                          lambda k: json_type(o.usageDetails, '$."' || k || '"') in ('BIGINT', 'UBIGINT', 'DOUBLE', 'NULL')))
                      then 'observation ' || o.id || ': a "usageDetails" value is not a number'
              end as reason from _lf)""",
        {"owner": owner, "run": run_id},
    )
    if owner is None:
        _insert(con, run_id, source)
    return finish_document(con, path, ("_lf",))


def _insert(con: duckdb.DuckDBPyConnection, run_id: str, source: str) -> None:
    con.execute(
        """create or replace temp table _lf_steps as
        select row_number() over (order by start, l.record_no) - 1 as idx, l.record_no, l.o, l.is_model, start,
               coalesce(try_cast(l.o.endTime as timestamptz), start) as finish, coalesce(l.o.usageDetails, '{}') as u,
               coalesce(p.o.name, 'trace') as thread
        from _lf l join _records r using (record_no)
        left join _lf p on p.o.id = l.o.parentObservationId, lateral (select l.o.startTime::timestamptz as start)
        where r.decision = 'load'"""
    )
    con.execute(
        """create or replace temp table _lf_calls as
        select t.idx as tool_idx, g.idx as step_idx, t.o.id as call_id, t.o.name as tool_name,
               case when json_type(t.o.input) = 'VARCHAR' and json_valid(t.o.input ->> '$') then (t.o.input ->> '$')::json
                    else t.o.input end as args, t.record_no as cid
        from (select * from _lf_steps where o.type = 'TOOL') t
        asof left join (select * from _lf_steps where is_model) g on t.start >= g.start"""
    )
    canonicalize_column(con, "_lf_calls", "cid", "args", "_lf_canon")
    key = idempotency_key_sql("$run", "c.step_idx", "c.tool_name", "sha256(k.canonical)")
    con.execute(
        f"""insert into tool_calls by name
        select $run as run_id, c.step_idx, 0 as call_position, c.call_id, c.tool_name, k.canonical as args_json,
               sha256(k.canonical) as args_hash, {key} as idempotency_key
        from _lf_calls c left join _lf_canon k on k.doc = c.cid where c.step_idx is not null""",
        {"run": run_id},
    )
    text = "case when json_type(s.o.output) = 'VARCHAR' then s.o.output ->> '$' else s.o.output::varchar end"
    con.execute(
        f"""insert into steps by name
        with usage as (
            select idx, coalesce(try_cast(u ->> 'input' as bigint), 0) as input,
                   coalesce(try_cast(u ->> '$."prompt_details.cache_read"' as bigint), 0) as cached_subset,
                   {_usage_sum(_CACHE_READ)} as cache_read, {_usage_sum(_CACHE_WRITE)} as cache_write,
                   {_usage_sum(f"k <> 'input' and k <> 'output' and not ({_SUBSET}) and not ({_CACHE_READ}) and not ({_CACHE_WRITE}) and not starts_with(k, 'output')")} as other_input,
                   {_usage_sum("starts_with(k, 'output')")} as output,
                   coalesce(try_cast(u ->> 'output_reasoning' as bigint),
                            try_cast(u ->> '$."completion_details.reasoning"' as bigint)) as reasoning
            from _lf_steps
        ),
        last_tool as (select max(idx) as idx from _lf_steps where o.type = 'TOOL')
        select $run as run_id, s.idx::integer as idx, case when s.is_model then 'model' else 'tool' end as kind,
               s.start as started_at, date_diff('millisecond', s.start, s.finish) as ms, s.record_no::integer as source_line,
               s.thread as agent_label,
               case when s.o.level = 'ERROR' then coalesce(s.o.statusMessage, 'error') end as error,
               case when s.is_model then s.o.model end as model,
               case when s.is_model then s.o.id end as response_id,
               case when s.is_model then u.input - u.cached_subset + u.other_input end as input_uncached,
               case when s.is_model then u.cache_read + u.cached_subset end as cache_read,
               case when s.is_model then u.cache_write end as cache_write_5m,
               case when s.is_model then 0 end as cache_write_1h,
               case when s.is_model then u.output end as output_tokens,
               case when s.is_model then u.reasoning end as reasoning_tokens,
               case when s.is_model then s.idx > coalesce(lt.idx, -1)
                    and s.idx = (select max(idx) from _lf_steps where is_model) end as is_final,
               case when s.is_model then left({text}, 4000) end as output_text,
               case when s.is_model then sha256({text}) end as output_sha256,
               case when s.is_model then u.input + u.cache_read + u.cache_write + u.other_input end as context_tokens,
               round(try_cast(s.o.costDetails ->> 'total' as decimal(24, 12)) * 1000000)::bigint as harness_cost_micros,
               case when s.o.type = 'TOOL' then s.o.name end as tool_name,
               case when s.o.type = 'TOOL' then s.o.id end as call_id,
               k.canonical as args_json, sha256(k.canonical) as args_hash,
               case when s.o.type = 'TOOL' then case when s.o.level = 'ERROR' then 'error' else 'ok' end end as tool_status,
               case when s.o.type = 'TOOL' then ceil(octet_length(encode(coalesce({text}, ''))) / 4)::bigint end as result_tokens,
               case when s.o.type = 'TOOL' then octet_length(encode(coalesce({text}, ''))) end as result_bytes,
               case when s.o.type = 'TOOL' then sha256(coalesce({text}, '')) end as result_hash,
               case when s.o.type = 'TOOL' then left({text}, 1000) end as result_preview,
               case when s.o.type = 'TOOL' then false end as bounded
        from _lf_steps s join usage u using (idx) cross join last_tool lt
        left join _lf_calls c on c.tool_idx = s.idx left join _lf_canon k on k.doc = c.cid""",
        {"run": run_id},
    )
    con.execute(
        """insert into runs by name
        with t as (select j -> 'trace' as trace from _doc),
        summary as (
            select bool_or(o.level = 'ERROR') as errored, bool_or(o.endTime is null) as unfinished,
                   min(try_cast(o.startTime as timestamptz)) as first_start, max(try_cast(o.endTime as timestamptz)) as last_end
            from _lf
        ),
        outcome as (
            select case when errored then 'failed' when unfinished then 'running' else 'succeeded' end as status from summary
        )
        select $run as run_id, 'langfuse' as source_format, $source as source_file, 1 as source_line,
               coalesce(t.trace ->> 'name', 'langfuse') as agent,
               (select mode(model) from steps where run_id = $run and kind = 'model') as model,
               coalesce(try_cast(t.trace ->> 'timestamp' as timestamptz), s.first_start) as started_at,
               case when o.status <> 'running' then s.last_end end as ended_at, o.status,
               case o.status when 'failed' then 'error' when 'succeeded' then 'complete' end as stop_reason,
               (select output_text from steps where run_id = $run and is_final) as final_output,
               json_object('tags', t.trace -> 'tags', 'sessionId', t.trace -> 'sessionId', 'userId', t.trace -> 'userId',
                           'environment', t.trace -> 'environment') as labels,
               (select sum(harness_cost_micros) from steps where run_id = $run)::bigint as ledger_cost_micros,
               -- no catalogue size is recorded: estimated from the tool definitions sent (see docs/costs.md)
               (select max(ceil(octet_length(encode(o.toolDefinitions::varchar)) / 4))::integer from _lf
                where json_type(o.toolDefinitions) in ('OBJECT', 'ARRAY') and o.toolDefinitions::varchar not in ('{}', '[]'))
                   as catalogue_tokens
        from t, summary s, outcome o""",
        {"run": run_id, "source": source},
    )
    con.execute("drop table _lf_steps; drop table _lf_calls; drop table _lf_canon")
