-- Staging for Inspect AI logs. Input: _doc(file_no, j): an EvalLog ({version, eval, stats, samples}) or,
-- from an .eval archive, {"header": EvalLog without samples, "samples": [...]}.

create or replace temp table _ia_logs as
-- One parse of the document for all three parts (each `->` on it parses it again: a large log many times over).
with parts as (select d.file_no, json_extract(d.j, ['$.header', '$.eval', '$.samples']) as p from _doc d),
logs as (select file_no, case when p[1] is not null then p[1] -> 'eval' else p[2] end as eval, p[3] as samples from parts),
versioned as (
    select *, regexp_extract(eval -> 'packages' ->> 'inspect_ai', '^(\d+)\.(\d+)\.(\d+)', ['major', 'minor', 'patch'])
              as v
    from logs
)
select file_no, json_list(samples) as sample_list, eval, eval ->> 'model' as model,
       -- the eval's own identity: eval_id; logs before it (inspect 0.3.6x) have the run and the task ids, from
       -- which Inspect itself derives an eval_id when it reads them (two tasks of one run differ by task id)
       coalesce(nullif(eval ->> 'eval_id', ''),
                nullif(concat_ws('/', nullif(eval ->> 'run_id', ''), nullif(eval ->> 'task_id', '')), ''))
           as eval_key,
       -- since inspect 0.3.184 input_tokens excludes cache reads and writes; before, it was the provider's own
       coalesce([try_cast(v.major as integer), try_cast(v.minor as integer), try_cast(v.patch as integer)]
                >= [0, 3, 184], false) as input_excludes_cache
from versioned;

-- A sample run's id is its uuid (inspect >= 0.3.70: globally unique, kept when a retry carries a finished sample
-- over into its own log, and the same in a .eval and its .json export); before that, the eval's identity with the
-- sample id and epoch; the file's name only when the log records no identity at all.
create or replace temp table _ia_samples as
select l.file_no, s.position as record_no, s.sample, l.eval, l.model, l.input_excludes_cache,
       -- early logs (before inspect 0.3.5x) keep a sample's events under "transcript"
       coalesce(s.sample -> 'events', s.sample -> 'transcript' -> 'events') as events,
       coalesce(nullif(s.sample ->> 'uuid', ''),
                coalesce(l.eval_key, f.stem) || '/' || coalesce(s.sample ->> 'id', s.position::varchar)
                    || '/epoch ' || coalesce(s.sample ->> 'epoch', '1')) as run_id
from _ia_logs l join _files f using (file_no),
     (select unnest(l.sample_list) as sample, generate_subscripts(l.sample_list, 1) as position) s;

create or replace temp table _stage_records as
select file_no, record_no, sample::varchar as raw, run_id,
       case when json_type(events) = 'ARRAY' then 'load' else 'reject' end as decision,
       case when coalesce(json_type(events), 'NULL') <> 'ARRAY'
            then 'sample ' || record_no || ' has no "events" list: its calls cannot be read' end as note
from _ia_samples;

-- Every event, scorer calls and nested events included (a model call inside a score is paid for too).
create or replace temp table _ia_events as
with recursive walk(file_no, run_id, input_excludes_cache, path, e) as (
    select s.file_no, s.run_id, s.input_excludes_cache, [e.position], e.event
    from _ia_samples s join _stage_records r on r.file_no = s.file_no and r.record_no = s.record_no,
         (select json_list(s.events) as events) l,
         (select unnest(l.events) as event, generate_subscripts(l.events, 1) as position) e
    where r.decision = 'load'
    union all
    select w.file_no, w.run_id, w.input_excludes_cache, list_append(w.path, c.position), c.child
    from walk w, (select json_list(w.e -> 'events') as events) l,
         (select unnest(l.events) as child, generate_subscripts(l.events, 1) as position) c
    where len(w.path) < 20
)
select *, e ->> 'event' as kind from walk;

create or replace temp table _ia_steps as
select row_number() over (partition by file_no, run_id order by path) - 1 as idx, *
from _ia_events where kind in ('model', 'tool');

create or replace temp table _stage_calls as
select s.file_no, s.run_id, s.idx as step_idx, c.position - 1 as call_position, c.call ->> 'id' as call_id,
       c.call ->> 'function' as tool_name, c.call -> 'arguments' as args
from (select *, json_list(e -> 'output' -> 'choices' -> 0 -> 'message' -> 'tool_calls') as calls from _ia_steps
      where kind = 'model') s,
     (select unnest(s.calls) as call, generate_subscripts(s.calls, 1) as position) c;

