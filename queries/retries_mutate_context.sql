-- name: retries_mutate_context
-- invariant: no model call repeats the previous call's exact input after that call gave an invalid output (error_class invalid_output, with or without error text) or failed for a reason other than transport; a transport or rate-limit failure (HTTP 429, 5xx, 529 overloaded: error_class, else transport_error_pattern) is rightly retried on the same context
-- severity: warn
-- remedy: a retry that changes nothing pays twice for the same failure; append the validation error, the expected schema and the offending field to the context before the next turn, or back off and give up
-- needs: input_hash
-- judges: each run
-- cites: seed 003 (retry with the validation error appended)
with model_calls as (
    select run_id, idx, input_hash,
           lag(idx) over w as previous_idx, lag(input_hash) over w as previous_hash, lag(error) over w as previous_error,
           lag(error_class) over w as previous_class
    from steps
    where kind = 'model'
    window w as (partition by run_id, coalesce(agent_label, '') order by idx)
)
select run_id, idx as step,
       format('sent the same input as step {}, which had failed ({})', previous_idx,
              coalesce(left(previous_error, 80), previous_class)) as detail
from model_calls
-- a failed call: error text, or only its class (seed 003's recipe journals error_class="invalid_output" alone)
where input_hash = previous_hash and (previous_error is not null or previous_class is not null)
  and coalesce(previous_class not in ('transport', 'rate_limit'),
               not regexp_matches(previous_error, getvariable('transport_error_pattern')))
