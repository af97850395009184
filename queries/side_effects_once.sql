-- name: side_effects_once
-- invariant: no side-effecting tool runs twice with the same idempotency key, or, without keys, with the same canonical arguments in one run
-- severity: error
-- remedy: a retry re-executed a call that changes the world; pass the idempotency key to the tool and have it refuse a key it has seen, or check the outcome before retrying
-- needs: side_effects
-- judges: each run
with executions as (
    select run_id, idx, tool_name, idempotency_key is not null as keyed,
           coalesce(idempotency_key, tool_name || ':' || coalesce(args_hash, '')) as effect
    from steps
    where kind = 'tool' and side_effect and coalesce(tool_status, 'ok') not in ('unknown_tool', 'invalid_args', 'not_run')
)
select run_id, idx as step,
       format('{} ran again with the same {} as at step {}', tool_name,
              case when keyed then 'idempotency key' else 'arguments' end, first_idx) as detail
from (select *, min(idx) over (partition by run_id, effect) as first_idx from executions)
where idx > first_idx
