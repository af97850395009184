-- name: cost_per_request
-- measures: the cost of a model call at reconcile's prices, each run's mean over its calls, averaged over the runs of each task class (observed in micro-dollars; a run is one observation, so one long session is not a fleet)
-- aggregate: mean
-- kept: by run
-- key: task_class
-- unit: dollars
-- alert_if: rise 0.20, min_count 10
-- failure: cost regression from a prompt change
-- remedy: find what made each request dearer: a longer prompt or catalogue, a lost cache, a model or price change (reconcile cost --by day, reconcile reprice)
select r.run_id, r.started_at as at, coalesce(r.task_class, '(none)') as key, avg(s.cost_micros) as value
from step_view s join runs r using (run_id)
where s.kind = 'model' and s.cost_micros is not null
group by r.run_id, r.started_at, r.task_class
