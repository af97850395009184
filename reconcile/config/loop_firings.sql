-- loop_firings: every run with a loop detector (loop_detectors: for the checks, its own declaration, else
-- configuration, from run_settings; for reconcile replay, a candidate's), replayed over its transcript with the
-- semantics of the seed that defines it, off-by-one included.
-- One row a run: where the detector fires (fired_at, the step the harness should have stopped after,
-- NULL if it never fires), what it saw, and how many model calls the run made after that point (a
-- wrap-up turn, the seeds' graceful stop, is not one). loop_stopped_at_limit and stalled_runs_detected
-- read it, and the runner creates it beside run_settings.
with detected as (select run_id, detector, lim, win from loop_detectors),
-- seed 000: Ledger.record_tool_result counts identical results in a row, and check() stops before the next
-- call once repeat_run > max_repeats. A result with no hash matches nothing.
results as (
    select s.run_id, s.idx, s.result_hash, d.lim,
           lag(s.result_hash) over (partition by s.run_id order by s.idx) as previous
    from steps s join detected d on d.run_id = s.run_id
    where d.detector = 'results_in_a_row' and s.kind = 'tool' and coalesce(s.tool_status, '') not in ('started', 'not_run')
),
result_runs as (
    select *, row_number() over (partition by run_id, streak order by idx) as in_a_row
    from (select *, sum(case when result_hash = previous then 0 else 1 end) over (partition by run_id order by idx) as streak
          from results) as streaks
),
result_fired as (
    select run_id, min(idx) as fired_at,
           'the same tool result ' || (any_value(lim) + 1) || ' times in a row (max_repeats ' || any_value(lim) || ')' as pattern
    from result_runs where in_a_row = lim + 1 and result_hash is not null group by run_id
),
-- seed 001: LoopDetector fingerprints each step's calls (sorted tool names and canonical arguments) and
-- stops when one fingerprint has been seen repeat_limit times anywhere in the run. The fingerprint is
-- order-free (count, least, greatest and a sum of hashes of the calls), so no ordered aggregate is needed.
step_calls as (
    select q.run_id, q.step_idx, d.lim, q.tool_name || ':' || coalesce(q.args_hash, '') as call_hash
    from tool_calls q join detected d on d.run_id = q.run_id
    where d.detector = 'calls_anywhere'
),
step_prints as (
    select run_id, step_idx, any_value(lim) as lim,
           count(*) || '/' || min(call_hash) || '/' || max(call_hash) || '/' || sum(hash(call_hash) % 1000000007) as print
    from step_calls group by run_id, step_idx
),
anywhere_fired as (
    select run_id, min(step_idx) as fired_at,
           'the same calls ' || any_value(lim) || ' times in the run (repeat_limit ' || any_value(lim) || ')' as pattern
    from (select *, row_number() over (partition by run_id, print order by step_idx) as seen from step_prints) as counted
    where seen = lim group by run_id
),
-- seed 003: noProgress over the last `window` call hashes (calls that failed validation or were not run are never hashed,
-- allowRepeat tools take their place in the window but are not counted): fires when one hash is among
-- them `limit` times, or the last four alternate A B A B — once at least four count.
windowed_runs as (  -- a number for each run: the window's groupings are on numbers, not ids
    select run_id, lim, win, row_number() over (order by run_id) as rk from detected where detector = 'calls_window'
),
hashed as (
    select q.run_id, d.rk, q.step_idx, q.call_position, q.tool_name || ':' || coalesce(q.args_hash, '') as call_hash,
           d.lim, d.win, coalesce(t.allow_repeat, false) as allowed
    from tool_calls q join windowed_runs d on d.run_id = q.run_id
    left join run_tools t on t.run_id = q.run_id and t.name = q.tool_name
    where not exists (select 1 from steps v where v.run_id = q.run_id and v.kind = 'tool' and v.call_id = q.call_id
                      and v.tool_status in ('invalid_args', 'unknown_tool', 'not_run'))
),
calls as (  -- each call's place in the run (n) and its hash as a number, exact within the run (equal calls, equal h)
    select run_id, rk, step_idx, lim, win, allowed,
           row_number() over (partition by rk order by step_idx, call_position) as n,
           dense_rank() over (partition by rk order by call_hash) as h
    from hashed
),
counted as (  -- m: how many counted (not allow_repeat) calls the run has made up to this one
    select *, sum(case when allowed then 0 else 1 end) over (partition by rk order by n
                                                             rows between unbounded preceding and current row) as m
    from calls
),
repeats as (  -- each counted call, and its place (j) among the run's counted calls of the same hash
    select rk, n, h, lim, win, row_number() over (partition by rk, h order by n) as j
    from counted where not allowed
),
spans as (  -- one hash `lim` times among the last `win` calls holds from its lim-th copy until the earliest of
            -- them leaves the window: [from_n, to_n] (an equi-join on the copy lim - 1 back, not a window join)
    select r.rk, r.n as from_n, e.n + r.win - 1 as to_n
    from repeats r join repeats e on e.rk = r.rk and e.h = r.h and e.j = r.j - r.lim + 1
    where r.n - e.n < r.win
),
last_four as (  -- as of each counted call, the last four counted hashes (h1 the latest)
    select rk, m, h as h1, lag(h, 1) over w as h2, lag(h, 2) over w as h3, lag(h, 3) over w as h4
    from counted where not allowed
    window w as (partition by rk order by n)
),
repeated as (select distinct a.rk, a.n from counted a join spans s on s.rk = a.rk and a.n between s.from_n and s.to_n),
window_states as (  -- after each call: how many of the last `win` calls count, the last four, and a hash repeated
    select a.rk, a.n, a.step_idx, a.lim, a.win, a.m - coalesce(z.m, 0) as recent, f.h1, f.h2, f.h3, f.h4,
           x.n is not null as repeats
    from counted a
    left join counted z on z.rk = a.rk and z.n = a.n - a.win
    left join last_four f on f.rk = a.rk and f.m = a.m
    left join repeated x on x.rk = a.rk and x.n = a.n
),
first_fired as (
    select rk, min(n) as n
    from window_states
    where recent >= 4 and (repeats or (h1 = h3 and h2 = h4 and h1 <> h2))
    group by rk
),
fired_counts as (  -- at the call it fires on (one a run): how often its most repeated call is in the window
    select f.rk, max(times) as most
    from (select f.rk, b.h, count(*) as times
          from first_fired f join counted a on a.rk = f.rk and a.n = f.n
          join counted b on b.rk = f.rk and b.n <= f.n and b.n > f.n - a.win and not b.allowed
          group by f.rk, b.h) as f
    group by f.rk
),
window_fired as (
    select r.run_id, s.step_idx as fired_at,
           case when s.repeats then 'one call ' || c.most || ' times among its last ' || s.win || ' calls'
                else 'its last calls alternating A B A B' end as pattern
    from first_fired f
    join window_states s on s.rk = f.rk and s.n = f.n
    join fired_counts c on c.rk = f.rk
    join windowed_runs r on r.rk = f.rk
),
fired as (
    select * from result_fired
    union all select * from anywhere_fired
    union all select * from window_fired
),
later as (  -- the model calls after the detector fired, a wrap-up turn apart (step_view's is_wrap_up: no price needed)
    select f.run_id, count(*) as later_calls, min(m.idx) as next_call
    from fired f join steps m on m.run_id = f.run_id and m.kind = 'model' and m.idx > f.fired_at
    where not exists (select 1 from wrap_up_turns w where w.run_id = m.run_id and w.idx = m.idx)
    group by f.run_id
),
evidence as (
    -- results_in_a_row compares result hashes: a run with a successful call whose result has no hash cannot be
    -- replayed (a failed call with no result recorded is a distinct result: it matches nothing)
    select d.run_id,
           d.detector <> 'results_in_a_row' or count(s.idx) filter (where s.result_hash is null) = 0 as complete
    from detected d left join steps s on s.run_id = d.run_id and s.kind = 'tool' and s.tool_status = 'ok'
    group by d.run_id, d.detector
)
select d.run_id, d.detector, d.lim as loop_limit, d.win as loop_window, f.fired_at, f.pattern,
       coalesce(l.later_calls, 0) as later_calls, l.next_call, e.complete as evidence_complete
from detected d
left join fired f on f.run_id = d.run_id
left join later l on l.run_id = d.run_id
left join evidence e on e.run_id = d.run_id
