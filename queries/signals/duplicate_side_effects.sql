-- name: duplicate_side_effects
-- measures: the share of judged runs in which a side-effecting tool ran twice with one idempotency key or the same arguments (the side_effects_once check), by agent
-- aggregate: rate
-- key: agent
-- unit: share
-- alert_if: above 0.02, rise 1.0, min_count 20
-- failure: duplicate side effect on resume
-- remedy: reconcile check --only side_effects_once lists the runs and steps; read one transcript before changing the harness
-- Read from the verdicts reconcile check (or the morning job) kept on each run: no run is judged twice, and this
-- rate agrees with the check by construction. Runs no check has judged yet are not observations.
select r.started_at as at, coalesce(r.agent, '(no agent)') as key,
       case when exists (select 1 from kept_findings f where f.check_name = 'side_effects_once' and f.run_id = j.run_id)
            then 1 else 0 end as value
from (select distinct run_id from kept_judgements where check_name = 'side_effects_once') j
join runs r using (run_id)
