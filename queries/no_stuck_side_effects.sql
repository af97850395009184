-- name: no_stuck_side_effects
-- invariant: every side-effecting call that was asked for or recorded as started has a recorded outcome
-- severity: error
-- remedy: this is the reconciler's work list: find out in the outside world whether each call happened (its idempotency key helps), then record the outcome or undo it
-- needs: side_effects, call_ids
-- judges: each run
select q.run_id, q.step_idx as step,
       format('{} (call {}, idempotency key {}) changes the world and has no recorded outcome',
              q.tool_name, q.call_id, left(coalesce(q.idempotency_key, '-'), 12)) as detail
from tool_calls q
join run_tools t on t.run_id = q.run_id and t.name = q.tool_name and t.side_effect
where not exists (select 1 from steps s where s.run_id = q.run_id and s.kind = 'tool' and s.call_id = q.call_id)
union all
select run_id, idx, format('{} (call {}) changes the world and its step records no status', tool_name, call_id)
from steps
where kind = 'tool' and side_effect and tool_status is null
union all
select run_id, idx, format('{} (call {}, idempotency key {}) started at step {} and has no recorded outcome: find out '
                           'whether it happened', tool_name, call_id, left(coalesce(idempotency_key, '-'), 12), idx)
from steps
where kind = 'tool' and side_effect and tool_status = 'started'  -- in flight when the journal stopped
