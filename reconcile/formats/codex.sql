-- Staging for Codex CLI rollouts. Input: _parsed(file_no, line_no, j) for every line whose
-- fields passed the typed checks, many files at once. Output: the _stage_* tables the landing reads.
--
-- A model request's items (reasoning, assistant text, calls, hosted web searches) sit between two
-- inputs (a call's output, a user or developer message; a `compacted` line, whose replacement
-- history is the next request's input). So a *segment* — the lines between two inputs — holds one
-- model step. Its usage: the request's own token_usage_record where Codex writes one (0.171: one a
-- response, with its response_id, right after the response's items — the items before it in the
-- segment are that response's, the items after it the next one's); else the new cumulative totals
-- of the token_counts in the segment (before the items in 0.39, after them in 0.104). A token_count
-- with a token_usage_record since the count before it is that record's request counted again
-- (0.171 writes it after the tool outputs, in the next segment): skipped.

-- A tail read (ingest/tail.py) goes on inside the session from _files.first_line, a segment's first line, with
-- the state kept there (_cx_carry): the run, its steps before the line, the model in force, the cumulative totals
-- of the last token_count, how the last task ended, the final-answer facts; what it cannot go on from is a
-- _tail_conflicts row (the file is then read whole).
create or replace temp table _cx_carry as select file_no, first_line, carry from _files where carry is not null;

create or replace temp table _cx as
select file_no, line_no, j, j.type as type, j.payload.type as ptype, (j.timestamp)::timestamptz as ts,
       (j.type = 'response_item' and (j.payload.type in ('function_call_output', 'custom_tool_call_output')
            or (j.payload.type = 'message' and j.payload.role in ('user', 'developer')))) as is_input,
       (j.type = 'response_item' and (j.payload.type in ('function_call', 'custom_tool_call', 'reasoning', 'web_search_call')
            or (j.payload.type = 'message' and j.payload.role = 'assistant'))) as is_output
from _parsed;

create or replace temp table _cx as
select *, sum(case when is_input or type = 'compacted' then 1 else 0 end) over (partition by file_no order by line_no) as segment,
       coalesce(last_value(case when type = 'turn_context' then j.payload.model end ignore nulls)
                    over (partition by file_no order by line_no),
                (select k.carry ->> 'model' from _cx_carry k where k.file_no = _cx.file_no)) as model,
       -- when the request a line belongs to was sent: the latest input, compaction or finished response before it
       max(case when is_input or type in ('compacted', 'token_usage_record') then ts end)
           over (partition by file_no order by line_no rows between unbounded preceding and 1 preceding) as open_ts
from _cx;

create or replace temp table _cx as
select *, coalesce(sum(case when type = 'token_usage_record' then 1 else 0 end)
                       over (partition by file_no, segment order by line_no rows between unbounded preceding and 1 preceding),
                   0) as rgroup  -- responses finished earlier in the segment: the items after a record are the next one's
from _cx;

