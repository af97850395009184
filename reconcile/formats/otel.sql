-- Staging for OTLP JSON spans. Input: _text(file_no, content): one request per file, or one per line.
-- A record is a line of the file (one request), or the whole file when it is one request: the accounting counts
-- the file's lines, never its spans. Every rule is written once, here; docs/formats.md says which attribute each reads.

create or replace temp macro otel_attr(a, k) as
    coalesce(a[k] ->> 'stringValue', a[k] ->> 'intValue', a[k] ->> 'doubleValue', a[k] ->> 'boolValue');

-- An attribute holding JSON text (gen_ai.output.messages, metadata, …) as JSON; NULL when it is not JSON.
create or replace temp macro otel_json(a, k) as case when json_valid(otel_attr(a, k)) then otel_attr(a, k)::json end;

-- A text that is JSON (an object, an array, a quoted string…) as that JSON, else as a JSON string.
create or replace temp macro json_or_text(t) as case when json_valid(t) then t::json else to_json(t) end;

-- A JSON value that may be JSON text inside a string (tool-call arguments, written either way) as JSON.
create or replace temp macro json_unquoted(v) as
    case when json_type(v) = 'VARCHAR' then json_or_text(v ->> '$') else v end;

-- The text of a message's content: a string, or the text blocks of a list of blocks (Anthropic, LangChain).
create or replace temp macro content_text(c) as
    case json_type(c)
        when 'VARCHAR' then c ->> '$'
        when 'ARRAY' then nullif(array_to_string(list_filter(list_transform(json_extract(c, '$[*]'),
                                     lambda b: case when json_type(b) = 'VARCHAR' then b ->> '$'
                                                    when b ->> 'type' = 'text' then b ->> 'text' end),
                                 lambda t: t is not null), ''), '') end;

-- A LangChain message's content, in any of its serializations: dumpd's {type, data: {content}}, the lc constructor's
-- {lc, id, kwargs: {content}}, or a plain {role, content}.
create or replace temp macro lc_content(m) as coalesce(m -> '$.data.content', m -> '$.kwargs.content', m -> '$.content');

-- A JSON value as text: a string as itself, anything else as its JSON.
create or replace temp macro json_text(v) as case when json_type(v) = 'VARCHAR' then v ->> '$' else v::varchar end;

