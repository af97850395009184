-- name: provider_error_rate
-- measures: the share of model calls the provider refused (a 5xx or 529 overloaded, a 429 rate limit), by model
-- aggregate: rate
-- kept: by run
-- key: model
-- unit: share
-- alert_if: above 0.05, rise 1.0, min_count 20
-- failure: provider 529 mid-run
-- remedy: look at the provider's status page for that model; a run that keeps retrying the same model should fall back (the rate_limits_fall_back check names the runs that did not)
select s.run_id, s.started_at as at, coalesce(s.model, s.price_model, '(unknown model)') as key,
       case when s.error_class in ('transport', 'rate_limit') then 1 else 0 end as value
from step_view s
where s.kind = 'model'
