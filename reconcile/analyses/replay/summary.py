"""What one candidate's replay adds up to, per group: SQL over ``_replay_runs`` (see ``fence.sql``).

Spend saved is counted on runs that did not succeed (they failed, stalled or hit a budget anyway);
on a success the candidate cuts, the same spend is *lost* with the success. Money sums are integer
micro-dollars; a run whose saving is unknown (a call with no price and no harness price) is counted
apart, never as $0.
"""

from __future__ import annotations

_CUT = "outcome = 'cut'"
_FAILED = "status <> 'succeeded'"

GROUP_SQL = f"""
select group_key as key,
       count(*) as runs,
       count(*) filter (where status = 'succeeded') as succeeded,
       -- a task is an agent tree: its root run succeeded (a sub-agent's success is part of its root's task)
       count(*) filter (where t.root_run_id = r.run_id) as tasks,
       count(*) filter (where t.root_run_id = r.run_id and status = 'succeeded') as completed_tasks,
       count(*) filter (where t.root_run_id = r.run_id and {_CUT} and status = 'succeeded') as completed_tasks_lost,
       count(*) filter (where {_CUT}) as stopped_earlier,
       count(*) filter (where outcome = 'same_stop') as same_stop,
       count(*) filter (where outcome = 'late_stop') as stopped_late,
       count(*) filter (where outcome = 'runs_on') as runs_on,
       count(*) filter (where {_CUT} and status = 'succeeded') as successes_lost,
       -- money by the one rule (docs/costs.md): exact where every run's part is known, else at least the known part
       case when count(*) filter (where {_CUT} and {_FAILED} and spend_saved_micros is null) = 0
            then coalesce(sum(spend_saved_micros) filter (where {_CUT} and {_FAILED}), 0) end::bigint as spend_saved_micros,
       coalesce(sum(spend_saved_micros) filter (where {_CUT} and {_FAILED}), 0)::bigint as spend_saved_low_micros,
       case when count(*) filter (where {_CUT} and status = 'succeeded' and spend_saved_micros is null) = 0
            then coalesce(sum(spend_saved_micros) filter (where {_CUT} and status = 'succeeded'), 0) end::bigint
           as spend_lost_micros,
       coalesce(sum(spend_saved_micros) filter (where {_CUT} and status = 'succeeded'), 0)::bigint as spend_lost_low_micros,
       count(*) filter (where {_CUT} and spend_saved_micros is null) as saving_unknown_runs,
       case when count(*) filter (where {_CUT} and wrap_up and wrap_up_micros is null) = 0
            then coalesce(sum(wrap_up_micros) filter (where {_CUT} and wrap_up), 0) end::bigint as wrap_up_micros,
       coalesce(sum(wrap_up_micros) filter (where {_CUT} and wrap_up), 0)::bigint as wrap_up_low_micros,
       count(*) filter (where {_CUT} and wrap_up and wrap_up_micros is null) as wrap_up_unknown_runs,
       coalesce(sum(steps_saved) filter (where {_CUT}), 0)::bigint as steps_saved,
       coalesce(sum(tool_steps_saved) filter (where {_CUT}), 0)::bigint as tool_steps_saved,
       coalesce(sum(ms_saved) filter (where {_CUT} or outcome = 'late_stop'), 0)::bigint as ms_saved,
       count(*) filter (where {_CUT} and ms_saved is null) as seconds_unknown_runs,
       count(*) filter (where not_judged is not null) as not_judged_runs,
       case when count(*) filter (where spend_micros is null) = 0 then coalesce(sum(spend_micros), 0) end::bigint
           as spend_micros,
       coalesce(sum(spend_micros), 0)::bigint as spend_low_micros,
       count(*) filter (where spend_micros is null) as spend_unknown_runs,
       count(*) filter (where ceiling = 'loop' and outcome in ('cut', 'same_stop') and {_FAILED}) as loops_caught,
       count(*) filter (where ceiling = 'loop' and {_CUT} and status = 'succeeded') as false_positives,
       coalesce(sum(coalesce(budget_calls_made, charged_calls) - calls_made)
                    filter (where ceiling = 'loop' and {_CUT} and {_FAILED}), 0)::bigint as steps_earlier,
       list(distinct not_judged order by not_judged) filter (where not_judged is not null) as not_judged_ceilings
from _replay_runs r left join run_roots t on t.run_id = r.run_id
group by group_key
order by group_key
"""

# Each group's statuses as they were, and as the candidate would have left them (a run it let run on: unknown).
MIX_SQL = """
select group_key as key, 'before' as side, status, count(*) as runs from _replay_runs group by 1, 2, 3
union all
select group_key, 'after',
       case when outcome in ('cut', 'same_stop', 'late_stop') then new_status when outcome = 'runs_on' then 'ran on (unknown)'
            else status end,
       count(*)
from _replay_runs group by 1, 2, 3
order by 1, 2, 3
"""

CUT_RUN_COLUMNS = """group_key as key, run_id, status, stop_reason as stop_reason_was, fence, cut_idx as step, calls_made,
       charged_calls, ceiling, new_status, max_steps, max_tokens, max_prompt_tokens, max_completion_tokens,
       max_wall_seconds, max_cost_micros, loop_detector, loop_limit, loop_pattern, spend_saved_micros,
       ms_saved, not_judged"""
