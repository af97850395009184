"""Loader for OpenTelemetry GenAI spans as OTLP JSON (the collector file exporter's output).

A file holds one ``ExportTraceServiceRequest`` (``resourceSpans → scopeSpans → spans``, attributes
as key/value lists) or one per line. Records: one per span (a line that is not JSON is one
rejected record).

- A run is an agent span's tree: a span with ``gen_ai.operation.name = invoke_agent`` (or
  OpenInference ``openinference.span.kind = AGENT``) roots a run ``<traceId>/<spanId>``, and every
  span belongs to its nearest agent ancestor (a nested agent is a child run). Spans of a trace
  with no agent span form one run, ``<traceId>``.
- Model steps: ``chat``, ``text_completion``, ``generate_content``, ``embeddings`` operations (or
  OpenInference ``LLM``/``EMBEDDING``); tool steps: ``execute_tool`` (or ``TOOL``); other spans
  are structure, skipped and counted. Steps are in start-time order.
- Usage: ``gen_ai.usage.input_tokens`` (old name ``prompt_tokens``; OpenInference
  ``llm.token_count.prompt``) includes cache reads and writes, which are
  ``gen_ai.usage.cache_read.input_tokens`` / ``cache_creation.input_tokens`` (old names
  ``cache_read_input_tokens`` / ``cache_creation_input_tokens``; OpenInference
  ``llm.token_count.prompt_details.cache_read`` / ``cache_write``). Uncached input is what is
  left — unless the cache counts exceed the input, in which case the instrumentation reported
  them apart and the input is taken as uncached.
- Tool calls: ``gen_ai.tool.call.id`` (else the span id), ``gen_ai.tool.name``, arguments from
  ``gen_ai.tool.call.arguments``; spans do not say which model call asked, so the latest model
  step before the tool is taken as the asker.
- Span status ERROR is a step error; a run is ``failed`` when its root span (or, for a trace run,
  any span) errored, ``running`` when a span has no end time, else ``succeeded``.
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from ..canonical import canonicalize_column, idempotency_key_sql
from ..errors import BadInput
from .documents import finish_document
from .result import FileCounts

FORMAT = "otel"

MODEL_OPERATIONS = ("chat", "text_completion", "generate_content", "embeddings")


def _attr(*keys: str) -> str:
    """SQL for the first present attribute among ``keys``, as text."""
    values = [f"coalesce(a['{k}'] ->> 'stringValue', a['{k}'] ->> 'intValue', a['{k}'] ->> 'doubleValue', "
              f"a['{k}'] ->> 'boolValue')" for k in keys]
    return values[0] if len(values) == 1 else "coalesce(" + ", ".join(values) + ")"


def _count(*keys: str) -> str:
    return f"try_cast({_attr(*keys)} as bigint)"


def load_otel(con: duckdb.DuckDBPyConnection, path: Path, source: str) -> FileCounts:
    con.execute("create or replace temp table _ot_text as select content from read_text(?)", [str(path)])
    con.execute(
        """create or replace temp table _ot_requests as
        select 1 as line_no, content::json as j, true as valid from _ot_text where json_valid(content)
        union all
        select line_no, case when json_valid(line) then line::json end, json_valid(line)
        from (select unnest(string_split(content, chr(10))) as line, generate_subscripts(string_split(content, chr(10)), 1)
                  as line_no from _ot_text where not json_valid(content))
        where trim(line) <> ''"""
    )
    valid, with_spans = con.execute(
        "select count(*) filter (where valid), count(*) filter (where valid and json_type(j, '$.resourceSpans') = 'ARRAY')"
        " from _ot_requests").fetchall()[0]
    if valid and not with_spans:
        raise BadInput(f"{path}: expected OTLP JSON (an ExportTraceServiceRequest with resourceSpans, or one per line), "
                       "found JSON without resourceSpans. Check --format, or leave it out to detect it.")
    con.execute(
        f"""create or replace temp table _ot as
        with spans as (
            select r.line_no, rs.rs, ss.ss, sp.span, sp.pos
            from _ot_requests r,
                 lateral (select unnest((r.j -> 'resourceSpans')::json[]) as rs) rs,
                 lateral (select unnest((rs.rs -> 'scopeSpans')::json[]) as ss) ss,
                 lateral (select unnest((ss.ss -> 'spans')::json[]) as span,
                                 generate_subscripts((ss.ss -> 'spans')::json[], 1) as pos) sp
            where r.valid
        ),
        typed as (
            select line_no, pos, span, span ->> 'traceId' as trace_id, span ->> 'spanId' as span_id,
                   nullif(span ->> 'parentSpanId', '') as parent_id, span ->> 'name' as name,
                   try_cast(span ->> 'startTimeUnixNano' as hugeint) as start_ns,
                   try_cast(span ->> 'endTimeUnixNano' as hugeint) as end_ns,
                   coalesce(span ->> '$.status.code', '0') in ('2', 'STATUS_CODE_ERROR') as errored,
                   span ->> '$.status.message' as status_message,
                   map_from_entries(list_transform(coalesce((span -> 'attributes')::json[], []),
                                                   lambda x: {{'k': x ->> 'key', 'v': x -> 'value'}})) as a,
                   (select string_agg(x ->> '$.value.stringValue', '') from
                       (select unnest(coalesce((rs -> '$.resource.attributes')::json[], [])) as x)
                    where x ->> 'key' = 'service.name') as service
            from spans
        )
        select row_number() over (order by line_no, pos) as record_no, *,
               {_attr('gen_ai.operation.name')} as operation, {_attr('openinference.span.kind')} as oi_kind
        from typed"""
    )
    con.execute(
        """create or replace temp table _ot as
        select *, case
                   when operation = 'invoke_agent' or oi_kind = 'AGENT' then 'agent'
                   when operation in ('chat', 'text_completion', 'generate_content', 'embeddings')
                        or oi_kind in ('LLM', 'EMBEDDING') then 'model'
                   when operation = 'execute_tool' or oi_kind = 'TOOL' then 'tool'
                   else 'structure' end as role
        from _ot"""
    )
    _assign_runs(con, source)
    con.execute(
        """create or replace temp table _records as
        select row_number() over (order by line_no, pos) as record_no, raw, decision, note from (
            select line_no, 0 as pos, null as raw, 'reject' as decision,
                   'line ' || line_no || ': not valid JSON (an OTLP ExportTraceServiceRequest per line expected)' as note
            from _ot_requests where not valid
            union all
            select o.line_no, o.pos, o.span::varchar, case
                       when o.trace_id is null or o.span_id is null then 'reject'
                       when o.start_ns is null then 'reject'
                       when r.owner is not null then 'skip'
                       when o.role in ('agent', 'model', 'tool') then 'load' else 'skip' end,
                   case when o.trace_id is null or o.span_id is null then 'span ' || coalesce(o.name, '?') || ' has no traceId or spanId'
                        when o.start_ns is null then 'span ' || o.span_id || ': startTimeUnixNano is missing or not a number'
                        when r.owner is not null then 'run ' || r.run_id || ' was already loaded from ' || r.owner
                        when o.role = 'structure' then 'structure, not a step (' || coalesce(o.operation, o.oi_kind, o.name, '?') || ')'
                   end
            from _ot o left join _ot_runs r using (record_no))"""
    )
    _insert(con, source)
    return finish_document(con, path, ("_ot_text", "_ot_requests", "_ot", "_ot_runs"))


def _assign_runs(con: duckdb.DuckDBPyConnection, source: str) -> None:
    """Each span's run: its nearest agent ancestor (itself included), else its trace."""
    con.execute(
        """create or replace temp table _ot_runs as
        with recursive up(record_no, trace_id, ancestor, depth) as (
            select record_no, trace_id, span_id, 0 from _ot where trace_id is not null and span_id is not null
            union all
            select up.record_no, up.trace_id, p.parent_id, up.depth + 1
            from up join _ot p on p.trace_id = up.trace_id and p.span_id = up.ancestor
            where p.parent_id is not null and up.depth < 64
        ),
        nearest as (
            select up.record_no, arg_min(up.ancestor, up.depth) as agent_span
            from up join _ot a on a.trace_id = up.trace_id and a.span_id = up.ancestor and a.role = 'agent'
            group by up.record_no
        ),
        assigned as (
            select o.record_no, o.trace_id, coalesce(o.trace_id || '/' || n.agent_span, o.trace_id) as run_id, n.agent_span
            from _ot o left join nearest n using (record_no)
        )
        select a.*, (select any_value(source_file) from runs r where r.run_id = a.run_id and r.source_file <> $source) as owner
        from assigned a""",
        {"source": source},
    )


