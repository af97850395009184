-- name: no_failed_side_effects
-- invariant: no side-effecting tool call failed after it started (an error or timeout outcome: the tool ran and may have written before it failed — a write that raised after it wrote)
-- severity: warn
-- remedy: a failed call is not a rolled-back one: find out in the outside world what it did (look it up by its idempotency key), then undo it or record it; a stop reason does not say the world is unchanged
-- needs: tool_status, side_effects
-- judges: each run
-- cites: seed 000 (raise_after_write)
select run_id, idx as step,
       format('{} (call {}, idempotency key {}) changes the world and failed after it started ({}): the world may '
              'have changed', tool_name, call_id, left(coalesce(idempotency_key, '-'), 12),
              coalesce(left(error, 80), tool_status)) as detail
from steps
where kind = 'tool' and side_effect and tool_status in ('error', 'timeout')
