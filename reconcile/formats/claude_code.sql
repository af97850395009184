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
       session as own_session  -- the sessionId the file's own lines carry
from named;

-- Side-chain lines get a label: the agent id, else one per side chain (a chain starts at a line with no parent).
-- A <synthetic> assistant message is one Claude Code wrote itself, not a model's answer: an API error (isApiErrorMessage,
-- or, where a version does not say, its text "API Error: …") stands for the call that failed; any other ("No response
-- requested." after a --continue) answers no call at all.
create or replace temp table _cc as
select file_no, line_no, j, type, ts,
       case when side then coalesce(j.agentId, 'sidechain-' || sum(case when side and j.parentUuid is null
           then 1 else 0 end) over (partition by file_no order by line_no)) end as agent_label,
       synthetic and failed as api_error, synthetic and not failed as no_call
from (select file_no, line_no, j, j.type as type, (j.timestamp)::timestamptz as ts,
             coalesce(j.isSidechain, false) and j.type in ('user', 'assistant') as side,
             j.type = 'assistant' and coalesce(j.message.model = '<synthetic>', false) as synthetic,
             coalesce(j.isApiErrorMessage, coalesce(j.message.content -> 0 ->> 'text', j.message.content ->> '$')
                                           like 'API Error%', false) as failed
      from _parsed);

-- History copied in: `--fork-session` (and older resumes) begin the new file with the earlier session's lines,
-- verbatim (the same uuids, message and request ids, usage and timestamps). Those calls were made, and are
-- counted, in the session that made them: here they are skipped. Told from the file alone (not by ids seen in
-- other files, as ccusage does), so that any order of loads gives the store one load of everything gives: the
-- lines before the file's own first message that are stamped before the file's first timestamp (2.1.197 writes
-- the fork's own queue-operation lines first, the copies after them, stamped earlier) or that carry another
-- session's id.
create or replace temp table _cc_copied as
with bounds as (
    select c.file_no, arg_min(c.ts, c.line_no) filter (where c.ts is not null) as file_start,
           any_value(f.own_session) as own
    from _cc c join _cc_files f using (file_no) group by c.file_no
),
own_first as (
    select c.file_no, min(c.line_no) as line_no
    from _cc c join bounds b using (file_no)
    where c.type in ('user', 'assistant') and c.ts >= b.file_start
      and (c.j.sessionId is null or b.own is null or c.j.sessionId = b.own)
    group by c.file_no
)
select c.file_no, c.line_no
from _cc c join bounds b using (file_no) left join own_first o using (file_no)
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
                        and c.agent_label is null) as all_side
from _cc_files f;

-- One model step per API response: the lines sharing message.id and requestId.
create or replace temp table _cc_model as
select c.file_no, coalesce(c.j.message.id || '|' || c.j.requestId, 'line ' || c.line_no) as response,
       min(c.line_no) as line_no, min(c.ts) as first_ts, max(c.ts) as last_ts,
       arg_max(c.j.message.usage, c.line_no) as usage, arg_max(c.j.message.model, c.line_no) as model,
       arg_max(c.j.message.stop_reason, c.line_no) as stop_reason, any_value(c.j.message.id) as response_id,
       any_value(c.j.requestId) as request_id, any_value(c.agent_label) as agent_label,
       min(p.asked_ts) as asked_at, bool_or(c.api_error) as api_error
from _cc c
left join (select file_no, j.uuid as uuid, ts as asked_ts from _cc) p
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
select row_number() over (partition by file_no order by line_no, position) - 1 as idx, i.*, f.run_id, f.all_side
from items i join _cc_files f using (file_no);

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
create or replace temp table _stage_runs as
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
),
last_message as (
    -- arg_max_null: the last line's own values, NULL included (arg_max would skip to an earlier one)
    select file_no, arg_max_null(type, line_no) as type, arg_max_null(user_text, line_no) as user_text,
           arg_max_null(response, line_no) as response
    from marked
    where type <> 'system' and not summary and not local_output and not (command and coalesce(output_next, false))
    group by file_no
),
ended as (select file_no, max(ts) as ts from main group by file_no),
asks as (select distinct file_no, response from _cc_blocks where type = 'assistant' and block ->> 'type' = 'tool_use'),
models as (
    select file_no, arg_min(model, idx) filter (where model is not null) as model
    from _stage_steps where kind = 'model' group by file_no
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
       coalesce((select min(ts) from _cc c where c.file_no = f.file_no and f.all_side and not coalesce(c.j.isMeta, false)),
                (select min(ts) from _cc c where c.file_no = f.file_no)) as started_at,
       case when o.status <> 'running' then o.ts end as ended_at, coalesce(o.status, 'running') as status,
       case o.status when 'succeeded' then o.finish_reason  -- the API's own stop_reason; often not written
                     when 'cancelled' then 'interrupted by user'
                     when 'failed' then o.finish_reason  -- the API error, as Claude Code wrote it
                     when 'budget_exceeded' then o.finish_reason end as stop_reason
from _cc_files f left join outcome o using (file_no) left join models m using (file_no);
