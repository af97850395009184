-- Staging for Langfuse trace exports. Input: _doc(file_no, j), one export per file.

create or replace temp table _lf_runs as
select d.file_no, coalesce(d.j ->> '$.trace.id', f.stem) as run_id, d.j -> 'trace' as trace
from _doc d join _files f using (file_no);

-- A JSON value as an object or an array: as it is, or parsed from the JSON text a string holds (Langfuse keeps many
-- inputs and outputs as JSON text); NULL for anything else.
create or replace temp macro _lf_json(v) as
    case when json_type(v) in ('OBJECT', 'ARRAY') then v
         when json_type(v) = 'VARCHAR' then
             case when json_valid(v ->> '$') then
                 case when json_type((v ->> '$')::json) in ('OBJECT', 'ARRAY') then (v ->> '$')::json end end end;

-- A call's arguments as JSON: JSON text (OpenAI's "arguments") parsed, any other value as it is.
create or replace temp macro _lf_args(v) as
    case when json_type(v) = 'VARCHAR' and json_valid(v ->> '$') then (v ->> '$')::json else v end;

-- A provider as the instrumentation named it, by the provider ids reconcile prices by: the OTel GenAI names
-- (gcp.vertex_ai, gcp.gemini, aws.bedrock, azure.ai.openai, x_ai, mistral_ai), the Vercel AI SDK's
-- (openai.responses, anthropic.messages, google.generative-ai), pydantic-ai's (google-gla, google-vertex);
-- any other name as written, in lower case.
create or replace temp macro _lf_provider(v) as
    case when nullif(trim(v), '') is null then null
         when lower(trim(v)) = 'openai' or starts_with(lower(trim(v)), 'openai.') then 'openai'
         when lower(trim(v)) = 'anthropic' or starts_with(lower(trim(v)), 'anthropic.') then 'anthropic'
         when lower(trim(v)) in ('google', 'gemini', 'vertex_ai', 'vertexai') or starts_with(lower(trim(v)), 'google.')
              or starts_with(lower(trim(v)), 'google-') or starts_with(lower(trim(v)), 'gcp.') then 'google'
         when lower(trim(v)) = 'azure' or starts_with(lower(trim(v)), 'azure.') then 'azure'
         when lower(trim(v)) in ('aws.bedrock', 'bedrock') then 'aws'
         when lower(trim(v)) = 'mistral_ai' then 'mistral'
         when lower(trim(v)) = 'x_ai' then 'x-ai'
         else lower(trim(v)) end;

