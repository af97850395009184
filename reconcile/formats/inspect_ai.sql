-- Staging for Inspect AI logs. Input: _doc(file_no, j): an EvalLog ({version, eval, stats, samples}) or,
-- from an .eval archive, {"header": EvalLog without samples, "samples": [...]}.

-- Inspect moves any text over 100 characters to the sample's attachments and writes "attachment://<md5>" in its
-- place (message contents, tool call arguments, a ToolEvent's arguments): the text it stands for, looked up.
create or replace temp macro _ia_text(t, attachments) as
    case when regexp_full_match(t, 'attachment://[0-9A-Za-z]+')
         then coalesce(json_extract_string(attachments, substr(t, 14)), t) else t end;
-- the same inside a JSON value (a call's arguments): every "attachment://<md5>" string replaced by its text
create or replace temp macro _ia_json(j, attachments) as
    case when contains(j::varchar, '"attachment://') then list_reduce(
             regexp_extract_all(j::varchar, '"attachment://([0-9A-Za-z]+)"', 1),
             lambda acc, h: replace(acc, '"attachment://' || h || '"',
                                    coalesce(to_json(json_extract_string(attachments, h))::varchar,
                                             '"attachment://' || h || '"')),
             j::varchar)::json
         else j end;

-- a JSON value the log gives (a JSON null is none)
create or replace temp macro _ia_given(j) as case when coalesce(json_type(j), 'NULL') <> 'NULL' then j end;

create or replace temp table _ia_logs as
-- One parse of the document for all its parts (each `->` on it parses it again: a large log many times over).
with parts as (select d.file_no, json_extract(d.j, ['$.header', '$.eval', '$.samples', '$.stats']) as p from _doc d),
logs as (select file_no, case when p[1] is not null then p[1] -> 'eval' else p[2] end as eval, p[3] as samples,
                case when p[1] is not null then p[1] -> 'stats' else p[4] end as stats
         from parts),
versioned as (
    select *, regexp_extract(eval -> 'packages' ->> 'inspect_ai', '^(\d+)\.(\d+)\.(\d+)', ['major', 'minor', 'patch'])
              as v
    from logs
)
select file_no, json_list(samples) as sample_list, eval, stats, eval ->> 'model' as model,
       -- the eval's own identity: eval_id; logs before it (inspect 0.3.6x) have the run and the task ids, from
       -- which Inspect itself derives an eval_id when it reads them (two tasks of one run differ by task id)
       coalesce(nullif(eval ->> 'eval_id', ''),
                nullif(concat_ws('/', nullif(eval ->> 'run_id', ''), nullif(eval ->> 'task_id', '')), ''))
           as eval_key,
       -- since inspect 0.3.184 input_tokens excludes cache reads and writes; before, it was the provider's own
       coalesce([try_cast(v.major as integer), try_cast(v.minor as integer), try_cast(v.patch as integer)]
                >= [0, 3, 184], false) as input_excludes_cache
from versioned;

-- A sample run's id is its uuid (inspect >= 0.3.70: globally unique, kept when a retry carries a finished sample
-- over into its own log, and the same in a .eval and its .json export); before that, the eval's identity with the
-- sample id and epoch; the file's name only when the log records no identity at all.
create or replace temp table _ia_samples as
select l.file_no, s.position as record_no, s.sample, l.eval, l.model, l.input_excludes_cache,
       -- early logs (before inspect 0.3.5x) keep a sample's events under "transcript"
       coalesce(s.sample -> 'events', s.sample -> 'transcript' -> 'events') as events,
       s.sample -> 'attachments' as attachments,
       coalesce(nullif(s.sample ->> 'uuid', ''),
                coalesce(l.eval_key, f.stem) || '/' || coalesce(s.sample ->> 'id', s.position::varchar)
                    || '/epoch ' || coalesce(s.sample ->> 'epoch', '1')) as run_id
from _ia_logs l join _files f using (file_no),
     (select unnest(l.sample_list) as sample, generate_subscripts(l.sample_list, 1) as position) s;

create or replace temp table _stage_records as
select file_no, record_no, sample::varchar as raw, run_id,
       case when json_type(events) = 'ARRAY' then 'load' else 'reject' end as decision,
       case when coalesce(json_type(events), 'NULL') <> 'ARRAY'
            then 'sample ' || record_no || ' has no "events" list: its calls cannot be read' end as note
from _ia_samples
union all
-- A log without samples (log_samples=False, or an eval that ran none) is said so, never "0 lines": its one record
-- is skipped with why. Its eval-level usage (stats.model_usage) is the eval's totals by model, with no sample, call
-- or time to put them on: no run can be made of it honestly (a run without calls would read as one that cost $0).
select l.file_no, 1 as record_no, l.stats::varchar as raw, null as run_id, 'skip' as decision,
       case when json_type(l.stats -> 'model_usage') = 'OBJECT' and l.stats ->> 'model_usage' <> '{}'
            then 'an Inspect log without samples'
                 || case when l.eval -> 'config' ->> 'log_samples' = 'false' then ' (written with log_samples=False)'
                         else '' end
                 || ': only the eval''s usage totals by model (stats.model_usage), no sample, call or per-call usage '
                 || 'to load as runs'
            else 'an Inspect log without samples and without usage: the eval recorded nothing to load' end as note
from _ia_logs l
where len(l.sample_list) = 0;

-- Every event, scorer calls and nested events included (a model call inside a score is paid for too).
create or replace temp table _ia_events as
with recursive walk(file_no, run_id, input_excludes_cache, path, e) as (
    select s.file_no, s.run_id, s.input_excludes_cache, [e.position], e.event
    from _ia_samples s join _stage_records r on r.file_no = s.file_no and r.record_no = s.record_no,
         (select json_list(s.events) as events) l,
         (select unnest(l.events) as event, generate_subscripts(l.events, 1) as position) e
    where r.decision = 'load'
    union all
    select w.file_no, w.run_id, w.input_excludes_cache, list_append(w.path, c.position), c.child
    from walk w, (select json_list(w.e -> 'events') as events) l,
         (select unnest(l.events) as child, generate_subscripts(l.events, 1) as position) c
    where len(w.path) < 20
)
select *, e ->> 'event' as kind from walk;

-- The spans a scorer opened (a span_begin of type 'scorer', or the 'scorers' span around them) and every span under
-- them, followed by parent_id: a model call in one is the grader's, paid for but no part of the agent's conversation.
create or replace temp table _ia_scorer_spans as
with recursive spans as (
    select file_no, run_id, e ->> 'id' as id, e ->> 'parent_id' as parent_id, e ->> 'type' as type
    from _ia_events where kind = 'span_begin' and e ->> 'id' is not null
),
inside(file_no, run_id, id, depth) as (
    select file_no, run_id, id, 0 from spans where type in ('scorer', 'scorers')
    union all
    select s.file_no, s.run_id, s.id, i.depth + 1
    from spans s join inside i on s.file_no = i.file_no and s.run_id = i.run_id and s.parent_id = i.id
    where i.depth < 20
)
select distinct file_no, run_id, id from inside;

-- Model and tool events, each marked whether a scorer made it: inside a scorer's span (above), or, in logs before
-- spans (inspect 0.3.5x), after a "step" event beginning a scorer and before its end.
create or replace temp table _ia_marked as
with stepped as (
    select *, last_value(case when kind = 'step' and e ->> 'type' = 'scorer' then e ->> 'action' end ignore nulls)
                  over (partition by file_no, run_id order by path rows between unbounded preceding and current row)
                  as scorer_step
    from _ia_events
)
select s.file_no, s.run_id, s.input_excludes_cache, s.path, s.e, s.kind,
       x.id is not null or coalesce(s.scorer_step = 'begin', false) as scorer,
       coalesce(json_type(s.e -> 'error'), 'NULL') <> 'NULL' as errored
from stepped s
left join _ia_scorer_spans x on x.file_no = s.file_no and x.run_id = s.run_id and x.id = s.e ->> 'span_id'
where s.kind in ('model', 'tool');

-- The tool calls each model event asked for (arguments with their attachments' text).
create or replace temp table _ia_asked as
select m.file_no, m.run_id, m.path, m.scorer, c.position - 1 as call_position, c.call ->> 'id' as call_id,
       c.call ->> 'function' as tool_name, _ia_json(c.call -> 'arguments', s.attachments) as args
from (select *, json_list(e -> 'output' -> 'choices' -> 0 -> 'message' -> 'tool_calls') as calls from _ia_marked
      where kind = 'model') m
join _ia_samples s on s.file_no = m.file_no and s.run_id = m.run_id,
     (select unnest(m.calls) as call, generate_subscripts(m.calls, 1) as position) c;

-- react() and basic_agent() answer through their `submit` tool: the agent's last model call asking for it, answered
-- without error, with no model call of the agent's after it, is the final answer, and the answer is its argument.
-- That call is the answer, not a tool call (as SWE-agent's submit, OpenHands' finish): its ToolEvent, which only
-- echoes the answer back, is not a tool step.
create or replace temp table _ia_submit as
with last_call as (select file_no, run_id, max(path) as path from _ia_marked where kind = 'model' and not scorer
                   group by all)
select a.file_no, a.run_id, a.path, a.call_id, a.args
from _ia_asked a
join last_call l on l.file_no = a.file_no and l.run_id = a.run_id and l.path = a.path
where a.tool_name = 'submit' and not a.scorer
  and exists (select 1 from _ia_marked t where t.file_no = a.file_no and t.run_id = a.run_id and t.kind = 'tool'
              and t.e ->> 'id' = a.call_id and not t.errored and not coalesce(t.e ->> 'failed' = 'true', false)
              and not coalesce(t.e ->> 'pending' = 'true', false))
qualify row_number() over (partition by a.file_no, a.run_id order by a.call_position desc) = 1;

-- A limit stops a sample after the call that crossed it, whose tool calls Inspect never runs (no ToolEvent): those
-- are not lost results but calls the harness chose not to run, `not_run`, as a fence's are.
create or replace temp table _ia_not_run as
with stopped as (
    select * from (
        select s.file_no, s.run_id,
               coalesce(s.sample ->> '$.limit.type',
                        (select max(e.e ->> 'type') from _ia_events e where e.file_no = s.file_no
                         and e.run_id = s.run_id and e.kind = 'sample_limit')) as limit_type
        from _ia_samples s)
    where limit_type is not null
),
last_call as (select file_no, run_id, max(path) as path from _ia_marked where kind = 'model' and not scorer
              group by all)
select a.file_no, a.run_id, list_append(a.path, 100000 + a.call_position) as path, a.call_id,
       st.limit_type
from _ia_asked a
join last_call l on l.file_no = a.file_no and l.run_id = a.run_id and l.path = a.path
join stopped st on st.file_no = a.file_no and st.run_id = a.run_id
where not a.scorer and a.call_id is not null
  and not exists (select 1 from _ia_marked t where t.file_no = a.file_no and t.run_id = a.run_id and t.kind = 'tool'
                  and t.e ->> 'id' = a.call_id);

create or replace temp table _ia_steps as
with kept as (
    select m.file_no, m.run_id, m.input_excludes_cache, m.path, m.e, m.kind, m.scorer, m.errored,
           null::varchar as not_run_limit
    from _ia_marked m
    where not exists (select 1 from _ia_submit b where m.kind = 'tool' and b.file_no = m.file_no
                      and b.run_id = m.run_id and b.call_id = m.e ->> 'id')
    union all
    select n.file_no, n.run_id, false, n.path, json_object('id', n.call_id), 'tool', false, false, n.limit_type
    from _ia_not_run n
)
select row_number() over (partition by file_no, run_id order by path) - 1 as idx, * from kept;

create or replace temp table _stage_calls as
select s.file_no, s.run_id, s.idx as step_idx, a.call_position, a.call_id, a.tool_name, a.args
from _ia_asked a join _ia_steps s on s.file_no = a.file_no and s.run_id = a.run_id and s.path = a.path
                                and s.kind = 'model'
where not exists (select 1 from _ia_submit b where b.file_no = a.file_no and b.run_id = a.run_id
                  and b.call_id = a.call_id);

-- The model each call reached as its answer names it (output.model: the dated snapshot). A call that failed has
-- Inspect's empty output, whose model is the model string it asked for; the same log's answered calls to that
-- string name it, as they name the eval's model for a sample that made no call.
create or replace temp table _ia_model_names as
select file_no, called, arg_max(answered, calls) as answered
from (select file_no, e ->> 'model' as called, e -> 'output' ->> 'model' as answered, count(*) as calls
      from _ia_marked
      where kind = 'model' and not errored and nullif(e -> 'output' ->> 'model', '') is not null
        and e -> 'output' ->> 'model' <> coalesce(e ->> 'model', '')
      group by all)
group by all;

-- The final answer's step: the submit call (above), else the agent's last model call with text that asks for no
-- tool, after which none of its calls asks for one (a scorer's verdict is not the agent's answer).
create or replace temp table _ia_final as
with model as (
    select s.file_no, s.run_id, s.idx, s.scorer, s.errored,
           nullif(trim(coalesce(case json_type(s.e -> 'output' -> 'choices' -> 0 -> 'message' -> 'content')
                   when 'VARCHAR' then s.e -> 'output' -> 'choices' -> 0 -> 'message' ->> 'content'
                   when 'ARRAY' then array_to_string(list_transform(
                       json_list(s.e -> 'output' -> 'choices' -> 0 -> 'message' -> 'content'), lambda p: p ->> 'text'), '')
                   end, '')), '') is not null as has_text,
           exists (select 1 from _stage_calls c where c.file_no = s.file_no and c.run_id = s.run_id
                   and c.step_idx = s.idx) as asks
    from _ia_steps s where s.kind = 'model'
),
last_ask as (select file_no, run_id, max(idx) filter (where asks and not scorer) as idx from model group by all),
detected as (
    select m.file_no, m.run_id, max(m.idx) as idx
    from model m join last_ask l using (file_no, run_id)
    where not m.scorer and not m.errored and m.has_text and not m.asks and m.idx > coalesce(l.idx, -1)
    group by all
)
select s.file_no, s.run_id, s.idx, b.args ->> 'answer' as answer
from _ia_submit b join _ia_steps s on s.file_no = b.file_no and s.run_id = b.run_id and s.path = b.path
                                 and s.kind = 'model'
union all
select d.file_no, d.run_id, d.idx, null
from detected d
where not exists (select 1 from _ia_submit b where b.file_no = d.file_no and b.run_id = d.run_id);

create or replace temp table _stage_steps as
with model as (
    select s.*, s.e -> 'output' -> 'usage' as u, coalesce(json_type(s.e -> 'output' -> 'usage') = 'OBJECT', false) as has_usage,
           split_part(coalesce(s.e ->> 'model', ''), '/', 1) as provider,
           -- served from Inspect's own response cache: no provider call was made, so none was billed (the usage
           -- shown is the cached call's, and Inspect leaves it out of the sample's model_usage)
           coalesce(s.e ->> 'cache' = 'read', false) as cache_hit,
           staged_timestamp(s.e ->> 'timestamp') as started, staged_timestamp(s.e ->> 'completed') as completed
    from _ia_steps s where s.kind = 'model'
),
counted as (
    select *, staged_number(u ->> 'input_tokens') as input, staged_number(u ->> 'input_tokens_cache_read') as read_given,
           -- a provider that bills no cache writes wrote none; any other's absent count is unknown (zero_buckets)
           coalesce(staged_number(u ->> 'input_tokens_cache_write'),
                    case when has_usage and bills_no_cache_writes(e ->> 'model') then 0 end) as written,
           -- the whole prompt by the provider's own total (total_tokens = all input + output since 0.3.184)
           staged_number(u ->> 'total_tokens') - staged_number(u ->> 'output_tokens') as whole,
           -- before 0.3.184 OpenAI and the others count cache reads (and writes) inside input_tokens; Anthropic never did
           input_excludes_cache or provider = 'anthropic' as apart
    from model
),
buckets as (
    -- since 0.3.184 input_tokens is the uncached rest (prompt − cached), and Inspect's OpenAI Responses mapping
    -- leaves input_tokens_cache_read out when the provider reported none: where the provider's whole prompt is that
    -- rest and the writes alone, the reads were 0. Any other gap leaves the reads unknown.
    select *, case when read_given is null and input_excludes_cache and whole is not null and written is not null
                        and whole = input + written then 0 else read_given end as read
    from counted
)
select m.file_no, m.run_id, m.idx::integer as idx, 'model' as kind, m.path[1]::integer as source_line,
       m.started as started_at,
       -- a call a limit cut off has no completion time: Inspect's own measure of the call (output.time) then
       coalesce(date_diff('millisecond', m.started, m.completed),
                round(staged_number(m.e -> 'output' ->> 'time') * 1000)::bigint) as ms,
       -- the model as the answer names it; a failed call's (Inspect's empty output) as the log's answered calls name it
       case when not m.errored and nullif(m.e -> 'output' ->> 'model', '') is not null
                 and m.e -> 'output' ->> 'model' <> coalesce(m.e ->> 'model', '')
            then m.e -> 'output' ->> 'model'
            else coalesce(n.answered, nullif(m.e -> 'output' ->> 'model', ''), m.e ->> 'model') end as model,
       nullif(m.provider, '') as provider,
       -- a grader's call (inside a scorer's span) is paid for, but is no part of the agent's conversation
       case when m.scorer then 'scorer' end as agent_label, not m.scorer as main_thread,
       -- a call that raised: no answer, no usage (its error is Inspect's record of the exception)
       case when m.errored then left(m.e ->> 'error', 200) end as error,
       -- input counting the reads: the uncached part is unknown while the reads are
       case when m.cache_hit then 0 when m.apart then m.input else m.input - m.read - m.written end as input_uncached,
       case when m.cache_hit then 0 else m.read end as cache_read,
       case when m.cache_hit then 0 else m.written end as cache_write_5m,
       -- Inspect has one write bucket and asks only for the default 5-minute cache (zero_buckets)
       case when m.cache_hit or m.has_usage then 0 end as cache_write_1h,
       case when m.cache_hit then 0 else staged_number(m.u ->> 'output_tokens') end as output_tokens,
       -- unknown where the usage leaves it out (Anthropic's mapping writes it only when positive): never 0 by default
       case when m.cache_hit then 0 else staged_number(m.u ->> 'reasoning_tokens') end as reasoning_tokens,
       case when m.apart then m.input + m.read + m.written else m.input end as context_tokens,
       case when m.cache_hit then 0 else staged_micros(m.u ->> 'total_cost') end as harness_cost_micros,
       -- a failed call's output is Inspect's empty placeholder ("stop"): no reason the model gave
       case when not m.errored then m.e -> 'output' -> 'choices' -> 0 ->> 'stop_reason' end as finish_reason,
       nullif(_ia_text(case json_type(m.e -> 'output' -> 'choices' -> 0 -> 'message' -> 'content')
                  when 'VARCHAR' then m.e -> 'output' -> 'choices' -> 0 -> 'message' ->> 'content'
                  when 'ARRAY' then array_to_string(list_transform(
                      json_list(m.e -> 'output' -> 'choices' -> 0 -> 'message' -> 'content'),
                      lambda p: _ia_text(p ->> 'text', s.attachments)), '')
              end, s.attachments), '') as output_text,
       f.idx is not null as is_final
from buckets m
join _ia_samples s on s.file_no = m.file_no and s.run_id = m.run_id
left join _ia_model_names n on n.file_no = m.file_no and n.called = m.e ->> 'model'
left join _ia_final f on f.file_no = m.file_no and f.run_id = m.run_id and f.idx = m.idx
union all by name
select t.file_no, t.run_id, t.idx::integer as idx, 'tool' as kind, t.path[1]::integer as source_line,
       staged_timestamp(t.e ->> 'timestamp') as started_at,
       date_diff('millisecond', staged_timestamp(t.e ->> 'timestamp'), staged_timestamp(t.e ->> 'completed')) as ms,
       t.e ->> 'id' as call_id, case when t.scorer then 'scorer' end as agent_label, not t.scorer as main_thread,
       case when t.not_run_limit is not null then 'not_run'
            -- interrupted while it ran (a time limit, Ctrl-C): started, never completed, no result
            when coalesce(t.e ->> 'pending' = 'true', false) and t.e ->> 'completed' is null then 'started'
            -- a handled error the model saw, or a crash (failed: true, no error: the exception ended the sample)
            when t.errored or coalesce(t.e ->> 'failed' = 'true', false) then 'error'
            else 'ok' end as tool_status,
       case when t.not_run_limit is not null
                then 'not run: the ' || t.not_run_limit || ' limit stopped the sample after the call that asked for it'
            when t.errored then left(t.e -> 'error' ->> 'message', 200)
            when coalesce(t.e ->> 'failed' = 'true', false) then 'the tool crashed'
                || coalesce(' (' || nullif(regexp_extract(s.sample -> 'error' ->> 'message',
                                                          '^([A-Za-z_][A-Za-z0-9_.]*)\(', 1), '') || ')', '')
            end as error,
       -- a crash, an interrupted call or one never run returned nothing: no result, not an empty one
       case when t.not_run_limit is not null
                 or (coalesce(t.e ->> 'pending' = 'true', false) and t.e ->> 'completed' is null)
                 or (coalesce(t.e ->> 'failed' = 'true', false) and not t.errored) then null
            when json_type(t.e -> 'result') = 'VARCHAR' then _ia_text(t.e ->> 'result', s.attachments)
            else (t.e -> 'result')::varchar end as result_text
from _ia_steps t join _ia_samples s on s.file_no = t.file_no and s.run_id = t.run_id
where t.kind = 'tool';

-- The catalogue: every model event carries the tools offered to that call (name, description, parameter
-- schema); a run's catalogue is their union. Its size is estimated as other formats do (UTF-8 bytes of the
-- definition / 4), long texts Inspect moved to the sample's attachments counted at their own length.
-- Whether a tool changes the world is not recorded: side_effect stays NULL.
create or replace temp table _stage_tools as
with offered as (
    select m.file_no, m.run_id, t.tool ->> 'name' as name, t.tool::varchar as definition,
           s.sample -> 'attachments' as attachments
    from _ia_steps m join _ia_samples s on s.file_no = m.file_no and s.run_id = m.run_id,
         (select unnest(json_list(m.e -> 'tools')) as tool) t
    where m.kind = 'model'
),
sized as (
    select file_no, run_id, name,
           octet_length(encode(definition)) + coalesce(list_sum(list_transform(
               regexp_extract_all(definition, 'attachment://([0-9A-Za-z]+)', 1),
               lambda h: coalesce(octet_length(encode((attachments -> h)::varchar)) - 2 - octet_length(encode('attachment://' || h)), 0))), 0)
               as bytes
    from offered where name is not null
)
select file_no, run_id, name, null::boolean as side_effect, null::boolean as allow_repeat,
       ceil(max(bytes) / 4)::integer as schema_tokens
from sized group by all;

-- The harness ledger: each sample's model_usage, Inspect's own per-model count of the tokens (and, where it
-- priced them, the cost) of the sample's calls — the counter its token_limit is enforced against. It covers the
-- same calls as the events (both restart when a sample is retried; answers from Inspect's response cache are in
-- neither). Input is all input, as the steps' buckets add up (before 0.3.184 input_tokens already held OpenAI's
-- reads); a counter some model's entry leaves out is unknown for the sample. A sample that made no model call has
-- an empty model_usage: Inspect counted no token, a ledger of 0 (one whose calls recorded no usage has none).
create or replace temp table _ia_ledger as
with counted as (
    select s.file_no, s.run_id, m.value as u,
           case when s.input_excludes_cache or split_part(m.key, '/', 1) = 'anthropic'
                then staged_number(m.value ->> 'input_tokens') + staged_number(m.value ->> 'input_tokens_cache_read')
                     + coalesce(staged_number(m.value ->> 'input_tokens_cache_write'),
                                case when bills_no_cache_writes(m.key) then 0 end)
                else staged_number(m.value ->> 'input_tokens') end as input
    from _ia_samples s join _stage_records r on r.file_no = s.file_no and r.record_no = s.record_no,
         json_each(s.sample -> 'model_usage') m
    where r.decision = 'load' and json_type(s.sample -> 'model_usage') = 'OBJECT' and json_type(m.value) = 'OBJECT'
)
select file_no, run_id,
       case when count(input) = count(*) then sum(input) end as ledger_input_tokens,
       case when count(u ->> 'output_tokens') = count(*) then sum(staged_number(u ->> 'output_tokens')) end
           as ledger_output_tokens,
       case when count(u ->> 'total_tokens') = count(*) then sum(staged_number(u ->> 'total_tokens')) end as ledger_tokens,
       case when count(u ->> 'total_cost') = count(*) then sum(staged_micros(u ->> 'total_cost')) end as ledger_cost_micros
