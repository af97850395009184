-- Gemini CLI, both layouts: from _gm_all(file_no, record_no, m, msg_id, mtype, rewind_to, is_set, sets_history,
-- is_meta) and _gm_session(file_no, run_id, started_at, parent_run_id) to the _stage_* tables.

-- A message re-written under the same id: its last copy is the message.
create or replace temp table _gm as
select a.*, s.run_id,
       a.msg_id is not null and a.record_no = max(a.record_no) over (partition by a.file_no, a.msg_id) as last_copy
from _gm_all a join _gm_session s using (file_no);

-- A rewind, or a $set that rewrites the history (after a compression, or masking old tool output), replaces
-- the context by a shorter one: an event step. Every other $set is metadata.
create or replace temp table _stage_records as
select file_no, record_no, m::varchar as raw, run_id,
       case when is_meta or (mtype in ('user', 'gemini', 'info', 'error', 'warning') and last_copy)
                 or rewind_to is not null or sets_history then 'load'
            when mtype is not null or is_set then 'skip'
            else 'reject' end as decision,
       case when is_meta or (mtype in ('user', 'gemini', 'info', 'error', 'warning') and last_copy)
                 or rewind_to is not null or sets_history then null
            when mtype in ('user', 'gemini', 'info', 'error', 'warning') and msg_id is null
                then 'a ' || mtype || ' message without an "id"'
            when mtype in ('user', 'gemini', 'info', 'error', 'warning')
                then 'an earlier copy of a message re-written under the same id'
            when mtype is not null then 'a ' || left(mtype, 40) || ' record (not a step)'
            when is_set then 'a metadata update ($set)'
            else 'record ' || record_no || ' is not a Gemini CLI message: no "type", "$set" or "$rewindTo"' end as note
from _gm;

create or replace temp table _gm_msgs as
select g.* from _gm g join _stage_records r using (file_no, record_no)
where r.decision = 'load' and g.mtype is not null;

create or replace temp table _gm_calls as
select g.file_no, g.run_id, g.record_no, c.position, c.call
from (select *, json_list(m -> 'toolCalls') as calls from _gm_msgs where mtype = 'gemini') g,
     (select unnest(g.calls) as call, generate_subscripts(g.calls, 1) as position) c;

create or replace temp table _gm_steps as
with items as (
    select file_no, run_id, record_no, 0 as position, 'model' as kind from _gm_msgs where mtype = 'gemini'
    union all select file_no, run_id, record_no, position, 'tool' from _gm_calls
    union all select file_no, run_id, record_no, 0, 'event' from _gm where rewind_to is not null or sets_history
)
select row_number() over (partition by file_no order by record_no, position) - 1
           + coalesce((k.carry ->> 'steps')::bigint, 0) as idx, i.*
from items i left join _gm_carry k using (file_no);

create or replace temp table _stage_calls as
select s.file_no, s.run_id, m.idx as step_idx, c.position - 1 as call_position,
       coalesce(c.call ->> 'id', 'call-' || c.record_no || '-' || c.position) as call_id, c.call ->> 'name' as tool_name,
       c.call -> 'args' as args
from _gm_calls c join _gm_steps s using (file_no, record_no, position)
join _gm_steps m on m.file_no = c.file_no and m.record_no = c.record_no and m.kind = 'model';

create or replace temp table _stage_steps as
with model as (
    select s.file_no, s.run_id, s.idx, g.record_no, g.m, g.m -> 'tokens' as t
    from _gm_steps s join _gm_msgs g using (file_no, record_no) where s.kind = 'model'
),
counted as (
    select *, staged_number(t ->> 'input') as input, staged_number(t ->> 'cached') as cached,
           staged_number(t ->> 'tool') as tool, staged_number(t ->> 'output') as output,
           staged_number(t ->> 'thoughts') as thoughts,
           -- Gemini CLI writes 0 for every count the API's usageMetadata left out: a response whose counts
           -- are all 0 (no input, no total) was not counted, not free
           json_type(t) = 'OBJECT' and coalesce(staged_number(t ->> 'input'), 0) = 0
               and coalesce(staged_number(t ->> 'total'), 0) = 0 and coalesce(staged_number(t ->> 'output'), 0) = 0
               and coalesce(staged_number(t ->> 'thoughts'), 0) = 0 as uncounted
    from model
),
usage as (
    select * exclude (input, cached, tool, output, thoughts),
           case when not uncounted then input end as input, case when not uncounted then cached end as cached,
           case when not uncounted then tool end as tool, case when not uncounted then output end as output,
           case when not uncounted then thoughts end as thoughts
    from counted
)
select file_no, run_id, idx::integer as idx, 'model' as kind, record_no::integer as source_line,
       staged_timestamp(m ->> 'timestamp') as started_at, m ->> 'model' as model, 'google' as provider,
       m ->> 'id' as response_id,
       -- cached is inside input; the tool-use prompt is beside it; thoughts are billed as output. A count the
       -- message leaves out leaves its bucket unknown (NULL); Google bills no cache writes (zero_buckets).
       input - cached + tool as input_uncached, cached as cache_read,
       case when coalesce(input, cached, tool, output, thoughts) is not null then 0 end as cache_write_5m,
       case when coalesce(input, cached, tool, output, thoughts) is not null then 0 end as cache_write_1h,
       output + thoughts as output_tokens, thoughts as reasoning_tokens, input + tool as context_tokens,
       nullif(case json_type(m -> 'content')
                  when 'VARCHAR' then m ->> 'content'
                  when 'ARRAY' then array_to_string(list_transform(json_list(m -> 'content'), lambda p: p ->> 'text'), '')
              end, '') as output_text