create or replace temp table _stage_steps as
with model as (
    select s.*, s.e -> 'output' -> 'usage' as u, coalesce(json_type(s.e -> 'output' -> 'usage') = 'OBJECT', false) as has_usage,
           split_part(coalesce(s.e ->> 'model', ''), '/', 1) as provider,
           -- served from Inspect's own response cache: no provider call was made, so none was billed (the usage
           -- shown is the cached call's, and Inspect leaves it out of the sample's model_usage)
           coalesce(s.e ->> 'cache' = 'read', false) as cache_hit,
           staged_timestamp(s.e ->> 'timestamp') as started, staged_timestamp(s.e ->> 'completed') as completed
    from _ia_steps s where s.kind = 'model'
),
buckets as (
    select *, staged_number(u ->> 'input_tokens') as input, staged_number(u ->> 'input_tokens_cache_read') as read,
           -- a provider that bills no cache writes wrote none; any other's absent count is unknown (zero_buckets)
           coalesce(staged_number(u ->> 'input_tokens_cache_write'),
                    case when has_usage and bills_no_cache_writes(e ->> 'model') then 0 end) as written,
           -- before 0.3.184 OpenAI and the others count cache reads (and writes) inside input_tokens; Anthropic never did
           input_excludes_cache or provider = 'anthropic' as apart
    from model
)
select file_no, run_id, idx::integer as idx, 'model' as kind, path[1]::integer as source_line, started as started_at,
       date_diff('millisecond', started, completed) as ms,
       coalesce(e -> 'output' ->> 'model', e ->> 'model') as model, nullif(provider, '') as provider,
       -- input counting the reads: the uncached part is unknown while the reads are
       case when cache_hit then 0 when apart then input else input - read - written end as input_uncached,
       case when cache_hit then 0 else read end as cache_read,
       case when cache_hit then 0 else written end as cache_write_5m,
       -- Inspect has one write bucket and asks only for the default 5-minute cache (zero_buckets)
       case when cache_hit or has_usage then 0 end as cache_write_1h,
       case when cache_hit then 0 else staged_number(u ->> 'output_tokens') end as output_tokens,
       case when cache_hit then 0 else staged_number(u ->> 'reasoning_tokens') end as reasoning_tokens,
       case when apart then input + read + written else input end as context_tokens,
       case when cache_hit then 0 else staged_micros(u ->> 'total_cost') end as harness_cost_micros,
       e -> 'output' -> 'choices' -> 0 ->> 'stop_reason' as finish_reason,
       nullif(case json_type(e -> 'output' -> 'choices' -> 0 -> 'message' -> 'content')
                  when 'VARCHAR' then e -> 'output' -> 'choices' -> 0 -> 'message' ->> 'content'
                  when 'ARRAY' then array_to_string(list_transform(
                      json_list(e -> 'output' -> 'choices' -> 0 -> 'message' -> 'content'), lambda p: p ->> 'text'), '')
              end, '') as output_text
from buckets
union all by name
select file_no, run_id, idx::integer as idx, 'tool' as kind, path[1]::integer as source_line,
       staged_timestamp(e ->> 'timestamp') as started_at,
       date_diff('millisecond', staged_timestamp(e ->> 'timestamp'), staged_timestamp(e ->> 'completed')) as ms,
       e ->> 'id' as call_id, case when coalesce(json_type(e -> 'error'), 'NULL') = 'NULL' then 'ok' else 'error' end
           as tool_status,
       left(e -> 'error' ->> 'message', 200) as error,
       case json_type(e -> 'result') when 'VARCHAR' then e ->> 'result' else (e -> 'result')::varchar end as result_text
from _ia_steps where kind = 'tool';

-- The catalogue: every model event carries the tools offered to that call (name, description, parameter
-- schema); a run's catalogue is their union. Its size is estimated as other formats do (UTF-8 bytes of the
-- definition / 4), long texts Inspect moved to the sample's attachments counted at their own length.
-- Whether a tool changes the world is not recorded: side_effect stays NULL.
create or replace temp table _stage_tools as
with offered as (
    select m.file_no, m.run_id, t.tool ->> 'name' as name, t.tool::varchar as definition,
           s.sample -> 'attachments' as attachments
    from _ia_steps m join _ia_samples s on s.file_no = m.file_no and s.run_id = m.run_id,
         (select unnest(json_list(m.e -> 'tools')) as tool) t
    where m.kind = 'model'
),
sized as (
    select file_no, run_id, name,
           octet_length(encode(definition)) + coalesce(list_sum(list_transform(
               regexp_extract_all(definition, 'attachment://([0-9A-Za-z]+)', 1),
               lambda h: coalesce(octet_length(encode((attachments -> h)::varchar)) - 2 - octet_length(encode('attachment://' || h)), 0))), 0)
               as bytes
    from offered where name is not null
)
select file_no, run_id, name, null::boolean as side_effect, null::boolean as allow_repeat,
       ceil(max(bytes) / 4)::integer as schema_tokens
from sized group by all;