-- attrs: the OTel attributes the instrumentation recorded, which Langfuse keeps in the metadata (a JSON string)
-- has_usage: the observation carries usage (Langfuse's usageDetails); a GENERATION with neither usage, input nor
-- output is an event of a call (BeeAI's finish and success markers), not a call
-- out: the output as JSON, where it is an object or an array (or JSON text of one)
create or replace temp table _lf as
select *, (o.type = 'GENERATION' and (has_usage or coalesce(o.input::varchar, 'null') not in ('null', '""')
                                      or coalesce(o.output::varchar, 'null') not in ('null', '""')))
          or (coalesce(o.type, '') <> 'TOOL' and has_usage) as is_model,
       -- usage that came with the observation has the instrumentation's token counts among its OTel attributes (or
       -- was passed by the Langfuse SDK itself, which records no attributes); an observation of an OTel
       -- instrumentation with none has usage Langfuse inferred from the text with its own tokenizer: unknown
       coalesce(has_usage and json_type(attrs) = 'OBJECT'
                and len(list_filter(json_keys(attrs),
                                    lambda k: regexp_matches(k, '^(gen_ai\.usage\.|llm\.token_count\.|ai\.usage\.)'))) = 0,
                false) as usage_inferred,
       _lf_json(o.output) as out,
       md ->> '$.scope.name' as scope
from (select *, md -> 'attributes' as attrs
      from (select *, json_type(o.usageDetails) = 'OBJECT' and len(json_keys(o.usageDetails)) > 0 as has_usage,
                   case when json_type(o.metadata) = 'VARCHAR' and json_valid(o.metadata ->> '$') then (o.metadata ->> '$')::json
                        when json_type(o.metadata) = 'OBJECT' then o.metadata end as md
from (select file_no, position + 1 as record_no, raw,
             json_transform(raw, '{"id": "VARCHAR", "type": "VARCHAR", "name": "VARCHAR", "parentObservationId": "VARCHAR",
                                   "startTime": "VARCHAR", "endTime": "VARCHAR", "model": "VARCHAR", "level": "VARCHAR",
                                   "statusMessage": "VARCHAR", "usageDetails": "JSON", "costDetails": "JSON",
                                   "input": "JSON", "output": "JSON", "toolDefinitions": "JSON",
                                   "metadata": "JSON"}') as o
      from (select file_no, unnest(observations) as raw, generate_subscripts(observations, 1) as position
            from (select file_no, (j -> 'observations')::json[] as observations from _doc)))));

-- Every observation's ancestors, nearest first (depth 0 is its parent).
create or replace temp table _lf_anc as
with recursive up(file_no, record_no, ancestor, depth) as (
    select file_no, record_no, o.parentObservationId, 0 from _lf where o.parentObservationId is not null
    union all
    select up.file_no, up.record_no, p.o.parentObservationId, up.depth + 1
    from up join _lf p on p.file_no = up.file_no and p.o.id = up.ancestor
    where p.o.parentObservationId is not null and up.depth < 64
)
select up.file_no, up.record_no, l.record_no as anc, min(up.depth) as depth
from up join _lf l on l.file_no = up.file_no and l.o.id = up.ancestor
group by all;

-- A model observation with another under it (a framework's wrapper: agno's OpenAIChat.invoke around the SDK's
-- generation, the Vercel AI SDK's ai.generateText around its doGenerate, an agent span that sums its calls) re-reports
-- the calls under it: the provider call is the innermost, and the wrapper is structure.
create or replace temp table _lf_wrappers as
select distinct a.file_no, a.anc as record_no
from _lf_anc a join _lf l using (file_no, record_no) join _lf w on w.file_no = a.file_no and w.record_no = a.anc
where l.is_model and w.is_model;

alter table _lf add column wrapper boolean default false;
update _lf set wrapper = true, is_model = false from _lf_wrappers w
where _lf.file_no = w.file_no and _lf.record_no = w.record_no;

-- Why an observation is rejected (NULL: it is not).
create or replace temp table _lf as
select *, case
          when o.id is null then 'observation has no "id"'
          when o.type is null then 'observation ' || o.id || ' has no "type"'
          when staged_timestamp(o.startTime) is null
              then 'observation ' || o.id || ': "startTime" is ' || coalesce(o.startTime, 'missing')
          when not in_window(staged_timestamp(o.startTime))
              then 'observation ' || o.id || ': "startTime" is ' || o.startTime || '; expected a time ' || window_text()
          when o.endTime is not null and not coalesce(in_window(staged_timestamp(o.endTime)), false)
              then 'observation ' || o.id || ': "endTime" is ' || o.endTime || '; expected a time ' || window_text()
          when o.usageDetails is not null and json_type(o.usageDetails) <> 'OBJECT'
              then 'observation ' || o.id || ': "usageDetails" is not an object'
          when o.usageDetails is not null and not list_bool_and(list_transform(json_keys(o.usageDetails),
                  lambda k: json_type(o.usageDetails, '$."' || k || '"') in ('BIGINT', 'UBIGINT', 'DOUBLE', 'NULL')))
              then 'observation ' || o.id || ': a "usageDetails" value is not a number'
          when o.usageDetails is not null and list_count(list_filter(json_keys(o.usageDetails),
                  lambda k: try_cast(json_extract_string(o.usageDetails, '$."' || k || '"') as double) < 0)) > 0
              then 'observation ' || o.id || ': "usageDetails" ' || list_transform(list_filter(json_keys(o.usageDetails),
                  lambda k: try_cast(json_extract_string(o.usageDetails, '$."' || k || '"') as double) < 0),
                  lambda k: '"' || k || '" is ' || json_extract_string(o.usageDetails, '$."' || k || '"'))[1]
                  || '; expected a count of 0 or more'
          -- prompt_details.cache_read is the part of "input" that was cached: more than the input is no split of it
          when try_cast(o.usageDetails ->> '$."prompt_details.cache_read"' as double)
                   > try_cast(o.usageDetails ->> 'input' as double)
              then 'observation ' || o.id || ': "usageDetails" "prompt_details.cache_read" is '
                  || (o.usageDetails ->> '$."prompt_details.cache_read"') || ', more than its "input" ('
                  || (o.usageDetails ->> 'input') || '), which includes it'
      end as reason,
      staged_timestamp(o.startTime) as start,
      -- a tool's run, as the instrumentation marks it: a TOOL observation, or a span of a tool (OpenInference
      -- span kind TOOL, GenAI gen_ai.tool.name or execute_tool, the Vercel AI SDK's ai.toolCall) — except BeeAI's,
      -- whose tool spans are events of a run (read from its agent.react spans, below)
      not is_model and not wrapper and (o.type = 'TOOL' or coalesce(scope, '') <> 'openinference.instrumentation.beeai'
          and (attrs ->> '$."openinference.span.kind"' = 'TOOL' or attrs ->> '$."gen_ai.tool.name"' is not null
               or attrs ->> '$."gen_ai.operation.name"' = 'execute_tool' or attrs ->> '$."ai.toolCall.name"' is not null
               or tool_message is not null)) as is_tool
from (select *,
             -- LangChain records a tool's run as a span whose output is the ToolMessage it returned (as a message,
             -- or serialised: {"lc": 1, "id": [..., "ToolMessage"], "kwargs": {...}})
             case when out ->> 'type' = 'tool' and out ->> 'tool_call_id' is not null then out
                  when out ->> '$.kwargs.tool_call_id' is not null
                       and list_contains(json_extract_string(out, '$.id[*]'), 'ToolMessage') then out -> 'kwargs'
             end as tool_message
      from _lf);

-- The Claude Agent SDK, as LangSmith's integration records it, writes one observation ("claude.assistant.turn") per
-- content block of a response: the blocks before the next tool ran are one response, one model call (its first
-- block's observation; the others are folded into it).
create or replace temp table _lf_blocks as
with turns as (
    select l.file_no, l.record_no, l.start, l.o.parentObservationId as parent, count(t.record_no) as tools_before
    from _lf l left join _lf t on t.file_no = l.file_no and t.is_tool and t.reason is null and t.start <= l.start
    where l.is_model and l.reason is null and l.o.name = 'claude.assistant.turn'
    group by all
)
select file_no, record_no,
       first(record_no order by start, record_no) over (partition by file_no, parent, tools_before) as head
from turns;

alter table _lf add column block_of integer;
update _lf set block_of = b.head, is_model = false from _lf_blocks b
where _lf.file_no = b.file_no and _lf.record_no = b.record_no and b.head <> b.record_no;

-- The tool runs. A tool observation is one run; one under another naming the same call id (gen_ai.tool.call.id,
-- ai.toolCall.id, the ToolMessage's tool_call_id) is a record of that run. BeeAI's ReAct agent records each call on
-- its agent.react spans (tool.name and tool.parameters, then the result as their output), several spans a call:
-- the spans of one iteration naming the same tool and parameters are one run, begun by the first, its result the
-- first output.
create or replace temp table _lf_tool_obs as
with ids as (
    select file_no, record_no, start, coalesce(attrs ->> '$."gen_ai.tool.call.id"', attrs ->> '$."ai.toolCall.id"',
                                               tool_message ->> 'tool_call_id') as recorded_id
    from _lf where is_tool and reason is null
),
-- a tool observation under another of the same call id: a record of that run (its outermost)
nested as (
    select l.file_no, l.record_no, arg_max(h.record_no, a.depth) as head
    from ids l join _lf_anc a using (file_no, record_no)
    join ids h on h.file_no = a.file_no and h.record_no = a.anc and h.recorded_id = l.recorded_id
    group by all
)
select file_no, record_no, start, key, recorded_id, name, args, result, status, finish, members
from (select l.file_no, l.record_no, l.start, i.recorded_id, coalesce(i.recorded_id, l.o.id) as key,
             -- the tool's name as the instrumentation gave it; the observation's name may be a label
             -- ("execute_tool say_hello", "running tool: get_pun_suggestion", "tool.ByeTool")
             coalesce(l.attrs ->> '$."gen_ai.tool.name"', l.attrs ->> '$."tool.name"', l.attrs ->> '$."ai.toolCall.name"',
                      l.tool_message ->> 'name', l.o.name) as name,
             -- LangChain's tool span records its input as the tool got it (Python's repr of a dict, at times):
             -- JSON only, else the call's arguments stand
             case when l.tool_message is not null then _lf_json(l.o.input) else _lf_args(l.o.input) end as args,
             case when l.tool_message is not null
                  then case when json_type(l.tool_message, '$.content') = 'VARCHAR' then l.tool_message ->> 'content'
                            else (l.tool_message -> 'content')::varchar end
                  when json_type(l.o.output) = 'VARCHAR' then l.o.output ->> '$' else l.o.output::varchar end as result,
             -- a run without an end time has no result yet
             case when l.o.level = 'ERROR' or l.tool_message ->> 'status' = 'error' then 'error'
                  when l.o.endTime is null then 'started' else 'ok' end as status,
             staged_timestamp(l.o.endTime) as finish,
             [l.record_no] || coalesce(m.records, []) as members
      from _lf l join ids i using (file_no, record_no)
      left join (select file_no, head, list(record_no) as records from nested group by all) m
          on m.file_no = l.file_no and m.head = l.record_no
      where not exists (select 1 from nested n where n.file_no = l.file_no and n.record_no = l.record_no))
union all by name
select file_no, arg_min(record_no, (start, record_no)) as record_no, min(start) as start, null as recorded_id,
       arg_min(o.id, (start, record_no)) as key, name, _lf_args(any_value(params)) as args,
       arg_min(result, (start, record_no)) filter (where result is not null) as result,
       case when bool_or(o.level = 'ERROR') then 'error' when count(result) = 0 then 'started' else 'ok' end as status,
       min(start) filter (where result is not null) as finish, list(record_no) as members
from (select l.*, l.attrs ->> '$."tool.name"' as name, l.attrs -> '$."tool.parameters"' as params,
             case when json_type(l.o.output) = 'VARCHAR' then l.o.output ->> '$'
                  when coalesce(l.o.output::varchar, 'null') <> 'null' then l.o.output::varchar end as result
      from _lf l
      where l.reason is null and l.scope = 'openinference.instrumentation.beeai'
        and l.attrs ->> '$."openinference.span.kind"' = 'AGENT' and l.attrs ->> '$."tool.name"' is not null
        and coalesce(l.attrs ->> '$."tool.parameters"', 'null') not in ('null', ''))
group by file_no, o.parentObservationId, name, params::varchar;

-- The records folded into another: a content block into its response's first, a tool run's other records.
create or replace temp table _lf_folded as
select l.file_no, l.record_no, 'a content block of the response observation ' || h.o.id
       || ' begins (the Claude Agent SDK records one observation per block): one model call with it' as note
from _lf l join _lf h on h.file_no = l.file_no and h.record_no = l.block_of
union all
select t.file_no, t.member, 'a record of the tool run observation ' || h.o.id || ' begins'
from (select file_no, record_no, unnest(members) as member from _lf_tool_obs) t
join _lf h on h.file_no = t.file_no and h.record_no = t.record_no
where t.member <> t.record_no;

-- The trace's own record: a timestamp it gives must be a time in the window (else the record is rejected
-- and the run starts with its first observation).
create or replace temp table _stage_records as
select r.file_no, 1 as record_no, r.trace::varchar as raw,
       case when bad_time then 'reject' else 'load' end as decision,
       case when bad_time then 'trace "timestamp" is ' || (r.trace ->> 'timestamp') || '; expected an RFC 3339 time '
                               || window_text() end as note,
       r.run_id
from (select *, r.trace ->> 'timestamp' is not null
                and not coalesce(in_window(staged_timestamp(r.trace ->> 'timestamp')), false) as bad_time
      from _lf_runs r) r
union all
select l.file_no, l.record_no, l.raw::varchar,
       case when l.reason is not null then 'reject' when l.is_model or t.record_no is not null then 'load' else 'skip' end,
       coalesce(l.reason, case when l.is_model or t.record_no is not null then null
                               when l.wrapper then 'wraps the model call(s) under it (its usage re-reports theirs), not a call'
                               when f.note is not null then f.note
                               else 'structure, not a step (' || coalesce(l.o.type, '?') || ')' end),
       r.run_id
from _lf l join _lf_runs r using (file_no)
left join _lf_tool_obs t on t.file_no = l.file_no and t.record_no = l.record_no
left join (select file_no, record_no, min(note) as note from _lf_folded group by all) f
    on f.file_no = l.file_no and f.record_no = l.record_no;

-- The steps: the model calls and the tool runs, in start-time order. A call's content blocks end with its last.
create or replace temp table _lf_steps as
with blocks as (
    select l.block_of as record_no, l.file_no,
           sum(staged_micros(l.o.costDetails ->> 'total')) as cost,
           bool_and(l.has_usage and not l.usage_inferred) as usage_known,
           arg_max(l.o.usageDetails, (l.start, l.record_no)) as last_usage, max(l.start) as last_start
    from _lf l where l.block_of is not null group by all
)
select row_number() over (partition by l.file_no order by l.start, l.record_no) - 1 as idx, l.file_no, r.run_id,
       l.record_no, l.o, l.is_model, l.start, l.attrs, l.md,
       -- a response recorded block by block ended when its last block came: each block's observation ends only
       -- when the next message comes (the last one's after the tools it asked for had run)
       case when t.record_no is not null then coalesce(t.finish, l.start)
            else greatest(coalesce(staged_timestamp(l.o.endTime), l.start), b.last_start) end as finish,
       -- a response recorded block by block repeats its usage on each block, the last complete (as Claude Code does):
       -- its usage is the last block's, known where every block's is
       case when b.record_no is null then case when l.has_usage and not l.usage_inferred then l.o.usageDetails end
            when l.has_usage and not l.usage_inferred and b.usage_known then b.last_usage end as u,
       -- what Langfuse priced each of its observations at, summed
       case when b.cost is null then staged_micros(l.o.costDetails ->> 'total')
            else coalesce(staged_micros(l.o.costDetails ->> 'total'), 0) + b.cost end as harness_cost,
       coalesce(p.o.name, 'trace') as thread,
       case when json_type(l.o.output) = 'VARCHAR' then l.o.output ->> '$' else l.o.output::varchar end as raw_text,
       t.key as tool_key, t.recorded_id, t.name as tool_name, t.args as tool_args, t.result, t.status
from _lf l join _stage_records d using (file_no, record_no) join _lf_runs r using (file_no)
left join _lf_tool_obs t on t.file_no = l.file_no and t.record_no = l.record_no
left join blocks b on b.file_no = l.file_no and b.record_no = l.record_no
left join _lf p on p.file_no = l.file_no and p.o.id = l.o.parentObservationId
where d.decision = 'load';

-- The outputs read for a call's text and tool calls, and the step each belongs to: a model call its own, a content
-- block its response's first block, a wrapper the last call under it (for the tool calls only its output records:
-- agno's OpenAIChat.invoke around a generation that records no output).
create or replace temp table _lf_readers as
select file_no, record_no, record_no as owner, 0 as via from _lf_steps where is_model
union all
select l.file_no, l.record_no, l.block_of, 1 from _lf l join _lf_steps s on s.file_no = l.file_no and s.record_no = l.block_of
union all
select a.file_no, a.anc, arg_max(s.record_no, (s.start, s.record_no)), 2
from _lf_anc a join _lf w on w.file_no = a.file_no and w.record_no = a.anc
join _lf_steps s on s.file_no = a.file_no and s.record_no = a.record_no
where w.wrapper and w.reason is null and s.is_model
group by all;

-- What each output says, item by item: its assistant messages (the output itself as a message; a list of messages;
-- OpenAI's choices[0].message; Gemini's candidates[0].content, or its {"content": {"parts": …}}; the items of an
-- OpenAI Responses object's output; a gen_ai.choice event's message), and in each message its content blocks
-- (Anthropic's text and tool_use, the Responses' output_text), its parts (OTel GenAI text and tool_call parts,
-- Gemini's text and function_call parts, a thought part left out), its tool_calls (OpenAI; LangChain's
-- additional_kwargs), the calls Koog writes as JSON text in the content of a message that finished on tool_calls,
-- and the message's own text content. A tool call of a pydantic-ai output tool (model_request_parameters.output_tools,
-- e.g. final_result) is the structured answer, its arguments the text: pydantic-ai ends the run on it and runs no tool.
create or replace temp table _lf_items as
with outs as (
    select r.file_no, r.record_no, r.owner, r.via, l.out, l.start,
           coalesce(json_extract_string(_lf_json(l.attrs -> '$.model_request_parameters'), '$.output_tools[*].name'),
                    []) as output_tools
    from _lf_readers r join _lf l using (file_no, record_no) where l.out is not null
),
messages as (
    select * exclude (ms), unnest(ms) as m, unnest(range(len(ms))) as m_pos
    from (select *, case when json_type(out) = 'ARRAY' then json_extract(out, '$[*]')
                         when json_type(out, '$.choices') = 'ARRAY' then [out -> '$.choices[0].message']
                         when json_type(out, '$.candidates') = 'ARRAY' then [out -> '$.candidates[0].content']
                         when json_type(out, '$.output') = 'ARRAY' then json_extract(out, '$.output[*]')
                         when json_type(out, '$.message') = 'OBJECT' then [out -> '$.message']
                         when json_type(out, '$.content') = 'OBJECT' then [out -> '$.content']
                         else [out] end as ms
          from outs)
),
items as (
    select * exclude (its), unnest(its) as it, unnest(range(len(its))) as it_pos
    from (select *, list_transform(json_extract(m, '$.content[*]') || json_extract(m, '$.parts[*]')
                                   || json_extract(m, '$.tool_calls[*]') || json_extract(m, '$.additional_kwargs.tool_calls[*]')
                                   || case when m ->> 'finish_reason' = 'tool_calls'
                                           then coalesce(json_extract(_lf_json(m -> '$.content'), '$[*]'), []::json[])
                                           else []::json[] end,
                                   lambda x: {'v': x, 'own': false}) || [{'v': m, 'own': true}] as its
          from messages where json_type(m) = 'OBJECT' and coalesce(m ->> 'role', 'assistant') in ('assistant', 'model'))
),
kinds as (
    select *, it.v as v, case
        when json_type(it.v) <> 'OBJECT' then null
        when it.v ->> 'type' in ('tool_use', 'tool_call', 'function_call') and it.v ->> 'name' is not null
             or it.v ->> 'toolCallId' is not null and it.v ->> 'toolName' is not null
             or it.v ->> '$.function.name' is not null
             or coalesce(it.v ->> '$.function_call.name', it.v ->> '$.functionCall.name') is not null then 'call'
        when it.own then case when json_type(it.v, '$.content') = 'VARCHAR'
                                   and coalesce(it.v ->> 'finish_reason', '') <> 'tool_calls' then 'text' end
        when it.v ->> 'type' in ('text', 'output_text') and json_type(it.v, '$.text') = 'VARCHAR' then 'text'
        when it.v ->> 'type' = 'text' and json_type(it.v, '$.content') = 'VARCHAR' then 'text'
        when it.v ->> 'type' is null and json_type(it.v, '$.text') = 'VARCHAR'
             and coalesce(it.v ->> 'thought', 'false') <> 'true' then 'text'
    end as kind
    from items
)
select file_no, record_no, owner, via, start, m_pos, it_pos,
       case when kind = 'call' and list_contains(output_tools, name) then 'answer' else kind end as kind,
       case when kind = 'text' then case when it.own or coalesce(json_type(v, '$.text'), '') <> 'VARCHAR'
                                         then v ->> 'content'
                                         else v ->> 'text' end
            when kind = 'call' and list_contains(output_tools, name)
            then case when json_type(args) = 'VARCHAR' then args ->> '$' else args::varchar end end as text,
       call_id, name, args
from (select *,
             case when v ->> 'type' = 'function_call' then coalesce(v ->> 'call_id', v ->> 'id')
                  else coalesce(v ->> 'toolCallId', v ->> '$.function_call.id', v ->> '$.functionCall.id', v ->> 'id')
             end as call_id,
             coalesce(v ->> '$.function.name', v ->> '$.function_call.name', v ->> '$.functionCall.name',
                      v ->> 'toolName', v ->> 'name') as name,
             _lf_args(coalesce(v -> '$.function.arguments', v -> '$.function_call.args', v -> '$.functionCall.args',
                               v -> 'input', v -> 'arguments', v -> 'args')) as args
      from kinds where kind is not null);

-- Each step's text: its assistant text (a wrapper's aside), else, where its output has no shape read above, the
-- output as written.
create or replace temp table _lf_texts as
select file_no, owner as record_no,
       string_agg(text, chr(10) order by start, record_no, m_pos, it_pos) filter (where kind in ('text', 'answer'))
           as text
