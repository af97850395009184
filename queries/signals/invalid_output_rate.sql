-- name: invalid_output_rate
-- measures: the share of model calls whose answer failed the harness's validation (arguments that parse as JSON but fail semantically), by model
-- aggregate: rate
-- kept: by run
-- key: model
-- unit: share
-- alert_if: above 0.05, rise 1.0, min_count 20
-- failure: arguments parse as JSON but fail semantically
-- remedy: read a failing call's answer (reconcile show RUN); a prompt or tool schema change is the usual cause, a model change the next
select s.run_id, s.started_at as at, coalesce(s.model, s.price_model, '(unknown model)') as key,
       case when s.error_class = 'invalid_output' then 1 else 0 end as value
from step_view s
where s.kind = 'model'