def _insert(con: duckdb.DuckDBPyConnection, source: str) -> None:
    con.execute(
        f"""create or replace temp table _ot_steps as
        select row_number() over (partition by r.run_id order by o.start_ns, o.record_no) - 1 as idx, r.run_id, o.*,
               make_timestamp((o.start_ns // 1000)::bigint)::timestamptz as started_at,
               ((o.end_ns - o.start_ns) // 1000000)::bigint as ms,
               {_count('gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens', 'llm.token_count.prompt')} as input_all,
               coalesce({_count('gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.cache_read_input_tokens',
                                'llm.token_count.prompt_details.cache_read')}, 0) as cached,
               coalesce({_count('gen_ai.usage.cache_creation.input_tokens', 'gen_ai.usage.cache_creation_input_tokens',
                                'llm.token_count.prompt_details.cache_write')}, 0) as written,
               {_count('gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens', 'llm.token_count.completion')} as output,
               {_count('gen_ai.usage.reasoning.output_tokens', 'llm.token_count.completion_details.reasoning')} as reasoning,
               {_attr('gen_ai.response.model', 'gen_ai.request.model', 'llm.model_name')} as model,
               {_attr('gen_ai.provider.name', 'gen_ai.system', 'llm.provider')} as provider,
               coalesce(a['gen_ai.response.finish_reasons'] ->> '$.arrayValue.values[0].stringValue',
                        {_attr('gen_ai.response.finish_reasons')}) as finish_reason,
               {_attr('gen_ai.response.id')} as response_id,
               {_attr('gen_ai.tool.name', 'tool.name')} as tool_name,
               coalesce({_attr('gen_ai.tool.call.id')}, o.span_id) as call_id,
               {_attr('gen_ai.tool.call.arguments', 'input.value')} as arguments,
               {_attr('gen_ai.tool.call.result', 'output.value')} as result
        from _ot o join _ot_runs r using (record_no) join _records d using (record_no)
        where d.decision = 'load' and o.role in ('model', 'tool')"""
    )
    con.execute(
        """create or replace temp table _ot_calls as
        select t.run_id, t.idx as tool_idx, m.idx as step_idx, t.call_id, coalesce(t.tool_name, t.name) as tool_name,
               case when json_valid(t.arguments) then t.arguments::json else to_json(t.arguments) end as args,
               t.record_no as cid
        from (select * from _ot_steps where role = 'tool') t
        asof left join (select * from _ot_steps where role = 'model') m on t.run_id = m.run_id and t.start_ns >= m.start_ns"""
    )
    canonicalize_column(con, "_ot_calls", "cid", "args", "_ot_canon")
    key = idempotency_key_sql("c.run_id", "c.step_idx", "c.tool_name", "sha256(k.canonical)")
    con.execute(
        f"""insert into tool_calls by name
        select c.run_id, c.step_idx, 0 as call_position, c.call_id, c.tool_name, k.canonical as args_json,
               sha256(k.canonical) as args_hash, {key} as idempotency_key
        from _ot_calls c left join _ot_canon k on k.doc = c.cid where c.step_idx is not null"""
    )
    con.execute(
        """insert into steps by name
        with last_tool as (select run_id, max(idx) as idx from _ot_steps where role = 'tool' group by run_id),
        last_model as (select run_id, max(idx) as idx from _ot_steps where role = 'model' group by run_id)
        select s.run_id, s.idx::integer as idx, s.role as kind, s.started_at, s.ms, s.record_no::integer as source_line,
               case when s.errored then coalesce(s.status_message, 'span status ERROR') end as error,
               case when s.role = 'model' then s.model end as model,
               case when s.role = 'model' then s.provider end as provider,
               case when s.role = 'model' then s.response_id end as response_id,
               case when s.role = 'model' then case when s.input_all >= s.cached + s.written
                    then s.input_all - s.cached - s.written else s.input_all end end as input_uncached,
               case when s.role = 'model' then s.cached end as cache_read,
               case when s.role = 'model' then s.written end as cache_write_5m,
               case when s.role = 'model' then 0 end as cache_write_1h,
               case when s.role = 'model' then s.output end as output_tokens,
               case when s.role = 'model' then s.reasoning end as reasoning_tokens,
               case when s.role = 'model' then s.finish_reason end as finish_reason,
               case when s.role = 'model' then s.idx = lm.idx and s.idx > coalesce(lt.idx, -1) end as is_final,
               case when s.role = 'model' then case when s.input_all >= s.cached + s.written then s.input_all
                    else s.input_all + s.cached + s.written end end as context_tokens,
               case when s.role = 'tool' then coalesce(s.tool_name, s.name) end as tool_name,
               case when s.role = 'tool' then s.call_id end as call_id,
               k.canonical as args_json, sha256(k.canonical) as args_hash,
               case when s.role = 'tool' then case when s.errored then 'error' else 'ok' end end as tool_status,
               case when s.role = 'tool' then ceil(octet_length(encode(coalesce(s.result, ''))) / 4)::bigint end as result_tokens,
               case when s.role = 'tool' then octet_length(encode(coalesce(s.result, ''))) end as result_bytes,
               case when s.role = 'tool' then sha256(coalesce(s.result, '')) end as result_hash,
               case when s.role = 'tool' then left(s.result, 1000) end as result_preview,
               case when s.role = 'tool' then false end as bounded
        from _ot_steps s left join last_tool lt using (run_id) left join last_model lm using (run_id)
        left join _ot_calls c on c.cid = s.record_no left join _ot_canon k on k.doc = c.cid"""
    )
    con.execute(
        f"""insert into runs by name
        with members as (
            select r.run_id, r.agent_span, o.* from _ot o join _ot_runs r using (record_no) join _records d using (record_no)
            where d.decision = 'load'
        ),
        per_run as (
            select run_id, any_value(agent_span) as agent_span, min(start_ns) as start_ns,
                   max(end_ns) as end_ns, bool_or(end_ns is null) as unfinished, bool_or(errored) as any_error,
                   any_value(service) as service, min(line_no) as line_no
            from members group by run_id
        ),
        roots as (select o.trace_id || '/' || o.span_id as run_id, o.* from _ot o where o.role = 'agent'),
        members_defs as (select run_id, {_attr('gen_ai.tool.definitions').replace("a[", "m2.a[")} as definitions
                         from members m2 where m2.role = 'model')
        select p.run_id, 'otel' as source_format, $source as source_file, p.line_no::integer as source_line,
               coalesce({_attr('gen_ai.agent.name').replace("a[", "root.a[")}, p.service, 'otel') as agent,
               (select mode(model) from steps s where s.run_id = p.run_id and s.model is not null) as model,
               make_timestamp((coalesce(root.start_ns, p.start_ns) // 1000)::bigint)::timestamptz as started_at,
               case when not p.unfinished then make_timestamp((coalesce(root.end_ns, p.end_ns) // 1000)::bigint)::timestamptz
               end as ended_at,
               case when coalesce(root.errored, p.any_error) then 'failed' when p.unfinished then 'running'
                    else 'succeeded' end as status,
               case when coalesce(root.errored, p.any_error) then 'error' when not p.unfinished then 'complete' end
                   as stop_reason,
               (select output_text from steps s where s.run_id = p.run_id and s.is_final) as final_output,
               -- no catalogue size is recorded: estimated from gen_ai.tool.definitions (see docs/costs.md)
               (select max(ceil(octet_length(encode(m.definitions)) / 4))::integer from members_defs m
                where m.run_id = p.run_id) as catalogue_tokens,
               case when root.trace_id is not null then
                   json_object('conversation_id', {_attr('gen_ai.conversation.id').replace("a[", "root.a[")}) end as labels,
               (select r2.run_id from _ot_runs r2 join _ot parent on parent.record_no = r2.record_no
                where root.parent_id is not null and parent.trace_id = root.trace_id and parent.span_id = root.parent_id)
                   as parent_run_id
        from per_run p left join roots root on root.run_id = p.run_id""",
        {"source": source},
    )
    con.execute("drop table _ot_steps; drop table _ot_calls; drop table _ot_canon")
