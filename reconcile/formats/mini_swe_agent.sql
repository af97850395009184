-- Staging for mini-swe-agent trajectories. Input: _doc(file_no, j), one trajectory per file.

-- Every message, and what it is. A model call is an assistant message, or (the Responses-API model class) a
-- response object with no role; the provider's response is its extra.response (the object itself in the Responses
-- API). A reply the harness refused (2.x: a format error) is billed too: mini keeps it, with its cost, on the user
-- message that answers it (extra.response, extra.cost). A command's result is a tool message (tool calls), a
-- function_call_output item (Responses API) or, in text mode, a user message (below).
create or replace temp table _mini_msgs as
select file_no, position::integer as record_no, m, m ->> 'role' as role, m -> 'extra' as x,
       case when m ->> 'role' is null and m ->> 'object' = 'response' then m else m -> 'extra' -> 'response' end as r,
       case when m ->> 'role' = 'system' then 'system'
            when m ->> 'role' = 'assistant' or (m ->> 'role' is null and m ->> 'object' = 'response') then 'call'
            when m ->> 'role' = 'tool' or (m ->> 'role' is null and m ->> 'type' = 'function_call_output') then 'result'
            when m ->> 'role' = 'exit' then 'exit'
            when m ->> 'role' = 'user' and json_type(m -> 'extra' -> 'response') = 'OBJECT' then 'refused'
            when m ->> 'role' = 'user' then 'user'
       end as kind,
       -- the message's text (a Responses-API message holds a list of input_text parts)
       case when json_type(m -> 'content') = 'ARRAY'
            then array_to_string(list_transform(json_list(m -> 'content'), lambda c: coalesce(c ->> 'text', '')), '')
            else m ->> 'content' end as text,
       try(to_timestamp(staged_number(m -> 'extra' ->> 'timestamp'))) as ts
from (select file_no, unnest(messages) as m, generate_subscripts(messages, 1) as position
      from (select file_no, json_list(j -> 'messages') as messages from _doc));

