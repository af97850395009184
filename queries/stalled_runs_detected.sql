-- name: stalled_runs_detected
-- invariant: a run that ended stalled shows the pattern its own loop detector looks for (replayed over its transcript by its detector's own rule): the stop was the detector, not a guess
-- severity: error
-- remedy: the harness stopped a run its declared detector would not have stopped (it fingerprints results, not calls, or the reverse): declare the detector the harness runs, or make it run the one it declares
-- needs: run_status, loop_detector
-- judges: each run
-- cites: seed 000, seed 001 and seed 003 (their loop detectors)
select f.run_id, null as step,
       format('ended stalled ({}), but its {} loop detector (limit {}) never fires over its {} tool call(s) and {} tool '
              'result(s)', coalesce(r.stop_reason, r.harness_status, 'no stop reason'), f.detector, f.loop_limit,
              coalesce(q.calls, 0), r.tool_results) as detail
from loop_firings f
join run_view r on r.run_id = f.run_id
left join (select run_id, count(*) as calls from tool_calls group by run_id) q on q.run_id = f.run_id
where r.status = 'stalled' and f.fired_at is null
