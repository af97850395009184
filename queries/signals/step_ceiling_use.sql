-- name: step_ceiling_use
-- measures: the 99th percentile of the share of its step ceiling a finished run used (the model calls a ceiling counts over max_steps), by agent: a ceiling the busiest runs never come near is no budget
-- aggregate: p99
-- kept: by run
-- key: agent
-- unit: ratio
-- alert_if: below 0.25, min_count 20
-- failure: step budget high enough to be no budget
-- remedy: lower max_steps towards what successful runs use (reconcile budgets recommends a ceiling; reconcile replay --max-steps shows what it would have stopped)
select r.run_id, r.started_at as at, coalesce(r.agent, '(no agent)') as key, r.charged_steps / r.max_steps as value
from run_view r
where r.max_steps > 0 and r.status not in ('running')
