-- Staging for OpenHands event streams. Input: _doc(file_no, j), one array of events per file.

-- A usage count of an event's model response, as text (``key`` a path under usage: prompt_tokens_details.cached_tokens).
create or replace temp macro _oh_usage(e, key) as e.tool_call_metadata.model_response ->> ('$.usage.' || key);

create or replace temp table _oh as
select file_no, record_no, raw, e, f.stem as run_id,
       case when in_window(staged_timestamp(e.timestamp)) then staged_timestamp(e.timestamp) end as ts,
       e.source = 'agent' and e.action is not null and (e.tool_call_metadata.model_response is not null
           or e.action = 'message') as is_model_action,
       e.observation is not null and e.cause is not null and e.observation not in ('agent_state_changed', 'null')
           as is_result,
       coalesce(e.tool_call_metadata.model_response ->> 'id', 'event ' || e.id) as response,
       -- the first usage count that is not a count of 0 or more, as "key is value"
       list_filter(list_transform(['prompt_tokens', 'completion_tokens', 'cache_read_input_tokens',
                                   'cache_creation_input_tokens', 'prompt_tokens_details.cached_tokens',
                                   'completion_tokens_details.reasoning_tokens'],
                                  lambda k: case when _oh_usage(e, k) is not null
                                                      and not coalesce(try_cast(_oh_usage(e, k) as double) >= 0, false)
                                                 then k || ' is ' || _oh_usage(e, k) end),
                   lambda x: x is not null)[1] as bad_count,
       -- LiteLLM's prompt_tokens includes the cache reads and writes: more of those than prompt is no split of it
       case when try_cast(_oh_usage(e, 'prompt_tokens') as double)
                 < coalesce(try_cast(coalesce(_oh_usage(e, 'cache_read_input_tokens'),
                                              _oh_usage(e, 'prompt_tokens_details.cached_tokens')) as double), 0)
                   + coalesce(try_cast(_oh_usage(e, 'cache_creation_input_tokens') as double), 0)
            then 'cache reads and writes (' || coalesce(_oh_usage(e, 'cache_read_input_tokens'),
                                                        _oh_usage(e, 'prompt_tokens_details.cached_tokens'), '0')
                 || ' + ' || coalesce(_oh_usage(e, 'cache_creation_input_tokens'), '0') || ') exceed prompt_tokens ('
                 || _oh_usage(e, 'prompt_tokens') || '), which includes them' end as bad_split
from (select file_no, position as record_no, raw,
             json_transform(raw, '{"id": "BIGINT", "timestamp": "VARCHAR", "source": "VARCHAR", "action": "VARCHAR",
                                   "observation": "VARCHAR", "cause": "BIGINT", "message": "VARCHAR", "content": "VARCHAR",
                                   "args": "JSON", "extras": "JSON", "tool_call_metadata": {"function_name": "VARCHAR",
                                   "tool_call_id": "VARCHAR", "model_response": "JSON"},
                                   "llm_metrics": {"accumulated_cost": "JSON"}}') as e
      from (select file_no, unnest(events) as raw, generate_subscripts(events, 1) as position
            from (select file_no, j::json[] as events from _doc)))
join _files f using (file_no);

create or replace temp table _stage_records as
select file_no, record_no, raw::varchar as raw, run_id,
       case when e.id is null or ts is null or bad_count is not null or bad_split is not null then 'reject'
            when is_model_action or is_result then 'load' else 'skip' end as decision,
       case when e.id is null then 'event ' || record_no || ' has no integer "id"'
            when ts is null then 'event ' || e.id || ': "timestamp" is ' || coalesce(e.timestamp, 'missing')
                || '; expected an RFC 3339 time ' || window_text()
            when bad_count is not null then 'event ' || e.id || ': usage ' || bad_count || '; expected a count of 0 or more'
            when bad_split is not null then 'event ' || e.id || ': usage ' || bad_split
            when not (is_model_action or is_result) then 'not a step (' || coalesce(e.source, '?') || ' '
                || coalesce(e.action, e.observation, '?') || ')' end as note
from _oh;

create or replace temp table _oh_loaded as
select o.* from _oh o join _stage_records r using (file_no, record_no) where r.decision = 'load';

create or replace temp table _oh_items as
with responses as (
    select file_no, response, min(record_no) as record_no from _oh_loaded where is_model_action group by all
),
items as (
    select file_no, record_no, 0 as sub, 'model' as kind, response, null::bigint as event_id from responses
    union all select file_no, record_no, 1, 'tool', null, e.id from _oh_loaded where is_result
)
select row_number() over (partition by file_no order by record_no, sub) - 1 as idx, i.* from items i;

create or replace temp table _stage_calls as
select s.file_no, a.run_id, s.idx as step_idx,
       row_number() over (partition by s.file_no, s.idx order by a.record_no) - 1 as call_position,
       coalesce(a.e.tool_call_metadata.tool_call_id, 'event-' || a.e.id) as call_id,
       coalesce(a.e.tool_call_metadata.function_name, a.e.action) as tool_name, a.e.args as args,
       a.e.id as action_id, a.ts as asked_at
from _oh a join _oh_items s on s.kind = 'model' and s.file_no = a.file_no and s.response = a.response
where a.is_model_action and a.e.tool_call_metadata.tool_call_id is not null and a.e.action <> 'finish';

