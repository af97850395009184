-- name: final_answer_not_overwritten
-- invariant: no run ended by a budget, time or stall stop after a model step had already produced a final answer
-- severity: error
-- remedy: the harness must end the loop on the model's final answer (check how it reads the finish reason); the answer at the reported step was the run's result and what followed was waste
-- needs: run_status
-- judges: each run
with answered as (
    select run_id, min(idx) as answer_step from steps where kind = 'model' and is_final group by run_id
)
select r.run_id, a.answer_step as step,
       format('final answer at step {}, then {} more model step(s), {} tokens and {} until stopped by {} ({})',
              a.answer_step,
              count(s.idx) filter (where s.kind = 'model'),
              coalesce(sum(s.input_tokens + s.output_tokens) filter (where s.kind = 'model'), 0),
              coalesce(format('${:.4f}', sum(coalesce(s.cost_micros, s.harness_cost_micros)) / 1e6), 'an unknown cost'),
              r.stop_reason, r.status) as detail
from run_view r
join answered a using (run_id)
left join step_view s on s.run_id = r.run_id and s.idx > a.answer_step
where r.status in ('budget_exceeded', 'timed_out', 'stalled')
group by r.run_id, a.answer_step, r.stop_reason, r.status
