-- name: budgets_enforced
-- invariant: no run took more model steps than its ceiling; its tokens and spend went over their ceilings by no more than its last model step, and its wall clock by no more than one tool timeout
-- severity: error
-- remedy: check budgets before each call, project the next call's cost, and kill tools at their timeout; the reported overshoot is how much the budget leaked
-- needs: limits
with last_step as (
    select run_id,
           arg_max(input_tokens + output_tokens, idx) as tokens,
           arg_max(coalesce(harness_cost_micros, cost_micros), idx) as cost
    from step_view where kind = 'model' group by run_id
),
runs_spent as (
    -- the harness enforced its ceiling in its own prices: judge it in them when it recorded them
    select r.*, coalesce(r.harness_step_cost_micros, r.cost_micros) as spent,
           coalesce(l.tokens, 0) as last_tokens, coalesce(l.cost, 0) as last_cost
    from run_view r left join last_step l using (run_id)
)
select run_id, null as step, format('{} model steps against a ceiling of {}: over by {}', steps, max_steps,
                                     steps - max_steps) as detail
from runs_spent where steps > max_steps
union all
select run_id, null, format('{} tokens against a ceiling of {}: over by {}, more than the last step''s {}',
                            total_tokens, max_tokens, total_tokens - max_tokens, last_tokens)
from runs_spent where total_tokens > max_tokens + last_tokens
union all
select run_id, null, format('spent ${:.4f} against a ceiling of ${:.4f}: over by ${:.4f}, more than the last step''s ${:.4f}',
                            spent / 1e6, max_cost_micros / 1e6, (spent - max_cost_micros) / 1e6, last_cost / 1e6)
from runs_spent where spent > max_cost_micros + last_cost
union all
select run_id, null, format('ran {:.1f} s against a wall clock of {:g} s: over by {:.1f} s, more than one tool timeout ({:g} s)',
                            wall_seconds, max_wall_seconds, wall_seconds - max_wall_seconds, coalesce(tool_timeout_seconds, 0))
from runs_spent where wall_seconds > max_wall_seconds + coalesce(tool_timeout_seconds, 0)