create or replace temp table _stage_steps as
with responses as (
    select i.file_no, i.idx, i.record_no, o.run_id, o.ts, o.e.tool_call_metadata.model_response as mr,
           bool_or(a.e.action = 'finish') as finish, string_agg(nullif(a.e.message, ''), chr(10)) as text
    from _oh_items i join _oh o using (file_no, record_no)
    join _oh a on a.file_no = i.file_no and a.is_model_action and a.response = i.response
    where i.kind = 'model' group by all
),
-- A count the response leaves out is unknown (NULL), except what the provider or OpenHands never bills:
-- cache writes of OpenAI and Gemini models, and 1-hour cache writes (see the module's zero_buckets).
usage as (
    select *, staged_number(mr ->> '$.usage.prompt_tokens') as prompt,
           coalesce(staged_number(mr ->> '$.usage.cache_read_input_tokens'),
                    staged_number(mr ->> '$.usage.prompt_tokens_details.cached_tokens')) as cached,
           coalesce(staged_number(mr ->> '$.usage.cache_creation_input_tokens'),
                    case when mr ->> '$.usage' is not null
                              and bills_no_cache_writes(mr ->> 'model') then 0 end) as written
    from responses
),
last_model as (select file_no, max(idx) as idx from _oh_items where kind = 'model' group by file_no)
select u.file_no, u.run_id, u.idx::integer as idx, 'model' as kind, u.ts as started_at, u.record_no::integer as source_line,
       mr ->> 'model' as model, mr ->> 'id' as response_id,
       -- what the prompt holds beyond the cache reads and writes: unknown while either is (so is the cost)
       prompt - cached - written as input_uncached,
       cached as cache_read,
       written as cache_write_5m,
       case when mr ->> '$.usage' is not null then 0 end as cache_write_1h,
       staged_number(mr ->> '$.usage.completion_tokens') as output_tokens,
       staged_number(mr ->> '$.usage.completion_tokens_details.reasoning_tokens') as reasoning_tokens,
       mr ->> '$.choices[0].finish_reason' as finish_reason,
       -- the finish action is the answer; so is a closing agent message asking nothing
       u.finish or (u.idx = l.idx and u.text is not null and mr is null) as is_final,
       left(coalesce(u.text, mr ->> '$.choices[0].message.content'), 4000) as output_text,
       prompt as context_tokens
from usage u join last_model l using (file_no)
union all by name
select i.file_no, r.run_id, i.idx::integer as idx, 'tool' as kind, r.ts as started_at,
       date_diff('millisecond', c.asked_at, r.ts) as ms, r.record_no::integer as source_line,
       case when r.e.observation = 'error' then left(r.e.content, 200) end as error,
       coalesce(c.tool_name, r.e.observation) as tool_name,
       coalesce(c.call_id, r.e.tool_call_metadata.tool_call_id, 'event-' || r.e.cause) as call_id,
       case when r.e.observation = 'error' then 'error' else 'ok' end as tool_status,
       coalesce(r.e.content, '') as result_text
from _oh_items i join _oh r on r.file_no = i.file_no and r.e.id = i.event_id
left join _stage_calls c on c.file_no = r.file_no and c.action_id = r.e.cause
where i.kind = 'tool';

alter table _stage_calls drop column action_id;
alter table _stage_calls drop column asked_at;

-- The run's outcome: the last of its agent_state_changed events and finish actions. An agent state is the
-- harness's own word (recorded); a finish action with no state after it is read as success (inferred), and a
-- stream with neither is running (inferred).
create or replace temp table _stage_runs as
with signals as (
    select file_no, record_no, ts, e.action = 'finish' as finish,
           case when e.observation = 'agent_state_changed' then lower(e.extras ->> 'agent_state') end as state,
           nullif(e.extras ->> 'reason', '') as reason
    from _oh where e.action = 'finish' or (e.observation = 'agent_state_changed' and e.extras ->> 'agent_state' is not null)
),
last_signal as (select file_no, arg_max(s, record_no) as s from signals s group by file_no),
outcome as (
    select file_no, any_value(run_id) as run_id, min(ts) as first_ts, max(ts) as last_ts,
           -- the harness's own running total of what its LLM calls cost, when the stream records it
           max(staged_micros(e.llm_metrics.accumulated_cost ->> '$')) as accumulated_cost_micros
    from _oh group by file_no
),
ended as (
    select o.*, l.s.state, l.s.reason,
           -- OpenHands' AgentState: finished (the agent called finish), awaiting_user_input (it ended its turn
           -- with a message: a GUI or interactive session's end), error, stopped (by the user), rejected (the agent
           -- declined the task); loading, init, running, paused, rate_limited and the confirmation states are no end
           case when l.s.state is null and l.s.finish then 'succeeded'
                when l.s.state in ('finished', 'awaiting_user_input') then 'succeeded'
                -- its iteration and budget ceilings end a run in state error, the reason naming the ceiling
                -- ("RuntimeError: Agent reached maximum iteration. Current iteration: 3, max iteration: 3")
                when l.s.state = 'error' and regexp_matches(l.s.reason, '(?i)reached maximum (iteration|budget)')
                    then 'budget_exceeded'
                when l.s.state in ('error', 'rejected') then 'failed'
                when l.s.state = 'stopped' then 'cancelled'
                else 'running' end as status
    from outcome o left join last_signal l using (file_no)
),
models as (select file_no, mode(model) as model from _stage_steps where model is not null group by file_no)
select e.file_no, e.run_id, 'openhands' as agent, m.model, e.first_ts as started_at,
       case when e.status <> 'running' then e.last_ts end as ended_at,
       e.status,
       -- the state's reason as written (an error's message), else the state
       case when e.status = 'running' then null when e.state is null then 'finish' else coalesce(e.reason, e.state) end
           as stop_reason,
       e.state as harness_status,
       e.state is null as status_inferred,  -- no state change recorded: the status is reconcile's inference
       e.accumulated_cost_micros as ledger_cost_micros
from ended e left join models m using (file_no);
