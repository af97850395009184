-- Staging for the native journal v1. Input: _parsed(file_no, line_no, j), the lines whose
-- fields passed the typed checks. Output: the _stage_* tables the shared landing reads.
-- The intermediate tables hold keys and decisions only; the parsed struct stays in _parsed and is
-- joined in once, by the view _native_loaded (copying it table to table cost seconds and gigabytes).

-- What the typed field checks cannot say: allowed values that depend on the line's kind.
create or replace temp table _native as
select file_no, line_no, j.type as type, j.run_id as run_id, j.idx::integer as idx,
    coalesce(j.kind = 'tool' and j.status = 'started', false) as in_flight, j.call_id as call_id,
    case
        when j.kind = 'tool' and j.status not in ({{ tool_statuses }}) then {{ tool_status_message }}
        when j.type = 'run_end' and j.status is null and j.stop_reason is null then {{ end_missing }}
        when j.type = 'run_end' and run_end_status(j.status, j.stop_reason) is null then {{ end_unknown }}
        when not coalesce(list_bool_and(list_transform(j.tool_calls, lambda c: c.call_id is not null and c.name is not null)), true)
            then {{ call_entry }}
        when not coalesce(list_bool_and(list_transform(j.tools, lambda t: t.name is not null)), true)
            then {{ tool_entry }}
    end as reason
from _parsed;

-- Repeated keys (type, run, step index) are rare: find them by aggregation, compare only their lines.
-- A tool step recorded "started" and then with its outcome (same index, same call) is one step: the
-- outcome is kept and the in-flight record skipped. Otherwise the first line is kept, an identical
-- repeat skipped, a different one rejected.
-- Counting first and describing only the repeated keys costs a quarter of describing every key.
create or replace temp table _native_keys as
with repeated as (select file_no, type, run_id, coalesce(idx, -1) as idx
                  from _native where reason is null group by all having count(*) > 1)
select n.file_no, n.type, n.run_id, coalesce(n.idx, -1) as idx, min(n.line_no) as first_line,
       min(n.line_no) filter (where not n.in_flight) as outcome_line, count(distinct n.call_id) <= 1 as one_call
from _native n
semi join repeated r on n.file_no = r.file_no and n.type = r.type and n.run_id = r.run_id and coalesce(n.idx, -1) = r.idx
where n.reason is null
group by all;

create or replace temp table _native_repeats as
select p.file_no, p.line_no, coalesce(k.outcome_line, k.first_line) as first_line, pt.line = ft.line as same_text,
       p.in_flight and k.outcome_line is not null and k.one_call as completed
from _native_keys k
join _native p on p.reason is null and p.file_no = k.file_no and p.type = k.type and p.run_id = k.run_id
              and coalesce(p.idx, -1) = k.idx and p.line_no <> coalesce(k.outcome_line, k.first_line)
join _lines pt on pt.file_no = p.file_no and pt.line_no = p.line_no
join _lines ft on ft.file_no = k.file_no and ft.line_no = coalesce(k.outcome_line, k.first_line);

create or replace temp table _native_decided as
with started as (select distinct file_no, run_id from _native where reason is null and type = 'run_start')
select g.file_no, g.line_no, g.type, g.run_id, g.idx,
    case
        when r.completed or r.same_text then 'skip'
        when r.line_no is not null then 'reject'
        when s.run_id is null then 'reject'
        else 'load'
    end as decision,
    case
        when r.completed then 'in-flight record of a tool step, completed by its outcome'  -- one note for them all
        when r.same_text then 'exact repeat of line ' || r.first_line
        when r.line_no is not null then 'conflicts with line ' || r.first_line || ' (same ' || g.type
            || coalesce(' ' || g.idx, '') || ' of run ' || g.run_id || ', different content)'
        when s.run_id is null then 'no run_start line for run ' || g.run_id || ' in this file'
    end as note
from _native g
left join _native_repeats r using (file_no, line_no)
left join started s using (file_no, run_id)
where g.reason is null;

create or replace temp table _stage_records as
select file_no, line_no as record_no, 'reject' as decision, reason as note, run_id from _native where reason is not null
union all
select file_no, line_no, decision, note, run_id from _native_decided;

create or replace temp view _native_loaded as
select d.file_no, d.line_no, d.type, d.run_id, d.idx, p.j
from _native_decided d join _parsed p using (file_no, line_no)
where d.decision = 'load';

