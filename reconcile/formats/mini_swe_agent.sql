-- Staging for mini-swe-agent trajectories. Input: _doc(file_no, j), one trajectory per file.

create or replace temp table _mini_files as
select d.file_no, regexp_replace(f.stem, '\.traj$', '') as run_id, d.j -> 'info' as info,
       coalesce(d.j ->> 'trajectory_format', '') = 'mini-swe-agent-1' as bash_blocks  -- 1: the action is in the text
from _doc d join _files f using (file_no);

create or replace temp table _mini as
with messages as (
    select file_no, position as record_no, m, m ->> 'role' as role,
           lag(m ->> 'role') over (partition by file_no order by position) as previous_role
    from (select file_no, unnest(json_list(j -> 'messages')) as m,
                 generate_subscripts(json_list(j -> 'messages'), 1) as position from _doc)
)
select g.*, f.run_id, f.bash_blocks,
       case when f.bash_blocks and g.role = 'assistant'
            then nullif(trim(regexp_extract(g.m ->> 'content', '(?s)```bash[ \t]*\n(.*?)```', 1)), '') end as command,
       -- the agent submits by echoing its sentinel: that is its final answer, not a tool call
       g.role = 'assistant' and regexp_matches(coalesce(g.m ->> 'content', '') || coalesce((g.m -> 'tool_calls')::varchar, ''),
                                               '{{ submit_pattern }}') as submits
from messages g join _mini_files f using (file_no);

-- 1: a user message right after an assistant that ran a command is that command's observation.
create or replace temp table _mini as
select *, bash_blocks and role = 'user' and previous_role = 'assistant'
          and lag(command) over (partition by file_no order by record_no) is not null
          and not lag(submits) over (partition by file_no order by record_no) as observation,
       bash_blocks and role = 'user' and coalesce(lag(submits) over (partition by file_no order by record_no), false)
          as submission
from _mini;

create or replace temp table _stage_records as
select file_no, record_no, m::varchar as raw, run_id,
       case when role not in ('system', 'user', 'assistant', 'tool', 'exit') or role is null then 'reject'
            when role in ('assistant', 'tool', 'exit') or observation then 'load' else 'skip' end as decision,
       case when role is null then 'message ' || record_no || ' has no "role"'
            when role not in ('system', 'user', 'assistant', 'tool', 'exit')
                then 'message ' || record_no || ' has role ' || left(role, 40) || '; expected system, user, assistant, tool or exit'
            when role = 'system' then 'the system prompt (not a step)'
            when submission then 'the submission (the run''s final output, info.submission)'
            when role = 'user' and not observation then 'a prompt to the model (not a step)' end as note
from _mini;

create or replace temp table _mini_steps as
select m.*, row_number() over (partition by m.file_no order by m.record_no) - 1 as idx
from _mini m join _stage_records r using (file_no, record_no)
where r.decision = 'load' and m.role in ('assistant', 'tool', 'user');

create or replace temp table _stage_calls as
select s.file_no, s.run_id, s.idx as step_idx, c.position - 1 as call_position, c.call ->> 'id' as call_id,
       c.call -> 'function' ->> 'name' as tool_name,
       coalesce(try(json(c.call -> 'function' ->> 'arguments')), to_json(c.call -> 'function' ->> 'arguments')) as args
from _mini_steps s, (select unnest(json_list(s.m -> 'tool_calls')) as call,
                            generate_subscripts(json_list(s.m -> 'tool_calls'), 1) as position) c
where s.role = 'assistant' and not s.bash_blocks and not s.submits
union all
select file_no, run_id, idx, 0, 'call-' || record_no, 'bash', json_object('command', command)
from _mini_steps where role = 'assistant' and command is not null and not submits;

create or replace temp table _stage_steps as
with usage as (
    select s.*, s.m -> 'extra' -> 'response' -> 'usage' as u,
           try(to_timestamp(staged_number(s.m -> 'extra' -> 'response' ->> 'created'))) as created
    from _mini_steps s where s.role = 'assistant'
)
select file_no, run_id, idx::integer as idx, 'model' as kind, record_no::integer as source_line, created as started_at,
       m -> 'extra' -> 'response' ->> 'model' as model, m -> 'extra' -> 'response' ->> 'id' as response_id,
       -- OpenAI-style usage overlaps (cached within prompt, reasoning within completion); ours is disjoint
       staged_number(u ->> 'prompt_tokens') - coalesce(staged_number(u -> 'prompt_tokens_details' ->> 'cached_tokens'),
                                                        staged_number(u ->> 'prompt_cache_hit_tokens'), 0) as input_uncached,
       case when u ->> 'prompt_tokens' is not null
            then coalesce(staged_number(u -> 'prompt_tokens_details' ->> 'cached_tokens'),
                          staged_number(u ->> 'prompt_cache_hit_tokens'), 0) end as cache_read,
       case when u ->> 'prompt_tokens' is not null then 0 end as cache_write_5m,
       case when u ->> 'prompt_tokens' is not null then 0 end as cache_write_1h,
       staged_number(u ->> 'completion_tokens') as output_tokens,
       staged_number(u -> 'completion_tokens_details' ->> 'reasoning_tokens') as reasoning_tokens,
       staged_number(u ->> 'prompt_tokens') as context_tokens,
       coalesce(staged_micros(m -> 'extra' ->> 'cost'), staged_micros(u ->> 'cost')) as harness_cost_micros,
       m -> 'extra' -> 'response' -> 'choices' -> 0 ->> 'finish_reason' as finish_reason,
       nullif(m ->> 'content', '') as output_text, submits as is_final
from usage
union all by name
select s.file_no, s.run_id, s.idx::integer as idx, 'tool' as kind, s.record_no::integer as source_line,
       case when s.role = 'tool' then s.m ->> 'tool_call_id' else 'call-' || (s.record_no - 1) end as call_id,
       coalesce(s.m ->> 'content', '') as result_text
from _mini_steps s where s.role = 'tool' or s.observation;

create or replace temp table _stage_runs as
with models as (select file_no, arg_min(model, idx) filter (where model is not null) as model
                from _stage_steps where kind = 'model' group by file_no),
span as (select file_no, min(started_at) as started_at, max(started_at) as last_at from _stage_steps group by file_no)
select f.file_no, f.run_id, 'mini-swe-agent' as agent, m.model, s.started_at,
       case when f.info ->> 'exit_status' is not null then s.last_at end as ended_at,
       coalesce(canonical_status(f.info ->> 'exit_status'), case when f.info ->> 'exit_status' is not null
                then 'failed' end, 'running') as status,  -- an exception's name (InternalServerError, …): failed
       f.info ->> 'exit_status' as stop_reason, nullif(f.info ->> 'submission', '') as final_output,
       staged_micros(f.info -> 'model_stats' ->> 'instance_cost') as ledger_cost_micros
from _mini_files f left join models m using (file_no) left join span s using (file_no);
