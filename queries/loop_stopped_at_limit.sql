-- name: loop_stopped_at_limit
-- invariant: no run made another model call after its own loop detector fired, replayed over its transcript by the rule of the detector it declares (results_in_a_row, calls_anywhere or calls_window: docs/replay.md); a wrap-up turn is the graceful stop, not a call
-- severity: error
-- remedy: the detector fired late or not at all: check it before every model call, fingerprint what the declared detector fingerprints (results for results_in_a_row, calls for calls_anywhere and calls_window), and mark polling tools allow_repeat
-- needs: loop_detector
-- judges: each run
-- cites: seed 000 (results_in_a_row), seed 001 (calls_anywhere), seed 003 (calls_window)
select f.run_id, f.fired_at as step,
       format('its {} loop detector (limit {}) fired here — {} — but the run made {} more model call(s), from step {}, '
              'and ended {}', f.detector, f.loop_limit, f.pattern, f.later_calls, f.next_call, r.status) as detail
from loop_firings f
join runs r on r.run_id = f.run_id
where f.later_calls > 0
