-- name: budgets_enforced
-- invariant: budgets are checked before each call: no run made more charged model calls than max_steps (a tool-free wrap-up turn and a call the provider refused are not charged); tokens (all, prompt, completion) and spend crossed their ceilings by no more than the last charged call and the wrap-up; no charged call started past the wall-clock deadline and no tool ran past its timeout; a root whose limits are its agent tree's (limits.scope = tree) holds the tree's totals to them, with a step of slack per run
-- severity: error
-- remedy: check every budget before each call, project the next call's cost, and kill tools at their timeout; the overshoot shown is how much the budget leaked
-- needs: limits
-- judges: each run
with last_charged as (  -- each run's last charged model step: the one a check-before-the-call fence lets cross a ceiling
    select run_id,
           arg_max(input_tokens + coalesce(output_tokens, 0), idx) as tokens,
           arg_max(input_tokens, idx) as prompt,
           arg_max(output_tokens, idx) as completion,
           arg_max(coalesce(harness_cost_micros, cost_micros), idx) as cost
    from step_view where kind = 'model' and not is_wrap_up and not provider_refused group by run_id
),
spent as (
    -- the harness enforced its ceilings in its own prices: judge it in them when it recorded them
    select r.run_id, r.root_run_id, r.budget_scope, r.charged_steps, r.wrap_up_steps, r.total_tokens, r.input_tokens,
           r.output_tokens, coalesce(r.harness_step_cost_micros, r.cost_micros) as cost, r.started_at,
           r.max_steps, r.max_tokens, r.max_prompt_tokens, r.max_completion_tokens, r.max_cost_micros,
           r.max_wall_seconds,
           coalesce(l.tokens, 0) + coalesce(r.wrap_up_input_tokens + r.wrap_up_output_tokens, 0) as slack_tokens,
           coalesce(l.prompt, 0) + coalesce(r.wrap_up_input_tokens, 0) as slack_prompt,
           coalesce(l.completion, 0) + coalesce(r.wrap_up_output_tokens, 0) as slack_completion,
           coalesce(l.cost, 0) + coalesce(r.wrap_up_harness_cost_micros, r.wrap_up_cost_micros, 0) as slack_cost
    from run_view r left join last_charged l on l.run_id = r.run_id
),
members as (  -- who spends each budget: a run on its own, or every run of a tree whose root shares its budget
    select run_id as subject, run_id from spent where not (budget_scope = 'tree' and root_run_id = run_id)
    union all
    select t.run_id, m.run_id from spent t join spent m on m.root_run_id = t.run_id
    where t.budget_scope = 'tree' and t.root_run_id = t.run_id
),
judged as (
    select x.subject as run_id,
           case when any_value(b.budget_scope) = 'tree' and any_value(b.root_run_id) = x.subject
                then format('agent tree of {} runs: ', count(*)) else '' end as subject,
           count(*) - 1 as step_slack, sum(m.charged_steps) as charged_steps, sum(m.wrap_up_steps) as wrap_up_steps,
           sum(m.total_tokens) as total_tokens, sum(m.input_tokens) as input_tokens, sum(m.output_tokens) as output_tokens,
           sum(m.cost) as cost, any_value(b.started_at) as started_at, any_value(b.max_steps) as max_steps,
           any_value(b.max_tokens) as max_tokens, any_value(b.max_prompt_tokens) as max_prompt_tokens,
           any_value(b.max_completion_tokens) as max_completion_tokens, any_value(b.max_cost_micros) as max_cost_micros,
           any_value(b.max_wall_seconds) as max_wall_seconds, sum(m.slack_tokens) as slack_tokens,
           sum(m.slack_prompt) as slack_prompt, sum(m.slack_completion) as slack_completion, sum(m.slack_cost) as slack_cost
    from members x join spent b on b.run_id = x.subject join spent m on m.run_id = x.run_id
    group by x.subject
),
late as (  -- charged model calls that started after the wall-clock deadline: the check before each failed
    select x.subject, m.run_id, m.idx, date_diff('millisecond', j.started_at, m.started_at) / 1000.0 as after,
           row_number() over (partition by x.subject order by m.started_at, m.run_id, m.idx) as nth
    from members x join judged j on j.run_id = x.subject
    join step_view m on m.run_id = x.run_id and m.kind = 'model' and not m.is_wrap_up and not m.provider_refused
    where date_diff('millisecond', j.started_at, m.started_at) > j.max_wall_seconds * 1000
)
select run_id, null as step,
       format('{}{} charged model steps against a ceiling of {}: over by {}{}', subject, charged_steps, max_steps,
              charged_steps - max_steps,
              case when wrap_up_steps > 0 then format(' (its {} wrap-up turn(s) not counted)', wrap_up_steps) else '' end) as detail
from judged where charged_steps > max_steps + step_slack
union all
select run_id, null, format('{}{} tokens against a ceiling of {}: over by {}, more than its last charged step and '
                            'wrap-up turn ({})', subject, total_tokens, max_tokens, total_tokens - max_tokens, slack_tokens)
from judged where total_tokens > max_tokens + slack_tokens
union all
select run_id, null, format('{}{} prompt tokens against a ceiling of {}: over by {}, more than its last charged step '
                            'and wrap-up turn ({})', subject, input_tokens, max_prompt_tokens,
                            input_tokens - max_prompt_tokens, slack_prompt)
from judged where input_tokens > max_prompt_tokens + slack_prompt
union all
select run_id, null, format('{}{} completion tokens against a ceiling of {}: over by {}, more than its last charged '
                            'step and wrap-up turn ({})', subject, output_tokens, max_completion_tokens,
                            output_tokens - max_completion_tokens, slack_completion)
from judged where output_tokens > max_completion_tokens + slack_completion
union all
select run_id, null, format('{}spent ${:.4f} against a ceiling of ${:.4f}: over by ${:.4f}, more than its last charged '
                            'step and wrap-up turn (${:.4f})', subject, cost / 1e6, max_cost_micros / 1e6,
                            (cost - max_cost_micros) / 1e6, slack_cost / 1e6)
from judged where cost > max_cost_micros + slack_cost
union all
select l.subject, case when l.run_id = l.subject then l.idx end,
       format('{}model call at step {}{} started {:.1f} s into a wall clock of {:g} s', j.subject, l.idx,
              case when l.run_id <> l.subject then ' of run ' || l.run_id else '' end, l.after, j.max_wall_seconds)
from late l join judged j on j.run_id = l.subject
where l.nth = 1
union all
-- each tool is killed at its timeout (a second's grace for the kill itself)
select s.run_id, s.idx, format('{} ran {:.1f} s, past its tool timeout of {:g} s', s.tool_name, s.ms / 1000.0,
                               r.tool_timeout_seconds)
from steps s join runs r on r.run_id = s.run_id
where s.kind = 'tool' and s.ms > 1000 * r.tool_timeout_seconds + 1000