-- The harness ledger: each sample's model_usage, Inspect's own per-model count of the tokens (and, where it
-- priced them, the cost) of the sample's calls — the counter its token_limit is enforced against. It covers the
-- same calls as the events (both restart when a sample is retried; answers from Inspect's response cache are in
-- neither). Input is all input, as the steps' buckets add up (before 0.3.184 input_tokens already held OpenAI's
-- reads); a counter some model's entry leaves out is unknown for the sample.
create or replace temp table _ia_ledger as
with counted as (
    select s.file_no, s.run_id, m.value as u,
           case when s.input_excludes_cache or split_part(m.key, '/', 1) = 'anthropic'
                then staged_number(m.value ->> 'input_tokens') + staged_number(m.value ->> 'input_tokens_cache_read')
                     + coalesce(staged_number(m.value ->> 'input_tokens_cache_write'),
                                case when bills_no_cache_writes(m.key) then 0 end)
                else staged_number(m.value ->> 'input_tokens') end as input
    from _ia_samples s join _stage_records r on r.file_no = s.file_no and r.record_no = s.record_no,
         json_each(s.sample -> 'model_usage') m
    where r.decision = 'load' and json_type(s.sample -> 'model_usage') = 'OBJECT' and json_type(m.value) = 'OBJECT'
)
select file_no, run_id,
       case when count(input) = count(*) then sum(input) end as ledger_input_tokens,
       case when count(u ->> 'output_tokens') = count(*) then sum(staged_number(u ->> 'output_tokens')) end
           as ledger_output_tokens,
       case when count(u ->> 'total_tokens') = count(*) then sum(staged_number(u ->> 'total_tokens')) end as ledger_tokens,
       case when count(u ->> 'total_cost') = count(*) then sum(staged_micros(u ->> 'total_cost')) end as ledger_cost_micros
from counted group by all;

create or replace temp table _stage_runs as
with span as (select file_no, run_id, min(started_at) as started_at,
                     max(started_at + to_milliseconds(coalesce(ms, 0)::bigint)) as last_at
              from _stage_steps group by all),
-- every event's time: the first is the sample's start, the last the latest moment the log shows it running
events as (select file_no, run_id, min(staged_timestamp(e ->> 'timestamp')) as first_at,
                  max(staged_timestamp(e ->> 'timestamp')) as last_at
           from _ia_events group by all)
select s.file_no, s.run_id, 'inspect-ai' as agent, s.eval ->> 'task' as task_class, s.model,
       nullif(split_part(coalesce(s.model, ''), '/', 1), '') as provider,
       -- the sample's own start (recorded since late 2025), else its first call, else its first event
       coalesce(staged_timestamp(s.sample ->> 'started_at'), p.started_at, f.first_at) as started_at,
       -- total_time is the sample's wall time (null in logs before 2025); without it the end is the last moment
       -- the log shows (the end of its last call, or its last event); working_time leaves out waiting
       coalesce(staged_timestamp(s.sample ->> 'completed_at'),
                coalesce(staged_timestamp(s.sample ->> 'started_at'), p.started_at, f.first_at)
                    + to_milliseconds(round(staged_number(s.sample ->> 'total_time') * 1000)::bigint),
                greatest(p.last_at, f.last_at)) as ended_at,
       staged_number(s.sample ->> 'working_time') as working_seconds,
       case when coalesce(json_type(s.sample -> 'error'), 'NULL') <> 'NULL' then 'failed'
            when s.sample ->> '$.limit.type' in ('message', 'turn', 'token', 'cost', 'context') then 'budget_exceeded'
            when s.sample ->> '$.limit.type' in ('time', 'working') then 'timed_out'
            when s.sample ->> '$.limit.type' = 'operator' then 'cancelled'
            when (s.sample ->> '$.limit.type') is not null then 'failed'
            else 'succeeded' end as status,
       case when coalesce(json_type(s.sample -> 'error'), 'NULL') <> 'NULL'
                then left(s.sample -> 'error' ->> 'message', 200)
            when (s.sample ->> '$.limit.type') is not null
                then s.sample ->> '$.limit.type' || ' limit (' || coalesce(s.sample ->> '$.limit.limit', '?') || ')'
            end as stop_reason,  -- a sample that ran to its end: Inspect records no reason
       staged_number(s.eval -> 'config' ->> 'token_limit') as max_tokens,
       staged_number(s.eval -> 'config' ->> 'time_limit') as max_wall_seconds,
       staged_micros(s.eval -> 'config' ->> 'cost_limit') as max_cost_micros,
       g.ledger_input_tokens, g.ledger_output_tokens, g.ledger_tokens, g.ledger_cost_micros
from _ia_samples s join _stage_records r on r.file_no = s.file_no and r.record_no = s.record_no
left join span p on p.file_no = s.file_no and p.run_id = s.run_id
left join events f on f.file_no = s.file_no and f.run_id = s.run_id
left join _ia_ledger g on g.file_no = s.file_no and g.run_id = s.run_id
where r.decision = 'load';