from counted group by all
union all
select s.file_no, s.run_id, 0, 0, 0, null
from _ia_samples s join _stage_records r on r.file_no = s.file_no and r.record_no = s.record_no
where r.decision = 'load' and s.sample ->> 'model_usage' = '{}'
  and not exists (select 1 from _ia_events e where e.file_no = s.file_no and e.run_id = s.run_id and e.kind = 'model');

create or replace temp table _stage_runs as
with span as (select file_no, run_id, min(started_at) as started_at,
                     max(started_at + to_milliseconds(coalesce(ms, 0)::bigint)) as last_at
              from _stage_steps group by all),
-- every event's time: the first is the sample's start, the last the latest moment the log shows it running
events as (select file_no, run_id, min(staged_timestamp(e ->> 'timestamp')) as first_at,
                  max(staged_timestamp(e ->> 'timestamp')) as last_at,
                  -- the operator's "cancel" (inspect ctl, the TUI) leaves a sample_limit event but no sample.limit
                  bool_or(kind = 'sample_limit' and e ->> 'type' = 'operator') as operator_stopped
           from _ia_events group by all),
sampled as (
    select s.*,
           coalesce(json_type(s.sample -> 'error'), 'NULL') <> 'NULL' as errored,
           s.sample -> 'error' ->> 'message' as error_message,
           s.sample ->> '$.limit.type' as limit_type,
           staged_number(s.sample ->> '$.limit.limit') as limit_value,
           -- the sample's own ceilings (message, token and time limits get one; working, turn and cost do not),
           -- else the eval's; a JSON null is none
           coalesce(_ia_given(s.sample -> 'message_limit'), _ia_given(s.eval -> 'config' -> 'message_limit'))
               as message_limit,
           staged_number(coalesce(s.sample ->> 'token_limit', s.eval -> 'config' ->> 'token_limit')) as token_limit,
           staged_number(coalesce(s.sample ->> 'time_limit', s.eval -> 'config' ->> 'time_limit')) as time_limit,
           _ia_given(s.eval -> 'config' -> 'turn_limit') as turn_limit,
           _ia_given(s.eval -> 'config' -> 'working_limit') as working_limit,
           s.eval -> 'config' ->> 'cost_limit' as cost_limit,
           -- Inspect records a cancelled sample (Ctrl-C, a sibling cancelled when the eval failed, the operator's
           -- cancel) as an error whose message is the CancelledError's repr
           coalesce(regexp_matches(s.sample -> 'error' ->> 'message', '^\s*(asyncio\.|anyio\.)?CancelledError\b'), false)
               as cancelled
    from _ia_samples s
),
-- a limit's value as written in a stop reason: 8, 30000, 2s, $0.02
shown as (
    select *, case when limit_value = floor(limit_value) and abs(limit_value) < 1e15
                   then (limit_value::bigint)::varchar else limit_value::varchar end as limit_text
    from sampled
)
select s.file_no, s.run_id, 'inspect-ai' as agent, s.eval ->> 'task' as task_class,
       -- the eval's model as the log's answered calls name it (the dated snapshot on each step), so a run and its
       -- steps name one model
       coalesce(n.answered, s.model) as model,
       nullif(split_part(coalesce(s.model, ''), '/', 1), '') as provider,
       -- the sample's own start (recorded since late 2025), else its first call, else its first event
       coalesce(staged_timestamp(s.sample ->> 'started_at'), p.started_at, f.first_at) as started_at,
       -- total_time is the sample's wall time (null in logs before 2025); without it the end is the last moment
       -- the log shows (the end of its last call, or its last event); working_time leaves out waiting
       coalesce(staged_timestamp(s.sample ->> 'completed_at'),
                coalesce(staged_timestamp(s.sample ->> 'started_at'), p.started_at, f.first_at)
                    + to_milliseconds(round(staged_number(s.sample ->> 'total_time') * 1000)::bigint),
                greatest(p.last_at, f.last_at)) as ended_at,
       staged_number(s.sample ->> 'working_time') as working_seconds,
       case when s.cancelled then 'cancelled'
            when s.errored then 'failed'
            when s.limit_type in ('message', 'turn', 'token', 'cost', 'context') then 'budget_exceeded'
            when s.limit_type in ('time', 'working') then 'timed_out'
            when s.limit_type = 'operator' then 'cancelled'
            when s.limit_type is not null then 'failed'
            else 'succeeded' end as status,
       case when s.cancelled
                then case when coalesce(f.operator_stopped, false) then 'cancelled by the operator' else 'cancelled' end
                     || ' (CancelledError)'
            when s.errored then left(s.error_message, 200)
            when s.limit_type = 'operator' then 'interrupted by the operator'
            when s.limit_type = 'time' then 'time limit (' || coalesce(s.limit_text || 's', '?') || ')'
            when s.limit_type = 'working' then 'working time limit (' || coalesce(s.limit_text || 's', '?') || ')'
            when s.limit_type = 'cost' then 'cost limit ($' || coalesce(s.limit_text, '?') || ')'
            when s.limit_type = 'custom' then 'custom limit: ' || coalesce(s.sample ->> '$.limit.reason', '?')
            when s.limit_type is not null then s.limit_type || ' limit (' || coalesce(s.limit_text, '?') || ')'
            end as stop_reason,  -- a sample that ran to its end: Inspect records no reason
       s.token_limit as max_tokens,  -- token_limit counts all tokens, cache reads and writes included, as max_tokens
       s.time_limit as max_wall_seconds,  -- time_limit is clock time (working_limit leaves out waiting: a label)
       staged_micros(s.cost_limit) as max_cost_micros,
       -- the limits the store has no column for, kept as declared: message_limit counts messages (system and user
       -- included), turn_limit the agent's turns (not its model calls), working_limit seconds of working time
       case when coalesce(s.message_limit, s.turn_limit, s.working_limit) is not null
            then json_object('limits', json_merge_patch(
                     case when s.message_limit is not null then json_object('message_limit', s.message_limit)
                          else '{}' end,
                     case when s.turn_limit is not null then json_object('turn_limit', s.turn_limit) else '{}' end,
                     case when s.working_limit is not null then json_object('working_limit', s.working_limit)
                          else '{}' end))
            end as labels,
       -- the answer: submit's argument, else the final call's text
       coalesce(_ia_text(fin.answer, s.attachments),
                (select x.output_text from _stage_steps x where x.file_no = s.file_no and x.run_id = s.run_id
                 and x.idx = fin.idx)) as final_output,
       g.ledger_input_tokens, g.ledger_output_tokens, g.ledger_tokens, g.ledger_cost_micros
from shown s join _stage_records r on r.file_no = s.file_no and r.record_no = s.record_no
left join span p on p.file_no = s.file_no and p.run_id = s.run_id
left join events f on f.file_no = s.file_no and f.run_id = s.run_id
left join _ia_ledger g on g.file_no = s.file_no and g.run_id = s.run_id
left join _ia_model_names n on n.file_no = s.file_no and n.called = s.model
left join _ia_final fin on fin.file_no = s.file_no and fin.run_id = s.run_id
where r.decision = 'load';
