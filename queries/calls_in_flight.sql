-- name: calls_in_flight
-- invariant: a run still running at the end of its journal waits on no tool call (the last model step's calls all have results)
-- severity: warn
-- remedy: the harness is mid-call, or died there: look again once the run has ended — a call still without its result then is a lost result (tool_calls_paired)
-- needs: call_ids
-- judges: each run
select run_id, step_idx as step,
       format('call {} to {} asked for at step {} is in flight: the run is still running and nothing follows it',
              call_id, tool_name, step_idx) as detail
from open_calls
where in_flight
