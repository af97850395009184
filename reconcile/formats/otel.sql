-- Staging for OTLP JSON spans. Input: _text(file_no, content): one request per file, or one per line.

create or replace temp macro otel_attr(a, k) as
    coalesce(a[k] ->> 'stringValue', a[k] ->> 'intValue', a[k] ->> 'doubleValue', a[k] ->> 'boolValue');

-- Strict JSON: what DuckDB parses only leniently (a trailing comma, NaN) is no JSON to any other reader.
create or replace temp macro strict_json(t) as json_valid(t) and {{ lenience }} is null;

-- A trace or span id as hex, whatever the JSON encoding: OTLP/JSON writes hex, protobuf's own JSON mapping (its
-- MessageToJson) base64; the same span in either is one span. An id of the base64 length for its bytes (24
-- characters for a trace's 16, 12 for a span's 8) that is not hex is decoded; anything else is kept as written.
create or replace temp macro otel_id(id, bytes) as
    case when id is not null and length(id) = 4 * ceil(bytes / 3) and not regexp_full_match(id, '[0-9a-fA-F]*')
              and regexp_full_match(id, '[A-Za-z0-9+/]+={0,2}')
         then coalesce(lower(try(hex(from_base64(id)))), id) else id end;

-- A producer that leaves a usage count out when it is zero (declared in the format's module, by its scope name):
-- on its model spans, a count it leaves out is 0 where the span answered (no error) or records any count.
create or replace temp macro omits_zero_usage(scope) as list_contains({{ zero_omitting_scopes }}, scope);

create or replace temp table _ot_requests as
select file_no, 1 as line_no, content::json as j, true as valid from _text where strict_json(content)
union all
select file_no, line_no, case when strict_json(line) then line::json end, strict_json(line)
from (select file_no, unnest(lines) as line, generate_subscripts(lines, 1) as line_no
      from (select file_no, string_split(content, chr(10)) as lines from _text where not strict_json(content)))
where trim(line) <> '';

alter table _ot_requests add column spans boolean;
update _ot_requests set spans = valid and json_type(j, '$.resourceSpans') = 'ARRAY';
-- A request whose scopeSpans or spans is not an array holds no spans one could count: one rejected record.
alter table _ot_requests add column malformed boolean;
update _ot_requests set malformed = spans and not (
    coalesce(list_bool_and(list_transform(json_type(j, '$.resourceSpans[*].scopeSpans'), lambda t: t = 'ARRAY')), true)
    and coalesce(list_bool_and(list_transform(json_type(j, '$.resourceSpans[*].scopeSpans[*].spans'),
                                              lambda t: t = 'ARRAY')), true));

create or replace temp table _ot as
-- Each `->` on a JSON value parses all of it again: a span's or a resource's parts are taken in one parse
-- (json_extract with a list of paths), so a large span (a 20 MB attribute) is parsed a few times, not a dozen.
with resources as (
    select r.file_no, r.line_no, rs.p[2] as scopes,
           (select string_agg(x ->> '$.value.stringValue', '') from (select unnest(json_list(rs.p[1])) as x)
            where x ->> 'key' = 'service.name') as service
    from _ot_requests r,
         lateral (select json_extract(unnest(json_list(r.j -> 'resourceSpans')), ['$.resource.attributes', '$.scopeSpans'])
                  as p) rs
    where r.spans and not r.malformed
),
spans as (
    select r.file_no, r.line_no, r.service, sp.span, sp.pos, ss.ss -> '$.scope' ->> 'name' as scope
    from resources r,
         lateral (select unnest(json_list(r.scopes)) as ss) ss,
         lateral (select json_list(ss.ss -> 'spans') as spans) l,
         lateral (select unnest(l.spans) as span, generate_subscripts(l.spans, 1) as pos) sp
),
parts as (
    select file_no, line_no, pos, span, service, scope,
           json_extract(span, ['$.traceId', '$.spanId', '$.parentSpanId', '$.name', '$.startTimeUnixNano',
                               '$.endTimeUnixNano', '$.status.code', '$.status.message', '$.attributes']) as p
    from spans
),
-- the first value of each key (a map takes each key once, and no NULL key)
attributes as (
    select file_no, line_no, pos, map_from_entries(list({'k': k, 'v': v})) as a
    from (select file_no, line_no, pos, e.k, arg_min(e.v, e.i) as v
          from (select file_no, line_no, pos,
                       unnest(list_transform(json_list(p[9]), lambda x, i: {'k': x ->> 'key', 'v': x -> 'value', 'i': i})) as e
                from parts)
          where e.k is not null group by all)
    group by all
),
typed as (
    select file_no, line_no, pos, span, otel_id(p[1] ->> '$', 16) as trace_id, otel_id(p[2] ->> '$', 8) as span_id,
           otel_id(nullif(p[3] ->> '$', ''), 8) as parent_id, p[4] ->> '$' as name,
           try_cast(p[5] ->> '$' as hugeint) as start_ns,
           try_cast(p[6] ->> '$' as hugeint) as end_ns,
           coalesce(json_type(p[6]), 'NULL') <> 'NULL' as end_given,
           coalesce(p[7] ->> '$', '0') in ('2', 'STATUS_CODE_ERROR') as errored,
           p[8] ->> '$' as status_message,
           coalesce(x.a, map_from_entries([]::struct(k varchar, v json)[])) as a,
           service, scope
    from parts left join attributes x using (file_no, line_no, pos)
)
select row_number() over (partition by file_no order by line_no, pos) as record_no, *,
       otel_attr(a, 'gen_ai.operation.name') as operation, otel_attr(a, 'openinference.span.kind') as oi_kind,
       try(make_timestamp((start_ns // 1000)::bigint)::timestamptz) as start_ts,
       try(make_timestamp((end_ns // 1000)::bigint)::timestamptz) as end_ts
from typed;

create or replace temp table _ot as
select *, case
           when operation = 'invoke_agent' or oi_kind = 'AGENT' then 'agent'
           when operation in ('chat', 'text_completion', 'generate_content', 'embeddings')
                or oi_kind in ('LLM', 'EMBEDDING') then 'model'
           when operation = 'execute_tool' or oi_kind = 'TOOL' then 'tool'
           else 'structure' end as role
from _ot;

-- Each span's run: its nearest agent ancestor (itself included), else its trace.
create or replace temp table _ot_runs as
with recursive up(file_no, record_no, trace_id, ancestor, depth) as (
    select file_no, record_no, trace_id, span_id, 0 from _ot where trace_id is not null and span_id is not null
    union all
    select up.file_no, up.record_no, up.trace_id, p.parent_id, up.depth + 1
    from up join _ot p on p.file_no = up.file_no and p.trace_id = up.trace_id and p.span_id = up.ancestor
    where p.parent_id is not null and up.depth < 64
),
nearest as (
    select up.file_no, up.record_no, arg_min(up.ancestor, up.depth) as agent_span
    from up join _ot a on a.file_no = up.file_no and a.trace_id = up.trace_id and a.span_id = up.ancestor
                      and a.role = 'agent'
    group by up.file_no, up.record_no
)
select o.file_no, o.record_no, o.trace_id, coalesce(o.trace_id || '/' || n.agent_span, o.trace_id) as run_id, n.agent_span
from _ot o left join nearest n using (file_no, record_no);

create or replace temp table _stage_records as
select file_no, row_number() over (partition by file_no order by line_no, pos) as record_no, raw, decision, note, run_id
from (
    select file_no, line_no, 0 as pos, null as raw, 'reject' as decision,
           'line ' || line_no || case when not valid then ': not valid JSON (an OTLP ExportTraceServiceRequest per line expected)'
                                      else ': a scopeSpans or spans that is not an array' end as note,
           null as run_id
    from _ot_requests where not valid or malformed
    union all
    select o.file_no, o.line_no, o.pos, o.span::varchar,
           case when o.trace_id is null or o.span_id is null then 'reject'
                when o.start_ts is null or (o.end_given and o.end_ts is null) then 'reject'
                when o.role in ('agent', 'model', 'tool') then 'load' else 'skip' end,
           case when o.trace_id is null or o.span_id is null then 'span ' || coalesce(o.name, '?') || ' has no traceId or spanId'
                when o.start_ts is null then 'span ' || o.span_id || ': startTimeUnixNano is '
                    || coalesce(left((o.span -> 'startTimeUnixNano')::varchar, 40), 'missing')
                    || '; expected nanoseconds since 1970 as an integer'
                when o.end_given and o.end_ts is null then 'span ' || o.span_id || ': endTimeUnixNano is '
                    || left((o.span -> 'endTimeUnixNano')::varchar, 40) || '; expected nanoseconds since 1970 as an integer'
                when o.role = 'structure' then 'structure, not a step (' || coalesce(o.operation, o.oi_kind, o.name, '?') || ')'
           end,
           r.run_id
    from _ot o left join _ot_runs r using (file_no, record_no));

create or replace temp table _ot_loaded as
select o.*, r.run_id, r.agent_span
from _ot o join _ot_runs r using (file_no, record_no)
where o.trace_id is not null and o.span_id is not null and o.start_ts is not null
  and (not o.end_given or o.end_ts is not null) and o.role in ('agent', 'model', 'tool');

-- bills_no_cache_writes(model): the model's provider bills no cache writes (reconcile.ingest.billing).
create or replace temp table _ot_steps as
select row_number() over (partition by s.file_no, s.run_id order by s.start_ns, s.record_no) - 1 as idx, s.*,
       s.start_ts as started_at,
       floor((s.end_ns - s.start_ns) / 1000000) as ms,
       coalesce(staged_number(coalesce(otel_attr(a, 'gen_ai.usage.input_tokens'), otel_attr(a, 'gen_ai.usage.prompt_tokens'),
                                       otel_attr(a, 'llm.token_count.prompt'))), s.zero_default) as input_all,
       -- a cache count the span leaves out is unknown (0 from a producer that leaves zeros out)
       coalesce(staged_number(coalesce(otel_attr(a, 'gen_ai.usage.cache_read.input_tokens'),
                                       otel_attr(a, 'gen_ai.usage.cache_read_input_tokens'),
                                       otel_attr(a, 'llm.token_count.prompt_details.cache_read'))), s.zero_default) as cached,
       coalesce(staged_number(coalesce(otel_attr(a, 'gen_ai.usage.output_tokens'), otel_attr(a, 'gen_ai.usage.completion_tokens'),
                                       otel_attr(a, 'llm.token_count.completion'))), s.zero_default) as output,
       staged_number(coalesce(otel_attr(a, 'gen_ai.usage.reasoning.output_tokens'),
                              otel_attr(a, 'llm.token_count.completion_details.reasoning'))) as reasoning,
       coalesce(otel_attr(a, 'gen_ai.response.model'), otel_attr(a, 'gen_ai.request.model'),
                otel_attr(a, 'llm.model_name')) as model,
       -- a write count too, but for models whose provider bills none (on a span that records usage)
       coalesce(staged_number(coalesce(otel_attr(a, 'gen_ai.usage.cache_creation.input_tokens'),
                                       otel_attr(a, 'gen_ai.usage.cache_creation_input_tokens'),
                                       otel_attr(a, 'llm.token_count.prompt_details.cache_write'))),
                s.zero_default,
                case when coalesce(input_all, cached, output) is not null and bills_no_cache_writes(model) then 0 end)
           as written,
       -- the framework's own price of the call (pydantic-ai: operation.cost, in dollars): the harness's figure
       staged_micros(otel_attr(a, 'operation.cost')) as harness_cost_micros,
       coalesce(otel_attr(a, 'gen_ai.provider.name'), otel_attr(a, 'gen_ai.system'), otel_attr(a, 'llm.provider')) as provider,
       coalesce(a['gen_ai.response.finish_reasons'] ->> '$.arrayValue.values[0].stringValue',
                otel_attr(a, 'gen_ai.response.finish_reasons')) as finish_reason,
       otel_attr(a, 'gen_ai.response.id') as response_id,
       coalesce(otel_attr(a, 'gen_ai.tool.name'), otel_attr(a, 'tool.name')) as tool_name,
       coalesce(otel_attr(a, 'gen_ai.tool.call.id'), s.span_id) as call_id,
       coalesce(otel_attr(a, 'gen_ai.tool.call.arguments'), otel_attr(a, 'input.value')) as arguments,
       coalesce(otel_attr(a, 'gen_ai.tool.call.result'), otel_attr(a, 'output.value')) as result,
       -- the output messages are opt-in: without them the step's text is unknown
       coalesce(otel_attr(a, 'gen_ai.output.messages'), otel_attr(a, 'gen_ai.completion'), otel_attr(a, 'output.value'))
           as output_value
from (select *, case when role = 'model' and omits_zero_usage(scope)
                          and (not errored or list_has_any(map_keys(a), ['gen_ai.usage.input_tokens',
                               'gen_ai.usage.output_tokens', 'llm.token_count.prompt', 'llm.token_count.completion']))
                     then 0 end as zero_default
      from _ot_loaded) s
where s.role in ('model', 'tool');

-- Spans do not say which model call asked for a tool: the latest one before it did.
create or replace temp table _stage_calls as
select t.file_no, t.run_id, m.idx as step_idx, 0 as call_position, t.call_id, coalesce(t.tool_name, t.name) as tool_name,
       case when json_valid(t.arguments) then t.arguments::json else to_json(t.arguments) end as args
from (select * from _ot_steps where role = 'tool') t
asof left join (select * from _ot_steps where role = 'model') m
    on t.file_no = m.file_no and t.run_id = m.run_id and t.start_ns >= m.start_ns;

-- The final answer: the run's last model call, after its last tool (output text is opt-in, so not required).
create or replace temp table _stage_steps as
with last_tool as (select file_no, run_id, max(idx) as idx from _ot_steps where role = 'tool' group by all),
last_model as (select file_no, run_id, max(idx) as idx from _ot_steps where role = 'model' group by all)
select s.file_no, s.run_id, s.idx::integer as idx, s.role as kind, s.started_at, s.ms, s.record_no::integer as source_line,
       case when s.errored then coalesce(s.status_message, 'span status ERROR') end as error,
       case when s.role = 'model' then s.model end as model,
       case when s.role = 'model' then s.provider end as provider,
       case when s.role = 'model' then s.response_id end as response_id,
       -- the input holds the cache reads and writes (the conventions say so); counts beyond it were reported
       -- apart, and the input is then all uncached. With a cache count unknown, so is the uncached part.
       case when s.role = 'model' and s.cached is not null and s.written is not null
            then case when s.input_all >= s.cached + s.written then s.input_all - s.cached - s.written
                      else s.input_all end end as input_uncached,
       case when s.role = 'model' then s.cached end as cache_read,
       -- the conventions count cache writes whole, not by lifetime (5 minutes or an hour, billed apart): known
       -- only where there are none (or the provider bills none); else their split is unknown and the call's cost
       -- a range over the lifetimes (the whole input, the context, stays known)
       case when s.role = 'model' and (s.written = 0 or bills_no_cache_writes(s.model)) then s.written end
           as cache_write_5m,
       case when s.role = 'model' and (s.written = 0 or bills_no_cache_writes(s.model))
                 and coalesce(s.input_all, s.cached, s.output) is not null then 0 end as cache_write_1h,
       case when s.role = 'model' then s.harness_cost_micros end as harness_cost_micros,
       case when s.role = 'model' then s.output end as output_tokens,
       case when s.role = 'model' then s.reasoning end as reasoning_tokens,
       case when s.role = 'model' then s.finish_reason end as finish_reason,
       case when s.role = 'model' then s.idx = lm.idx and s.idx > coalesce(lt.idx, -1) end as is_final,
       case when s.role = 'model' then left(s.output_value, 4000) end as output_text,
       case when s.role = 'model' then sha256(s.output_value) end as output_sha256,
       case when s.role = 'model' then case when s.input_all >= coalesce(s.cached, 0) + coalesce(s.written, 0)
            then s.input_all else s.input_all + coalesce(s.cached, 0) + coalesce(s.written, 0) end end as context_tokens,
       case when s.role = 'tool' then coalesce(s.tool_name, s.name) end as tool_name,
       case when s.role = 'tool' then s.call_id end as call_id,
       c.args,
       case when s.role = 'tool' then case when s.errored then 'error' else 'ok' end end as tool_status,
       case when s.role = 'tool' then s.result end as result_text
from _ot_steps s
left join last_tool lt on lt.file_no = s.file_no and lt.run_id = s.run_id
left join last_model lm on lm.file_no = s.file_no and lm.run_id = s.run_id
left join _stage_calls c on s.role = 'tool' and c.file_no = s.file_no and c.run_id = s.run_id and c.call_id = s.call_id;

-- The tools a model span was offered: gen_ai.tool.definitions (a JSON array, opt-in), else OpenInference's
-- llm.tools.N.tool.json_schema; a run's catalogue is every tool its spans offered. Whether a tool changes
-- the world is not recorded.
create or replace temp table _stage_tools as
with offered as (
    select file_no, run_id, record_no, def
    from (select *, case when json_valid(otel_attr(a, 'gen_ai.tool.definitions'))
                         then json_list(otel_attr(a, 'gen_ai.tool.definitions')::json) end as defs
          from _ot_loaded where role = 'model'),
         lateral (select unnest(defs) as def)
    union all
    select file_no, run_id, record_no, case when json_valid(otel_attr(a, k)) then otel_attr(a, k)::json end
    from (select *, unnest(map_keys(a)) as k from _ot_loaded
          where role = 'model' and otel_attr(a, 'gen_ai.tool.definitions') is null)
    where regexp_full_match(k, 'llm\.tools\.\d+\.tool\.json_schema') and json_valid(otel_attr(a, k))
)
select file_no, run_id, coalesce(def ->> '$.name', def ->> '$.function.name') as name, null::boolean as side_effect,
       null::boolean as allow_repeat, max(ceil(octet_length(encode(def::varchar)) / 4))::integer as schema_tokens
from offered where coalesce(def ->> '$.name', def ->> '$.function.name') is not null
group by all;

create or replace temp table _stage_runs as
with per_run as (
    select file_no, run_id, any_value(agent_span) as agent_span, min(start_ts) as start_ts,
           max(end_ts) as end_ts, bool_or(end_ns is null) as unfinished, bool_or(errored) as any_error,
           arg_min(status_message, start_ns) filter (where errored) as error_message,
           any_value(service) as service, min(line_no) as line_no,
           -- no catalogue size is recorded: estimated from gen_ai.tool.definitions (see docs/costs.md)
           max(ceil(octet_length(encode(otel_attr(a, 'gen_ai.tool.definitions'))) / 4))
               filter (where role = 'model') as catalogue_tokens
    from _ot_loaded group by file_no, run_id
),
roots as (select o.file_no, o.trace_id || '/' || o.span_id as run_id, o.* exclude (file_no) from _ot o where o.role = 'agent'),
models as (select file_no, run_id, mode(model) as model, mode(provider) as provider from _stage_steps
           where kind = 'model' group by all)
select p.file_no, p.run_id, p.line_no as source_line,
       coalesce(otel_attr(root.a, 'gen_ai.agent.name'), p.service, 'otel') as agent, m.model, m.provider,
       -- the framework's own counters of the run's calls (pydantic-ai: gen_ai.aggregated_usage.* on the agent span,
       -- the run's own calls, never its sub-agents'): its ledger; a count left out as zero by such a producer is 0
       case when otel_attr(root.a, 'gen_ai.aggregated_usage.input_tokens') is not null
                 or otel_attr(root.a, 'gen_ai.aggregated_usage.output_tokens') is not null
            then coalesce(staged_number(otel_attr(root.a, 'gen_ai.aggregated_usage.input_tokens')), 0) end
           as ledger_input_tokens,
       case when otel_attr(root.a, 'gen_ai.aggregated_usage.input_tokens') is not null
                 or otel_attr(root.a, 'gen_ai.aggregated_usage.output_tokens') is not null
            then coalesce(staged_number(otel_attr(root.a, 'gen_ai.aggregated_usage.output_tokens')), 0) end
           as ledger_output_tokens,
       coalesce(root.start_ts, p.start_ts) as started_at,
       case when not p.unfinished then coalesce(root.end_ts, p.end_ts) end as ended_at,
       case when coalesce(root.errored, p.any_error) then 'failed' when p.unfinished then 'running'
            else 'succeeded' end as status,
       case when coalesce(root.errored, p.any_error) then coalesce(root.status_message, p.error_message) end as stop_reason,
       p.catalogue_tokens,
       case when root.trace_id is not null then
           json_object('conversation_id', otel_attr(root.a, 'gen_ai.conversation.id')) end as labels,
       (select r2.run_id from _ot_runs r2 join _ot parent on parent.file_no = r2.file_no and parent.record_no = r2.record_no
        where root.parent_id is not null and parent.file_no = p.file_no and parent.trace_id = root.trace_id
          and parent.span_id = root.parent_id) as parent_run_id
from per_run p left join roots root on root.file_no = p.file_no and root.run_id = p.run_id
left join models m on m.file_no = p.file_no and m.run_id = p.run_id;
