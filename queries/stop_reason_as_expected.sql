-- name: stop_reason_as_expected
-- invariant: where the harness recorded a predicted stop reason, the run stopped for that reason
-- severity: error
-- remedy: a scripted scenario ended differently than it was written to: a regression in the agent, its tools or the harness; compare this run with the last one that matched
-- judges: each run
select run_id, null as step,
       format('expected to stop with {} ({}), stopped with {} ({})', predicted_stop_reason,
              coalesce(canonical_status(predicted_stop_reason), 'unknown reason'),
              coalesce(stop_reason, 'nothing: no end record'), status) as detail
from run_view
where predicted_stop_reason is not null
  and lower(trim(coalesce(stop_reason, ''))) <> lower(trim(predicted_stop_reason))
