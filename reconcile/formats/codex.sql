-- Staging for Codex CLI rollouts. Input: _parsed(file_no, line_no, j) for every line whose
-- fields passed the typed checks, many files at once. Output: the _stage_* tables the landing reads.
--
-- A model request's items (reasoning, assistant text, calls) sit between two inputs (a call's
-- output, a user or developer message); its token_count falls among them, before them (0.39) or
-- after them (0.104). So a *segment* — the lines between two inputs — is one model step, with
-- the usage of the new cumulative totals counted in it.

create or replace temp table _cx as
select file_no, line_no, j, j.type as type, j.payload.type as ptype, (j.timestamp)::timestamptz as ts,
       (j.type = 'response_item' and (j.payload.type in ('function_call_output', 'custom_tool_call_output')
            or (j.payload.type = 'message' and j.payload.role in ('user', 'developer')))) as is_input,
       (j.type = 'response_item' and (j.payload.type in ('function_call', 'custom_tool_call', 'reasoning')
            or (j.payload.type = 'message' and j.payload.role = 'assistant'))) as is_output
from _parsed;

create or replace temp table _cx as
select *, sum(case when is_input then 1 else 0 end) over (partition by file_no order by line_no) as segment,
       last_value(case when type = 'turn_context' then j.payload.model end ignore nulls)
           over (partition by file_no order by line_no) as model
from _cx;

