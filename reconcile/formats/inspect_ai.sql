-- Staging for Inspect AI logs. Input: _doc(file_no, j): an EvalLog ({version, eval, stats, samples}) or,
-- from an .eval archive, {"header": EvalLog without samples, "samples": [...]}.

create or replace temp table _ia_logs as
with logs as (select d.file_no, coalesce(d.j -> 'header', d.j) as log, d.j -> 'samples' as samples from _doc d),
versioned as (
    select *, regexp_extract(log -> 'eval' -> 'packages' ->> 'inspect_ai', '^(\d+)\.(\d+)\.(\d+)', ['major', 'minor', 'patch'])
              as v
    from logs
)
select file_no, log, samples, log -> 'eval' as eval, log -> 'eval' ->> 'model' as model,
       -- since inspect 0.3.184 input_tokens excludes cache reads and writes; before, it was the provider's own
       coalesce([try_cast(v.major as integer), try_cast(v.minor as integer), try_cast(v.patch as integer)]
                >= [0, 3, 184], false) as input_excludes_cache
from versioned;

create or replace temp table _ia_samples as
select l.file_no, s.position as record_no, s.sample, l.eval, l.model, l.input_excludes_cache,
       -- early logs (before inspect 0.3.5x) keep a sample's events under "transcript"
       coalesce(s.sample -> 'events', s.sample -> 'transcript' -> 'events') as events,
       coalesce(l.eval ->> 'eval_id', f.stem) || '/' || coalesce(s.sample ->> 'id', s.position::varchar)
           || '/epoch ' || coalesce(s.sample ->> 'epoch', '1') as run_id
from _ia_logs l join _files f using (file_no),
     (select unnest(json_list(l.samples)) as sample, generate_subscripts(json_list(l.samples), 1) as position) s;

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
         (select unnest(json_list(s.events)) as event, generate_subscripts(json_list(s.events), 1) as position) e
    where r.decision = 'load'
    union all
    select w.file_no, w.run_id, w.input_excludes_cache, list_append(w.path, c.position), c.child
    from walk w, (select unnest(json_list(w.e -> 'events')) as child, generate_subscripts(json_list(w.e -> 'events'), 1) as position) c
    where len(w.path) < 20
)
select *, e ->> 'event' as kind from walk where e ->> 'event' in ('model', 'tool');

create or replace temp table _ia_steps as
select row_number() over (partition by file_no, run_id order by path) - 1 as idx, * from _ia_events;

create or replace temp table _stage_calls as
select s.file_no, s.run_id, s.idx as step_idx, c.position - 1 as call_position, c.call ->> 'id' as call_id,
       c.call ->> 'function' as tool_name, c.call -> 'arguments' as args
from _ia_steps s, (select unnest(json_list(s.e -> 'output' -> 'choices' -> 0 -> 'message' -> 'tool_calls')) as call,
                          generate_subscripts(json_list(s.e -> 'output' -> 'choices' -> 0 -> 'message' -> 'tool_calls'), 1)
                              as position) c
where s.kind = 'model';

create or replace temp table _stage_steps as
with model as (
    select s.*, s.e -> 'output' -> 'usage' as u,
           split_part(coalesce(s.e ->> 'model', ''), '/', 1) as provider,
           staged_timestamp(s.e ->> 'timestamp') as started, staged_timestamp(s.e ->> 'completed') as completed
    from _ia_steps s where s.kind = 'model'
),
buckets as (
    select *, staged_number(u ->> 'input_tokens') as input, coalesce(staged_number(u ->> 'input_tokens_cache_read'), 0) as read,
           coalesce(staged_number(u ->> 'input_tokens_cache_write'), 0) as written,
           -- before 0.3.184 OpenAI and the others count cache reads (and writes) inside input_tokens; Anthropic never did
           input_excludes_cache or provider = 'anthropic' as apart
    from model
)
select file_no, run_id, idx::integer as idx, 'model' as kind, path[1]::integer as source_line, started as started_at,
       date_diff('millisecond', started, completed) as ms,
       coalesce(e -> 'output' ->> 'model', e ->> 'model') as model, nullif(provider, '') as provider,
       case when apart then input else input - read - written end as input_uncached,
       case when input is not null then read end as cache_read,
       case when input is not null then written end as cache_write_5m,
       case when input is not null then 0 end as cache_write_1h,
       staged_number(u ->> 'output_tokens') as output_tokens, staged_number(u ->> 'reasoning_tokens') as reasoning_tokens,
       case when apart then input + read + written else input end as context_tokens,
       staged_micros(u ->> 'total_cost') as harness_cost_micros,
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

create or replace temp table _stage_runs as
with span as (select file_no, run_id, min(started_at) as started_at,
                     max(started_at + to_milliseconds(coalesce(ms, 0)::bigint)) as last_at
              from _stage_steps group by all)
select s.file_no, s.run_id, 'inspect-ai' as agent, s.eval ->> 'task' as task_class, s.model,
       nullif(split_part(coalesce(s.model, ''), '/', 1), '') as provider,
       coalesce(p.started_at, staged_timestamp(s.eval ->> 'created')) as started_at,
       -- total_time is the sample's wall time (null in logs before 2025); working_time leaves out waiting
       coalesce(p.started_at + to_milliseconds(round(staged_number(s.sample ->> 'total_time') * 1000)::bigint),
                p.last_at, p.started_at) as ended_at,
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
       staged_micros(s.eval -> 'config' ->> 'cost_limit') as max_cost_micros
from _ia_samples s join _stage_records r on r.file_no = s.file_no and r.record_no = s.record_no
left join span p on p.file_no = s.file_no and p.run_id = s.run_id
where r.decision = 'load';
