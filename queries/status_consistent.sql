-- name: status_consistent
-- invariant: a succeeded run has a final answer, a run is running exactly when it has no end record, and a failed run whose tools record their outcomes names its failing tool or step
-- severity: error
-- remedy: the harness reported an outcome its journal does not support; fix the status it writes, or the way it detects success and failure
-- needs: run_status
-- judges: each run
select run_id, null as step, format('status succeeded (stop reason {}) but no model step gave a final answer', coalesce(stop_reason, 'not recorded')) as detail
from run_view
where status = 'succeeded' and not has_final_answer
union all
select run_id, null, format('no end record, yet status {}', status)
from runs
where ended_at is null and stop_reason is null and status not in ('running', 'abandoned')
union all
select run_id, null, format('status {}, yet it has an end record (stop reason {})', status, coalesce(stop_reason, 'not recorded'))
from runs
where status in ('running', 'abandoned') and (ended_at is not null or stop_reason is not null)
union all
select r.run_id, null, format('failed (stop reason {}) without a failing tool or step to name', coalesce(r.stop_reason, 'not recorded'))
from runs r
join run_facts f using (run_id)
where r.status = 'failed'
  and f.tool_status  -- a format that records no tool outcome cannot name a failing tool
  and not exists (select 1 from steps s where s.run_id = r.run_id
                  and ((s.kind = 'tool' and s.tool_status <> 'ok') or s.error is not null))
