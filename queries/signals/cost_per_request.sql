-- name: cost_per_request
-- measures: the mean cost of a model call at reconcile's prices, by task class (observed in micro-dollars)
-- aggregate: mean
-- key: task_class
-- unit: dollars
-- alert_if: rise 0.20, min_count 20
-- failure: cost regression from a prompt change
-- remedy: find what made each request dearer: a longer prompt or catalogue, a lost cache, a model or price change (reconcile cost --by day, reconcile reprice)
select s.started_at as at, coalesce(s.task_class, '(none)') as key, s.cost_micros as value
from step_view s
where s.kind = 'model' and s.cost_micros is not null
