-- name: tool_results_bounded
-- invariant: no tool result above its run's bound (the run's own result_bound_tokens, else the configured one, else its harness's documented limit) entered the context without being cut
-- severity: error
-- remedy: truncate, summarise or page large tool results before they enter the context; an unbounded result is paid for on every later call
-- needs: result_size, result_bound
-- judges: each run
select s.run_id, s.idx as step,
       format('{} result of {} tokens entered the context unbounded (bound {}, from {})', s.tool_name, s.result_tokens,
              b.result_bound_tokens, b.result_bound_source) as detail
from steps s
join run_settings b using (run_id)
where s.kind = 'tool'
  and s.bounded is distinct from true   -- a result the harness says it cut is not judged again
  and s.result_tokens > b.result_bound_tokens
