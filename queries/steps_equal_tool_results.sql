-- name: steps_equal_tool_results
-- invariant: a run has as many tool results as tool calls its model steps asked for (a final answer asks for none), and the harness ledger counts as many steps as the journal has model steps (with or without its wrap-up turn)
-- severity: error
-- remedy: fewer results than calls means an outcome was never journalled (a crash between call and write); more means a call ran twice; a ledger off by some steps counts steps differently from its journal
-- needs: call_ids
-- judges: each run
with asked as (  -- a call in flight (the running run waits on it) is not owed a result yet: calls_in_flight
    select q.run_id, count(*) as calls from tool_calls q
    where not exists (select 1 from open_calls o where o.in_flight and o.run_id = q.run_id and o.call_id = q.call_id
                      and o.step_idx = q.step_idx)
    group by q.run_id
),
results as (  -- a call recorded as started but never completed has no result
    select * from steps where kind = 'tool' and tool_status is distinct from 'started'
),
answered as (
    select run_id, count(*) as results from results group by run_id
),
first_unanswered as (
    select run_id, min(step_idx) as step from open_calls where not in_flight group by run_id
),
first_extra as (
    select run_id, min(idx) as step
    from (select run_id, idx, call_id, row_number() over (partition by run_id, call_id order by idx) as nth
          from results)
    where nth > 1 or call_id is null
    group by run_id
)
select r.run_id, least(u.step, e.step) as step,
       format('{} tool call(s) asked for, {} tool result(s) journalled', coalesce(a.calls, 0), coalesce(t.results, 0)) as detail
from run_view r
left join asked a using (run_id)
left join answered t using (run_id)
left join first_unanswered u using (run_id)
left join first_extra e using (run_id)
where coalesce(a.calls, 0) <> coalesce(t.results, 0)
union all
select q.run_id, q.step_idx, format('step {} is a final answer but asked for tool {}', q.step_idx, q.tool_name)
from tool_calls q
join steps s on s.run_id = q.run_id and s.idx = q.step_idx and s.is_final
union all
select run_id, null, format('the harness ledger counts {} steps; the journal has {} model steps{}{}', ledger_steps, steps,
                            case when ledger_scope = 'tree' then format(' in its agent tree of {} runs', runs) else '' end,
                            case when wrap_up_steps > 0 then format(' ({} without its wrap-up turns)', steps - wrap_up_steps)
                                 else '' end)
from ledger_view
where ledger_steps <> steps and ledger_steps <> steps - wrap_up_steps  -- a ledger may leave the wrap-up out (seed 001)