-- Time (2.x): mini stamps a reply when it arrived and an observation when its command ended (extra.timestamp), and
-- checks its limits and asks for the next reply right after the latest of them: a model call started at the latest
-- stamp before it (the first one at its own: the run's start), and took until its own where the message before it
-- is stamped (a format error's is not); a result is at its own stamp (its command's end: nothing says when the
-- command started). 1.x stamps nothing: a call's time is its response's created.
create or replace temp table _mini_msgs as
select *, max(ts) over (partition by file_no order by record_no rows between unbounded preceding and 1 preceding)
              as previous_ts,
          lag(ts) over (partition by file_no order by record_no) as stamp_before  -- NULL: a format error came between
from _mini_msgs;

-- The commands each model call asked for: its tool calls (an OpenAI-style tool_calls list; the Responses API's
-- function_call items), else (text mode) the actions mini parsed from its text (2.x: extra.actions), else (1.x) the
-- one ```bash block of its text (none, or several, is a format error: no command).
create or replace temp table _mini_actions as
with calls as (select * from _mini_msgs where kind = 'call'),
tool_calls as (
    select s.file_no, s.record_no, c.position - 1 as position, c.call ->> 'id' as call_id,
           c.call -> 'function' ->> 'name' as tool_name,
           coalesce(try(json(c.call -> 'function' ->> 'arguments')), to_json(c.call -> 'function' ->> 'arguments')) as args
    from (select *, json_list(m -> 'tool_calls') as list from calls where len(json_list(m -> 'tool_calls')) > 0) s,
         (select unnest(s.list) as call, generate_subscripts(s.list, 1) as position) c
),
items as (
    select s.file_no, s.record_no, row_number() over (partition by s.file_no, s.record_no order by c.position) - 1
               as position, c.item ->> 'call_id' as call_id, c.item ->> 'name' as tool_name,
           coalesce(try(json(c.item ->> 'arguments')), to_json(c.item ->> 'arguments')) as args
    from (select *, json_list(m -> 'output') as list from calls where m ->> 'object' = 'response') s,
         (select unnest(s.list) as item, generate_subscripts(s.list, 1) as position) c
    where c.item ->> 'type' = 'function_call'
),
parsed as (
    select s.file_no, s.record_no, a.position - 1 as position, a.action ->> 'command' as command
    from (select *, json_list(x -> 'actions') as list from calls
          where len(json_list(m -> 'tool_calls')) = 0 and m ->> 'object' is distinct from 'response'
            and json_type(x -> 'actions') = 'ARRAY') s,
         (select unnest(s.list) as action, generate_subscripts(s.list, 1) as position) a
),
blocks as (
    select file_no, record_no, 0 as position, trim(found[1]) as command
    from (select *, regexp_extract_all(coalesce(text, ''), '(?s)```(?:bash|mswea_bash_command)[ \t]*\n(.*?)```', 1)
                        as found
          from calls where len(json_list(m -> 'tool_calls')) = 0 and m ->> 'object' is distinct from 'response'
            and json_type(x -> 'actions') is distinct from 'ARRAY')
    where len(found) = 1 and trim(found[1]) <> ''
)
select file_no, record_no, position, call_id, tool_name, args, false as text_mode from tool_calls
union all
select file_no, record_no, position, call_id, tool_name, args, false from items
union all
select file_no, record_no, position, 'call-' || record_no || case when position > 0 then '-' || position else '' end,
       'bash', json_object('command', command), true
from (select * from parsed union all select * from blocks);

-- The run each file is, how it ended (info.exit_status, else 2.x's exit message) and its limits
-- (config.agent.step_limit / cost_limit / wall_time_limit_seconds, 0 meaning none; config.environment.timeout
-- per command). The run's id: see ``reconcile.formats.mini_swe_agent`` (the file's name; a name mini gives to many
-- runs — the SWE-bench runner's <instance>.traj.json, the CLI's last_mini_run.traj.json — takes a digest of the
-- run's opening: its output path and model configuration, and its messages up to its first model call).
create or replace temp table _mini_files as
with exits as (  -- the exit message: its extra, else its content (the status's name, or the submission)
    select file_no, arg_max(coalesce(x ->> 'exit_status',
                                     case when regexp_full_match(trim(text), '[A-Z][A-Za-z]+') then trim(text) end),
                            record_no) as exit_status,
           arg_max(x ->> 'submission', record_no) as submission, arg_max(text, record_no) as content
    from _mini_msgs where kind = 'exit' group by file_no
),
first_call as (select file_no, min(record_no) as record_no from _mini_msgs where kind in ('call', 'refused')
               group by file_no),
opening as (select g.file_no, string_agg(g.m::varchar, chr(10) order by g.record_no) as text
            from _mini_msgs g left join first_call c using (file_no)
            where c.record_no is null or g.record_no <= c.record_no group by g.file_no),
named as (
    select d.file_no, d.j, d.j -> 'info' as info, regexp_replace(f.stem, '\.traj$', '') as name,
           d.j -> 'info' -> 'config' -> 'model' ->> 'model_name' as model_name,
           coalesce(d.j -> 'info' -> 'config' ->> 'model_type', '') as model_type,
           -- the configuration's parts a run never changes (InteractiveAgent rewrites agent.mode when the user
           -- switches modes): where it was told to write, and its model (with a test model's scripted replies)
           left(sha256(coalesce(d.j -> 'info' -> 'config' -> 'agent' ->> 'output_path', '') || chr(10)
                       || coalesce((d.j -> 'info' -> 'config' -> 'model')::varchar, '') || chr(10) || coalesce(o.text, '')),
                8) as digest
    from _doc d join _files f using (file_no) left join opening o using (file_no)
)
select n.file_no,
       -- never the file's name alone: mini names every attempt of an instance alike, rewrites last_mini_run, and a
       -- name someone chose may be chosen twice; the opening's digest tells two runs apart and a copy for the same
       n.name || '@' || n.digest as run_id,
       n.info,
       coalesce(n.info ->> 'exit_status', e.exit_status) as exit_status,
       coalesce(n.info ->> 'submission', e.submission,
                case when coalesce(n.info ->> 'exit_status', e.exit_status) = 'Submitted' then e.content end) as submission,
       -- mini-swe-agent marks cache breakpoints itself only when set_cache_control is set
       n.info -> 'config' -> 'model' ->> 'set_cache_control' is not null as cache_control,
       -- the model the configuration asked for, and whose API billed it: OpenRouter for its model class, else
       -- LiteLLM's provider prefix (openai/gpt-5-mini); the test models (deterministic) call none
       n.model_name,
       case when n.model_type ilike '%openrouter%' then 'openrouter'
            when n.model_type ilike '%test_models%' then null
            when contains(coalesce(n.model_name, ''), '/') then lower(split_part(n.model_name, '/', 1)) end as provider,
       nullif(staged_number(n.info -> 'config' -> 'agent' ->> 'step_limit'), 0) as max_steps,
       nullif(staged_micros(n.info -> 'config' -> 'agent' ->> 'cost_limit'), 0) as max_cost_micros,
       nullif(staged_number(n.info -> 'config' -> 'agent' ->> 'wall_time_limit_seconds'), 0) as max_wall_seconds,
       nullif(staged_number(n.info -> 'config' -> 'environment' ->> 'timeout'), 0) as tool_timeout_seconds,
       staged_micros(n.info -> 'model_stats' ->> 'instance_cost') as ledger_cost_micros,
       n.info -> 'model_stats' ->> 'api_calls' as api_calls
from named n left join exits e using (file_no);

-- The step that submitted: the last model call of a run that ended Submitted (mini raises Submitted while it runs that
-- reply's commands: nothing follows it), or, with no exit status recorded, the last call when its command echoes the
-- sentinel (a mention elsewhere, or a sentinel not on the first line of the output, submits nothing). Within it, the
-- submitting command is the first that has no result of its own (InteractiveAgent writes the commands before it and
-- then its "action was not executed" placeholder; DefaultAgent writes none), the one that echoes the sentinel first.
create or replace temp table _mini_submit as
with last_call as (select file_no, max(record_no) as record_no from _mini_msgs where kind = 'call' group by file_no),
echoes as (select file_no, record_no, bool_or(regexp_matches(coalesce(args ->> 'command', ''),
                                                            '^\s*echo\s+["'']?({{ submit_pattern }})')) as echoes
           from _mini_actions group by all),
submitted as (
    select f.file_no, l.record_no
    from _mini_files f join last_call l using (file_no) left join echoes e using (file_no, record_no)
    where f.exit_status = 'Submitted' or (f.exit_status is null and coalesce(e.echoes, false))
),
answered as (  -- call ids with a result of their own (not the placeholder of a command that never ran)
    select distinct file_no, coalesce(m ->> 'tool_call_id', m ->> 'call_id') as call_id from _mini_msgs
    where kind = 'result' and x ->> 'exception_info' is distinct from 'action was not executed'
)
select s.file_no, s.record_no,
       arg_min(a.position, [not regexp_matches(coalesce(a.args ->> 'command', ''), '{{ submit_pattern }}')::integer,
                            a.position]) filter (where w.call_id is null) as position
from submitted s left join _mini_actions a using (file_no, record_no)
left join answered w on w.file_no = a.file_no and w.call_id = a.call_id and not a.text_mode
group by s.file_no, s.record_no;

-- Text mode: a user message is a command's result when mini wrote it as one (2.x: extra.returncode), or (1.x: no
-- extra) when it answers a call that ran a command — not the submitting one, whose output (1.x) is the submission.
-- It answers the latest call before it, in the order of that call's commands.
create or replace temp table _mini_text_results as
with marked as (
    select g.*, max(case when kind = 'call' then record_no end)
                    over (partition by file_no order by record_no rows between unbounded preceding and 1 preceding)
                    as call_record,
           lag(kind) over (partition by file_no order by record_no) as previous_kind
    from _mini_msgs g
)
select m.file_no, m.record_no, m.call_record,
       'call-' || m.call_record || case when n > 0 then '-' || n else '' end as call_id
from (select *, row_number() over (partition by file_no, call_record order by record_no) - 1 as n
      from marked
      where kind = 'user' and call_record is not null
        and (x ->> 'returncode' is not null
             or (x is null and previous_kind = 'call'
                 and exists (select 1 from _mini_actions a where a.file_no = marked.file_no
                             and a.record_no = marked.call_record and a.text_mode)
                 and not exists (select 1 from _mini_submit s where s.file_no = marked.file_no
                                 and s.record_no = marked.call_record)))) m;

-- The tool steps: each result, read for its exit code; and each command the submitting reply asked for after the
-- submit and that the harness therefore never ran, where nothing records it (DefaultAgent).
create or replace temp table _mini_results as
with results as (
    select g.file_no, g.record_no, 0 as sub, coalesce(g.m ->> 'tool_call_id', g.m ->> 'call_id', t.call_id) as call_id,
           g.ts, case when g.kind = 'result' then coalesce(g.text, g.m ->> 'output', '') else coalesce(g.text, '') end
               as result_text,
           g.x, coalesce(g.x ->> 'exception_info' = 'action was not executed', false) as placeholder
    from _mini_msgs g left join _mini_text_results t using (file_no, record_no)
    where g.kind = 'result' or t.record_no is not null
),
unrecorded as (
    select a.file_no, s.record_no, 1 + a.position as sub, a.call_id, null::timestamptz as ts, null::varchar as result_text,
           null::json as x, true as placeholder
    from _mini_submit s join _mini_actions a on a.file_no = s.file_no and a.record_no = s.record_no
                                              and a.position > s.position
    where not exists (select 1 from results r where r.file_no = a.file_no and r.call_id = a.call_id)
)
select r.*, a.record_no as call_record, a.position as call_position,
       coalesce(s.position = a.position, false) as submits,  -- the submit's own placeholder
       coalesce(a.position > s.position, false) as after_submit
from (select * from results union all select * from unrecorded) r
left join _mini_actions a on a.file_no = r.file_no and a.call_id = r.call_id
left join _mini_submit s on s.file_no = a.file_no and s.record_no = a.record_no;

-- A trajectory whose ledger shows money while no message of it is a model call this reader knows is not read as a
-- run that cost nothing: every record is rejected (the file fails, and ingest names it).
create or replace temp table _mini_unread as
select f.file_no, f.ledger_cost_micros, f.api_calls from _mini_files f
where coalesce(f.ledger_cost_micros, 0) > 0
  and not exists (select 1 from _mini_msgs g where g.file_no = f.file_no and g.kind in ('call', 'refused'))
  and not exists (select 1 from _mini_msgs g where g.file_no = f.file_no and g.kind = 'exit'
                  and (starts_with(g.x ->> 'exception_str', 'litellm.') or contains(g.x ->> 'traceback', '/minisweagent/models/')));

create or replace temp table _stage_records as
select g.file_no, g.record_no, g.m::varchar as raw, f.run_id,
       case when u.file_no is not null then 'reject'
            when g.kind is null then 'reject'
            when g.kind in ('call', 'refused', 'exit') then 'load'
            when r.record_no is not null and r.submits and r.placeholder then 'skip'
            when r.record_no is not null then 'load'
            else 'skip' end as decision,
       case when u.file_no is not null
                then 'the ledger (info.model_stats.instance_cost) records $' || (u.ledger_cost_micros / 1e6)::varchar
                     || coalesce(' over ' || u.api_calls || ' API call(s)', '') || ', yet no message of this trajectory '
                     || 'is a model call mini_swe_agent reads: not read as a run that cost nothing'
            when g.role is null and g.kind is null then 'message ' || g.record_no || ' has no "role"'
            when g.kind is null
                then 'message ' || g.record_no || ' has role ' || left(g.role, 40) || '; expected system, user, assistant, tool or exit'
            when g.kind = 'system' then 'the system prompt (not a step)'
            when r.record_no is not null and r.submits and r.placeholder
                then 'the submit command''s placeholder (it ran and submitted: what it printed is the submission, info.submission)'
            when g.kind = 'user' and g.record_no = s.record_no + 1 and f.submission is not null
                then 'the submission (the run''s final output, info.submission)'
            when g.kind = 'user' and r.record_no is null then 'a prompt to the model (not a step)' end as note
from _mini_msgs g join _mini_files f using (file_no)
left join _mini_results r on r.file_no = g.file_no and r.record_no = g.record_no and r.sub = 0
left join _mini_submit s on s.file_no = g.file_no
left join _mini_unread u on u.file_no = g.file_no;

-- The model steps: every billed call — an assistant message, a Responses-API response, the refused reply of a format
-- error — and (1.1) an exit raised by the model client (litellm's exception, its traceback through
-- minisweagent/models): the model call that failed and ended the run, with that error and no usage.
create or replace temp table _mini_calls as
with billed as (
    select g.*, g.r -> 'usage' as u,
           -- asked right after the stamp before it; the first call, which none precedes, when the provider created
           -- its response (whole seconds: not after the ask); else at its own stamp
           coalesce(g.previous_ts, try(to_timestamp(staged_number(coalesce(g.r ->> 'created', g.r ->> 'created_at')))),
                    g.ts) as started_at
    from _mini_msgs g join _stage_records d using (file_no, record_no)
    where d.decision = 'load' and g.kind in ('call', 'refused')
),
counts as (
    select *, coalesce(staged_number(u ->> 'prompt_tokens'), staged_number(u ->> 'input_tokens')) as prompt,
           coalesce(staged_number(u -> 'prompt_tokens_details' ->> 'cached_tokens'),
                    staged_number(u ->> 'prompt_cache_hit_tokens'),
                    staged_number(u -> 'input_tokens_details' ->> 'cached_tokens')) as cached,
           -- a write count the usage reports (LiteLLM passes Anthropic's cache_creation_input_tokens, OpenRouter
           -- cache_write_tokens); none reported where the cache is (reads known) and the run set no cache
           -- control: only the provider's automatic cache ran, which bills no writes (zero_buckets)
           coalesce(staged_number(u ->> 'cache_creation_input_tokens'),
                    staged_number(u -> 'prompt_tokens_details' ->> 'cache_write_tokens'),
                    case when not f.cache_control
                              and coalesce(u -> 'prompt_tokens_details' ->> 'cached_tokens', u ->> 'prompt_cache_hit_tokens',
                                           u -> 'input_tokens_details' ->> 'cached_tokens') is not null then 0 end)
               as written,
           staged_number(u -> 'prompt_tokens_details' -> 'cache_creation_token_details' ->> 'ephemeral_1h_input_tokens')
               as written_1h
    from billed join _mini_files f using (file_no)
)
select c.file_no, f.run_id, c.record_no, 'model' as kind, c.record_no as source_line, c.started_at,
       date_diff('millisecond', c.stamp_before, c.ts) as ms,
       c.r ->> 'model' as model, c.r ->> 'id' as response_id,
       -- OpenAI-style usage overlaps (cached and written within prompt_tokens, reasoning within completion);
       -- ours is disjoint. A usage that reports no cache (no prompt_tokens_details, no DeepSeek hit/miss) leaves
       -- the split unknown (NULL); prompt_tokens is still the whole input (context_tokens).
       coalesce(c.prompt - c.cached - c.written, staged_number(c.u ->> 'prompt_cache_miss_tokens')) as input_uncached,
       c.cached as cache_read, c.written - coalesce(c.written_1h, 0) as cache_write_5m,
       case when c.written is not null then coalesce(c.written_1h, 0) end as cache_write_1h,
       coalesce(staged_number(c.u ->> 'completion_tokens'), staged_number(c.u ->> 'output_tokens')) as output_tokens,
       coalesce(staged_number(c.u -> 'completion_tokens_details' ->> 'reasoning_tokens'),
                staged_number(c.u -> 'output_tokens_details' ->> 'reasoning_tokens')) as reasoning_tokens,
       coalesce(c.prompt, staged_number(c.u ->> 'prompt_cache_hit_tokens') + staged_number(c.u ->> 'prompt_cache_miss_tokens'))
           as context_tokens,
       coalesce(staged_micros(c.x ->> 'cost'), staged_micros(c.u ->> 'cost')) as harness_cost_micros,
       coalesce(c.r -> 'choices' -> 0 ->> 'finish_reason', c.r -> 'incomplete_details' ->> 'reason', c.r ->> 'status')
           as finish_reason,
       nullif(coalesce(case when c.kind = 'call' and c.m ->> 'object' is distinct from 'response' then c.text end,
                       c.r -> 'choices' -> 0 -> 'message' ->> 'content', c.x ->> 'model_response',
                       -- a Responses-API response's text: its message items' output_text parts
                       array_to_string(list_transform(list_filter(json_list(c.r -> 'output'),
                                                                  lambda o: o ->> 'type' = 'message'),
                                                      lambda o: array_to_string(list_transform(json_list(o -> 'content'),
                                                          lambda p: coalesce(p ->> 'text', '')), '')), '')), '')
           as output_text,
       -- the harness refused the reply: a format error (mini 2.x), the error template's <error> or its first line
       case when c.kind = 'refused'
            then coalesce(c.x ->> 'interrupt_type', 'FormatError') || ': '
                 || left(trim(regexp_replace(coalesce(nullif(trim(regexp_extract(c.text, '(?s)<error>(.*?)</error>', 1)), ''),
                                                      split_part(ltrim(coalesce(c.text, '')), chr(10), 1)), '\s+', ' ', 'g')),
                         1000) end as error,
       case when c.kind = 'refused' then 'invalid_output' end as error_class,
       coalesce(s.record_no = c.record_no, false) as is_final
from counts c join _mini_files f using (file_no) left join _mini_submit s using (file_no)
union all by name
select g.file_no, f.run_id, g.record_no, 'model' as kind, g.record_no as source_line,
       left(g.x ->> 'exception_str', 1000) as error,
       case when regexp_matches(g.x ->> 'exception_str', '^litellm\.RateLimitError') then 'rate_limit'
            when regexp_matches(g.x ->> 'exception_str',
                                '^litellm\.(Timeout|APIConnectionError|InternalServerError|ServiceUnavailableError|BadGatewayError)')
            then 'transport' end as error_class,
       false as is_final
from _mini_msgs g join _mini_files f using (file_no) join _stage_records d using (file_no, record_no)
where d.decision = 'load' and g.kind = 'exit'
  and (starts_with(g.x ->> 'exception_str', 'litellm.') or contains(g.x ->> 'traceback', '/minisweagent/models/'));

create or replace temp table _mini_tools as
select r.file_no, f.run_id, r.record_no, r.sub, 'tool' as kind, r.record_no as source_line, r.ts as started_at,
       r.call_id, r.result_text,
       -- the command's exit code (extra.returncode; the observation's <returncode>N</returncode>, or the "returncode"
       -- of mini.yaml's JSON observation); a command the harness killed at its timeout is a timeout (1: the timeout
       -- template; 2.x: TimeoutExpired); a command the harness never ran (after the submit) was not run
       case when r.placeholder then 'not_run' when timed_out then 'timeout' when returncode = 0 then 'ok'
            when returncode is not null then 'error' end as tool_status,
       case when r.placeholder
            then 'not run: ' || case when r.after_submit then 'the run ended at the submit before it'
                                     else coalesce(r.x ->> 'exception_info', 'action was not executed') end
            when timed_out or returncode <> 0
            then coalesce(nullif(r.x ->> 'exception_info', ''), case when timed_out then 'timed out' else 'returncode ' || returncode end)
       end as error
from (
    select *,
           coalesce(try_cast(x ->> 'returncode' as integer),
                    try_cast(regexp_extract(coalesce(result_text, ''),
                                            '^\s*(?:<exception>(?s:.*?)</exception>\s*)?<returncode>(-?\d+)</returncode>', 1)
                             as integer),
                    try_cast(try(json(result_text)) ->> 'returncode' as integer)) as returncode,
           coalesce(x ->> 'exception_type' = 'TimeoutExpired' or x -> 'extra' ->> 'exception_type' = 'TimeoutExpired'
                    or regexp_matches(x ->> 'exception_info', 'timed out after'), false)
               or regexp_matches(coalesce(result_text, ''),
                                 '^\s*The last command <command>(?s:.*)</command> timed out and has been killed') as timed_out
    from _mini_results
) r join _mini_files f using (file_no) join _stage_records d using (file_no, record_no)
where not (r.submits and r.placeholder) and d.decision = 'load';

create or replace temp table _stage_steps as
select * exclude (record_no, sub), (row_number() over (partition by file_no order by record_no, sub) - 1)::integer as idx
from (select * exclude (record_no), record_no, 0 as sub from _mini_calls
      union all by name
      select * from _mini_tools);

create or replace temp table _stage_calls as
select f.file_no, f.run_id, c.idx as step_idx, a.position as call_position, a.call_id, a.tool_name, a.args
from _mini_actions a join _mini_files f using (file_no)
join (select file_no, source_line, idx from _stage_steps where kind = 'model') c
    on c.file_no = a.file_no and c.source_line = a.record_no
left join _mini_submit s on s.file_no = a.file_no and s.record_no = a.record_no
where s.position is null or a.position <> s.position;

-- Status: the exit status, mapped by docs/status.md (Submitted: succeeded; LimitsExceeded: budget_exceeded; an
-- exception's name, RepeatedFormatError …: failed), and mini 2.x's TimeExceeded (its wall_time_limit_seconds):
-- timed_out. mini-swe-agent 1.x keeps no wall clock: a "Timeout" is litellm's exception for a model call that timed
-- out in transport, which ended the run (failed), not a time limit that stopped it.
-- Without one the harness said nothing of how the run ended: inferred — succeeded when the last call submits, else
-- running (no end record); such runs are marked status_inferred.
create or replace temp table _stage_runs as
with models as (select file_no, arg_min(model, idx) filter (where model is not null) as model
                from _stage_steps where kind = 'model' group by file_no),
stamped as (select file_no, min(ts) as first_at, max(ts) as last_at from _mini_msgs group by file_no),
span as (select file_no, min(started_at) as started_at, max(started_at) as last_at from _stage_steps group by file_no)
select f.file_no, f.run_id, 'mini-swe-agent' as agent,
       -- the model that answered (the dated snapshot), else the one the configuration asked for
       coalesce(m.model, case when f.provider is not null and f.provider <> 'openrouter'
                              then substr(f.model_name, length(split_part(f.model_name, '/', 1)) + 2)
                              else f.model_name end) as model,
       f.provider,
       least(t.first_at, s.started_at) as started_at,  -- the first call began before its reply was stamped
       case when f.exit_status is not null then coalesce(t.last_at, s.last_at) end as ended_at,
       case when f.exit_status = 'TimeExceeded' then 'timed_out'
            when f.exit_status = 'Timeout' then 'failed'
            when f.exit_status is not null then coalesce(canonical_status(f.exit_status), 'failed')
            when b.record_no is not null then 'succeeded' else 'running' end as status,
       f.exit_status as stop_reason,
       case when f.exit_status = 'Submitted' or b.record_no is not null then f.submission
            else nullif(f.submission, '') end as final_output,
       f.exit_status is null as status_inferred,  -- the harness said nothing: reconcile inferred it
       f.ledger_cost_micros, f.max_steps, f.max_cost_micros, f.max_wall_seconds, f.tool_timeout_seconds
from _mini_files f left join models m using (file_no) left join stamped t using (file_no)
left join span s using (file_no) left join _mini_submit b using (file_no);
