-- Staging for Langfuse trace exports. Input: _doc(file_no, j), one export per file.

create or replace temp table _lf_runs as
select d.file_no, coalesce(d.j ->> '$.trace.id', f.stem) as run_id, d.j -> 'trace' as trace
from _doc d join _files f using (file_no);

create or replace temp table _lf as
select *, o.type = 'GENERATION' or (coalesce(o.type, '') <> 'TOOL'
          and json_type(o.usageDetails) = 'OBJECT' and len(json_keys(o.usageDetails)) > 0) as is_model
from (select file_no, position + 1 as record_no, raw,
             json_transform(raw, '{"id": "VARCHAR", "type": "VARCHAR", "name": "VARCHAR", "parentObservationId": "VARCHAR",
                                   "startTime": "VARCHAR", "endTime": "VARCHAR", "model": "VARCHAR", "level": "VARCHAR",
                                   "statusMessage": "VARCHAR", "usageDetails": "JSON", "costDetails": "JSON",
                                   "input": "JSON", "output": "JSON", "toolDefinitions": "JSON"}') as o
      from (select file_no, unnest((j -> 'observations')::json[]) as raw,
                   generate_subscripts((j -> 'observations')::json[], 1) as position from _doc));

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
       coalesce(reason, case when not (is_model or o.type = 'TOOL')
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
      end as reason from _lf) l
join _lf_runs r using (file_no);

create or replace temp table _lf_steps as
select row_number() over (partition by l.file_no order by start, l.record_no) - 1 as idx, l.file_no, r.run_id,
       l.record_no, l.o, l.is_model, start, coalesce(staged_timestamp(l.o.endTime), start) as finish,
       case when json_type(l.o.usageDetails) = 'OBJECT' and len(json_keys(l.o.usageDetails)) > 0 then l.o.usageDetails end as u,
       coalesce(p.o.name, 'trace') as thread,
       case when json_type(l.o.output) = 'VARCHAR' then l.o.output ->> '$' else l.o.output::varchar end as text
from _lf l join _stage_records d using (file_no, record_no) join _lf_runs r using (file_no)
left join _lf p on p.file_no = l.file_no and p.o.id = l.o.parentObservationId,
lateral (select staged_timestamp(l.o.startTime) as start)
where d.decision = 'load';

-- A TOOL observation does not say which generation asked for it: the latest one before it did.
create or replace temp table _stage_calls as
select t.file_no, t.run_id, g.idx as step_idx, 0 as call_position, t.o.id as call_id, t.o.name as tool_name,
       case when json_type(t.o.input) = 'VARCHAR' and json_valid(t.o.input ->> '$') then (t.o.input ->> '$')::json
            else t.o.input end as args
from (select * from _lf_steps where o.type = 'TOOL') t
asof left join (select * from _lf_steps where is_model) g on t.file_no = g.file_no and t.start >= g.start;

create or replace temp macro _lf_sum(u, keep) as
    coalesce(list_sum(list_transform(list_filter(json_keys(u), keep),
                      lambda k: coalesce(staged_number(json_extract_string(u, '$."' || k || '"')), 0))), 0);

create or replace temp table _stage_steps as
with usage as (
    select file_no, idx, coalesce(staged_number(u ->> 'input'), 0) as input,
           coalesce(staged_number(u ->> '$."prompt_details.cache_read"'), 0) as cached_subset,
           _lf_sum(u, lambda k: k in ('input_cache_read', 'cache_read_input_tokens')) as cache_read,
           _lf_sum(u, lambda k: k in ('input_cache_creation', 'input_cache_write', 'cache_creation_input_tokens')) as cache_write,
           _lf_sum(u, lambda k: k not in ('input', 'output', 'total', 'input_cache_read', 'cache_read_input_tokens',
                                          'input_cache_creation', 'input_cache_write', 'cache_creation_input_tokens')
                                and not (k like 'prompt_details.%' or k like 'completion_details.%')
                                and not starts_with(k, 'output')) as other_input,
           _lf_sum(u, lambda k: starts_with(k, 'output')) as output,
           coalesce(staged_number(u ->> 'output_reasoning'),
                    staged_number(u ->> '$."completion_details.reasoning"')) as reasoning
    from _lf_steps where u is not null
)
select s.file_no, s.run_id, s.idx::integer as idx, case when s.is_model then 'model' else 'tool' end as kind,
       s.start as started_at, date_diff('millisecond', s.start, s.finish) as ms, s.record_no::integer as source_line,
       s.thread as agent_label,
       case when s.o.level = 'ERROR' then coalesce(s.o.statusMessage, 'error') end as error,
       case when s.is_model then s.o.model end as model,
       case when s.is_model then s.o.id end as response_id,
       case when s.is_model then u.input - u.cached_subset + u.other_input end as input_uncached,
       case when s.is_model then u.cache_read + u.cached_subset end as cache_read,
       case when s.is_model then u.cache_write end as cache_write_5m,
       case when s.is_model and u.idx is not null then 0 end as cache_write_1h,
       case when s.is_model then u.output end as output_tokens,
       case when s.is_model then u.reasoning end as reasoning_tokens,
       case when s.is_model then left(s.text, 4000) end as output_text,
       case when s.is_model then sha256(s.text) end as output_sha256,
       case when s.is_model then u.input + u.cache_read + u.cache_write + u.other_input end as context_tokens,
       staged_micros(s.o.costDetails ->> 'total') as harness_cost_micros,
       case when s.o.type = 'TOOL' then s.o.name end as tool_name,
       case when s.o.type = 'TOOL' then s.o.id end as call_id,
       c.args,
       case when s.o.type = 'TOOL' then case when s.o.level = 'ERROR' then 'error' else 'ok' end end as tool_status,
       case when s.o.type = 'TOOL' then coalesce(s.text, '') end as result_text
from _lf_steps s left join usage u using (file_no, idx)
left join _stage_calls c on s.o.type = 'TOOL' and c.file_no = s.file_no and c.call_id = s.o.id;

create or replace temp table _stage_runs as
with summary as (
    select file_no, bool_or(o.level = 'ERROR') as errored, bool_or(o.endTime is null) as unfinished,
           min(staged_timestamp(o.startTime)) as first_start, max(staged_timestamp(o.endTime)) as last_end,
           arg_min(o.statusMessage, record_no) filter (where o.level = 'ERROR') as error_message,
           max(ceil(octet_length(encode(o.toolDefinitions::varchar)) / 4))
               filter (where json_type(o.toolDefinitions) in ('OBJECT', 'ARRAY')
                       and o.toolDefinitions::varchar not in ('{}', '[]'))::integer as catalogue_tokens
    from _lf group by file_no
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
       s.catalogue_tokens
from _lf_runs r left join summary s using (file_no) left join models m using (file_no);
