-- name: retries_mutate_context
-- invariant: no model call repeats the previous call's exact input after that call failed or gave an invalid output
-- severity: warn
-- remedy: a retry that changes nothing pays twice for the same failure; add the error (or a correction) to the context before retrying, or back off and give up
-- needs: input_hash
with model_calls as (
    select run_id, idx, input_hash,
           lag(idx) over w as previous_idx, lag(input_hash) over w as previous_hash, lag(error) over w as previous_error
    from steps
    where kind = 'model'
    window w as (partition by run_id, coalesce(agent_label, '') order by idx)
)
select run_id, idx as step,
       format('sent the same input as step {}, which had failed ({})', previous_idx, left(previous_error, 80)) as detail
from model_calls
where input_hash = previous_hash and previous_error is not null
