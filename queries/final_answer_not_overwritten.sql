-- name: final_answer_not_overwritten
-- invariant: no run ended by a budget, time or stall stop after a model step had already produced a final answer — one the harness marked final, or one the transcript shows: the model ended its turn (finish reason end_turn, stop, …) with text and asked for no tool, and the harness went on (only the transcript can tell a final answer from a progress note)
-- severity: error
-- remedy: the harness must end the loop on the model's final answer (check how it reads the finish reason); the answer at the reported step was the run's result and what followed was waste
-- needs: run_status
-- judges: each run
-- cites: seed 000 ("only the transcript can tell you which you have")
with answers as (  -- a final answer, as the harness marked it or as the model gave it
    select s.run_id, s.idx, s.is_final
    from steps s
    where s.kind = 'model'
      and (s.is_final
           or (lower(s.finish_reason) in ('end_turn', 'stop', 'stop_sequence', 'end', 'complete', 'completed')
               and nullif(trim(s.output_text), '') is not null and s.error is null and s.error_class is null
               and not exists (select 1 from tool_calls q where q.run_id = s.run_id and q.step_idx = s.idx)
               and not exists (select 1 from steps e where e.run_id = s.run_id and e.idx = s.idx - 1
                               and e.kind = 'event' and e.event = 'wrap_up')))  -- a wrap-up turn answers, not finally
),
answered as (select run_id, min(idx) as answer_step, arg_min(is_final, idx) as marked from answers group by run_id)
select r.run_id, a.answer_step as step,
       format('{} at step {}, then {} more model step(s), {} tokens and {} until stopped by {} ({})',
              case when a.marked then 'final answer'
                   else 'an answer (the model ended its turn with text and asked for no tool; the harness did not '
                        'take it as final)' end,
              a.answer_step,
              count(s.idx) filter (where s.kind = 'model'),
              coalesce(sum(s.input_tokens + s.output_tokens) filter (where s.kind = 'model'), 0),
              coalesce(format('${:.4f}', sum(coalesce(s.cost_micros, s.harness_cost_micros)) / 1e6), 'an unknown cost'),
              r.stop_reason, r.status) as detail
from run_view r
join answered a using (run_id)
left join step_view s on s.run_id = r.run_id and s.idx > a.answer_step
where r.status in ('budget_exceeded', 'timed_out', 'stalled')
group by r.run_id, a.answer_step, a.marked, r.stop_reason, r.status
