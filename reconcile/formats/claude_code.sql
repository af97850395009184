-- Staging for Claude Code transcripts. Input: _parsed(file_no, line_no, j) for every line
-- whose fields passed the typed checks, many files at once (planning a statement costs more than
-- running it on one small file). Output: the _stage_* tables the shared landing reads.

-- The run each file is, by the ids Claude Code recorded on its lines (sessionId, agentId):
-- - a session transcript is the session: its sessionId (the file's own name when it is one of several on
--   its lines, else the last line's), the file name only when no line carries one;
-- - a subagent transcript (under <session>/subagents/, or side-chain lines carrying an agentId) is the
--   child run <sessionId>/agent-<agentId> of its session;
-- - an older side-chain file (agent-<hash>.jsonl beside its session, all its lines side-chain, no agentId)
--   is the child run <sessionId>/<file name> of the session its lines name (ccusage lists it apart, by
--   its file name; reconcile keeps the link the transcript records).
-- The same run in two files (a copy, a second folder) is loaded once, from the fuller copy (the landing's rule).
-- A tail read (ingest/tail.py) goes on inside the session from _files.first_line with the state kept there
-- (_cc_carry): the file is the run it was; a line that would make it another is a _tail_conflicts row.
create or replace temp table _cc_carry as select file_no, first_line, carry from _files where carry is not null;

create or replace temp table _cc_files as
with ids as (
    select file_no,
           list(distinct j.sessionId) filter (where j.sessionId is not null) as sessions,
           arg_max(j.sessionId, line_no) filter (where j.sessionId is not null) as last_session,
           arg_max(j.agentId, line_no) filter (where j.agentId is not null) as agent_id,
           count(*) filter (where j.type in ('user', 'assistant')) as conversation,
           count(*) filter (where j.type in ('user', 'assistant') and coalesce(j.isSidechain, false)) as side
    from _parsed group by file_no
),
named as (
    select f.file_no, f.stem, f.parent_name = 'subagents' or (i.agent_id is not null and i.side = i.conversation
                                                             and i.conversation > 0) as subagent,
           coalesce(case when list_contains(i.sessions, f.stem) then f.stem end, i.last_session) as session,
           i.conversation > 0 and i.side = i.conversation as all_side, i.agent_id, f.grandparent_name
    from _files f left join ids i using (file_no)
)
select file_no,
       case when subagent then coalesce(session, grandparent_name) || '/' || coalesce('agent-' || agent_id, stem)
            when all_side then coalesce(session || '/', '') || stem  -- its sessionId is its parent's; no id of its own
            else coalesce(session, stem) end as run_id,
       case when subagent then coalesce(session, grandparent_name) when all_side then session end as parent_run_id,
       session as own_session,  -- the sessionId the file's own lines carry
       agent_id
from named;

update _cc_files set run_id = k.carry ->> 'run_id', parent_run_id = k.carry ->> 'parent_run_id',
                     own_session = k.carry ->> 'own_session', agent_id = k.carry ->> 'agent_id'
from _cc_carry k where k.file_no = _cc_files.file_no;

-- Side-chain lines get a label: the agent id, else one per side chain (a chain starts at a line with no parent).
-- A <synthetic> assistant message is one Claude Code wrote itself, not a model's answer: an API error (isApiErrorMessage,
-- or, where a version does not say, its text "API Error: …") stands for the call that failed; any other ("No response
-- requested." after a --continue) answers no call at all.
create or replace temp table _cc as
select file_no, line_no, j, type, ts,
       case when side then coalesce(j.agentId, 'sidechain-' || (sum(case when side and j.parentUuid is null
           then 1 else 0 end) over (partition by file_no order by line_no) + chains_before)) end as agent_label,
       synthetic and failed as api_error, synthetic and not failed as no_call
from (select file_no, line_no, j, j.type as type, (j.timestamp)::timestamptz as ts,
             coalesce(j.isSidechain, false) and j.type in ('user', 'assistant') as side,
             j.type = 'assistant' and coalesce(j.message.model = '<synthetic>', false) as synthetic,
             coalesce(j.isApiErrorMessage, coalesce(j.message.content -> 0 ->> 'text', j.message.content ->> '$')
                                           like 'API Error%', false) as failed,
             coalesce((k.carry ->> 'side_chains')::bigint, 0) as chains_before
      from _parsed left join _cc_carry k using (file_no));

-- History copied in: `--fork-session` (and older resumes) begin the new file with the earlier session's lines,
-- verbatim (the same uuids, message and request ids, usage and timestamps). Those calls were made, and are
-- counted, in the session that made them: here they are skipped. Told from the file alone (not by ids seen in
-- other files, as ccusage does), so that any order of loads gives the store one load of everything gives: the
-- lines before the file's own first message that are stamped before the file's first timestamp (2.1.197 writes
-- the fork's own queue-operation lines first, the copies after them, stamped earlier) or that carry another
-- session's id.
create or replace temp table _cc_bounds as
select c.file_no, arg_min(c.ts, c.line_no) filter (where c.ts is not null) as file_start, any_value(f.own_session) as own
from _cc c join _cc_files f using (file_no) where c.file_no not in (select file_no from _cc_carry) group by c.file_no;

create or replace temp table _cc_own_first as
select c.file_no, min(c.line_no) as line_no
from _cc c join _cc_bounds b using (file_no)
where c.type in ('user', 'assistant') and c.ts >= b.file_start
  and (c.j.sessionId is null or b.own is null or c.j.sessionId = b.own)
group by c.file_no
union all select file_no, 0 from _cc_carry;  -- a tail read starts past it

create or replace temp table _cc_copied as
select c.file_no, c.line_no
from _cc c join _cc_bounds b using (file_no) left join _cc_own_first o using (file_no)
where (o.line_no is null or c.line_no < o.line_no)
  and (c.ts < b.file_start or coalesce(c.j.sessionId <> b.own, false));

-- Rejected lines: a tool_result whose is_error is neither true nor false says nothing reliable about the
-- outcome; a tool_use without a string id or name cannot be paired or named, nor a tool_result without a
-- string tool_use_id. Other content items (text, thinking, images, items that are not blocks) ask for nothing.
create or replace temp macro _cc_key(block, key) as
    case coalesce(json_type(block -> key), 'NULL') when 'VARCHAR' then null when 'NULL' then 'no "' || key || '"'
         else '"' || key || '" ' || left((block -> key)::varchar, 40) || '; expected a string' end;
create or replace temp table _cc_bad as
select file_no, line_no, min(reason) as reason
from (select c.file_no, c.line_no, case
          when kind = 'tool_result' and coalesce(json_type(b.block -> 'is_error'), 'NULL') not in ('NULL', 'BOOLEAN')
              then 'tool_result "is_error" is ' || left((b.block -> 'is_error')::varchar, 40) || '; expected true or false'
          when kind = 'tool_result' then 'tool_result block ' || b.position || ' has ' || _cc_key(b.block, 'tool_use_id')
          when kind = 'tool_use' then 'tool_use block ' || b.position || ' has '
                                      || coalesce(_cc_key(b.block, 'id'), _cc_key(b.block, 'name'))
      end as reason
      from (select *, json_list(j.message.content) as blocks from _cc) c,
           (select unnest(c.blocks) as block, generate_subscripts(c.blocks, 1) as position) b,
           (select case json_type(b.block -> 'type') when 'VARCHAR' then b.block ->> 'type' end as kind) k
      where (c.type = 'user' and k.kind = 'tool_result') or (c.type = 'assistant' and k.kind = 'tool_use'))
where reason is not null
group by all;

-- Loaded: the conversation, compactions, and the attachment that says --max-turns stopped the session.
create or replace temp table _stage_records as
select c.file_no, c.line_no as record_no, f.run_id,
       case when bad.reason is not null then 'reject' when k.line_no is not null or c.no_call then 'skip'
            when c.loads then 'load' else 'skip' end as decision,
       case when bad.reason is not null then bad.reason
            when k.line_no is not null and c.loads
            then 'history copied from an earlier session (a fork): counted in the session that made the call'
            when c.no_call then 'not a model call: a <synthetic> message Claude Code wrote itself'
            when c.loads then null
            else 'not a conversation line (' || coalesce(c.type, '?') || coalesce('/' || c.j.subtype, '') || ')' end as note
from (select *, type in ('user', 'assistant') or (type = 'system' and j.subtype = 'compact_boundary')
                or (type = 'attachment' and j.attachment.type = 'max_turns_reached') as loads
      from _cc) c
join _cc_files f using (file_no) left join _cc_bad bad using (file_no, line_no)
left join _cc_copied k using (file_no, line_no);

delete from _cc where (file_no, line_no) in (select file_no, line_no from _cc_bad union all
                                             select file_no, line_no from _cc_copied)
                   or no_call;

-- A subagent's own transcript is all side-chain lines: then they are its main thread.
create or replace temp table _cc_files as
select f.*, not exists (select 1 from _cc c where c.file_no = f.file_no and c.type in ('user', 'assistant')
                        and c.agent_label is null)
            and coalesce((k.carry ->> 'all_side')::boolean, true) as all_side
from _cc_files f left join _cc_carry k using (file_no);

-- One model step per API response: the lines sharing message.id and requestId.
create or replace temp table _cc_model as
select c.file_no, coalesce(c.j.message.id || '|' || c.j.requestId, 'line ' || c.line_no) as response,
       min(c.line_no) as line_no, min(c.ts) as first_ts, max(c.ts) as last_ts,
       arg_max(c.j.message.usage, c.line_no) as usage, arg_max(c.j.message.model, c.line_no) as model,
       arg_max(c.j.message.stop_reason, c.line_no) as stop_reason, any_value(c.j.message.id) as response_id,
       any_value(c.j.requestId) as request_id, any_value(c.agent_label) as agent_label,
       min(p.asked_ts) as asked_at, bool_or(c.api_error) as api_error
from _cc c
left join (select file_no, j.uuid as uuid, ts as asked_ts from _cc
           union all select file_no, unnest(from_json(carry -> 'parent_uuids', '["VARCHAR"]')),
                            unnest(from_json(carry -> 'parent_times', '["VARCHAR"]'))::timestamptz from _cc_carry) p
    on p.file_no = c.file_no and p.uuid = c.j.parentUuid
where c.type = 'assistant'
group by all;

create or replace temp table _cc_blocks as
select c.file_no, c.line_no, b.position, c.type, c.ts, c.agent_label,
       coalesce(c.j.message.id || '|' || c.j.requestId, 'line ' || c.line_no) as response, b.block
from (select *, json_list(j.message.content) as blocks from _cc where type in ('user', 'assistant')) c,
     (select unnest(c.blocks) as block, generate_subscripts(c.blocks, 1) as position) b;

create or replace temp table _cc_results as
select b.file_no, b.line_no, b.position, b.ts, b.agent_label, b.block ->> 'tool_use_id' as call_id,
       coalesce((b.block ->> 'is_error')::boolean, false) as is_error,  -- true, false or absent (see _cc_bad)
       case json_type(b.block -> 'content')
           when 'VARCHAR' then b.block ->> 'content'
           when 'ARRAY' then array_to_string(list_transform(
               list_filter(json_list(b.block -> 'content'), lambda x: x ->> 'type' = 'text'),
               lambda x: x ->> 'text'), chr(10))
           else ''  -- no content: an empty result
       end as text
from _cc_blocks b where b.type = 'user' and b.block ->> 'type' = 'tool_result';

create or replace temp table _cc_steps as
with items as (
    select file_no, line_no, 0 as position, 'model' as kind, response from _cc_model
    union all select file_no, line_no, position, 'tool', null from _cc_results
    union all select file_no, line_no, 0, 'event', null from _cc
              where type = 'system' and j.subtype = 'compact_boundary'
    -- the compaction's own API call, billed but written nowhere by Claude Code 2.1.197 on (2.1.39 wrote it as
    -- subagents/agent-acompact-*.jsonl, a child run of its own): a model call of unknown usage, so that the
    -- run's cost reads "at least"
    union all select file_no, line_no, -1, 'compaction_call', null from _cc
              where type = 'system' and j.subtype = 'compact_boundary'
                and coalesce(list_transform(string_split(nullif(regexp_extract(j.version, '^[0-9]+(\.[0-9]+)*'), ''), '.'),
                                            lambda x: x::integer) >= [2, 1, 197], false)
)
select row_number() over (partition by file_no order by line_no, position) - 1
           + coalesce((k.carry ->> 'steps')::bigint, 0) as idx, i.*, f.run_id, f.all_side
from items i join _cc_files f using (file_no) left join _cc_carry k using (file_no);

create or replace temp table _stage_calls as
select s.file_no, s.run_id, s.idx as step_idx,
       row_number() over (partition by b.file_no, b.response order by b.line_no, b.position) - 1 as call_position,
       b.block ->> 'id' as call_id, b.block ->> 'name' as tool_name, b.block -> 'input' as args, b.ts as asked_at
from _cc_blocks b join _cc_steps s on s.kind = 'model' and s.file_no = b.file_no and s.response = b.response
where b.type = 'assistant' and b.block ->> 'type' = 'tool_use';

-- An assistant content given as a plain string is its text (the Messages API takes either form).
create or replace temp table _cc_text as
select file_no, response, nullif(string_agg(text, '' order by line_no, position), '') as text
from (select file_no, response, line_no, position, block ->> 'text' as text from _cc_blocks
      where type = 'assistant' and json_type(block -> 'text') = 'VARCHAR'
      union all
      select file_no, coalesce(j.message.id || '|' || j.requestId, 'line ' || line_no), line_no, 0, j.message.content ->> '$'
      from _cc where type = 'assistant' and json_type(j.message.content) = 'VARCHAR')
group by file_no, response;

-- An API error (a <synthetic> message) is the call that failed: its error is the message's text, no answer, no
-- stop reason, no model or message id of the API's (Claude Code makes them up); its usage is the zeros written
-- (a refused request is not billed), its context unknown.
create or replace temp table _stage_steps as
select s.file_no, s.run_id, s.idx::integer as idx, 'model' as kind, m.first_ts as started_at,
       date_diff('millisecond', coalesce(m.asked_at, m.first_ts), m.last_ts) as ms, m.agent_label,
       m.agent_label is null or s.all_side as main_thread,
       m.line_no::integer as source_line, case when m.api_error then left(t.text, 1000) end as error,
       case when not m.api_error then m.model end as model, 'anthropic' as provider, m.request_id,
       case when not m.api_error then m.response_id end as response_id,
       m.usage.input_tokens as input_uncached, m.usage.cache_read_input_tokens as cache_read,
       -- the 5 m / 1 h breakdown when given (one part missing: the total less the other); without it every
       -- cache write is a 5-minute one: the API returns it wherever a 1-hour write is possible (zero_buckets).
       -- A breakdown that does not add up to the total (Claude Code 2.1 writes a zeroed one where the API gave
       -- none) says nothing of the lifetimes: both unknown, the total kept in the context (the cost a range)
       case when not m.breakdown_off then
       coalesce(m.usage.cache_creation.ephemeral_5m_input_tokens,
                m.usage.cache_creation_input_tokens - m.usage.cache_creation.ephemeral_1h_input_tokens,
                case when m.usage.cache_creation.ephemeral_1h_input_tokens is null
                     then m.usage.cache_creation_input_tokens end) end as cache_write_5m,
       case when not m.breakdown_off then
       coalesce(m.usage.cache_creation.ephemeral_1h_input_tokens,
                m.usage.cache_creation_input_tokens - m.usage.cache_creation.ephemeral_5m_input_tokens,
                case when m.usage.cache_creation.ephemeral_5m_input_tokens is null
                     and m.usage.cache_creation_input_tokens is not null then 0 end) end as cache_write_1h,
       -- hosted web searches the response ran (billed per search, beside the tokens)
       m.usage.server_tool_use.web_search_requests as web_searches,
       m.usage.output_tokens as output_tokens, case when not m.api_error then m.stop_reason end as finish_reason,
       case when not m.api_error then t.text end as output_text,
       case when not m.api_error then
       m.usage.input_tokens + m.usage.cache_read_input_tokens  -- unknown when any part is
           + coalesce(m.usage.cache_creation_input_tokens, m.usage.cache_creation.ephemeral_5m_input_tokens
                      + m.usage.cache_creation.ephemeral_1h_input_tokens) end as context_tokens,
       null::varchar as call_id, null::varchar as tool_status, null::varchar as result_text,
       null::varchar as event, null::bigint as tokens_before, null::varchar as detail
from _cc_steps s
join (select *, coalesce(usage.cache_creation.ephemeral_5m_input_tokens + usage.cache_creation.ephemeral_1h_input_tokens
                         <> usage.cache_creation_input_tokens, false) as breakdown_off
      from _cc_model) m using (file_no, response)
left join _cc_text t using (file_no, response)
where s.kind = 'model'
union all by name
select s.file_no, s.run_id, s.idx::integer as idx, 'tool' as kind, r.ts as started_at,
       date_diff('millisecond', c.asked_at, r.ts) as ms, r.agent_label, r.agent_label is null or s.all_side as main_thread,
       r.line_no::integer as source_line, case when r.is_error then left(r.text, 200) end as error,
       r.call_id, case when r.is_error then 'error' else 'ok' end as tool_status, r.text as result_text
from _cc_steps s
join _cc_results r on r.file_no = s.file_no and r.line_no = s.line_no and r.position = s.position
left join _stage_calls c on c.file_no = r.file_no and c.call_id = r.call_id
where s.kind = 'tool'
union all by name
select s.file_no, s.run_id, s.idx::integer as idx, 'event' as kind, c.ts as started_at, 0 as ms,
       c.line_no::integer as source_line, 'compaction' as event,
       c.j.compactMetadata.preTokens as tokens_before, 'compact_boundary' as detail
from _cc_steps s join _cc c using (file_no, line_no)
where s.kind = 'event'
union all by name
-- the compaction call nothing records: it ended when the boundary was written, durationMs after it began
select s.file_no, s.run_id, s.idx::integer as idx, 'model' as kind,
       c.ts - round(coalesce(c.j.compactMetadata.durationMs, 0))::bigint * interval 1 millisecond as started_at,
       round(c.j.compactMetadata.durationMs)::bigint as ms, c.agent_label, c.agent_label is null or s.all_side as main_thread,
       c.line_no::integer as source_line, 'anthropic' as provider,
       'the compaction''s API call: billed, its usage written nowhere in the transcript' as detail
from _cc_steps s join _cc c using (file_no, line_no)
where s.kind = 'compaction_call';

alter table _stage_calls drop column asked_at;

-- Status, inferred: how the session's main thread ends. Its last message that says so decides: a local command's
-- lines (/compact, /mcp: the command and what it printed) and a compaction's summary ask the model nothing, and
-- leave the session as it stood; a max_turns_reached attachment is --max-turns stopping it.
create or replace temp table _cc_main as
with main as (
    select c.file_no, c.line_no, c.type, c.ts, coalesce(c.j.isCompactSummary, false) as summary,
           case when c.type = 'user' and json_type(c.j.message.content) = 'VARCHAR' then c.j.message.content ->> '$'
                when c.type = 'user' then c.j.message.content -> 0 ->> 'text' end as user_text,
           coalesce(c.j.message.id || '|' || c.j.requestId, 'line ' || c.line_no) as response
    from _cc c join _cc_files f using (file_no)
    where (c.agent_label is null or f.all_side) and not coalesce(c.j.isMeta, false)
      -- 2.1 writes a local command (/model, /mcp) and what it printed as system lines of subtype local_command
      and (c.type in ('user', 'assistant') or (c.type = 'system' and c.j.subtype in ('compact_boundary', 'local_command'))
           or (c.type = 'attachment' and c.j.attachment.type = 'max_turns_reached'))
),
marked as (
    select *, regexp_matches(coalesce(user_text, ''), '^\s*<local-command-(stdout|stderr)>') as local_output,
           lead(regexp_matches(coalesce(user_text, ''), '^\s*<local-command-(stdout|stderr)>'))
               over (partition by file_no order by line_no) as output_next,
           regexp_matches(coalesce(user_text, ''), '^\s*<command-(name|message)>') as command
    from main
)
select *, type <> 'system' and not summary and not local_output and not (command and coalesce(output_next, false))
          as says
from marked;

create or replace temp table _stage_runs as
with last_message as (
    -- arg_max_null: the last line's own values, NULL included (arg_max would skip to an earlier one)
    select file_no, arg_max_null(type, line_no) as type, arg_max_null(user_text, line_no) as user_text,
           arg_max_null(response, line_no) as response
    from _cc_main where says
    group by file_no
),
-- the last time on the main thread; a tail read's lines before it are remembered by the checkpoint
ended as (select file_no, greatest(max(m.ts), any_value((k.carry ->> 'main_max_ts')::timestamptz)) as ts
          from _cc_main m left join _cc_carry k using (file_no) group by file_no),
asks as (select distinct file_no, response from _cc_blocks where type = 'assistant' and block ->> 'type' = 'tool_use'),
models as (
    select f.file_no, coalesce(any_value(k.carry ->> 'first_model'),
                               arg_min(s.model, s.idx) filter (where s.model is not null)) as model
    from _cc_files f left join _cc_carry k using (file_no) left join _stage_steps s on s.file_no = f.file_no and s.kind = 'model'
    group by f.file_no
),
outcome as (
    select l.file_no, e.ts, case
               when l.type = 'attachment' then 'budget_exceeded'
               when l.type = 'user' and l.user_text like '[Request interrupted by user%' then 'cancelled'
               when l.type = 'assistant' and m.api_error then 'failed'
               when l.type = 'assistant' and t.text is not null and a.response is null then 'succeeded'
               else 'running'
           end as status,
           case when l.type = 'attachment' then 'max_turns' when m.api_error then left(t.text, 200)
                else m.stop_reason end as finish_reason
    from last_message l join ended e using (file_no)
    left join _cc_model m on m.file_no = l.file_no and m.response = l.response and l.type = 'assistant'
    left join _cc_text t on t.file_no = m.file_no and t.response = m.response
    left join asks a on a.file_no = m.file_no and a.response = m.response
)
select f.file_no, f.run_id, f.parent_run_id, 1 as source_line, 'claude-code' as agent, m.model, 'anthropic' as provider,
       -- an automatic compaction (subagents/agent-acompact-*) is one model call that summarises its session's
       -- context, not an agent at work: its task class says so, and budgets leave it out of the runs a ceiling is for
       case when regexp_matches(f.run_id, '/agent-acompact-[^/]*$') then 'context compaction' end as task_class,
       -- a subagent's file (every line a side chain) opens with the parent's hook reminders (isMeta) carried in with
       -- the parent's times: the subagent starts at its own first line, its prompt
       coalesce(case when f.all_side then least((k.carry ->> 'min_own_ts')::timestamptz,
                                                (select min(ts) from _cc c where c.file_no = f.file_no
                                                 and not coalesce(c.j.isMeta, false))) end,
                least((k.carry ->> 'min_ts')::timestamptz, (select min(ts) from _cc c where c.file_no = f.file_no)))
           as started_at,
       case when o.status <> 'running' then o.ts end as ended_at, coalesce(o.status, 'running') as status,
       case o.status when 'succeeded' then o.finish_reason  -- the API's own stop_reason; often not written
                     when 'cancelled' then 'interrupted by user'
                     when 'failed' then o.finish_reason  -- the API error, as Claude Code wrote it
                     when 'budget_exceeded' then o.finish_reason end as stop_reason
from _cc_files f left join outcome o using (file_no) left join models m using (file_no) left join _cc_carry k using (file_no);

-- A tail read's kept model steps (the final answer is found among them and the new ones alike).
create or replace temp table _prior_model as
select k.file_no, s.run_id, s.idx, s.agent_label is null or f.all_side as main, coalesce(s.output_text, '') <> '' as has_text,
       exists (select 1 from tool_calls c where c.run_id = s.run_id and c.step_idx = s.idx) as asks
from _cc_carry k join _cc_files f using (file_no)
join steps s on s.run_id = f.run_id and s.idx < (k.carry ->> 'steps')::bigint and s.kind = 'model';

-- What a tail read cannot go on from (the file is then read whole, as a fresh ingest reads it): a line naming
-- another session or agent, a main-thread line in a file read as a side chain, an answer to a line the
-- checkpoint does not remember, a result for a call made before the resume line, a response begun before it.
create or replace temp table _tail_conflicts as
select file_no, line, reason from (
    select p.file_no, p.line_no as line, case
        when p.j.sessionId is not null and p.j.sessionId is distinct from k.carry ->> 'own_session'
            then 'names session ' || left(p.j.sessionId, 80) || ', not the one the file was read as'
        when p.j.agentId is not null and p.j.agentId is distinct from k.carry ->> 'agent_id'
            then 'names agent ' || left(p.j.agentId, 80) || ', not the one the file was read as'
        when (k.carry ->> 'all_side')::boolean and p.j.type in ('user', 'assistant') and not coalesce(p.j.isSidechain, false)
            then 'is on the main thread of a file read as a side chain'
        end as reason
    from _parsed p join _cc_carry k using (file_no)
    union all
    select c.file_no, c.line_no, 'answers a line before the lines the checkpoint remembers'
    from _cc c join _cc_carry k using (file_no)
    where c.type = 'assistant' and c.j.parentUuid is not null
      and not exists (select 1 from _cc x where x.file_no = c.file_no and x.j.uuid = c.j.parentUuid)
      and not list_contains(from_json(k.carry -> 'parent_uuids', '["VARCHAR"]'), c.j.parentUuid)
    union all
    select r.file_no, r.line_no, 'is the result of a call made before the line it was read from'
    from _cc_results r join _cc_carry k using (file_no)
    where not exists (select 1 from _stage_calls c where c.file_no = r.file_no and c.call_id = r.call_id)
    union all
    select m.file_no, m.line_no, 'continues a response begun before the line it was read from'
    from _cc_model m join _cc_carry k using (file_no) join _cc_files f using (file_no)
    where m.request_id is not null and exists (
        select 1 from steps s where s.run_id = f.run_id and s.kind = 'model' and s.request_id = m.request_id
                                and (s.response_id is null or s.response_id = m.response_id))
) where reason is not null;

-- Where the next tail read may go on from, and the state it needs there: the largest line no response and no
-- call-and-result crosses, at or before the last line of the file, the session's last message that decides its
-- status and the first response whose call has no result yet; past the file's own first message (before it,
-- lines may be history copied in). No state where there is no such line.
create or replace temp table _tail_spans as
with responses as (
    select file_no, min(line_no) as first, max(line_no) as last
    from _parsed where j.type = 'assistant'
    group by file_no, coalesce(j.message.id || '|' || j.requestId, 'line ' || line_no)
),
calls as (
    select c.file_no, m.line_no as first, min(r.line_no) as last
    from _cc_blocks c join _cc_model m on m.file_no = c.file_no and m.response = c.response
    left join _cc_results r on r.file_no = c.file_no and r.call_id = c.block ->> 'id'
    where c.type = 'assistant' and c.block ->> 'type' = 'tool_use'
    group by c.file_no, m.line_no, c.block ->> 'id'
)
select file_no, first, last from responses union all select file_no, first, last from calls;

create or replace temp table _tail_caps as
select e.file_no, least(e.end_line + 1,
                        (select max(line_no) from _cc_main m where m.file_no = e.file_no and m.says),
                        (select min(first) from _tail_spans c where c.file_no = e.file_no and c.last is null)) as cap
from file_ends() e;

create or replace temp table _tail_state as
with ends as (select file_no, coalesce(carry, '{}'::json) as carry from _files),  -- (the state read from)
chosen as (select * from resume_lines()),
-- the times of the last lines before it (a later answer names its question by uuid), the newest first
remembered as (
    select file_no, uuid, ts, row_number() over (partition by file_no order by older, n) as n from (
        select c.file_no, c.j.uuid as uuid, c.ts::varchar as ts, 0 as older, -c.line_no as n
        from _cc c join chosen ch using (file_no) where c.line_no < ch.line and c.j.uuid is not null
        union all
        select file_no, unnest(from_json(carry -> 'parent_uuids', '["VARCHAR"]')),
               unnest(from_json(carry -> 'parent_times', '["VARCHAR"]')), 1,
               unnest(range(len(from_json(carry -> 'parent_uuids', '["VARCHAR"]'))))
        from _cc_carry)
    qualify row_number() over (partition by file_no order by older, n) <= 256
)
select e.file_no, ch.line,
       case when ch.line > o.line_no and ch.line > 1 then json_object(
           'run_id', f.run_id, 'parent_run_id', f.parent_run_id, 'own_session', f.own_session, 'agent_id', f.agent_id,
           'all_side', f.all_side,
           'steps', coalesce((e.carry ->> 'steps')::bigint, 0)
                    + (select count(*) from _cc_steps s where s.file_no = e.file_no and s.line_no < ch.line),
           'side_chains', coalesce((e.carry ->> 'side_chains')::bigint, 0)
                    + (select count(*) from _parsed p where p.file_no = e.file_no and p.line_no < ch.line
                       and coalesce(p.j.isSidechain, false) and p.j.type in ('user', 'assistant') and p.j.parentUuid is null),
           'min_ts', least((e.carry ->> 'min_ts')::timestamptz,
                           (select min(ts) from _cc c where c.file_no = e.file_no and c.line_no < ch.line))::varchar,
           'min_own_ts', least((e.carry ->> 'min_own_ts')::timestamptz,
                               (select min(ts) from _cc c where c.file_no = e.file_no and c.line_no < ch.line
                                and not coalesce(c.j.isMeta, false)))::varchar,
           'main_max_ts', greatest((e.carry ->> 'main_max_ts')::timestamptz,
                                   (select max(ts) from _cc_main m where m.file_no = e.file_no and m.line_no < ch.line))::varchar,
           'first_model', coalesce(e.carry ->> 'first_model',
                                   (select arg_min(s.model, s.idx) from _stage_steps s where s.file_no = e.file_no
                                    and s.kind = 'model' and s.model is not null and s.source_line < ch.line)),
           'parent_uuids', (select list(uuid order by n) from remembered r where r.file_no = e.file_no),
           'parent_times', (select list(ts order by n) from remembered r where r.file_no = e.file_no))
       end as state
from ends e join chosen ch using (file_no) join _cc_files f using (file_no) left join _cc_own_first o using (file_no);
