-- name: steps_equal_tool_results
-- invariant: a final answer asks for no tool the harness still has to run, and the harness ledger counts as many steps as the journal has model steps (with or without its wrap-up turn); a call without its result, or a result twice, is tool_calls_paired's one finding
-- severity: error
-- remedy: a final answer that asks for a tool means the loop stopped before running it, or journalled the answer early; a ledger off by some steps counts steps differently from its journal
-- needs: call_ids
-- judges: each run
select q.run_id, q.step_idx as step, format('step {} is a final answer but asked for tool {}', q.step_idx, q.tool_name) as detail
from tool_calls q
join steps s on s.run_id = q.run_id and s.idx = q.step_idx and s.is_final
-- a hosted tool the provider ran inside the answering response (a web search) has its result with it: no call left
where not exists (select 1 from steps t where t.run_id = q.run_id and t.kind = 'tool' and t.call_id = q.call_id
                  and t.tool_status is distinct from 'started')
union all
select run_id, null, format('the harness ledger counts {} steps; the journal has {} model steps{}{}', ledger_steps, steps,
                            case when ledger_scope = 'tree' then format(' in its agent tree of {} runs', runs) else '' end,
                            case when wrap_up_steps > 0 then format(' ({} without its wrap-up turns)', steps - wrap_up_steps)
                                 else '' end)
from ledger_view
where ledger_steps <> steps and ledger_steps <> steps - wrap_up_steps  -- a ledger may leave the wrap-up out (seed 001)