create or replace temp table _stage_runs as
select s.file_no, s.run_id, s.line_no as source_line,
    s.j."agent" as agent, s.j."task_class" as task_class, s.j."model" as model,
    s.j."provider" as provider, s.j."api_key_id" as api_key_id,
    s.j."workspace_id" as workspace_id, s.j."project_id" as project_id,
    s.j."ts"::timestamptz as started_at, e.j."ts"::timestamptz as ended_at,
    s.j."limits"."max_steps"::integer as max_steps,
    s.j."limits"."max_tokens"::bigint as max_tokens,
    s.j."limits"."max_prompt_tokens"::bigint as max_prompt_tokens,
    s.j."limits"."max_completion_tokens"::bigint as max_completion_tokens,
    s.j."limits"."max_retries"::integer as max_retries,
    s.j."limits"."scope" as budget_scope,
    s.j."loop_detector"."kind" as loop_detector,
    s.j."loop_detector"."limit"::integer as loop_limit,
    s.j."loop_detector"."window"::integer as loop_window,
    s.j."parent_run_id" as parent_run_id,
    s.j."fallback_model" as fallback_model,
    s.j."fence" as fence,
    s.j."limits"."max_wall_seconds"::double as max_wall_seconds,
    s.j."limits"."max_cost_micros"::bigint as max_cost_micros,
    s.j."limits"."max_repeats"::integer as max_repeats,
    s.j."limits"."tool_timeout_seconds"::double as tool_timeout_seconds,
    s.j."limits"."result_bound_tokens"::integer as result_bound_tokens,
    s.j."catalogue_tokens"::integer as catalogue_tokens,
    s.j."predicted_stop_reason" as predicted_stop_reason,
    case when e.run_id is null then 'running' else run_end_status(e.j."status", e.j."stop_reason") end as status,
    e.j."status" as harness_status,  -- the harness's own word, kept as written
    e.j."stop_reason" as stop_reason,
    e.j."final_output" as final_output,
    e.j."ledger"."steps"::integer as ledger_steps,
    e.j."ledger"."input_tokens"::bigint as ledger_input_tokens,
    e.j."ledger"."output_tokens"::bigint as ledger_output_tokens,
    e.j."ledger"."tokens"::bigint as ledger_tokens,
    e.j."ledger"."cost_micros"::bigint as ledger_cost_micros,
    e.j."ledger"."tool_results"::integer as ledger_tool_results,
    s.j."labels" as labels
from (select * from _native_loaded where type = 'run_start') s
left join (select * from _native_loaded where type = 'run_end') e on e.file_no = s.file_no and e.run_id = s.run_id;

-- An absent side_effect / allow_repeat means false: the journal format defines them so.
create or replace temp table _stage_tools as
select file_no, run_id, t.name, coalesce(t.side_effect, false) as side_effect,
       coalesce(t.allow_repeat, false) as allow_repeat, t.schema_tokens::integer as schema_tokens
from (select file_no, run_id, unnest(j.tools) as t from _native_loaded where type = 'run_start');

create or replace temp view _native_steps as
select * from _native_loaded where type = 'step';

create or replace temp table _stage_calls as
select file_no, run_id, idx as step_idx, position - 1 as call_position, c.call_id, c.name as tool_name, c.args
from (select file_no, run_id, idx, unnest(j.tool_calls) as c, generate_subscripts(j.tool_calls, 1) as position
      from _native_steps where j.tool_calls is not null);

create or replace temp table _stage_steps as
select s.file_no, s.run_id, s.idx, s.j."kind" as kind, s.j."ts"::timestamptz as started_at,
    round(s.j."ms"::double)::bigint as ms, s.j."agent_label" as agent_label,
    s.line_no as source_line, s.j."error" as error,
    s.j."model" as model, s.j."provider" as provider,
    s.j."request_id" as request_id, s.j."response_id" as response_id,
    -- the journal format defines a bucket left out of a step's usage as none of that kind (zero_buckets)
    case when s.j."usage" is not null then coalesce(s.j."usage"."input_uncached"::bigint, 0) end as input_uncached,
    case when s.j."usage" is not null then coalesce(s.j."usage"."cache_read"::bigint, 0) end as cache_read,
    case when s.j."usage" is not null then coalesce(s.j."usage"."cache_write_5m"::bigint, 0) end as cache_write_5m,
    case when s.j."usage" is not null then coalesce(s.j."usage"."cache_write_1h"::bigint, 0) end as cache_write_1h,
    case when s.j."usage" is not null then coalesce(s.j."usage"."output"::bigint, 0) end as output_tokens,
    -- reasoning (a part of output) left out is none, as the buckets are
    case when s.j."usage" is not null then coalesce(s.j."usage"."reasoning"::bigint, 0) end as reasoning_tokens,
    s.j."finish_reason" as finish_reason,
    -- "final" marks the final answer; a model step without it is not one (the format says so)
    case when s.j."kind" = 'model' then coalesce(s.j."final"::boolean, false) end as is_final,
    coalesce(s.j."text", s.j."text_preview") as output_text,
    coalesce(s.j."text_sha256", sha256(s.j."text")) as output_sha256,
    s.j."context_tokens"::bigint as context_tokens, s.j."input_hash" as input_hash,
    s.j."attempt"::integer as attempt, s.j."error_class" as error_class, s.j."cost_micros"::bigint as harness_cost_micros,
    s.j."tool" as tool_name, s.j."call_id" as call_id, s.j."args" as args,
    s.j."idempotency_key" as idempotency_key, s.j."side_effect"::boolean as side_effect,
    s.j."status" as tool_status,
    s.j."result_tokens"::bigint as result_tokens, s.j."result_bytes"::bigint as result_bytes,
    s.j."result_hash" as result_hash, s.j."result_preview" as result_preview, s.j."result_schema" as result_schema,
    s.j."bounded"::boolean as bounded,
    s.j."event" as event, s.j."tokens_before"::bigint as tokens_before,
    s.j."tokens_after"::bigint as tokens_after, s.j."detail" as detail
from _native_steps s;
