-- name: stalled_runs_detected
-- invariant: a run whose last tool calls repeat one call (stall_repeats times in the last stall_window, by default 3 in 6) or alternate A B A B, ignoring allow-repeat tools, ended as stalled; and a stalled run shows such a pattern (succeeded, cancelled and running runs are not judged)
-- severity: error
-- remedy: the harness's loop detection missed a pattern (alternation slips past an identical-result fingerprint) or stopped a run that was not looping; fingerprint tool name plus canonical arguments over a window
-- needs: run_status, loop_limit
with calls as (
    select q.run_id, q.tool_name || ':' || coalesce(q.args_hash, '') as call_hash,
           row_number() over (partition by q.run_id order by q.step_idx desc, q.call_position desc) as back
    from tool_calls q
    left join run_tools t on t.run_id = q.run_id and t.name = q.tool_name
    where not coalesce(t.allow_repeat, false)
),
repeated as (
    select run_id, max(n) as most
    from (select c.run_id, c.call_hash, count(*) as n from calls c join run_settings s using (run_id)
          where c.back <= s.stall_window group by all)
    group by run_id
),
alternating as (
    select run_id
    from calls
    group by run_id
    having max(call_hash) filter (where back = 1) = max(call_hash) filter (where back = 3)
       and max(call_hash) filter (where back = 2) = max(call_hash) filter (where back = 4)
       and max(call_hash) filter (where back = 1) <> max(call_hash) filter (where back = 2)
),
patterns as (
    select r.run_id, r.status, coalesce(p.most, 0) >= s.stall_repeats as repeats_one, a.run_id is not null as alternates
    from run_view r join run_settings s using (run_id)
    left join repeated p using (run_id)
    left join alternating a using (run_id)
)
select run_id, null as step,
       format('its last calls {} but it ended {}',
              case when repeats_one then 'repeat one call' else 'alternate A B A B' end, status) as detail
from patterns
where (repeats_one or alternates) and status not in ('stalled', 'succeeded', 'cancelled', 'running')
union all
select run_id, null, 'ended stalled but its last calls show no repetition or alternation'
from patterns
where status = 'stalled' and not (repeats_one or alternates)
