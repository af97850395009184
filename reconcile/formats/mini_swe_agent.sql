-- Staging for mini-swe-agent trajectories. Input: _doc(file_no, j), one trajectory per file.

-- The run each file is, how it ended (info.exit_status, else 1.1's exit message) and its limits
-- (config.agent.step_limit / cost_limit, 0 meaning none; config.environment.timeout per command).
create or replace temp table _mini_files as
with exits as (select file_no, arg_max(m -> 'extra' ->> 'exit_status', position) as exit_status,
                      arg_max(m -> 'extra' ->> 'submission', position) as submission
               from (select file_no, unnest(messages) as m, generate_subscripts(messages, 1) as position
                     from (select file_no, json_list(j -> 'messages') as messages from _doc))
               where m ->> 'role' = 'exit' group by file_no)
select d.file_no, regexp_replace(f.stem, '\.traj$', '') as run_id, d.j -> 'info' as info,
       coalesce(d.j ->> 'trajectory_format', '') = 'mini-swe-agent-1' as bash_blocks,  -- 1: the action is in the text
       coalesce(d.j -> 'info' ->> 'exit_status', e.exit_status) as exit_status,
       nullif(coalesce(d.j -> 'info' ->> 'submission', e.submission), '') as submission,
       -- mini-swe-agent marks cache breakpoints itself only when set_cache_control is set
       d.j -> 'info' -> 'config' -> 'model' ->> 'set_cache_control' is not null as cache_control,
       nullif(staged_number(d.j -> 'info' -> 'config' -> 'agent' ->> 'step_limit'), 0) as max_steps,
       nullif(staged_micros(d.j -> 'info' -> 'config' -> 'agent' ->> 'cost_limit'), 0) as max_cost_micros,
       nullif(staged_number(d.j -> 'info' -> 'config' -> 'environment' ->> 'timeout'), 0) as tool_timeout_seconds
from _doc d join _files f using (file_no) left join exits e using (file_no);

create or replace temp table _mini as
with messages as (
    select file_no, position as record_no, m, m ->> 'role' as role,
           lag(m ->> 'role') over (partition by file_no order by position) as previous_role
    from (select file_no, unnest(messages) as m, generate_subscripts(messages, 1) as position
          from (select file_no, json_list(j -> 'messages') as messages from _doc))
)
select g.*, f.run_id, f.bash_blocks, f.cache_control,
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

-- 1.1: an exit message raised by the model client (litellm's exception, its traceback through minisweagent/models)
-- records the model call that failed and ended the run: a model step with that error and no usage.
create or replace temp table _mini_steps as
select m.*, row_number() over (partition by m.file_no order by m.record_no) - 1 as idx
from _mini m join _stage_records r using (file_no, record_no)
where r.decision = 'load' and (m.role in ('assistant', 'tool', 'user')
      or (m.role = 'exit' and (starts_with(m.m -> 'extra' ->> 'exception_str', 'litellm.')
                               or contains(m.m -> 'extra' ->> 'traceback', '/minisweagent/models/'))));

create or replace temp table _stage_calls as
select s.file_no, s.run_id, s.idx as step_idx, c.position - 1 as call_position, c.call ->> 'id' as call_id,
       c.call -> 'function' ->> 'name' as tool_name,
       coalesce(try(json(c.call -> 'function' ->> 'arguments')), to_json(c.call -> 'function' ->> 'arguments')) as args
from (select *, json_list(m -> 'tool_calls') as calls from _mini_steps
      where role = 'assistant' and not bash_blocks and not submits) s,
     (select unnest(s.calls) as call, generate_subscripts(s.calls, 1) as position) c
union all
select file_no, run_id, idx, 0, 'call-' || record_no, 'bash', json_object('command', command)
from _mini_steps where role = 'assistant' and command is not null and not submits;

create or replace temp table _stage_steps as
with usage as (
    select s.*, s.m -> 'extra' -> 'response' -> 'usage' as u,
           try(to_timestamp(staged_number(s.m -> 'extra' -> 'response' ->> 'created'))) as created
    from _mini_steps s where s.role = 'assistant'
),
counts as (
    select *, staged_number(u ->> 'prompt_tokens') as prompt,
           coalesce(staged_number(u -> 'prompt_tokens_details' ->> 'cached_tokens'),
                    staged_number(u ->> 'prompt_cache_hit_tokens')) as cached,
           -- a write count the usage reports (LiteLLM passes Anthropic's cache_creation_input_tokens, OpenRouter
           -- cache_write_tokens); none reported where the cache is (reads known) and the run set no cache
           -- control: only the provider's automatic cache ran, which bills no writes (zero_buckets)
           coalesce(staged_number(u ->> 'cache_creation_input_tokens'),
                    staged_number(u -> 'prompt_tokens_details' ->> 'cache_write_tokens'),
                    case when not cache_control and coalesce(u -> 'prompt_tokens_details' ->> 'cached_tokens',
                                                             u ->> 'prompt_cache_hit_tokens') is not null then 0 end)
               as written
    from usage
)
select file_no, run_id, idx::integer as idx, 'model' as kind, record_no::integer as source_line, created as started_at,
       m -> 'extra' -> 'response' ->> 'model' as model, m -> 'extra' -> 'response' ->> 'id' as response_id,
       -- OpenAI-style usage overlaps (cached and written within prompt_tokens, reasoning within completion);
       -- ours is disjoint. A usage that reports no cache (no prompt_tokens_details, no DeepSeek hit/miss) leaves
       -- the split unknown (NULL); prompt_tokens is still the whole input (context_tokens).
       coalesce(prompt - cached - written, staged_number(u ->> 'prompt_cache_miss_tokens')) as input_uncached,
       cached as cache_read, written as cache_write_5m,
       case when written is not null then 0 end as cache_write_1h,  -- mini never asks for a 1-hour cache
       staged_number(u ->> 'completion_tokens') as output_tokens,
       staged_number(u -> 'completion_tokens_details' ->> 'reasoning_tokens') as reasoning_tokens,
       coalesce(prompt, staged_number(u ->> 'prompt_cache_hit_tokens') + staged_number(u ->> 'prompt_cache_miss_tokens'))
           as context_tokens,
       coalesce(staged_micros(m -> 'extra' ->> 'cost'), staged_micros(u ->> 'cost')) as harness_cost_micros,
       m -> 'extra' -> 'response' -> 'choices' -> 0 ->> 'finish_reason' as finish_reason,
       nullif(m ->> 'content', '') as output_text, submits as is_final
from counts
union all by name
select file_no, run_id, idx::integer as idx, 'model' as kind, record_no::integer as source_line,
       left(m -> 'extra' ->> 'exception_str', 1000) as error,
       case when regexp_matches(m -> 'extra' ->> 'exception_str', '^litellm\.RateLimitError') then 'rate_limit'
            when regexp_matches(m -> 'extra' ->> 'exception_str',
                                '^litellm\.(Timeout|APIConnectionError|InternalServerError|ServiceUnavailableError|BadGatewayError)')
            then 'transport' end as error_class,
       false as is_final
from _mini_steps where role = 'exit'
union all by name
select file_no, run_id, idx::integer as idx, 'tool' as kind, source_line, call_id, result_text,
       -- the command's exit code (1.1: extra.returncode; both: the observation's <returncode>N</returncode>);
       -- a command the harness killed at its timeout is a timeout (1: the timeout template; 1.1: TimeoutExpired)
       case when timed_out then 'timeout' when returncode = 0 then 'ok' when returncode is not null then 'error' end
           as tool_status,
       case when timed_out or returncode <> 0
            then coalesce(nullif(exception, ''), case when timed_out then 'timed out' else 'returncode ' || returncode end)
       end as error
from (
    select s.file_no, s.run_id, s.idx, s.record_no::integer as source_line,
           case when s.role = 'tool' then s.m ->> 'tool_call_id' else 'call-' || (s.record_no - 1) end as call_id,
           coalesce(s.m ->> 'content', '') as result_text, s.m -> 'extra' ->> 'exception_info' as exception,
           coalesce(try_cast(s.m -> 'extra' ->> 'returncode' as integer),
                    try_cast(regexp_extract(coalesce(s.m ->> 'content', ''),
                                            '^\s*(?:<exception>(?s:.*?)</exception>\s*)?<returncode>(-?\d+)</returncode>', 1)
                             as integer)) as returncode,
           coalesce(s.m -> 'extra' -> 'extra' ->> 'exception_type' = 'TimeoutExpired'
                    or regexp_matches(s.m -> 'extra' ->> 'exception_info', 'timed out after'), false)
               or (s.bash_blocks and regexp_matches(coalesce(s.m ->> 'content', ''),
                                                    '^\s*The last command <command>(?s:.*)</command> timed out and has been killed'))
               as timed_out
    from _mini_steps s where s.role = 'tool' or s.observation
);

-- Status: the exit status, mapped by docs/status.md (an exception's name, InternalServerError …: failed).
-- mini-swe-agent keeps no wall clock: its "Timeout" is litellm's exception for a model call that timed out in
-- transport, which ended the run (failed), not a time limit that stopped it (timed_out).
-- Without one the harness said nothing of how the run ended: inferred — succeeded when the agent's last
-- message submits, else running (no end record); such runs are marked status_inferred.
create or replace temp table _stage_runs as
with models as (select file_no, arg_min(model, idx) filter (where model is not null) as model
                from _stage_steps where kind = 'model' group by file_no),
span as (select file_no, min(started_at) as started_at, max(started_at) as last_at from _stage_steps group by file_no),
last_word as (select file_no, arg_max(submits, record_no) as submitted from _mini where role = 'assistant' group by file_no)
select f.file_no, f.run_id, 'mini-swe-agent' as agent, m.model, s.started_at,
       case when f.exit_status is not null then s.last_at end as ended_at,
       case when f.exit_status = 'Timeout' then 'failed'
            when f.exit_status is not null then coalesce(canonical_status(f.exit_status), 'failed')
            when w.submitted then 'succeeded' else 'running' end as status,
       f.exit_status as stop_reason, f.submission as final_output,
       f.exit_status is null as status_inferred,  -- the harness said nothing: reconcile inferred it
       staged_micros(f.info -> 'model_stats' ->> 'instance_cost') as ledger_cost_micros,
       f.max_steps, f.max_cost_micros, f.tool_timeout_seconds
from _mini_files f left join models m using (file_no) left join span s using (file_no)
left join last_word w using (file_no);
