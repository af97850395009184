-- name: loop_stopped_at_limit
-- invariant: no run made another model call after its own loop detector fired, replayed over its transcript with its seed's semantics (results_in_a_row: seed 000; calls_anywhere: seed 001; calls_window: seed 003); a wrap-up turn is the graceful stop, not a call
-- severity: error
-- remedy: the detector fired late or not at all: check it before every model call, fingerprint what the declared detector fingerprints (results for seed 000, calls for 001 and 003), and mark polling tools allow_repeat
-- needs: loop_detector
-- judges: each run
select f.run_id, f.fired_at as step,
       format('its {} loop detector (limit {}) fired here — {} — but the run made {} more model call(s), from step {}, '
              'and ended {}', f.detector, f.loop_limit, f.pattern, f.later_calls, f.next_call, r.status) as detail
from loop_firings f
join runs r on r.run_id = f.run_id
where f.later_calls > 0