from _lf_items where via < 2 group by all;

-- The tool calls the outputs record: every call of a model call's own output; a wrapper's only where it names a
-- call id no call's own output records (once, however many wrappers repeat it). An id may name several calls
-- (Microsoft.Extensions.AI gives a Gemini call its function's name as its id).
create or replace temp table _lf_asked as
with calls as (
    select i.*, s.idx as step_idx, s.start as step_start
    from _lf_items i join _lf_steps s on s.file_no = i.file_no and s.record_no = i.owner
    where i.kind = 'call'
),
kept as (
    select * from calls where via < 2
    union all
    select * from calls w
    where via = 2 and call_id is not null
      and not exists (select 1 from calls c where c.file_no = w.file_no and c.call_id = w.call_id and c.via < 2)
    qualify row_number() over (partition by file_no, call_id order by start, record_no, m_pos, it_pos) = 1
)
select file_no, step_idx, step_start, owner,
       row_number() over (partition by file_no, step_idx order by via, start, record_no, m_pos, it_pos) - 1 as position,
       row_number() over (partition by file_no order by step_idx, via, start, record_no, m_pos, it_pos) as call_no,
       call_id, name, args
from kept;

-- Which call each tool run answers: the call of its recorded id (the n-th call of an id answered by its n-th run),
-- else, not being linked (Langfuse does not link a TOOL observation to the generation that asked for it), the
-- calls and runs of a tool name paired in order (a call asked before its run).
create or replace temp table _lf_answers as
with runs as (select * from _lf_steps where tool_key is not null),
by_id as (
    select t.file_no, t.record_no, a.call_no
    from (select *, row_number() over (partition by file_no, recorded_id order by start, record_no) as k
          from runs where recorded_id is not null) t
    join (select *, row_number() over (partition by file_no, call_id order by call_no) as k
          from _lf_asked where call_id is not null) a
    on a.file_no = t.file_no and a.call_id = t.recorded_id and a.k = t.k
),
open_calls as (
    select a.*, row_number() over (partition by file_no, name order by call_no) as k from _lf_asked a
    where not exists (select 1 from by_id b where b.file_no = a.file_no and b.call_no = a.call_no)
),
open_runs as (
    select t.*, row_number() over (partition by file_no, tool_name order by start, record_no) as k from runs t
    where not exists (select 1 from by_id b where b.file_no = t.file_no and b.record_no = t.record_no)
)
select * from by_id
union all
select t.file_no, t.record_no, a.call_no from open_runs t join open_calls a
on a.file_no = t.file_no and a.name = t.tool_name and a.k = t.k and a.step_start <= t.start;

-- The calls: those the outputs record (id: as recorded, else its run's, else the asking observation's and its
-- place), then a run no recorded call answers, taken as asked by the latest model call that started before it.
create or replace temp table _stage_calls as
select a.file_no, s.run_id, a.step_idx, a.position as call_position,
       coalesce(a.call_id, t.tool_key, s.o.id || '#' || (a.position + 1)) as call_id, a.name as tool_name, a.args
from _lf_asked a join _lf_steps s on s.file_no = a.file_no and s.idx = a.step_idx
left join _lf_answers w on w.file_no = a.file_no and w.call_no = a.call_no
left join _lf_steps t on t.file_no = w.file_no and t.record_no = w.record_no
union all
select t.file_no, t.run_id, g.idx,
       coalesce(n.calls, 0) + row_number() over (partition by t.file_no, g.idx order by t.start, t.record_no) - 1,
       t.tool_key, t.tool_name, t.tool_args
from (select * from _lf_steps where tool_key is not null
      and not exists (select 1 from _lf_answers w where w.file_no = _lf_steps.file_no
                                                   and w.record_no = _lf_steps.record_no)) t
asof left join (select * from _lf_steps where is_model) g on t.file_no = g.file_no and t.start >= g.start
left join (select file_no, step_idx, count(*) as calls from _lf_asked group by all) n
    on n.file_no = t.file_no and n.step_idx = g.idx;

-- Each tool run's call id: its call's.
create or replace temp table _lf_run_calls as
select w.file_no, w.record_no, c.call_id
from _lf_answers w join _lf_asked a using (file_no, call_no)
join _stage_calls c on c.file_no = a.file_no and c.step_idx = a.step_idx and c.call_position = a.position;

-- The provider a model call names (never read off a model's name): its OTel attributes gen_ai.provider.name,
-- gen_ai.system, llm.provider, llm.system, LangChain's metadata ls_provider, the Vercel AI SDK's ai.model.provider;
-- else the nearest generation wrapping it names it (agno's OpenAIChat.invoke: llm.provider).
create or replace temp table _lf_providers as
with named as (
    select file_no, record_no,
           _lf_provider(coalesce(attrs ->> '$."gen_ai.provider.name"', attrs ->> '$."gen_ai.system"',
                                 attrs ->> '$."llm.provider"', attrs ->> '$."llm.system"', md ->> 'ls_provider',
                                 attrs ->> '$."ai.model.provider"')) as provider
    from _lf
)
select s.file_no, s.record_no,
       coalesce(own.provider, arg_min(w.provider, a.depth) filter (where w.provider is not null)) as provider
from _lf_steps s join named own using (file_no, record_no)
left join _lf_anc a on a.file_no = s.file_no and a.record_no = s.record_no
left join _lf wl on wl.file_no = a.file_no and wl.record_no = a.anc and wl.wrapper and wl.o.type = 'GENERATION'
left join named w on w.file_no = wl.file_no and w.record_no = wl.record_no
where s.is_model
group by s.file_no, s.record_no, own.provider;

-- The sum of the usage keys ``keep`` accepts; NULL when the usage has none of them (absent is unknown, not 0).
create or replace temp macro _lf_sum(u, keep) as
    list_sum(list_transform(list_filter(json_keys(u), keep),
                            lambda k: staged_number(json_extract_string(u, '$."' || k || '"'))));

-- A model whose provider bills no cache writes (OpenAI, Gemini: bills_no_cache_writes): an absent write bucket
-- is 0, and "input" holds every input token (a cache read is part of it, or a key of its own).
create or replace temp table _stage_steps as
with keys as (
    select file_no, idx, bills_no_cache_writes(o.model) as no_writes,
           regexp_matches(lower(regexp_replace(coalesce(o.model, ''), '^.*/', '')), '^gemini-') as gemini,
           staged_number(u ->> 'total') as total,
           _lf_sum(u, lambda k: k in ('input', 'input_tokens')) as input,
           staged_number(u ->> '$."prompt_details.cache_read"') as cached_subset,
           _lf_sum(u, lambda k: k in ('input_cache_read', 'cache_read_input_tokens', 'input_cached_tokens')) as read_add,
           _lf_sum(u, lambda k: k in ('input_cache_creation', 'input_cache_write', 'cache_creation_input_tokens',
                                      'input_cache_creation_5m')) as write_5m,
           _lf_sum(u, lambda k: k = 'input_cache_creation_1h') as write_1h,
           _lf_sum(u, lambda k: k not in ('input', 'input_tokens', 'total', 'input_cache_read', 'cache_read_input_tokens',
                                          'input_cached_tokens', 'input_cache_creation', 'input_cache_write',
                                          'cache_creation_input_tokens', 'input_cache_creation_5m',
                                          'input_cache_creation_1h')
                                and not (k like 'prompt_details.%' or k like 'completion_details.%')
                                and not starts_with(k, 'output')) as other_input,
           -- output is known with its main key; the other output_* keys (reasoning, audio) add to it
           _lf_sum(u, lambda k: starts_with(k, 'output')) as output_all,
           case when _lf_sum(u, lambda k: k in ('output', 'output_tokens')) is not null then output_all end as output,
           coalesce(staged_number(u ->> 'output_reasoning'),
                    staged_number(u ->> '$."completion_details.reasoning"')) as reasoning,
           -- a Gemini model that thinks by default (2.5, 3) whose record gives no thinking count and no provider
           -- total (Microsoft.Extensions.AI: gen_ai.usage.input_tokens and output_tokens only): whether its output
           -- holds the thinking is not said, so the output billed is known only to be at least what is recorded
           regexp_matches(lower(regexp_replace(coalesce(o.model, ''), '^.*/', '')), '^gemini-(2\.5|3)')
               and coalesce(len(list_filter(json_keys(attrs), lambda k: k in ('gen_ai.usage.details.thoughts_tokens',
                        'llm.token_count.total', 'llm.token_count.completion_details.reasoning',
                        'gen_ai.usage.reasoning.output_tokens'))), 0) = 0 as thinking_unsaid
    from _lf_steps where u is not null and is_model
),
usage as (
    select *, coalesce(input, 0) + coalesce(other_input, 0) + coalesce(read_add, 0) + coalesce(write_5m, 0)
                  + coalesce(write_1h, 0) as input_side,
           -- what "total" names beyond the other keys: Langfuse sums the keys when the total is not given, so a
           -- difference is billed tokens the keys leave out (Gemini's thinking, in the Vertex AI trace)
           case when total > input_side + coalesce(output_all, 0) then total - input_side - coalesce(output_all, 0) end
               as excess
    from keys
)
select s.file_no, s.run_id, s.idx::integer as idx, case when s.is_model then 'model' else 'tool' end as kind,
       s.start as started_at, date_diff('millisecond', s.start, s.finish) as ms, s.record_no::integer as source_line,
       s.thread as agent_label,
       case when s.o.level = 'ERROR' then coalesce(s.o.statusMessage, 'error') end as error,
       -- the model that answered (gen_ai.response.model, the Vercel AI SDK's ai.response.model: gpt-4o-2024-08-06
       -- where gpt-4o was asked for), else the one named; a Vertex AI resource path
       -- (projects/…/publishers/google/models/gemini-2.5-flash) is its model's name
       case when s.is_model then regexp_replace(coalesce(s.attrs ->> '$."gen_ai.response.model"',
                                                         s.attrs ->> '$."ai.response.model"', s.o.model),
                                                '^(projects/[^/]+/locations/[^/]+/)?publishers/[^/]+/models/', '') end
           as model,
       pv.provider,
       case when s.is_model then s.o.id end as response_id,
       -- a model whose "input" holds its cache reads, with no read count at all: the split is unknown
       case when not (u.no_writes and u.read_add is null and u.cached_subset is null)
            then u.input - coalesce(u.cached_subset, 0) + coalesce(u.other_input, 0) end as input_uncached,
       case when u.read_add is not null or u.cached_subset is not null
            then coalesce(u.read_add, 0) + coalesce(u.cached_subset, 0) end as cache_read,
       coalesce(u.write_5m, case when u.no_writes then 0 end) as cache_write_5m,
       coalesce(u.write_1h, case when u.no_writes then 0 end) as cache_write_1h,
       -- Gemini bills thinking at the output rate and counts it in its total, not in its candidates (output);
       -- another provider's excess has no known bucket, so its output is unknown
       case when u.excess is not null then case when u.gemini then coalesce(u.output, 0) + u.excess end
            when u.thinking_unsaid and u.reasoning is null then null else u.output end as output_tokens,
       case when u.excess is not null and u.gemini and u.output is not null and u.reasoning is null then u.excess
            else u.reasoning end as reasoning_tokens,
       case when s.is_model then left(s.text, 4000) end as output_text,
       case when s.is_model then sha256(s.text) end as output_sha256,
       -- the prompt's size: every input bucket; without the cache buckets only where "input" holds the cache reads
       case when u.input is null then null
            when u.no_writes or ((u.read_add is not null or u.cached_subset is not null)
                                 and (u.write_5m is not null or u.write_1h is not null)) then u.input_side end
           as context_tokens,
       s.harness_cost as harness_cost_micros,
       s.tool_name,
       case when not s.is_model then coalesce(rc.call_id, s.tool_key) end as call_id,
       case when not s.is_model then s.tool_args end as args,
       s.status as tool_status,
       case when not s.is_model and s.status <> 'started' then coalesce(s.result, '') end as result_text
from (select s.*, case when x.record_no is not null then x.text else s.raw_text end as text
      from _lf_steps s left join _lf_texts x using (file_no, record_no)) s
left join usage u using (file_no, idx)
left join _lf_providers pv on pv.file_no = s.file_no and pv.record_no = s.record_no
left join _lf_run_calls rc on rc.file_no = s.file_no and rc.record_no = s.record_no;

-- The tools offered: Langfuse's toolDefinitions ({name: definition} or a list), else what the instrumentation
-- recorded in the observation's metadata: OpenInference llm.tools.N.tool.json_schema, GenAI
-- gen_ai.tool.definitions, the Vercel AI SDK's ai.prompt.tools, BeeAI's llm.tools. Each definition's size is
-- estimated as its bytes / 4 (see docs/costs.md).
create or replace temp table _lf_tool_defs as
with observed as (
    select l.file_no, l.record_no, l.o.toolDefinitions as defs, l.attrs
    from _lf l join _stage_records d using (file_no, record_no) where d.decision in ('load', 'skip')
),
-- a JSON value that may be JSON text inside a string
parsed as (
    select file_no, record_no, 'toolDefinitions' as source, defs as v from observed
    where json_type(defs) in ('OBJECT', 'ARRAY') and defs::varchar not in ('{}', '[]')
    union all
    select file_no, record_no, k, case when json_type(attrs, '$."' || k || '"') = 'VARCHAR'
                                        and json_valid(attrs ->> ('$."' || k || '"'))
                                       then (attrs ->> ('$."' || k || '"'))::json else attrs -> ('$."' || k || '"') end
    from (select *, unnest(json_keys(attrs)) as k from observed where json_type(attrs) = 'OBJECT')
    where regexp_full_match(k, 'llm\.tools\.\d+\.tool\.json_schema|gen_ai\.tool\.definitions|ai\.prompt\.tools|llm\.tools')
    union all
    -- pydantic-ai's model_request_parameters: its function tools and its output tools (final_result), all sent
    select file_no, record_no, 'model_request_parameters', to_json(tools)
    from (select *, json_extract(mrp, '$.function_tools[*]') || json_extract(mrp, '$.output_tools[*]') as tools
          from (select *, _lf_json(attrs -> '$.model_request_parameters') as mrp from observed))
    where len(tools) > 0
),
-- one source per observation, the first of: toolDefinitions, then the attributes in the order above
chosen as (
    select * from parsed
    qualify dense_rank() over (partition by file_no, record_no order by case
        when source = 'toolDefinitions' then 1 when source = 'gen_ai.tool.definitions' then 2
        when source like 'llm.tools.%' then 3 when source = 'ai.prompt.tools' then 4 when source = 'llm.tools' then 5
        else 6 end) = 1
),
items as (
    -- toolDefinitions as an object: its keys are the names (the entry, name and definition, is what was sent)
    select file_no, record_no, k as name, v -> ('$."' || k || '"') as def,
           to_json(k)::varchar || ':' || (v -> ('$."' || k || '"'))::varchar as sent
    from (select *, unnest(json_keys(v)) as k from chosen where source = 'toolDefinitions' and json_type(v) = 'OBJECT')
    union all
    select file_no, record_no, null, v, v::varchar from chosen where source like 'llm.tools.%' and json_type(v) = 'OBJECT'
    union all
    select file_no, record_no, null, def, def::varchar
    from (select *, case when json_type(item) = 'VARCHAR' and json_valid(item ->> '$') then (item ->> '$')::json
                         else item end as def
          from (select *, unnest(v::json[]) as item from chosen
                where source not like 'llm.tools.%' and json_type(v) = 'ARRAY'))
)
select i.file_no, r.run_id, i.record_no,
       coalesce(i.name, i.def ->> '$.function.name', i.def ->> '$.name', i.def ->> '$."tool.name"') as name,
       ceil(octet_length(encode(i.sent)) / 4)::integer as schema_tokens
from items i join _lf_runs r using (file_no)
where coalesce(i.name, i.def ->> '$.function.name', i.def ->> '$.name', i.def ->> '$."tool.name"') is not null;

-- What a tool does to the world is not recorded: side_effect stays unknown.
create or replace temp table _stage_tools as
select file_no, run_id, name, null::boolean as side_effect, null::boolean as allow_repeat,
       max(schema_tokens) as schema_tokens
from _lf_tool_defs group by file_no, run_id, name;

create or replace temp table _stage_runs as
with summary as (
    select file_no, bool_or(o.level = 'ERROR') as errored, bool_or(o.endTime is null) as unfinished,
           min(start) filter (where reason is null) as first_start, max(staged_timestamp(o.endTime)) as last_end,
           arg_min(o.statusMessage, record_no) filter (where o.level = 'ERROR') as error_message
    from _lf group by file_no
),
-- the largest set of tool definitions one observation carried
catalogue as (
    select file_no, max(tokens)::integer as catalogue_tokens
    from (select file_no, record_no, sum(schema_tokens) as tokens from _lf_tool_defs group by all) group by file_no
),
models as (select file_no, mode(model) as model, mode(provider) as provider from _stage_steps where kind = 'model'
           group by file_no)
select r.file_no, r.run_id, coalesce(r.trace ->> 'name', 'langfuse') as agent, m.model, m.provider,
       -- the run began with the earlier of the trace's timestamp and its first observation (Langfuse may time the
       -- trace by a later observation: 4 ms after the root span's start in a pydantic-ai trace; its latency runs
       -- from the root span)
       least(case when in_window(staged_timestamp(r.trace ->> 'timestamp'))
                  then staged_timestamp(r.trace ->> 'timestamp') end, s.first_start) as started_at,
       case when s.errored or not coalesce(s.unfinished, true) then s.last_end end as ended_at,
       case when s.errored then 'failed' when coalesce(s.unfinished, true) then 'running' else 'succeeded' end as status,
       case when s.errored then s.error_message end as stop_reason,
       json_object('tags', r.trace -> 'tags', 'sessionId', r.trace -> 'sessionId', 'userId', r.trace -> 'userId',
                   'environment', r.trace -> 'environment') as labels,
       -- no catalogue size is recorded: estimated from the tool definitions sent (see docs/costs.md)
       c.catalogue_tokens
from _lf_runs r left join summary s using (file_no) left join models m using (file_no) left join catalogue c using (file_no);
