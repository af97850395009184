-- wrap_up_turns: the designed graceful stop (seed 001) — the step right after a wrap_up event that asks for no tool,
-- one row each (run_id, idx). step_view marks such a model call is_wrap_up; a loop detector's replay counts no call
-- after it fired but these. Found among the few wrap_up events (an anti join there), not by a subquery per step.
select e.run_id, e.idx + 1 as idx from steps e where e.kind = 'event' and e.event = 'wrap_up'
and not exists (select 1 from tool_calls q where q.run_id = e.run_id and q.step_idx = e.idx + 1)