-- The run each file is: its session, as the first session_meta names it (a forked file copies its
-- parent's session_meta after its own). Without one, the session id that ends the rollout's file name
-- (rollout-<time>-<session id>.jsonl). An archived copy of a session is the same run.
create or replace temp table _cx_files as
select f.file_no,
       coalesce(m.id, nullif(regexp_extract(f.stem, '([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$', 1), ''),
                f.stem) as run_id,
       m.provider, m.started_at
from _files f
left join (select file_no, arg_min(j.payload.id, line_no) as id, arg_min(j.payload.model_provider, line_no) as provider,
                  min(ts) as started_at
           from _cx where type = 'session_meta' group by file_no) m using (file_no);

-- Cumulative totals; a count equal to the one before is a repeat (some versions write each twice).
-- A request's usage is the difference of the totals; where a bucket's difference is unknown (a key
-- left out here or in the count before) it is the request's own last_token_usage, else NULL.
create or replace temp table _cx_counts as
with totals as (
    select file_no, line_no, ts, segment, j.payload.info.total_token_usage as t, j.payload.info.last_token_usage as l
    from _cx where type = 'event_msg' and ptype = 'token_count'
      and coalesce(j.payload.info.total_token_usage.input_tokens, j.payload.info.total_token_usage.cached_input_tokens,
                   j.payload.info.total_token_usage.output_tokens, j.payload.info.total_token_usage.reasoning_output_tokens,
                   j.payload.info.last_token_usage.input_tokens, j.payload.info.last_token_usage.cached_input_tokens,
                   j.payload.info.last_token_usage.output_tokens,
                   j.payload.info.last_token_usage.reasoning_output_tokens) is not null
),
compared as (
    select *, lag(t) over (partition by file_no order by line_no) as p,
           lag(line_no) over (partition by file_no order by line_no) as p_line
    from totals
),
judged as (
    select *,
           p is not null and t.input_tokens is not distinct from p.input_tokens
               and t.cached_input_tokens is not distinct from p.cached_input_tokens
               and t.output_tokens is not distinct from p.output_tokens
               and t.reasoning_output_tokens is not distinct from p.reasoning_output_tokens as repeat,
           -- a total that went down (a restarted count) gives its last request
           coalesce(t.input_tokens < p.input_tokens or t.cached_input_tokens < p.cached_input_tokens
                    or t.output_tokens < p.output_tokens, false) as restarted
    from compared
)
select file_no, line_no, ts, segment, p_line, repeat,
       case when restarted then {'input': l.input_tokens, 'cached': l.cached_input_tokens, 'output': l.output_tokens,
                                 'reasoning': l.reasoning_output_tokens}
            else {'input': coalesce(t.input_tokens - case when p is null then 0 else p.input_tokens end, l.input_tokens),
                  'cached': coalesce(t.cached_input_tokens - case when p is null then 0 else p.cached_input_tokens end,
                                     l.cached_input_tokens),
                  'output': coalesce(t.output_tokens - case when p is null then 0 else p.output_tokens end, l.output_tokens),
                  'reasoning': coalesce(t.reasoning_output_tokens - case when p is null then 0 else p.reasoning_output_tokens end,
                                        l.reasoning_output_tokens)} end as used
from judged;

-- One model step per segment that holds a new count or a model item.
create or replace temp table _cx_model as
with opened as (  -- when each segment's request was sent: its opening input line, else the session's start
    select file_no, segment, max(ts) filter (where is_input) as sent_at,
           bool_or(type = 'response_item' and ptype = 'web_search_call') as searched,  -- a hosted web search ran
           count(*) filter (where type = 'response_item' and ptype = 'web_search_call') as searches
    from _cx group by all
)
select c.file_no, c.segment,
       coalesce(min(k.line_no) filter (where not k.repeat), min(c.line_no) filter (where c.is_output)) as line_no,
       min(c.ts) filter (where c.is_output or c.line_no = k.line_no) as first_ts,
       greatest(max(c.ts) filter (where c.is_output), max(k.ts) filter (where not k.repeat)) as last_ts,
       any_value(o.sent_at) as sent_at,
       -- a bucket one of the segment's counts leaves unknown is unknown for the step
       case when bool_and(k.used.input is not null) filter (where not k.repeat) then sum(k.used.input) filter (where not k.repeat) end
           as input_tokens,
       case when bool_and(k.used.cached is not null) filter (where not k.repeat) then sum(k.used.cached) filter (where not k.repeat) end
           as cached,
       case when bool_and(k.used.output is not null) filter (where not k.repeat) then sum(k.used.output) filter (where not k.repeat) end
           as output_tokens,
       case when bool_and(k.used.reasoning is not null) filter (where not k.repeat)
            then sum(k.used.reasoning) filter (where not k.repeat) end as reasoning_tokens,
       count(k.line_no) filter (where not k.repeat) as counts,
       any_value(o.searched) as searched, any_value(o.searches) as searches,
       arg_max(c.model, c.line_no) as model
from _cx c
left join _cx_counts k on k.file_no = c.file_no and k.line_no = c.line_no
left join opened o on o.file_no = c.file_no and o.segment = c.segment
where c.is_output or (k.line_no is not null and not k.repeat)
group by c.file_no, c.segment;

-- How a call ended, where Codex says: the exit code of a command (exec_command_end), whether a patch
-- applied (patch_apply_end), an MCP tool's result (mcp_tool_call_end: Err, or Ok with isError) —
-- events paired with the call by call_id, the last one with a status counting.
create or replace temp table _cx_ends as
select file_no, line_no, j.payload.call_id as call_id,
       case ptype
           when 'exec_command_end' then case when j.payload.exit_code = 0 then 'ok' when j.payload.exit_code is not null then 'error' end
           when 'patch_apply_end' then case j.payload.success when true then 'ok' when false then 'error' end
           when 'mcp_tool_call_end' then
               case when json_type(j.payload.result, '$.Err') is not null then 'error'
                    when json_type(j.payload.result, '$.Ok') = 'OBJECT' then
                         case when coalesce(j.payload.result -> '$.Ok' ->> 'isError', j.payload.result -> '$.Ok' ->> 'is_error') = 'true'
                              then 'error' else 'ok' end end
       end as status
from _cx
where type = 'event_msg' and ptype in ('exec_command_end', 'patch_apply_end', 'mcp_tool_call_end') and j.payload.call_id is not null
qualify row_number() over (partition by file_no, j.payload.call_id order by status is null, line_no desc) = 1;

-- A call's output; a shell call's output in 0.39-era rollouts is JSON text whose metadata holds the exit code.
create or replace temp table _cx_outputs as
with outputs as (
    select file_no, line_no, ts, j.payload.call_id as call_id,
           case json_type(j.payload.output)
               when 'VARCHAR' then j.payload.output ->> '$'
               when 'NULL' then null
               else j.payload.output::varchar end as text
    from _cx where type = 'response_item' and ptype in ('function_call_output', 'custom_tool_call_output')
)
select o.* exclude (exit_code), coalesce(e.status, case when o.exit_code = 0 then 'ok' when o.exit_code is not null then 'error' end)
           as tool_status
from (select *, case when starts_with(ltrim(text), '{') then try_cast(try(json(text)) ->> '$.metadata.exit_code' as bigint) end
                    as exit_code
      from outputs) o
left join _cx_ends e using (file_no, call_id);

-- A resumed session: the opening instructions (a developer message of the file's first block, before the model
-- first spoke) sent again after the model has spoken. One event per such block.
create or replace temp table _cx_resumed as
with lines as (
    select file_no, line_no, type, ptype, j.payload.role as role, (j.payload.content)::varchar as content,
           max(case when is_output then line_no end) over (partition by file_no order by line_no
                                                           rows between unbounded preceding and 1 preceding) as last_output
    from _cx
),
opening as (
    select distinct file_no, content from lines
    where type = 'response_item' and ptype = 'message' and role = 'developer' and last_output is null
)
select file_no, min(l.line_no) as line_no
from lines l join opening o using (file_no, content)
where l.type = 'response_item' and l.ptype = 'message' and l.role = 'developer' and l.last_output is not null
group by file_no, l.last_output;

create or replace temp table _cx_steps as
with items as (
    select file_no, line_no, 'model' as kind, segment from _cx_model
    union all select file_no, line_no, 'tool', null from _cx_outputs
    -- the history replaced by a shorter one, recorded: a compaction, or turns rolled back
    union all select file_no, line_no, 'event', null from _cx
              where type = 'compacted' or (type = 'event_msg' and ptype = 'thread_rolled_back')
    -- a new task after the first: the session moved on (a call still unanswered then was lost, not in flight)
    union all select file_no, line_no, 'event', null from _cx c
              where type = 'event_msg' and ptype = 'task_started'
                and exists (select 1 from _cx_model m where m.file_no = c.file_no and m.line_no < c.line_no)
    -- the session taken up again (a resume): its instructions sent anew as developer messages after the model
    -- had spoken — the context is rebuilt from the rollout, on the record
    union all select file_no, line_no, 'event', null from _cx_resumed
)
select row_number() over (partition by file_no order by line_no) - 1 as idx, i.*, f.run_id
from items i join _cx_files f using (file_no);

create or replace temp table _stage_calls as
select s.file_no, s.run_id, s.idx as step_idx,
       row_number() over (partition by c.file_no, c.segment order by c.line_no) - 1 as call_position,
       c.j.payload.call_id as call_id, c.j.payload.name as tool_name,
       case when c.ptype = 'custom_tool_call' then to_json(c.j.payload.input ->> '$')
            when json_type(c.j.payload.arguments) = 'VARCHAR' then coalesce(try(json(c.j.payload.arguments ->> '$')),
                                                                           to_json(c.j.payload.arguments ->> '$'))
            else c.j.payload.arguments end as args,
       c.ts as asked_at
from _cx c join _cx_steps s on s.kind = 'model' and s.file_no = c.file_no and s.segment = c.segment
where c.type = 'response_item' and c.ptype in ('function_call', 'custom_tool_call');

create or replace temp table _cx_text as
select c.file_no, c.segment, nullif(string_agg(b.block ->> 'text', '' order by c.line_no, b.position), '') as text
from (select *, json_list(j.payload.content) as blocks from _cx where is_output and ptype = 'message') c,
     (select unnest(c.blocks) as block, generate_subscripts(c.blocks, 1) as position) b
where b.block ->> 'type' = 'output_text'
group by all;

create or replace temp table _stage_steps as
select s.file_no, s.run_id, s.idx::integer as idx, 'model' as kind, m.first_ts as started_at,
       date_diff('millisecond', coalesce(m.sent_at, m.first_ts), m.last_ts) as ms, true as main_thread,
       m.line_no::integer as source_line, m.model, f.provider,
       -- OpenAI's buckets overlap (cached within input, reasoning within output); ours are disjoint
       (m.input_tokens - m.cached)::bigint as input_uncached, m.cached::bigint as cache_read,
       case when m.counts > 0 then 0 end::bigint as cache_write_5m, case when m.counts > 0 then 0 end::bigint as cache_write_1h,
       m.output_tokens::bigint as output_tokens, m.reasoning_tokens::bigint as reasoning_tokens,
       -- hosted web searches the request ran: each a web_search_call item, billed per call beside the tokens
       m.searches::integer as web_searches,
       t.text as output_text,
       -- the context sent: one request's input; a hosted web search's input also counts the search's own
       -- passes, and a step of several counts sums several requests: neither is a context size
       case when m.counts = 1 and not coalesce(m.searched, false) then m.input_tokens end::bigint as context_tokens,
       null::varchar as call_id, null::varchar as tool_status, null::varchar as result_text,
       null::varchar as event, null::varchar as detail
from _cx_steps s join _cx_model m using (file_no, segment) join _cx_files f using (file_no)
left join _cx_text t using (file_no, segment)
where s.kind = 'model'
union all by name
select s.file_no, s.run_id, s.idx::integer as idx, 'tool' as kind, o.ts as started_at,
       date_diff('millisecond', c.asked_at, o.ts) as ms, true as main_thread, o.line_no::integer as source_line,
       o.call_id, o.tool_status, o.text as result_text
from _cx_steps s join _cx_outputs o using (file_no, line_no)
left join _stage_calls c on c.file_no = o.file_no and c.call_id = o.call_id
where s.kind = 'tool'
union all by name
select s.file_no, s.run_id, s.idx::integer as idx, 'event' as kind, c.ts as started_at, 0 as ms,
       true as main_thread, c.line_no::integer as source_line,
       case when c.ptype = 'task_started' then 'task_started' when c.ptype = 'message' then 'resume'
            else 'compaction' end as event,
       case when c.type = 'compacted' then 'compacted' when c.ptype = 'task_started' then 'a new task began'
            when c.ptype = 'message' then 'session resumed: instructions sent again, the context rebuilt from the rollout'
            else 'thread rolled back: its last turns left the context' end as detail
from _cx_steps s join _cx c using (file_no, line_no)
where s.kind = 'event';

alter table _stage_calls drop column asked_at;

-- An end event is read when it gives a call's status (the last for the call, whose output is in the file).
create or replace temp table _cx_read_ends as
select e.file_no, e.line_no from _cx_ends e
where e.status is not null and exists (select 1 from _cx_outputs o where o.file_no = e.file_no and o.call_id = e.call_id);

create or replace temp table _stage_records as
with read as (
    select c.*, k.line_no as count_line, k.repeat,
           c.type in ('session_meta', 'turn_context', 'compacted') or c.is_input or c.is_output or k.line_no is not null
               or c.ptype in ('task_started', 'task_complete', 'turn_aborted', 'thread_rolled_back')
               or e.line_no is not null as used
    from _cx c left join _cx_counts k using (file_no, line_no) left join _cx_read_ends e using (file_no, line_no)
)
select c.file_no, c.line_no as record_no, f.run_id,
       case when c.repeat or (c.ptype = 'token_count' and c.count_line is null) or not c.used then 'skip' else 'load' end
           as decision,
       case when c.repeat then 'repeat of the token_count before it (same cumulative totals)'
            when c.ptype = 'token_count' and c.count_line is null then 'token_count without usage (a rate-limit snapshot)'
            when c.used then null
            when c.ptype in ('exec_command_end', 'patch_apply_end', 'mcp_tool_call_end')
                then c.ptype || ' of a call with no output in this file, or superseded by a later end event of it'
            else 'not a step (' || c.type || coalesce('/' || c.ptype, '') || ')' end as note
from read c join _cx_files f using (file_no);

-- Status, inferred: how the last task ended; a session without task events by its last model item.
create or replace temp table _stage_runs as
with tasks as (
    select file_no, arg_max(ptype, line_no) as last_task, arg_max(ts, line_no) as task_ts
    from _cx where type = 'event_msg' and ptype in ('task_started', 'task_complete', 'turn_aborted') group by file_no
),
last_item as (
    select file_no, arg_max(case when ptype = 'message' then 'text' else ptype end, line_no) as item, max(ts) as ts
    from _cx where is_output or is_input group by file_no
),
models as (select file_no, arg_min(model, idx) filter (where model is not null) as model
           from _stage_steps where kind = 'model' group by file_no),
outcome as (
    select f.file_no, case when t.last_task = 'task_complete' then 'succeeded'
                           when t.last_task = 'turn_aborted' then 'cancelled'
                           when t.last_task is null and l.item = 'text' then 'succeeded'
                           else 'running' end as status,
           case when t.last_task is not null then t.task_ts else l.ts end as ts, t.last_task
    from _cx_files f left join tasks t using (file_no) left join last_item l using (file_no)
)
select f.file_no, f.run_id, 1 as source_line, 'codex' as agent, m.model, f.provider,
       coalesce(f.started_at, (select min(ts) from _cx c where c.file_no = f.file_no)) as started_at,
       case when o.status <> 'running' then o.ts end as ended_at, o.status,
       case when o.last_task in ('task_complete', 'turn_aborted') then o.last_task end as stop_reason
from _cx_files f join outcome o using (file_no) left join models m using (file_no);