from usage
union all by name
select s.file_no, s.run_id, s.idx::integer as idx, 'tool' as kind, c.record_no::integer as source_line,
       staged_timestamp(c.call ->> 'timestamp') as started_at,
       coalesce(c.call ->> 'id', 'call-' || c.record_no || '-' || c.position) as call_id,
       case c.call ->> 'status' when 'success' then 'ok' when 'error' then 'error' when 'cancelled' then 'error' end
           as tool_status,
       case when c.call ->> 'status' in ('error', 'cancelled') then left(coalesce(c.call ->> 'resultDisplay', c.call ->> 'status'), 200) end
           as error,
       -- what the model was sent back: the function response's output (read_file's whole file), else what the
       -- terminal showed (resultDisplay, empty for read_file), else the raw result
       coalesce(c.call -> 'result' -> 0 -> 'functionResponse' -> 'response' ->> 'output',
                case json_type(c.call -> 'resultDisplay') when 'VARCHAR' then nullif(c.call ->> 'resultDisplay', '') end,
                (c.call -> 'result')::varchar, '') as result_text
from _gm_steps s join _gm_calls c using (file_no, record_no, position)
where s.kind = 'tool'
union all by name
-- the rewound messages stay steps (they were answered, and billed); the context after the rewind is shorter
select s.file_no, s.run_id, s.idx::integer as idx, 'event' as kind, g.record_no::integer as source_line,
       'compaction' as event,
       case when g.rewind_to is not null then 'rewind to message ' || left(g.rewind_to, 80) || ': it and what followed left the context'
            else 'history rewritten ($set messages: ' || json_array_length(g.m, '$."$set".messages') || ' messages)' end
           as detail
from _gm_steps s join _gm g using (file_no, record_no)
where s.kind = 'event';

-- Status, inferred (a chat has no end record): succeeded when the session ends on the model's answer
-- (a gemini message with text and no tool call), failed when on an error message, else running.
-- an info "Request cancelled." is the user stopping the request (Esc or Ctrl-C): the session's last word if
-- nothing follows it
create or replace temp table _gm_said as
select file_no, record_no, mtype, m from _gm_msgs where mtype in ('user', 'gemini', 'error')
union all
select file_no, record_no, mtype, m from _gm where mtype = 'info' and trim(m ->> 'content') = 'Request cancelled.';

create or replace temp table _stage_runs as
with last_message as (
    select file_no, arg_max(case when mtype = 'info' then 'cancelled' else mtype end, record_no) as mtype,
           arg_max(json_array_length(coalesce(m -> 'toolCalls', '[]'::json)), record_no) as calls,
           arg_max(m ->> 'content', record_no) as content, max(staged_timestamp(m ->> 'timestamp')) as ts
    from _gm_said
    group by file_no
),
models as (select s.file_no, coalesce(any_value(k.carry ->> 'first_model'),
                                      arg_min(x.model, x.idx) filter (where x.model is not null)) as model
           from _gm_session s left join _gm_carry k using (file_no)
           left join _stage_steps x on x.file_no = s.file_no and x.kind = 'model' group by s.file_no)
select s.file_no, s.run_id, s.parent_run_id, 'gemini-cli' as agent, m.model, 'google' as provider,
       coalesce(s.started_at, least((k.carry ->> 'min_ts')::timestamptz,
                                    (select min(staged_timestamp(g.m ->> 'timestamp')) from _gm g where g.file_no = s.file_no)))
           as started_at,
       case when l.mtype in ('gemini', 'error', 'cancelled') then greatest(l.ts, (k.carry ->> 'said_max_ts')::timestamptz)
            end as ended_at,
       case when l.mtype = 'gemini' and l.calls = 0 and nullif(trim(coalesce(l.content, '')), '') is not null then 'succeeded'
            when l.mtype = 'error' then 'failed' when l.mtype = 'cancelled' then 'cancelled' else 'running' end as status,
       case when l.mtype = 'error' then left(l.content, 200) when l.mtype = 'cancelled' then 'Request cancelled.' end
           as stop_reason
from _gm_session s left join last_message l using (file_no) left join models m using (file_no)
left join _gm_carry k using (file_no);
