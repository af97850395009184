-- Staging for SWE-agent trajectories. Input: _doc(file_no, j), one trajectory per file.

create or replace temp table _swe as
with trajectory as (
    select file_no, position as record_no, e as raw, e ->> 'thought' as thought, e ->> 'response' as response,
           e ->> 'action' as action, e ->> 'observation' as observation,
           staged_number(e ->> 'execution_time') as seconds
    from (select file_no, unnest(entries) as e, generate_subscripts(entries, 1) as position
          from (select file_no, json_list(j -> 'trajectory') as entries from _doc))
),
history as (
    select file_no, n, h, h ->> 'role' as role
    from (select file_no, unnest(entries) as h, generate_subscripts(entries, 1) as n
          from (select file_no, json_list(j -> 'history') as entries from _doc))
),
from_history as (
    select a.file_no, row_number() over (partition by a.file_no order by a.n) as record_no, a.h as raw,
           a.h ->> 'thought' as thought, a.h ->> 'content' as response, a.h ->> 'action' as action,
           (select t.h ->> 'content' from history t where t.file_no = a.file_no and t.n = a.n + 1 and t.role = 'tool')
               as observation,
           null::double as seconds
    from history a where a.role = 'assistant' and a.h ->> 'action' is not null
)
select * from trajectory
union all
select * from from_history where file_no not in (select file_no from trajectory);

create or replace temp table _stage_records as
select s.file_no, s.record_no, s.raw::varchar as raw, f.stem as run_id,
       case when action is null and response is null then 'reject' else 'load' end as decision,
       case when action is null and response is null
            then 'trajectory entry ' || record_no || ' has neither "action" nor "response"' end as note
from _swe s join _files f using (file_no);

create or replace temp table _swe_steps as
select s.*, f.stem as run_id, row_number() over (partition by s.file_no order by s.record_no) - 1 as entry,
       s.record_no = max(s.record_no) over (partition by s.file_no) and trim(coalesce(action, '')) like 'submit%' as is_submit,
       nullif(split_part(trim(coalesce(action, '')), ' ', 1), '') as tool_name,
       json_object('command', trim(action)) as args
from _swe s join _stage_records r using (file_no, record_no) join _files f using (file_no)
where r.decision = 'load';

create or replace temp table _stage_calls as
select file_no, run_id, entry * 2 as step_idx, 0 as call_position, 'call-' || entry as call_id, tool_name, args
from _swe_steps where not is_submit and tool_name is not null;

-- A run whose model_stats record 0 tokens sent, 0 received and $0 made no provider call: SWE-agent adds every
-- query of a real model to them (its tokens by the provider's usage in 0.x, by LiteLLM's token_counter since 1.0,
-- never 0 for a prompt), so only its stand-ins for a model -- a person typing the turns (human, human_thought) or
-- a replay of earlier actions (replay: api_calls counted, nothing else) -- leave them at 0: the demonstrations.
-- Non-negative counts that add up to 0 are each 0, so every turn of such a run used 0 tokens; any other run's
-- stats are run totals that give no call its share (its turns' usage is unknown).
create or replace temp table _swe_no_usage as
select file_no from _doc
where staged_number(j -> 'info' -> 'model_stats' ->> 'tokens_sent') = 0
  and staged_number(j -> 'info' -> 'model_stats' ->> 'tokens_received') = 0
  and staged_micros(j -> 'info' -> 'model_stats' ->> 'instance_cost') = 0;

create or replace temp table _stage_steps as
select s.file_no, s.run_id, (s.entry * 2)::integer as idx, 'model' as kind, s.record_no::integer as source_line,
       left(coalesce(s.response, s.thought), 4000) as output_text, sha256(coalesce(s.response, s.thought)) as output_sha256,
       s.is_submit as is_final, case when s.is_submit then 'submit' end as finish_reason,  -- no finish reason is recorded
       case when z.file_no is not null then 0 end as input_uncached,
       case when z.file_no is not null then 0 end as cache_read,
       case when z.file_no is not null then 0 end as cache_write_5m,
       case when z.file_no is not null then 0 end as cache_write_1h,
       case when z.file_no is not null then 0 end as output_tokens,
       case when z.file_no is not null then 0 end as reasoning_tokens
from _swe_steps s left join _swe_no_usage z using (file_no)
union all by name
select s.file_no, s.run_id, (c.step_idx + 1)::integer as idx, 'tool' as kind,
       round(s.seconds * 1000) as ms, s.record_no::integer as source_line, c.call_id,
       coalesce(s.observation, '') as result_text
from _stage_calls c join _swe_steps s on s.file_no = c.file_no and s.entry * 2 = c.step_idx;

-- Status: info.exit_status, mapped by docs/status.md. A trajectory without one (a function-calling
-- demonstration, a run cut short) says nothing of how it ended: the status is inferred — succeeded when
-- its last action is submit (the agent handed in its patch), else running (no end record); such runs are
-- marked status_inferred.
create or replace temp table _stage_runs as
with info as (select file_no, j -> 'info' as info, j -> 'info' -> 'model_stats' as stats, j ->> 'replay_config' as replay
              from _doc),
ledger as (
    select *, coalesce(staged_number(stats ->> 'api_calls'), 0) + coalesce(staged_number(stats ->> 'tokens_sent'), 0)
              + coalesce(staged_number(stats ->> 'tokens_received'), 0) <> 0 as present
    from info
),
submitted as (select file_no, any_value(observation) as submission from _swe_steps where is_submit group by file_no)
select l.file_no, f.stem as run_id, 'swe-agent' as agent,
       case when json_valid(replay) then coalesce(replay::json ->> '$.agent.model.name',
                                                  replay::json ->> '$.agent.model.model_name') end as model,
       case when info ->> 'exit_status' is not null
            then coalesce(canonical_status(info ->> 'exit_status'), 'failed')
            when s.file_no is not null then 'succeeded' else 'running' end as status,
       info ->> 'exit_status' as stop_reason,
       (info ->> 'exit_status') is null as status_inferred,  -- the harness said nothing: reconcile inferred it
       coalesce(info ->> 'submission', case when trim(s.submission) <> '' then s.submission end) as final_output,
       case when present then staged_number(stats ->> 'api_calls') end as ledger_steps,
       case when present then staged_number(stats ->> 'tokens_sent') end as ledger_input_tokens,
       case when present then staged_number(stats ->> 'tokens_received') end as ledger_output_tokens,
       case when present then staged_micros(stats ->> 'instance_cost') end as ledger_cost_micros
from ledger l join _files f using (file_no) left join submitted s using (file_no);
