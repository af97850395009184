-- Staging for Langfuse trace exports. Input: _doc(file_no, j), one export per file.

create or replace temp table _lf_runs as
select d.file_no, coalesce(d.j ->> '$.trace.id', f.stem) as run_id, d.j -> 'trace' as trace
from _doc d join _files f using (file_no);

-- attrs: the OTel attributes the instrumentation recorded, which Langfuse keeps in the metadata (a JSON string)
-- has_usage: the observation carries usage (Langfuse's usageDetails); a GENERATION with neither usage, input nor
-- output is an event of a call (BeeAI's finish and success markers), not a call
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
                false) as usage_inferred
from (select *, json_type(o.usageDetails) = 'OBJECT' and len(json_keys(o.usageDetails)) > 0 as has_usage,
             case when json_type(o.metadata) = 'VARCHAR' and json_valid(o.metadata ->> '$') then (o.metadata ->> '$')::json
                  when json_type(o.metadata) = 'OBJECT' then o.metadata end -> 'attributes' as attrs
from (select file_no, position + 1 as record_no, raw,
             json_transform(raw, '{"id": "VARCHAR", "type": "VARCHAR", "name": "VARCHAR", "parentObservationId": "VARCHAR",
                                   "startTime": "VARCHAR", "endTime": "VARCHAR", "model": "VARCHAR", "level": "VARCHAR",
                                   "statusMessage": "VARCHAR", "usageDetails": "JSON", "costDetails": "JSON",
                                   "input": "JSON", "output": "JSON", "toolDefinitions": "JSON",
                                   "metadata": "JSON"}') as o
      from (select file_no, unnest(observations) as raw, generate_subscripts(observations, 1) as position
            from (select file_no, (j -> 'observations')::json[] as observations from _doc))));

-- A model observation with another under it (a framework's wrapper: agno's OpenAIChat.invoke around the SDK's
-- generation, the Vercel AI SDK's ai.generateText around its doGenerate, an agent span that sums its calls) re-reports
-- the calls under it: the provider call is the innermost, and the wrapper is structure.
create or replace temp table _lf_wrappers as
with recursive up(file_no, record_no, ancestor, depth) as (
    select file_no, record_no, o.parentObservationId, 0 from _lf where is_model and o.parentObservationId is not null
    union all
    select up.file_no, up.record_no, p.o.parentObservationId, up.depth + 1
    from up join _lf p on p.file_no = up.file_no and p.o.id = up.ancestor
    where p.o.parentObservationId is not null and up.depth < 64
)
select distinct l.file_no, l.record_no
from up join _lf l on l.file_no = up.file_no and l.o.id = up.ancestor
where l.is_model;

alter table _lf add column wrapper boolean default false;
update _lf set wrapper = true, is_model = false from _lf_wrappers w
where _lf.file_no = w.file_no and _lf.record_no = w.record_no;

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
       case when reason is not null then 'reject' when is_model or o.type = 'TOOL' then 'load' else 'skip' end,
       coalesce(reason, case when wrapper
                             then 'wraps the model call(s) under it (its usage re-reports theirs), not a call'
                             when not (is_model or o.type = 'TOOL')
                             then 'structure, not a step (' || coalesce(o.type, '?') || ')' end),
       r.run_id
from (select *, case
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
      end as reason from _lf) l
join _lf_runs r using (file_no);

create or replace temp table _lf_steps as
select row_number() over (partition by l.file_no order by start, l.record_no) - 1 as idx, l.file_no, r.run_id,
       l.record_no, l.o, l.is_model, start, coalesce(staged_timestamp(l.o.endTime), start) as finish,
       case when l.has_usage and not l.usage_inferred then l.o.usageDetails end as u, l.attrs,
       coalesce(p.o.name, 'trace') as thread,
       case when json_type(l.o.output) = 'VARCHAR' then l.o.output ->> '$' else l.o.output::varchar end as text,
       -- a tool's name as the instrumentation gave it; the observation's name may be a label ("execute_tool say_hello")
       case when l.o.type = 'TOOL' then coalesce(l.attrs ->> '$."gen_ai.tool.name"', l.attrs ->> '$."tool.name"', l.o.name)
       end as tool_name
from _lf l join _stage_records d using (file_no, record_no) join _lf_runs r using (file_no)
left join _lf p on p.file_no = l.file_no and p.o.id = l.o.parentObservationId,
lateral (select staged_timestamp(l.o.startTime) as start)
where d.decision = 'load';

-- A TOOL observation does not say which generation asked for it: the latest one before it did.
create or replace temp table _stage_calls as
select t.file_no, t.run_id, g.idx as step_idx, 0 as call_position, t.o.id as call_id, t.tool_name,
       case when json_type(t.o.input) = 'VARCHAR' and json_valid(t.o.input ->> '$') then (t.o.input ->> '$')::json
            else t.o.input end as args
from (select * from _lf_steps where o.type = 'TOOL') t
asof left join (select * from _lf_steps where is_model) g on t.file_no = g.file_no and t.start >= g.start;

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
       case when s.is_model then s.o.model end as model,
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
       staged_micros(s.o.costDetails ->> 'total') as harness_cost_micros,
       s.tool_name,
       case when s.o.type = 'TOOL' then s.o.id end as call_id,
       c.args,
       case when s.o.type = 'TOOL' then case when s.o.level = 'ERROR' then 'error' else 'ok' end end as tool_status,
       case when s.o.type = 'TOOL' then coalesce(s.text, '') end as result_text
from _lf_steps s left join usage u using (file_no, idx)
left join _stage_calls c on s.o.type = 'TOOL' and c.file_no = s.file_no and c.call_id = s.o.id;

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
),
-- one source per observation, the first of: toolDefinitions, then the attributes in the order above
chosen as (
    select * from parsed
    qualify dense_rank() over (partition by file_no, record_no order by case
        when source = 'toolDefinitions' then 1 when source = 'gen_ai.tool.definitions' then 2
        when source like 'llm.tools.%' then 3 when source = 'ai.prompt.tools' then 4 else 5 end) = 1
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
           min(staged_timestamp(o.startTime)) as first_start, max(staged_timestamp(o.endTime)) as last_end,
           arg_min(o.statusMessage, record_no) filter (where o.level = 'ERROR') as error_message
    from _lf group by file_no
),
-- the largest set of tool definitions one observation carried
catalogue as (
    select file_no, max(tokens)::integer as catalogue_tokens
    from (select file_no, record_no, sum(schema_tokens) as tokens from _lf_tool_defs group by all) group by file_no
),
models as (select file_no, mode(model) as model from _stage_steps where kind = 'model' group by file_no)
select r.file_no, r.run_id, coalesce(r.trace ->> 'name', 'langfuse') as agent, m.model,
       coalesce(case when in_window(staged_timestamp(r.trace ->> 'timestamp'))
                     then staged_timestamp(r.trace ->> 'timestamp') end, s.first_start) as started_at,
       case when s.errored or not coalesce(s.unfinished, true) then s.last_end end as ended_at,
       case when s.errored then 'failed' when coalesce(s.unfinished, true) then 'running' else 'succeeded' end as status,
       case when s.errored then s.error_message end as stop_reason,
       json_object('tags', r.trace -> 'tags', 'sessionId', r.trace -> 'sessionId', 'userId', r.trace -> 'userId',
                   'environment', r.trace -> 'environment') as labels,
       -- no catalogue size is recorded: estimated from the tool definitions sent (see docs/costs.md)
       c.catalogue_tokens
from _lf_runs r left join summary s using (file_no) left join models m using (file_no) left join catalogue c using (file_no);