-- The run each file is: its session, as the first session_meta names it (a forked file copies its
-- parent's session_meta after its own). Without one, the session id that ends the rollout's file name
-- (rollout-<time>-<session id>.jsonl). An archived copy of a session is the same run. The session started
-- when session_meta says it was created (its payload's timestamp), else at its first line.
create or replace temp table _cx_files as
select f.file_no,
       coalesce(m.id, nullif(regexp_extract(f.stem, '([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})$', 1), ''),
                f.stem) as run_id,
       m.provider, coalesce(m.created_at, m.started_at) as started_at, coalesce(m.forked, false) as forked
from _files f
left join (select file_no, arg_min(j.payload.id, line_no) as id, arg_min(j.payload.model_provider, line_no) as provider,
                  min(ts) as started_at,
                  try_cast(arg_min(j.payload.timestamp ->> '$', line_no) as timestamptz) as created_at,
                  -- a fork (codex exec fork): its history is the parent's, by reference (history_base) or copied
                  bool_or(j.payload.forked_from_id is not null
                          or coalesce(json_type(j.payload.history_base), 'NULL') <> 'NULL') as forked
           from _cx where type = 'session_meta' group by file_no) m using (file_no);

update _cx_files set run_id = k.carry ->> 'run_id', provider = k.carry ->> 'provider',
                     started_at = (k.carry ->> 'started_at')::timestamptz, forked = (k.carry ->> 'forked')::boolean
from _cx_carry k where k.file_no = _cx_files.file_no;

-- Each response's usage as Codex recorded it against its response id (0.171's token_usage_record).
create or replace temp table _cx_records as
select file_no, line_no, ts, j.payload.response_id as response_id,
       {'input': j.payload.usage.input_tokens, 'cached': j.payload.usage.cached_input_tokens,
        'output': j.payload.usage.output_tokens, 'reasoning': j.payload.usage.reasoning_output_tokens} as used
from _cx where type = 'token_usage_record';

-- Cumulative totals; a count equal to the one before is a repeat (some versions write each twice).
-- A request's usage is the difference of the totals; where a bucket's difference is unknown (a key
-- left out here or in the count before) it is the request's own last_token_usage, else NULL.
create or replace temp table _cx_counts as
with counted as (
    select file_no, line_no, ts, j.payload.info.total_token_usage as t, j.payload.info.last_token_usage as l,
           -- made up, not billed: every bucket 0 (0.171 writes one, its total_tokens the context window, when a
           -- request is refused for exceeding the window); no request has 0 input
           (j.payload.info.total_token_usage.input_tokens = 0 and j.payload.info.total_token_usage.output_tokens = 0
            and coalesce(j.payload.info.total_token_usage.cached_input_tokens, 0) = 0
            and coalesce(j.payload.info.total_token_usage.reasoning_output_tokens, 0) = 0
            and coalesce(j.payload.info.last_token_usage.input_tokens, 0) = 0
            and coalesce(j.payload.info.last_token_usage.output_tokens, 0) = 0) as made_up
    from _cx where type = 'event_msg' and ptype = 'token_count'
      and coalesce(j.payload.info.total_token_usage.input_tokens, j.payload.info.total_token_usage.cached_input_tokens,
                   j.payload.info.total_token_usage.output_tokens, j.payload.info.total_token_usage.reasoning_output_tokens,
                   j.payload.info.last_token_usage.input_tokens, j.payload.info.last_token_usage.cached_input_tokens,
                   j.payload.info.last_token_usage.output_tokens,
                   j.payload.info.last_token_usage.reasoning_output_tokens) is not null
),
ordered as (
    select c.*, lag(t) over (partition by file_no order by line_no) as p_before,
           lag(line_no) over (partition by file_no order by line_no) as line_before,
           row_number() over (partition by file_no order by line_no) = 1 and k.carry is not null as carried
    from counted c left join _cx_carry k using (file_no) where not made_up
),
-- p: the totals of the count before (a tail read's first count: the last count before the resume line, kept)
compared as (
    select o.* exclude (p_before, line_before),
           case when carried then k.carry -> 'last_count' else to_json(p_before) end as pj,
           case when carried then (k.carry ->> 'last_count_line')::bigint else line_before end as p_line,
           carried and coalesce((k.carry ->> 'record_after_count')::boolean, false) as record_before
    from ordered o left join _cx_carry k using (file_no)
),
compared_totals as (
    select * exclude (pj),
           case when pj is not null and json_type(pj) = 'OBJECT' then
               {'input_tokens': (pj ->> 'input_tokens')::bigint, 'cached_input_tokens': (pj ->> 'cached_input_tokens')::bigint,
                'output_tokens': (pj ->> 'output_tokens')::bigint,
                'reasoning_output_tokens': (pj ->> 'reasoning_output_tokens')::bigint} end as p
    from compared
),
judged as (
    select c.*,
           p is not null and t.input_tokens is not distinct from p.input_tokens
               and t.cached_input_tokens is not distinct from p.cached_input_tokens
               and t.output_tokens is not distinct from p.output_tokens
               and t.reasoning_output_tokens is not distinct from p.reasoning_output_tokens as repeat,
           -- a total that went down (a restarted count) gives its last request; so does a fork's first count, whose
           -- totals start from its parent's (the parent's usage is the parent's run's)
           coalesce(t.input_tokens < p.input_tokens or t.cached_input_tokens < p.cached_input_tokens
                    or t.output_tokens < p.output_tokens, false) or (p is null and f.forked) as restarted,
           -- its request's usage was recorded against the response (a token_usage_record since the count before)
           record_before or exists (select 1 from _cx_records r where r.file_no = c.file_no and r.line_no < c.line_no
                                    and r.line_no > coalesce(c.p_line, 0)) as covered
    from compared_totals c join _cx_files f using (file_no)
)
select file_no, line_no, ts, p_line, repeat, covered, false as made_up,
       case when restarted then {'input': l.input_tokens, 'cached': l.cached_input_tokens, 'output': l.output_tokens,
                                 'reasoning': l.reasoning_output_tokens}
            else {'input': coalesce(t.input_tokens - case when p is null then 0 else p.input_tokens end, l.input_tokens),
                  'cached': coalesce(t.cached_input_tokens - case when p is null then 0 else p.cached_input_tokens end,
                                     l.cached_input_tokens),
                  'output': coalesce(t.output_tokens - case when p is null then 0 else p.output_tokens end, l.output_tokens),
                  'reasoning': coalesce(t.reasoning_output_tokens - case when p is null then 0 else p.reasoning_output_tokens end,
                                        l.reasoning_output_tokens)} end as used
from judged
union all by name
select file_no, line_no, ts, null as p_line, false as repeat, false as covered, true as made_up, null as used
from counted where made_up;

-- What each model step is paid by: its response's token_usage_record, else the new totals of a count no record covers.
create or replace temp table _cx_usage as
select file_no, line_no, ts, used, response_id from _cx_records
union all by name
select file_no, line_no, ts, used, null as response_id from _cx_counts where not repeat and not covered and not made_up;

-- One model step per response: the lines of a segment up to its token_usage_record (or all of them), holding
-- model items or usage.
create or replace temp table _cx_model as
select c.file_no, c.segment, c.rgroup,
       coalesce(min(u.line_no), min(c.line_no) filter (where c.is_output)) as line_no,
       min(c.ts) as first_ts,
       greatest(max(c.ts) filter (where c.is_output), max(u.ts)) as last_ts,
       min(c.open_ts) as sent_at,
       -- a bucket one of the step's usage records leaves unknown is unknown for the step
       case when bool_and(u.used.input is not null) filter (where u.line_no is not null)
            then sum(u.used.input) end as input_tokens,
       case when bool_and(u.used.cached is not null) filter (where u.line_no is not null)
            then sum(u.used.cached) end as cached,
       case when bool_and(u.used.output is not null) filter (where u.line_no is not null)
            then sum(u.used.output) end as output_tokens,
       case when bool_and(u.used.reasoning is not null) filter (where u.line_no is not null)
            then sum(u.used.reasoning) end as reasoning_tokens,
       count(u.line_no) as counts,
       string_agg(u.response_id, ' ' order by u.line_no) as response_id,
       -- hosted web searches the request ran: each a web_search_call item
       count(*) filter (where c.type = 'response_item' and c.ptype = 'web_search_call') as searches,
       arg_max(c.model, c.line_no) as model
from _cx c
left join _cx_usage u on u.file_no = c.file_no and u.line_no = c.line_no
where c.is_output or u.line_no is not null
group by c.file_no, c.segment, c.rgroup;

-- A remote compaction (/responses/compact, Codex's own model's summary of the history): a `compacted` line with
-- an empty message. A billed call whose usage Codex never records (the totals do not move across it): a model
-- step of unknown usage. (A local compaction's summary is an ordinary response, with its usage, and the message.)
create or replace temp table _cx_remote as
select file_no, line_no, ts, model from _cx
where type = 'compacted'
  and (json_type(j.payload.message) is null or json_type(j.payload.message) = 'NULL'
       or (json_type(j.payload.message) = 'VARCHAR'
           and (trim(j.payload.message ->> '$') = ''
                -- a sanitised copy of an empty message (tests/fixtures/realdata/codex-cli/SOURCE.txt)
                or regexp_full_match(trim(j.payload.message ->> '$'), '\[REDACTED_\w+ len=0\b[^\]]*\]'))));

-- How a call ended, where Codex says: the exit code of a command (0.171's item_completed CommandExecution, older
-- versions' exec_command_end), whether a patch applied (patch_apply_end), an MCP tool's result
-- (mcp_tool_call_end: Err, or Ok with isError) — events paired with the call by call_id wherever they fall (0.171
-- writes an interrupted command's item after the turn_aborted), the last one with a status counting.
create or replace temp table _cx_ends as
select file_no, line_no, coalesce(j.payload.call_id, j.payload.item.id ->> '$') as call_id,
       case when ptype = 'item_completed' then
                case when j.payload.item.exit_code = 0 then 'ok' when j.payload.item.exit_code is not null then 'error'
                     when j.payload.item.status ->> '$' = 'completed' then 'ok'
                     when j.payload.item.status ->> '$' in ('failed', 'declined') then 'error' end
            when ptype = 'exec_command_end' then
                case when j.payload.exit_code = 0 then 'ok' when j.payload.exit_code is not null then 'error' end
            when ptype = 'patch_apply_end' then case j.payload.success when true then 'ok' when false then 'error' end
            when ptype = 'mcp_tool_call_end' then
               case when json_type(j.payload.result, '$.Err') is not null then 'error'
                    when json_type(j.payload.result, '$.Ok') = 'OBJECT' then
                         case when coalesce(j.payload.result -> '$.Ok' ->> 'isError', j.payload.result -> '$.Ok' ->> 'is_error') = 'true'
                              then 'error' else 'ok' end end
       end as status
from _cx
where type = 'event_msg'
  and (ptype in ('exec_command_end', 'patch_apply_end', 'mcp_tool_call_end')
       or (ptype = 'item_completed' and j.payload.item.type ->> '$' = 'CommandExecution'))
  and coalesce(j.payload.call_id, j.payload.item.id ->> '$') is not null
qualify row_number() over (partition by file_no, coalesce(j.payload.call_id, j.payload.item.id ->> '$')
                           order by status is null, line_no desc) = 1;

-- A call's output; a shell call's output in 0.39-era rollouts is JSON text whose metadata holds the exit code; a
-- unified exec command's (exec_command, write_stdin) opens with a header that says how the process exited —
-- the only record of a command the sandbox refused (0.171 writes no CommandExecution item for it).
create or replace temp table _cx_outputs as
with outputs as (
    select file_no, line_no, ts, j.payload.call_id as call_id, segment, rgroup,
           case json_type(j.payload.output)
               when 'VARCHAR' then j.payload.output ->> '$'
               when 'NULL' then null
               else j.payload.output::varchar end as text
    from _cx where type = 'response_item' and ptype in ('function_call_output', 'custom_tool_call_output')
)
select o.* exclude (exit_code), coalesce(e.status, case when o.exit_code = 0 then 'ok' when o.exit_code is not null then 'error' end)
           as tool_status
from (select *, coalesce(
                    case when starts_with(ltrim(text), '{') then try_cast(try(json(text)) ->> '$.metadata.exit_code' as bigint) end,
                    try_cast(nullif(regexp_extract(text, '^(?:Chunk ID: [^\n]*\n)?Wall time: [^\n]*\nProcess exited with code (-?[0-9]+)\n', 1),
                                    '') as bigint)) as exit_code
      from outputs) o
left join _cx_ends e using (file_no, call_id);

-- A hosted web search (web_search_call): a tool call the provider ran inside the response. Its result went to the
-- model there and is not in the rollout (no text, no size); its status is the item's. 0.104 writes no id: the
-- call is named by its line.
create or replace temp table _cx_searches as
select file_no, line_no, ts, segment, rgroup,
       coalesce(j.payload.id, 'web_search_call-' || line_no) as call_id,
       case j.payload.status ->> '$' when 'completed' then 'ok' when 'failed' then 'error' end as tool_status,
       j.payload.action as args
from _cx where type = 'response_item' and ptype = 'web_search_call';

-- A resumed session: the opening instructions (a developer message of the file's first block, before the model
-- first spoke) sent again after the model has spoken. One event per such block.
create or replace temp table _cx_resumed as
with lines as (
    select file_no, line_no, type, ptype, j.payload.role as role, md5((j.payload.content)::varchar) as content,
           coalesce(max(case when is_output then line_no end) over (partition by file_no order by line_no
                                                                    rows between unbounded preceding and 1 preceding),
                    (select (k.carry ->> 'last_output')::bigint from _cx_carry k where k.file_no = _cx.file_no))
               as last_output
    from _cx
),
opening as (
    select distinct file_no, content from lines
    where type = 'response_item' and ptype = 'message' and role = 'developer' and last_output is null
    union
    select file_no, unnest(from_json(carry -> 'opening', '["VARCHAR"]')) from _cx_carry
)
select file_no, min(l.line_no) as line_no
from lines l join opening o using (file_no, content)
where l.type = 'response_item' and l.ptype = 'message' and l.role = 'developer' and l.last_output is not null
group by file_no, l.last_output;

-- The steps in order: each at its line; a hosted search's tool step right after the model step that ran it; a
-- remote compaction's model step before its compaction event.
create or replace temp table _cx_steps as
with items as (
    select file_no, line_no, line_no as pos, 0 as sub, 'model' as kind, segment, rgroup from _cx_model
    union all select file_no, line_no, line_no, 0, 'tool', null, null from _cx_outputs
    union all select w.file_no, w.line_no, m.line_no, 1, 'search', null, null
              from _cx_searches w join _cx_model m using (file_no, segment, rgroup)
    union all select file_no, line_no, line_no, 0, 'compact_call', null, null from _cx_remote
    -- the history replaced by a shorter one, recorded: a compaction, or turns rolled back
    union all select file_no, line_no, line_no, 1, 'event', null, null from _cx
              where type = 'compacted' or (type = 'event_msg' and ptype = 'thread_rolled_back')
    -- a new task after the first: the session moved on (a call still unanswered then was lost, not in flight)
    union all select file_no, line_no, line_no, 0, 'event', null, null from _cx c
              where type = 'event_msg' and ptype = 'task_started'
                and (exists (select 1 from _cx_model m where m.file_no = c.file_no and m.line_no < c.line_no)
                     or c.file_no in (select file_no from _cx_carry))
    -- the session taken up again (a resume): its instructions sent anew as developer messages after the model
    -- had spoken — the context is rebuilt from the rollout, on the record
    union all select file_no, line_no, line_no, 0, 'event', null, null from _cx_resumed
)
select row_number() over (partition by file_no order by pos, sub, line_no) - 1
           + coalesce((k.carry ->> 'steps')::bigint, 0) as idx, i.*, f.run_id
from items i join _cx_files f using (file_no) left join _cx_carry k using (file_no);

create or replace temp table _stage_calls as
select s.file_no, s.run_id, s.idx as step_idx,
       row_number() over (partition by c.file_no, c.segment, c.rgroup order by c.line_no) - 1 as call_position,
       case when c.ptype = 'web_search_call' then w.call_id else c.j.payload.call_id end as call_id,
       case when c.ptype = 'web_search_call' then 'web_search' else c.j.payload.name end as tool_name,
       case when c.ptype = 'web_search_call' then w.args
            when c.ptype = 'custom_tool_call' then to_json(c.j.payload.input ->> '$')
            when json_type(c.j.payload.arguments) = 'VARCHAR' then coalesce(try(json(c.j.payload.arguments ->> '$')),
                                                                           to_json(c.j.payload.arguments ->> '$'))
            else c.j.payload.arguments end as args,
       c.ts as asked_at, c.ptype = 'web_search_call' as hosted
from _cx c join _cx_steps s on s.kind = 'model' and s.file_no = c.file_no and s.segment = c.segment and s.rgroup = c.rgroup
left join _cx_searches w on w.file_no = c.file_no and w.line_no = c.line_no
where c.type = 'response_item' and c.ptype in ('function_call', 'custom_tool_call', 'web_search_call');

create or replace temp table _cx_text as
select c.file_no, c.segment, c.rgroup, nullif(string_agg(b.block ->> 'text', '' order by c.line_no, b.position), '') as text
from (select *, json_list(j.payload.content) as blocks from _cx where is_output and ptype = 'message') c,
     (select unnest(c.blocks) as block, generate_subscripts(c.blocks, 1) as position) b
where b.block ->> 'type' = 'output_text'
group by all;

create or replace temp table _stage_steps as
select s.file_no, s.run_id, s.idx::integer as idx, 'model' as kind, m.first_ts as started_at,
       date_diff('millisecond', coalesce(m.sent_at, m.first_ts), m.last_ts) as ms, true as main_thread,
       m.line_no::integer as source_line, m.model, f.provider, m.response_id,
       -- OpenAI's buckets overlap (cached within input, reasoning within output); ours are disjoint
       (m.input_tokens - m.cached)::bigint as input_uncached, m.cached::bigint as cache_read,
       case when m.counts > 0 then 0 end::bigint as cache_write_5m, case when m.counts > 0 then 0 end::bigint as cache_write_1h,
       m.output_tokens::bigint as output_tokens, m.reasoning_tokens::bigint as reasoning_tokens,
       -- hosted web searches the request ran: each a web_search_call item, billed per call beside the tokens
       m.searches::integer as web_searches,
       t.text as output_text,
       -- the context sent: one request's input; a hosted web search's input also counts the search's own
       -- passes, and a step of several counts sums several requests: neither is a context size
       case when m.counts = 1 and m.searches = 0 then m.input_tokens end::bigint as context_tokens,
       null::varchar as call_id, null::varchar as tool_status, null::varchar as result_text,
       null::varchar as event, null::varchar as detail
from _cx_steps s join _cx_model m using (file_no, segment, rgroup) join _cx_files f using (file_no)
left join _cx_text t using (file_no, segment, rgroup)
where s.kind = 'model'
union all by name
-- a remote compaction: billed, its usage never recorded (every bucket unknown), its text not in the rollout
select s.file_no, s.run_id, s.idx::integer as idx, 'model' as kind, r.ts as started_at, null::bigint as ms,
       true as main_thread, r.line_no::integer as source_line, r.model, f.provider, 0::integer as web_searches
from _cx_steps s join _cx_remote r using (file_no, line_no) join _cx_files f using (file_no)
where s.kind = 'compact_call'
union all by name
select s.file_no, s.run_id, s.idx::integer as idx, 'tool' as kind, o.ts as started_at,
       date_diff('millisecond', c.asked_at, o.ts) as ms, true as main_thread, o.line_no::integer as source_line,
       o.call_id, o.tool_status, o.text as result_text
from _cx_steps s join _cx_outputs o using (file_no, line_no)
left join _stage_calls c on c.file_no = o.file_no and c.call_id = o.call_id
where s.kind = 'tool'
union all by name
-- a hosted web search: asked and answered inside its response (no duration of its own, no result text)
select s.file_no, s.run_id, s.idx::integer as idx, 'tool' as kind, w.ts as started_at, null::bigint as ms,
       true as main_thread, w.line_no::integer as source_line, w.call_id, w.tool_status, null::varchar as result_text
from _cx_steps s join _cx_searches w using (file_no, line_no)
where s.kind = 'search'
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

-- The final answer is the landing's (the last model step with text that asks for no tool the harness runs, after
-- which none does): a hosted web search (`hosted`) is asked and answered inside its response, no ask; a tail read's
-- kept steps take part through _prior_model.
alter table _stage_calls drop column asked_at;

-- An end event is read when it gives a call's status (the last for the call, whose output is in the file).
create or replace temp table _cx_read_ends as
select e.file_no, e.line_no from _cx_ends e
where e.status is not null and exists (select 1 from _cx_outputs o where o.file_no = e.file_no and o.call_id = e.call_id);

create or replace temp table _stage_records as
with read as (
    select c.*, k.line_no as count_line, k.repeat, k.covered, k.made_up,
           coalesce(c.type in ('session_meta', 'turn_context', 'compacted', 'token_usage_record') or c.is_input
                    or c.is_output or k.line_no is not null
                    or c.ptype in ('task_started', 'task_complete', 'turn_aborted', 'thread_rolled_back')
                    or e.line_no is not null, false) as used
    from _cx c left join _cx_counts k using (file_no, line_no) left join _cx_read_ends e using (file_no, line_no)
)
select c.file_no, c.line_no as record_no, f.run_id,
       case when c.repeat or c.covered or c.made_up or (c.ptype = 'token_count' and c.count_line is null) or not c.used
            then 'skip' else 'load' end as decision,
       case when c.repeat then 'repeat of the token_count before it (same cumulative totals)'
            when c.made_up then 'token_count with every bucket 0 (written when a request exceeded the context window: '
                                || 'no usage)'
            when c.covered then 'token_count of a request whose token_usage_record was read'
            when c.ptype = 'token_count' and c.count_line is null then 'token_count without usage (a rate-limit snapshot)'
            when c.used then null
            when c.ptype in ('exec_command_end', 'patch_apply_end', 'mcp_tool_call_end')
                then c.ptype || ' of a call with no output in this file, or superseded by a later end event of it'
            when c.ptype = 'item_completed' and c.j.payload.item.type ->> '$' = 'CommandExecution'
                then 'item_completed CommandExecution of a call with no output in this file, or superseded by a later one'
            when c.ptype = 'item_completed'
                then 'not a step (event_msg/item_completed ' || coalesce(c.j.payload.item.type ->> '$', '?')
                     || ': a copy of a history item)'
            else 'not a step (' || c.type || coalesce('/' || c.ptype, '') || ')' end as note
from read c join _cx_files f using (file_no);

-- Status, inferred: how the last task ended; a session without task events by its last model item. A task_complete
-- carrying an error (0.171: a request refused, e.g. for exceeding the context window) is a failed run.
create or replace temp table _stage_runs as
with tasks as (
    select file_no, last_task, task_ts, error from (
        select file_no, line_no, ptype as last_task, ts as task_ts, (j.payload.error)::json as error
        from _cx where type = 'event_msg' and ptype in ('task_started', 'task_complete', 'turn_aborted')
        union all
        select file_no, 0, carry ->> 'last_task', (carry ->> 'task_ts')::timestamptz, carry -> 'task_error'
        from _cx_carry where carry ->> 'last_task' is not null)
    qualify row_number() over (partition by file_no order by line_no desc) = 1
),
last_item as (
    select file_no, arg_max(item, line_no) as item, max(ts) as ts from (
        select file_no, line_no, case when ptype = 'message' then 'text' else ptype end as item, ts
        from _cx where is_output or is_input
        union all
        select file_no, 0, carry ->> 'last_item', (carry ->> 'last_item_ts')::timestamptz
        from _cx_carry where carry ->> 'last_item' is not null)
    group by file_no
),
models as (select f.file_no, coalesce(any_value(k.carry ->> 'first_model'),
                                      arg_min(s.model, s.idx) filter (where s.model is not null)) as model
           from _cx_files f left join _cx_carry k using (file_no)
           left join _stage_steps s on s.file_no = f.file_no and s.kind = 'model' group by f.file_no),
outcome as (
    select f.file_no, case when t.last_task = 'task_complete' and coalesce(json_type(t.error), 'NULL') <> 'NULL' then 'failed'
                           when t.last_task = 'task_complete' then 'succeeded'
                           when t.last_task = 'turn_aborted' then 'cancelled'
                           when t.last_task is null and l.item = 'text' then 'succeeded'
                           else 'running' end as status,
           case when t.last_task is not null then t.task_ts else l.ts end as ts, t.last_task,
           case when coalesce(json_type(t.error), 'NULL') <> 'NULL' then
               coalesce(case json_type(t.error, '$.codex_error_info')
                            when 'VARCHAR' then t.error ->> '$.codex_error_info'
                            when 'OBJECT' then json_keys(t.error -> '$.codex_error_info')[1] end,
                        nullif(t.error ->> '$.message', ''), 'error') end as error
    from _cx_files f left join tasks t using (file_no) left join last_item l using (file_no)
)
select f.file_no, f.run_id, 1 as source_line, 'codex' as agent, m.model, f.provider,
       coalesce(f.started_at, (select min(ts) from _cx c where c.file_no = f.file_no)) as started_at,
       case when o.status <> 'running' then o.ts end as ended_at, o.status,
       case when o.error is not null then o.error
            when o.last_task in ('task_complete', 'turn_aborted') then o.last_task end as stop_reason
from _cx_files f join outcome o using (file_no) left join models m using (file_no);

-- A tail read's kept model steps, as the final answer needs them: the last that asked for a tool the harness runs
-- and the last with text after it (the final answer so far); the landing decides over them and the new ones.
create or replace temp table _prior_model as
select k.file_no, f.run_id, (k.carry ->> 'last_ask')::bigint as idx, true as main, false as has_text, true as asks
from _cx_carry k join _cx_files f using (file_no) where k.carry ->> 'last_ask' is not null
union all
select k.file_no, f.run_id, (k.carry ->> 'candidate')::bigint, true, true, false
from _cx_carry k join _cx_files f using (file_no) where k.carry ->> 'candidate' is not null;

-- What a tail read cannot go on from (the file is then read whole, as a fresh ingest reads it): a session_meta line
-- (the session's identity is read from all of them), a call or an output or a call's end event naming a call kept
-- from before the resume line.
create or replace temp table _tail_conflicts as
with kept as (
    select k.file_no, t.call_id
    from _cx_carry k join tool_calls t on t.run_id = k.carry ->> 'run_id' and t.step_idx < (k.carry ->> 'steps')::bigint
)
select c.file_no, c.line_no as line, case
        when c.type = 'session_meta' then 'is a session_meta line (a session is read from all of them)'
        else 'names call ' || left(x.call_id, 80) || ', made before the line it was read from' end as reason
from _cx c join _cx_carry k using (file_no)
left join kept x on x.file_no = c.file_no and x.call_id = coalesce(c.j.payload.call_id, c.j.payload.item.id ->> '$')
where c.type = 'session_meta' or x.call_id is not null;

-- Where the next tail read may go on from: the largest line that is a segment's first (a segment holds one
-- response and its usage, the last one still open), that no call and its output or end event cross, nor a resumed
-- session's opening block, after the model first spoke; at or before the last segment's first line.
create or replace temp table _tail_spans as
with segments as (
    select file_no, first, lead(first) over (partition by file_no order by segment) - 1 as last
    from (select file_no, segment, min(line_no) as first from _cx group by file_no, segment)
),
ends as (
    select file_no, coalesce(j.payload.call_id, j.payload.item.id ->> '$') as call_id, max(line_no) as line
    from _cx where type = 'event_msg' and ptype in ('exec_command_end', 'patch_apply_end', 'mcp_tool_call_end', 'item_completed')
    group by all
),
calls as (
    select c.file_no, c.line_no as first, case when o.line is not null then greatest(o.line, coalesce(e.line, 0)) end as last
    from _cx c
    left join (select file_no, call_id, max(line_no) as line from _cx_outputs group by all) o
           on o.file_no = c.file_no and o.call_id = c.j.payload.call_id
    left join ends e on e.file_no = c.file_no and e.call_id = c.j.payload.call_id
    where c.type = 'response_item' and c.ptype in ('function_call', 'custom_tool_call')
),
spoke as (
    select file_no, 1 as first, min(line_no) filter (where is_output) as last
    from _cx where file_no not in (select file_no from _cx_carry) group by file_no
),
resumed as (
    select r.file_no, r.line_no as first,
           (select min(c.line_no) from _cx c where c.file_no = r.file_no and c.is_output and c.line_no > r.line_no) as last
    from _cx_resumed r
)
select file_no, first, last from segments
union all select file_no, first, last from calls
union all select file_no, first, last from spoke
union all select file_no, first, last from resumed;

create or replace temp table _tail_caps as
select e.file_no, least(e.end_line + 1, (select min(first) from _tail_spans c where c.file_no = e.file_no and c.last is null))
           as cap
from file_ends() e;

create or replace temp table _tail_state as
with ends as (select file_no, coalesce(carry, '{}'::json) as carry from _files),  -- (the state read from)
chosen as (select * from resume_lines()),
counted as (
    select e.file_no, ch.line,
           coalesce((e.carry ->> 'steps')::bigint, 0)
               + (select count(*) from _cx_steps s where s.file_no = e.file_no and s.pos < ch.line) as steps,
           (select max(k.line_no) from _cx_counts k where k.file_no = e.file_no and not k.made_up and k.line_no < ch.line)
               as count_line
    from ends e join chosen ch using (file_no)
),
asked as (
    select s.file_no, s.idx, coalesce(s.output_text, '') <> '' as has_text,
           exists (select 1 from _stage_calls c where c.run_id = s.run_id and c.step_idx = s.idx and not c.hosted) as asks
    from _stage_steps s join counted n using (file_no) where s.kind = 'model' and s.idx < n.steps
),
finals as (
    select n.file_no, greatest((e.carry ->> 'last_ask')::bigint, max(a.idx) filter (where a.asks)) as last_ask
    from counted n join ends e using (file_no) left join asked a using (file_no) group by n.file_no, e.carry
)
select e.file_no, n.line,
       case when n.line > 1 and (e.file_no in (select file_no from _cx_carry)
                                 or n.line > (select min(line_no) from _cx c where c.file_no = e.file_no and c.is_output))
       then json_object(
           'run_id', f.run_id, 'provider', f.provider, 'forked', f.forked,
           'started_at', (select r.started_at from _stage_runs r where r.file_no = e.file_no)::varchar,
           'steps', n.steps,
           'model', coalesce((select arg_max(c.model, c.line_no) from _cx c where c.file_no = e.file_no and c.line_no < n.line),
                             e.carry ->> 'model'),
           'last_count', case when n.count_line is not null
                              then (select to_json(c.j.payload.info.total_token_usage) from _cx c
                                    where c.file_no = e.file_no and c.line_no = n.count_line)
                              else e.carry -> 'last_count' end,
           'last_count_line', coalesce(n.count_line, (e.carry ->> 'last_count_line')::bigint),
           'record_after_count', exists (select 1 from _cx_records r where r.file_no = e.file_no and r.line_no < n.line
                                         and r.line_no > coalesce(n.count_line, 0))
                                 or (n.count_line is null and coalesce((e.carry ->> 'record_after_count')::boolean, false)),
           'opening', coalesce(e.carry -> 'opening',
                               to_json((select list(distinct md5((c.j.payload.content)::varchar)) from _cx c
                                        where c.file_no = e.file_no and c.type = 'response_item' and c.ptype = 'message'
                                          and c.j.payload.role = 'developer'
                                          and c.line_no < (select min(x.line_no) from _cx x
                                                           where x.file_no = e.file_no and x.is_output)))),
           'last_output', coalesce((select max(c.line_no) from _cx c where c.file_no = e.file_no and c.is_output
                                    and c.line_no < n.line), (e.carry ->> 'last_output')::bigint),
           'last_task', coalesce(t.last_task, e.carry ->> 'last_task'),
           'task_ts', coalesce(t.task_ts::varchar, e.carry ->> 'task_ts'),
           'task_error', case when t.last_task is not null then t.error else e.carry -> 'task_error' end,
           'last_item', coalesce(i.item, e.carry ->> 'last_item'),
           'last_item_ts', greatest(i.ts, (e.carry ->> 'last_item_ts')::timestamptz)::varchar,
           'first_model', coalesce(e.carry ->> 'first_model',
                                   (select arg_min(s.model, s.idx) from _stage_steps s where s.file_no = e.file_no
                                    and s.kind = 'model' and s.model is not null and s.idx < n.steps)),
           'last_ask', fi.last_ask,
           'candidate', greatest(case when (e.carry ->> 'candidate')::bigint > coalesce(fi.last_ask, -1)
                                      then (e.carry ->> 'candidate')::bigint end,
                                 (select max(a.idx) from asked a where a.file_no = e.file_no and a.has_text
                                  and not a.asks and a.idx > coalesce(fi.last_ask, -1))))
       end as state
from ends e join counted n using (file_no) join _cx_files f using (file_no) join finals fi using (file_no)
left join (select c.file_no, arg_max(c.ptype, c.line_no) as last_task, arg_max(c.ts, c.line_no) as task_ts,
                  arg_max_null((c.j.payload.error)::json, c.line_no) as error
           from _cx c join chosen ch using (file_no)
           where c.type = 'event_msg' and c.ptype in ('task_started', 'task_complete', 'turn_aborted') and c.line_no < ch.line
           group by c.file_no) t using (file_no)
left join (select c.file_no, arg_max(case when c.ptype = 'message' then 'text' else c.ptype end, c.line_no) as item,
                  max(c.ts) as ts
           from _cx c join chosen ch using (file_no) where (c.is_output or c.is_input) and c.line_no < ch.line
           group by c.file_no) i using (file_no);
