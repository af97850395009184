-- name: tool_results_bounded
-- invariant: no tool result above the bound (the run's result_bound_tokens, else the check setting, default 2,000 tokens) entered the context without being bounded
-- severity: error
-- remedy: truncate, summarise or page large tool results before they enter the context; an unbounded result is paid for on every later call
select s.run_id, s.idx as step,
       format('{} result of {} tokens entered the context unbounded (bound {})', s.tool_name, s.result_tokens,
              coalesce(r.result_bound_tokens, d.bound)) as detail
from steps s
join runs r using (run_id)
cross join (select getvariable('result_bound_tokens')::integer as bound) d
where s.kind = 'tool'
  and not coalesce(s.bounded, false)
  and s.result_tokens > coalesce(r.result_bound_tokens, d.bound)
