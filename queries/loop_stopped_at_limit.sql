-- name: loop_stopped_at_limit
-- invariant: no run with a loop limit (max_repeats) made more identical consecutive tool calls (same tool, same canonical arguments, tools not marked allow_repeat) than its limit: its loop detector stopped it, as stalled, by then
-- severity: error
-- remedy: the loop detector fired late or not at all: fingerprint the call (tool plus canonical arguments), not only its result, and stop the run at max_repeats; mark tools that are meant to repeat (polling) allow_repeat
-- needs: loop_limit, catalogue
with calls as (
    select q.run_id, q.step_idx, q.tool_name, q.tool_name || ':' || coalesce(q.args_hash, '') as call_hash,
           coalesce(t.allow_repeat, false) as allow_repeat,
           row_number() over (partition by q.run_id order by q.step_idx, q.call_position) as n
    from tool_calls q
    left join run_tools t on t.run_id = q.run_id and t.name = q.tool_name
),
streaks as (  -- a new streak starts wherever a call differs from the one before it
    select *, sum(case when call_hash = previous then 0 else 1 end) over (partition by run_id order by n) as streak
    from (select *, lag(call_hash) over (partition by run_id order by n) as previous from calls)
),
runs_of_calls as (
    select run_id, streak, any_value(tool_name) as tool_name, count(*) as calls, bool_or(allow_repeat) as allowed,
           list(step_idx order by n) as steps
    from streaks group by run_id, streak
)
select c.run_id, c.steps[r.max_repeats + 1] as step,
       format('{} was called {} times in a row with the same arguments, past the loop limit of {} (max_repeats); '
              'the run ended {}', c.tool_name, c.calls, r.max_repeats,
              case when r.status = 'stalled' then 'stalled, but only later' else r.status end) as detail
from runs_of_calls c
join runs r using (run_id)
where r.max_repeats is not null and not c.allowed and c.calls > r.max_repeats