-- One attribute of a span event (an exception event's exception.type, exception.message).
create or replace temp macro event_attr(ev, k) as
    list_filter(json_extract(ev, '$.attributes[*]'), lambda x: x ->> 'key' = k)[1] -> 'value' ->> 'stringValue';

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

-- A framework's own limit stop, by the exception's class (declared in the format's module): budget_exceeded.
create or replace temp macro limit_stop(error_class) as list_contains({{ limit_stops }}, error_class);

-- A call of a framework's output tool is the run's answer, not a tool call: the output tools the call's span names
-- (pydantic-ai's model_request_parameters.output_tools), else the framework's default names (the module declares them).
create or replace temp macro output_tool(scope, mrp, tool) as
    case when json_type(mrp, '$.output_tools') = 'ARRAY'
         then list_contains(json_extract_string(mrp, '$.output_tools[*].name'), tool)
         else coalesce(regexp_full_match(tool, {{ output_tool_names }}[scope]), false) end;

-- The lines: a file that is one JSON request is one record; else each line is (a last newline starts no line).
-- A tail read (ingest/tail.py) holds the lines from _files.first_line on: they keep the file's numbers, and a tail is
-- never one request.
create or replace temp table _ot_split as
with whole as (select t.file_no, t.content, f.first_line = 1 and strict_json(t.content) as one, f.first_line
               from _text t join _files f using (file_no))
select file_no, 1 as line_no, content as line, true as one from whole where one
union all
select file_no, line_no + first_line - 1, line, false
from (select file_no, first_line, unnest(lines) as line, generate_subscripts(lines, 1) as line_no, len(lines) as n
      from (select file_no, first_line, string_split(content, chr(10)) as lines from whole where not one))
where not (line_no = n and line = '');  -- (the subscript in the tail)

-- The lines as a line format's are, for where a later read may go on from (their bytes); not a file of one request.
insert into _lines select file_no, line_no, line, null from _ot_split where not one;

create or replace temp table _ot_requests as
with split as (select file_no, line_no, line from _ot_split)
select file_no, line_no, case when not valid then line end as line, regexp_full_match(line, '\s*') as blank, valid,
       case when valid then line::json end as j
from (select *, strict_json(line) as valid from split);

alter table _ot_requests add column spans boolean;
update _ot_requests set spans = valid and coalesce(json_type(j, '$.resourceSpans') = 'ARRAY', false);
-- A request whose scopeSpans or spans is not an array holds no spans one could count: its line is rejected.
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
                               '$.endTimeUnixNano', '$.status.code', '$.status.message', '$.attributes', '$.events'])
               as p
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
           list_filter(json_extract(p[10], '$[*]'), lambda e: e ->> 'name' = 'exception')[1] as exception_event,
           coalesce(x.a, map_from_entries([]::struct(k varchar, v json)[])) as a,
           service, scope
    from parts left join attributes x using (file_no, line_no, pos)
)
select row_number() over (partition by file_no order by line_no, pos) as record_no, * exclude (exception_event),
       otel_attr(a, 'gen_ai.operation.name') as operation, otel_attr(a, 'openinference.span.kind') as oi_kind,
       -- a LangGraph node (OpenInference names a node's span after it, and its metadata names the node)
       coalesce(name = otel_json(a, 'metadata') ->> 'langgraph_node', false) as graph_node,
       event_attr(exception_event, 'exception.type') as exception_type,
       event_attr(exception_event, 'exception.message') as exception_message,
       try(make_timestamp((start_ns // 1000)::bigint)::timestamptz) as start_ts,
       try(make_timestamp((end_ns // 1000)::bigint)::timestamptz) as end_ts
from typed;

-- What a span is. An agent span (invoke_agent, OpenInference AGENT) starts a run — but a LangGraph node marked
-- AGENT (its `agent` node, once a turn) is a step of its graph's run, not a run. The error's class: the exception
-- event's exception.type (its last dotted part), else the leading class name of the status message.
create or replace temp table _ot as
select *, case
           when (operation = 'invoke_agent' or oi_kind = 'AGENT') and not graph_node then 'agent'
           when operation in ('chat', 'text_completion', 'generate_content', 'embeddings')
                or oi_kind in ('LLM', 'EMBEDDING') then 'model'
           when operation = 'execute_tool' or oi_kind = 'TOOL' then 'tool'
           else 'structure' end as role,
       case when errored then coalesce(regexp_extract(exception_type, '([^.]+)$', 1),
                                       nullif(regexp_extract(status_message, '^\s*(?:[A-Za-z_][\w]*\.)*([A-Za-z_]\w*)\s*[:(]', 1), ''))
       end as error_class,
       case when errored then coalesce(regexp_extract(exception_type, '([^.]+)$', 1) || coalesce(': ' || exception_message, ''),
                                       status_message, 'span status ERROR') end as error_text,
       -- what keeps the span from being read (its line is rejected: a line loads whole or not at all)
       case when trace_id is null or span_id is null then 'span ' || coalesce(name, '?') || ' has no traceId or spanId'
            when start_ts is null then 'span ' || span_id || ': startTimeUnixNano is '
                || coalesce(left((span -> 'startTimeUnixNano')::varchar, 40), 'missing')
                || '; expected nanoseconds since 1970 as an integer'
            when end_given and end_ts is null then 'span ' || span_id || ': endTimeUnixNano is '
                || left((span -> 'endTimeUnixNano')::varchar, 40) || '; expected nanoseconds since 1970 as an integer'
       end as problem
from _ot;

create or replace temp table _ot_lines as
select file_no, line_no, arg_min(problem, record_no) filter (where problem is not null) as problem,
       count(problem) as problems
from _ot group by all;

-- The spans read: those of lines with no unreadable span.
create or replace temp table _ot_ok as
select o.* from _ot o join _ot_lines l using (file_no, line_no) where l.problem is null;

-- Every span's ancestors (itself at depth 0), within its file and trace.
create or replace temp table _ot_up as
with recursive up(file_no, record_no, trace_id, ancestor, depth) as (
    select file_no, record_no, trace_id, span_id, 0 from _ot_ok
    union  -- a span written twice in a file climbs once, not once per copy at every level
    select up.file_no, up.record_no, up.trace_id, p.parent_id, up.depth + 1
    from up join _ot_ok p on p.file_no = up.file_no and p.trace_id = up.trace_id and p.span_id = up.ancestor
    where p.parent_id is not null and up.depth < 64
)
select * from up;

-- A model span another model span runs under re-reports that call (a framework's wrapper around a client's span):
-- the provider call is the innermost one; the wrapper is structure.
create or replace temp table _ot_wrappers as
select distinct a.file_no, a.record_no
from _ot_up up
join _ot_ok a on a.file_no = up.file_no and a.trace_id = up.trace_id and a.span_id = up.ancestor and a.role = 'model'
join _ot_ok d on d.file_no = up.file_no and d.record_no = up.record_no and d.role = 'model'
where up.depth > 0;

update _ot_ok set role = 'structure' where (file_no, record_no) in (select file_no, record_no from _ot_wrappers);

-- Each span's run: its nearest agent ancestor (itself included) starts it, <traceId>/<spanId>; a span under no agent
-- span is in its trace's run, <traceId>, whose root is the trace's root span.
create or replace temp table _ot_runs as
with nearest as (
    select up.file_no, up.record_no, arg_min(up.ancestor, up.depth) as agent_span
    from _ot_up up join _ot_ok a on a.file_no = up.file_no and a.trace_id = up.trace_id and a.span_id = up.ancestor
                                    and a.role = 'agent'
    group by up.file_no, up.record_no
)
select o.file_no, o.record_no, o.line_no, o.trace_id, coalesce(o.trace_id || '/' || n.agent_span, o.trace_id) as run_id,
       n.agent_span
from _ot_ok o left join nearest n using (file_no, record_no);

-- A line's record: loaded when a span of it is a step (or an agent span); its run is its earliest such span's.
create or replace temp table _stage_records as
with spans as (
    select o.file_no, o.line_no, o.role, o.start_ns, r.run_id, coalesce(o.operation, o.oi_kind, o.name, '?') as what
    from _ot_ok o join _ot_runs r using (file_no, record_no)
),
per_line as (
    select file_no, line_no, count(*) filter (where role <> 'structure') as steps,
           arg_min(run_id, start_ns) filter (where role <> 'structure') as run_id,
           string_agg(distinct what, ', ' order by what) filter (where role = 'structure') as structure
    from spans group by all
)
select q.file_no, q.line_no as record_no,
       -- the line as a reject keeps it (the landing's guard may yet reject a line loaded here)
       case when not q.blank then left(coalesce(q.line, q.j::varchar), {{ raw_keep_chars }}) end as raw,
       case when q.blank then 'skip'
            when not q.valid or not q.spans or q.malformed or l.problem is not null then 'reject'
            when p.steps > 0 then 'load' else 'skip' end as decision,
       case when q.blank then 'blank line'
            when not q.valid then 'line ' || q.line_no || ': not valid JSON (an OTLP ExportTraceServiceRequest per line expected)'
            when not q.spans then 'line ' || q.line_no || ': not an OTLP ExportTraceServiceRequest (no resourceSpans array)'
            when q.malformed then 'line ' || q.line_no || ': a scopeSpans or spans that is not an array'
            when l.problem is not null then l.problem
                || case when l.problems > 1 then ' (and ' || (l.problems - 1) || ' more span(s) of the line)' else '' end
                || '; nothing of the line is loaded'
            when p.steps > 0 then null
            when p.structure is not null then 'structure, not a step (' || p.structure || ')'
            else 'no spans' end as note,
       case when q.valid and q.spans and not q.malformed and l.problem is null then p.run_id end as run_id
from _ot_requests q
left join _ot_lines l using (file_no, line_no)
left join per_line p using (file_no, line_no);

-- The spans loaded: agent, model and tool spans of the lines loaded.
create or replace temp table _ot_loaded as
select o.*, r.run_id, r.agent_span
from _ot_ok o join _ot_runs r using (file_no, record_no)
where o.role in ('agent', 'model', 'tool');

-- A run's root: its agent span, or for a trace's run the trace's root span (one with no parent).
create or replace temp table _ot_roots as
select r.file_no, r.run_id, arg_min(o.record_no, o.start_ns) as record_no
from _ot_runs r join _ot_ok o using (file_no, record_no)
where (r.agent_span is not null and o.span_id = r.agent_span) or (r.agent_span is null and o.parent_id is null)
group by all;

-- The answer the framework returned, as its root span records it: pydantic-ai's final_result on the agent span; the
-- last message of the root's output.value (LangGraph's returned state) when an assistant's (its text, not the
-- serialized message); that output.value when it is plain text. Never a serialized result.
-- The root and its error decide the run's status: an error whose class is a framework's limit stop is
-- budget_exceeded, another failed; a root that has not ended (or is not in the file: the SDK exports a span when it
-- ends) is running; a root that returned a framework's limit reply (declared in the module) is budget_exceeded too.
create or replace temp table _ot_run_status as
with roots as (
    select p.file_no, p.run_id, p.unfinished, x.record_no as root_record, root.errored, root.end_ns, root.error_class,
           root.error_text,
           coalesce(otel_attr(root.a, 'final_result'),
                    case when json_type(otel_json(root.a, 'output.value'), '$.messages') = 'ARRAY'
                         then case when m.last ->> '$.type' = 'ai' or m.last ->> '$.role' = 'assistant'
                                        or m.last ->> '$.id[-1]' = 'AIMessage'
                                   then content_text(lc_content(m.last)) end
                         when not json_valid(otel_attr(root.a, 'output.value')) then otel_attr(root.a, 'output.value')
                    end) as answer
    from (select file_no, run_id, bool_or(end_ns is null) as unfinished from _ot_loaded group by all) p
    left join _ot_roots x using (file_no, run_id)
    left join _ot_ok root on root.file_no = x.file_no and root.record_no = x.record_no,
         lateral (select json_extract(otel_json(root.a, 'output.value'), '$.messages[-1]') as last) m
)
select file_no, run_id, root_record, status,
       case when status = 'budget_exceeded' and not errored then {{ limit_replies }}[answer] || ': ' || answer
            when status in ('failed', 'budget_exceeded') then error_text end as stop_reason,
       -- a root that raised returned no answer
       case when status in ('succeeded', 'budget_exceeded') and not errored then answer end as answer
from (select *, case when errored and limit_stop(error_class) then 'budget_exceeded'
                     when errored then 'failed'
                     when root_record is null or end_ns is null or unfinished then 'running'
                     when {{ limit_replies }}[answer] is not null then 'budget_exceeded'
                     else 'succeeded' end as status
      from roots);

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
       coalesce(otel_attr(a, 'gen_ai.provider.name'), otel_attr(a, 'gen_ai.system'), otel_attr(a, 'llm.provider'),
                otel_attr(a, 'llm.system')) as provider,
       otel_json(a, 'gen_ai.output.messages') as out_messages,
       coalesce(a['gen_ai.response.finish_reasons'] ->> '$.arrayValue.values[0].stringValue',
                otel_attr(a, 'gen_ai.response.finish_reasons'), otel_attr(a, 'llm.finish_reason'),
                otel_json(a, 'gen_ai.output.messages') ->> '$[0].finish_reason') as finish_reason,
       otel_attr(a, 'gen_ai.response.id') as response_id,
       otel_json(a, 'model_request_parameters') as request_parameters,
       -- a model call's thread: its conversation (gen_ai.conversation.id), else the LangGraph node it ran in
       coalesce(otel_attr(a, 'gen_ai.conversation.id'), otel_json(a, 'metadata') ->> 'langgraph_node') as thread,
       -- a tool span: its name, its own call id and arguments where it records them, its result's content (a LangChain
       -- ToolMessage's content and tool_call_id, not the serialized message)
       coalesce(otel_attr(a, 'gen_ai.tool.name'), otel_attr(a, 'tool.name'), s.name) as tool_name,
       coalesce(otel_attr(a, 'gen_ai.tool.call.id'), s.tool_message ->> '$.data.tool_call_id',
                s.tool_message ->> '$.kwargs.tool_call_id') as own_call_id,
       coalesce(otel_attr(a, 'gen_ai.tool.call.arguments'), otel_attr(a, 'input.value')) as own_arguments,
       coalesce(otel_attr(a, 'gen_ai.tool.call.result'),
                case when s.tool_message is not null
                     then json_text(lc_content(s.tool_message)) else otel_attr(a, 'output.value') end) as result,
       coalesce(s.tool_message ->> '$.data.status', s.tool_message ->> '$.kwargs.status') = 'error' as result_error
from (select *, case when role = 'model' and omits_zero_usage(scope)
                          and (not errored or list_has_any(map_keys(a), ['gen_ai.usage.input_tokens',
                               'gen_ai.usage.output_tokens', 'llm.token_count.prompt', 'llm.token_count.completion']))
                     then 0 end as zero_default,
             case when role = 'tool' and (otel_json(a, 'output.value') ->> '$.type' = 'tool'
                                          and json_type(otel_json(a, 'output.value'), '$.data') = 'OBJECT'
                                          or otel_json(a, 'output.value') ->> '$.id[-1]' = 'ToolMessage')
                  then otel_json(a, 'output.value') end as tool_message
      from _ot_loaded) s
where s.role in ('model', 'tool');

-- The tool calls a model call asked for, from its output messages: GenAI gen_ai.output.messages (parts of type
-- tool_call; an OpenAI-shaped message's tool_calls), OpenInference llm.output_messages.M.message.tool_calls.K.tool_call.*,
-- OpenLLMetry gen_ai.completion.M.tool_calls.K.*. A call of an output tool is the answer (output_tool), not a call.
create or replace temp table _ot_asked as
with parts as (
    select file_no, run_id, idx, scope, request_parameters, part, pos
    from (select file_no, run_id, idx, scope, request_parameters,
                 unnest(json_extract(out_messages, '$[*].parts[*]')) as part,
                 generate_subscripts(json_extract(out_messages, '$[*].parts[*]'), 1) as pos
          from _ot_steps where role = 'model' and out_messages is not null)
    where part ->> 'type' = 'tool_call'
    union all
    select file_no, run_id, idx, scope, request_parameters,
           json_object('id', c ->> 'id', 'name', c ->> '$.function.name', 'arguments', c -> '$.function.arguments'), pos
    from (select file_no, run_id, idx, scope, request_parameters,
                 unnest(json_extract(out_messages, '$[*].tool_calls[*]')) as c,
                 generate_subscripts(json_extract(out_messages, '$[*].tool_calls[*]'), 1) as pos
          from _ot_steps where role = 'model' and out_messages is not null)
),
flat as (
    select file_no, run_id, idx, scope, request_parameters,
           case when starts_with(k, 'llm.')
                then regexp_extract(k, '^llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\.(?:function\.)?(id|name|arguments)$',
                                    ['m', 'k', 'field'])
                else regexp_extract(k, '^gen_ai\.completion\.(\d+)\.tool_calls\.(\d+)\.(id|name|arguments)$', ['m', 'k', 'field'])
           end as ix, otel_attr(a, k) as v
    from (select *, unnest(map_keys(a)) as k from _ot_steps where role = 'model')
    where regexp_matches(k, '^(llm\.output_messages|gen_ai\.completion)\.\d+\.(message\.)?tool_calls\.')
),
calls as (
    select file_no, run_id, idx, scope, request_parameters, 0 as source, pos, part ->> 'id' as call_id,
           part ->> 'name' as tool_name, json_unquoted(part -> 'arguments') as args
    from parts
    union all
    select file_no, run_id, idx, any_value(scope), any_value(request_parameters), 1,
           100000 * ix.m::bigint + ix.k::bigint, max(v) filter (where ix.field = 'id'), max(v) filter (where ix.field = 'name'),
           json_or_text(max(v) filter (where ix.field = 'arguments'))
    from flat where nullif(ix.field, '') is not null
    group by file_no, run_id, idx, ix.m, ix.k
)
select file_no, run_id, idx as step_idx, row_number() over (partition by file_no, run_id, idx order by source, pos) as n,
       call_id, tool_name, args, output_tool(scope, request_parameters, tool_name) as is_output
from calls;

-- Which call each tool span ran. By its own call id (gen_ai.tool.call.id; a ToolMessage's tool_call_id) where that
-- is an id the model asked for; else, in order, the calls of its name the latest model call before it asked for
-- (a LangChain tool that raised writes no output, so no id). A tool span that answers no asked call is a call of its
-- own, asked by that latest model call.
create or replace temp table _ot_pairs as
with tools as (
    select t.file_no, t.run_id, t.idx, t.start_ns, t.tool_name, t.own_call_id, t.own_arguments, t.span_id,
           m.idx as asker
    from (select * from _ot_steps where role = 'tool') t
    asof left join (select file_no, run_id, start_ns, idx from _ot_steps where role = 'model') m
        on t.file_no = m.file_no and t.run_id = m.run_id and t.start_ns >= m.start_ns
),
asked as (select * from _ot_asked where not is_output),
by_id as (
    select t.file_no, t.run_id, t.idx, q.step_idx, q.n
    from tools t join asked q on q.file_no = t.file_no and q.run_id = t.run_id and q.call_id = t.own_call_id
    qualify row_number() over (partition by t.file_no, t.run_id, t.idx order by q.step_idx, q.n) = 1
),
tools_left as (
    select t.*, row_number() over (partition by t.file_no, t.run_id, t.asker, t.tool_name order by t.start_ns, t.idx) as k
    from tools t anti join by_id b using (file_no, run_id, idx)
),
asked_left as (
    select q.*, row_number() over (partition by q.file_no, q.run_id, q.step_idx, q.tool_name order by q.n) as k
    from asked q anti join by_id b using (file_no, run_id, step_idx, n)
),
by_order as (
    select t.file_no, t.run_id, t.idx, q.step_idx, q.n
    from tools_left t join asked_left q on q.file_no = t.file_no and q.run_id = t.run_id and q.step_idx = t.asker
                                        and q.tool_name = t.tool_name and q.k = t.k
)
select t.file_no, t.run_id, t.idx, coalesce(b.step_idx, o.step_idx) as step_idx, coalesce(b.n, o.n) as n, t.asker,
       t.own_call_id, t.span_id, t.tool_name, t.own_arguments
from tools t
left join by_id b using (file_no, run_id, idx)
left join by_order o using (file_no, run_id, idx);

-- The calls: those the model calls asked for — a call the model gave no id is named by the tool span that ran it (its
-- id, else its span id), else by its model span and position — and a call of its own for each tool span that
-- answers none. tool_idx: the tool step that ran the call.
create or replace temp table _ot_calls as
select q.file_no, q.run_id, q.step_idx, 0 as source, q.n,
       coalesce(q.call_id, p.own_call_id, p.span_id, m.span_id || '#' || q.n) as call_id, q.tool_name, q.args,
       p.idx as tool_idx
from (select * from _ot_asked where not is_output) q
left join (select * from _ot_pairs where step_idx is not null
           qualify row_number() over (partition by file_no, run_id, step_idx, n order by idx) = 1) p
    using (file_no, run_id, step_idx, n)
join _ot_steps m on m.file_no = q.file_no and m.run_id = q.run_id and m.idx = q.step_idx
union all
select file_no, run_id, asker, 1, idx, coalesce(own_call_id, span_id), tool_name, json_or_text(own_arguments), idx
from _ot_pairs where step_idx is null;

-- Each tool step's call id: the call it ran.
create or replace temp table _ot_tool_calls as
select p.file_no, p.run_id, p.idx, c.call_id
from _ot_pairs p
join _ot_calls c on c.file_no = p.file_no and c.run_id = p.run_id
                and ((p.step_idx is not null and c.source = 0 and c.step_idx = p.step_idx and c.n = p.n)
                     or (p.step_idx is null and c.source = 1 and c.tool_idx = p.idx));

create or replace temp table _stage_calls as
select file_no, run_id, step_idx,
       row_number() over (partition by file_no, run_id, step_idx order by source, n) - 1 as call_position,
       call_id, tool_name, args
from _ot_calls;

-- A model call's text: the text parts of its output messages (GenAI gen_ai.output.messages; OpenInference
-- llm.output_messages.M.message.content or .contents.C.message_content.text; OpenLLMetry gen_ai.completion.M.content;
-- the old single gen_ai.completion). Output messages are opt-in: without them the text is unknown. A call whose
-- output is an output tool's call (pydantic-ai's structured output) gave that call's arguments as its text.
create or replace temp table _ot_texts as
with flat as (
    select file_no, run_id, idx, otel_attr(a, k) as text,
           regexp_extract(k, '^(?:llm\.output_messages|gen_ai\.completion)\.(\d+)\.', 1)::bigint as m,
           coalesce(try_cast(regexp_extract(k, '\.contents\.(\d+)\.', 1) as bigint), 0) as c
    from (select *, unnest(map_keys(a)) as k from _ot_steps where role = 'model')
    where regexp_full_match(k, 'llm\.output_messages\.\d+\.message\.(content|contents\.\d+\.message_content\.text)'
                               || '|gen_ai\.completion\.\d+\.content')
),
genai as (
    select file_no, run_id, idx,
           nullif(array_to_string(list_filter(list_transform(json_extract(out_messages, '$[*].parts[*]'),
                                                             lambda p: case when p ->> 'type' = 'text' then p ->> 'content' end),
                                              lambda t: t is not null)
                                  || list_filter(list_transform(json_extract(out_messages, '$[*].content'),
                                                                lambda c: content_text(c)), lambda t: t is not null), ''), '')
               as text
    from _ot_steps where role = 'model' and out_messages is not null
),
answered as (
    select file_no, run_id, step_idx as idx, string_agg(args::varchar, chr(10) order by n) as text
    from _ot_asked where is_output group by all
)
select s.file_no, s.run_id, s.idx,
       coalesce(g.text, f.text, otel_attr(s.a, 'gen_ai.completion'), o.text) as text
from (select * from _ot_steps where role = 'model') s
left join genai g using (file_no, run_id, idx)
left join (select file_no, run_id, idx, nullif(string_agg(text, '' order by m, c), '') as text from flat group by all) f
    using (file_no, run_id, idx)
left join answered o using (file_no, run_id, idx);

-- The answer: only a run that succeeded has one. Its step is its last model call when no tool ran after it and it
-- asked for none (a run stopped before its last requested tool ran has no tool call as its answer).
create or replace temp table _ot_final as
with last_tool as (select file_no, run_id, max(idx) as idx from _ot_steps where role = 'tool' group by all),
last_model as (select file_no, run_id, max(idx) as idx from _ot_steps where role = 'model' group by all)
select m.file_no, m.run_id, m.idx
from last_model m
join _ot_run_status st using (file_no, run_id)
left join last_tool t using (file_no, run_id)
where st.status = 'succeeded' and m.idx > coalesce(t.idx, -1)
  and not exists (select 1 from _ot_asked q where q.file_no = m.file_no and q.run_id = m.run_id and q.step_idx = m.idx
                  and not q.is_output);

-- A run a limit stopped after a model call asked for tools: those calls were never run (no tool span ran them), which
-- is not a lost result but the framework's choice: each is a not_run tool step after that call.
create or replace temp table _ot_not_run as
select c.file_no, c.run_id, c.call_id, c.tool_name, st.stop_reason,
       l.idx + row_number() over (partition by c.file_no, c.run_id order by c.n) as idx
from _ot_calls c
join _ot_run_status st using (file_no, run_id)
join (select file_no, run_id, max(idx) as idx, max(idx) filter (where role = 'model') as last_model
      from _ot_steps group by all) l using (file_no, run_id)
where st.status = 'budget_exceeded' and c.source = 0 and c.tool_idx is null and c.step_idx = l.last_model;

create or replace temp table _stage_steps as
-- No step names its line: a run is loaded whole or not at all, so a value the landing's guard refuses (a count beyond
-- its range, arguments nested too deep) rejects the run's line(s) and the whole run, never a step of it; a finding
-- on a step points at its run's first line.
select s.file_no, s.run_id, s.idx::integer as idx, s.role as kind, s.started_at, s.ms,
       case when s.errored then s.error_text end as error,
       -- the thread of a model call, where a run's calls are in more than one (no_silent_truncation reads it)
       case when s.role = 'model' and (min(s.thread) over w <> max(s.thread) over w
                                       or count(s.thread) over w between 1 and count(*) over w - 1)
            then s.thread end as agent_label,
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
       case when s.role = 'model' then f.idx is not null end as is_final,
       case when s.role = 'model' then left(x.text, 4000) end as output_text,
       case when s.role = 'model' then sha256(x.text) end as output_sha256,
       case when s.role = 'model' then case when s.input_all >= coalesce(s.cached, 0) + coalesce(s.written, 0)
            then s.input_all else s.input_all + coalesce(s.cached, 0) + coalesce(s.written, 0) end end as context_tokens,
       case when s.role = 'tool' then s.tool_name end as tool_name,
       case when s.role = 'tool' then c.call_id end as call_id,
       case when s.role = 'tool' then case when s.errored or s.result_error then 'error' else 'ok' end end as tool_status,
       case when s.role = 'tool' then s.result end as result_text
from _ot_steps s
left join _ot_final f using (file_no, run_id, idx)
left join _ot_texts x using (file_no, run_id, idx)
left join _ot_tool_calls c using (file_no, run_id, idx)
window w as (partition by s.file_no, s.run_id, s.role)
union all by name
select file_no, run_id, idx::integer as idx, 'tool' as kind, tool_name, call_id, 'not_run' as tool_status,
       'not run: ' || coalesce(split_part(stop_reason, ':', 1), 'a limit') || ' stopped the run after the call that asked for it'
           as error
from _ot_not_run;

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

-- The answer a run gave: what the framework returned (_ot_run_status), else, for a run that succeeded, the text of
-- its final model call.
create or replace temp table _stage_runs as
with per_run as (
    select file_no, run_id, any_value(agent_span) as agent_span, min(start_ts) as start_ts,
           max(end_ts) as end_ts, any_value(service) as service, min(line_no) as line_no,
           -- no catalogue size is recorded: estimated from gen_ai.tool.definitions (see docs/costs.md)
           max(ceil(octet_length(encode(otel_attr(a, 'gen_ai.tool.definitions'))) / 4))
               filter (where role = 'model') as catalogue_tokens
    from _ot_loaded group by file_no, run_id
),
models as (
    select file_no, run_id, arg_max(model, [(error is null)::int, idx]) filter (where model is not null) as model,
           arg_max(provider, [(error is null)::int, idx]) filter (where provider is not null) as provider
    from _stage_steps where kind = 'model' group by all
),
answers as (
    select st.file_no, st.run_id,
           coalesce(st.answer, (select any_value(x.text) from _ot_final f join _ot_texts x using (file_no, run_id, idx)
                                where f.file_no = st.file_no and f.run_id = st.run_id)) as answer
    from _ot_run_status st
)
select p.file_no, p.run_id, p.line_no as source_line,
       coalesce(otel_attr(root.a, 'gen_ai.agent.name'), case when root.oi_kind = 'AGENT' then root.name end, p.service,
                'otel') as agent,
       m.model, m.provider,
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
       -- the run starts at its earliest span (its root's start), and ends with its root
       least(root.start_ts, p.start_ts) as started_at,
       case when st.status <> 'running' then coalesce(root.end_ts, p.end_ts) end as ended_at,
       st.status,
       -- the root's end is the framework's outcome; a run whose root has not ended (or is not here) is inferred running
       root.record_no is null or root.end_ns is null as status_inferred,
       st.stop_reason,
       a.answer as final_output,
       p.catalogue_tokens,
       case when coalesce(otel_attr(root.a, 'gen_ai.conversation.id'), otel_attr(root.a, 'session.id')) is not null
            then json_object('conversation_id', coalesce(otel_attr(root.a, 'gen_ai.conversation.id'),
                                                         otel_attr(root.a, 'session.id'))) end as labels,
       -- a run whose agent span runs under another run's span (a sub-agent delegated inside a tool) is its child
       (select any_value(pr.run_id) from _ot_ok ps join _ot_runs pr using (file_no, record_no)
        where p.agent_span is not null and ps.file_no = p.file_no and ps.trace_id = root.trace_id
          and ps.span_id = root.parent_id
          and exists (select 1 from per_run q where q.file_no = p.file_no and q.run_id = pr.run_id)) as parent_run_id
from per_run p
join _ot_run_status st using (file_no, run_id)
left join _ot_ok root on root.file_no = st.file_no and root.record_no = st.root_record
left join models m using (file_no, run_id)
left join answers a using (file_no, run_id);

-- Where the next tail read may go on from: a trace's lines are a span no resume line cuts, open until its root span
-- (the one with no parent, exported when it ends, after every span under it) and one of its runs are in the file —
-- so every trace before the resume line left runs, which a late span of it in a tail meets (_tail_conflicts).
create or replace temp table _tail_spans as
select o.file_no, min(o.line_no) as first,
       case when bool_or(o.parent_id is null)
                 and exists (select 1 from _ot_runs r join _stage_runs s using (file_no, run_id)
                             where r.file_no = o.file_no and r.trace_id = o.trace_id)
            then max(o.line_no) end as last
from _ot_ok o group by o.file_no, o.trace_id;

create or replace temp table _tail_caps as
select e.file_no, least(e.end_line + 1, (select min(first) from _tail_spans c where c.file_no = e.file_no and c.last is null))
           as cap
from file_ends() e;

-- What a tail read cannot go on from (the file is then read whole): a span of a trace whose runs are kept from before
-- the line it was read from.
create or replace temp table _tail_conflicts as
select o.file_no, min(o.line_no) as line, 'holds a span of trace ' || left(o.trace_id, 40)
       || ', whose runs were read before the line it was read from' as reason
from _ot_ok o join _files f using (file_no)
where f.first_line > 1 and exists (select 1 from runs k where k.source_file = f.path and k.source_line < f.first_line
                                   and split_part(k.run_id, '/', 1) = o.trace_id)
group by o.file_no, o.trace_id;
