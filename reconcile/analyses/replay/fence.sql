-- A candidate's replay, one row a run of _fence_limits: where its fence would have stopped the run (_replay_judged:
-- reconcile/analyses/fence/judge.sql over the ledger at each check), and what the steps from that call on did and
-- cost. Reads _fence_limits, _replay_judged, _fence_loops (where the candidate's loop detector fires) and
-- _fence_steps.
--
-- Each run comes out as one of: cut (a call the fence would not have made), same_stop (a fence stopped it, and the
-- candidate stops it at the same place), late_stop (the same place, but its check after the last call came past
-- the deadline by more than the grace with nothing journalled: the time it would have saved), runs_on (a fence
-- stopped it, the candidate would not have: what it would then have done is not in the journal), unchanged.
with after_cut as (  -- what the run did from the call the fence would not have made
    select x.run_id,
           count(*) filter (where s.kind = 'model' and not s.is_wrap_up and not s.provider_refused) as steps_saved,
           count(*) filter (where s.kind = 'tool') as tool_steps_saved,
           count(*) filter (where s.kind = 'model') as model_calls_saved,
           case when count(*) filter (where s.kind = 'model') = count(coalesce(s.cost_micros, s.harness_cost_micros))
                                                                  filter (where s.kind = 'model')
                then coalesce(sum(coalesce(s.cost_micros, s.harness_cost_micros)) filter (where s.kind = 'model'), 0)
           end as spend_saved_micros,
           max(case when s.idx = x.cut_idx then coalesce(s.cost_micros, s.harness_cost_micros) end) as cut_call_micros,
           min(s.started_at) filter (where s.idx = x.cut_idx) as cut_at
    from _replay_judged x join _fence_steps s on s.run_id = x.run_id  -- an equi-join, then the range: a hash join
    where x.cut_idx is not null and not x.cut_at_end and s.idx >= x.cut_idx
    group by x.run_id
),
totals as (  -- each run's charged calls and spend (each model call: reconcile's price, else the harness's)
    select s.run_id,
           count(*) filter (where s.kind = 'model' and not s.is_wrap_up and not s.provider_refused) as charged_calls,
           case when count(*) filter (where s.kind = 'model') = count(coalesce(s.cost_micros, s.harness_cost_micros))
                                                                  filter (where s.kind = 'model')
                then coalesce(sum(coalesce(s.cost_micros, s.harness_cost_micros)) filter (where s.kind = 'model'), 0)
           end as spend_micros
    from _fence_steps s join _fence_limits l on l.run_id = s.run_id
    group by s.run_id
),
outcomes as (
    select x.*,
           case when x.cut_idx is null then
                    case when r.status in ('budget_exceeded', 'timed_out', 'stalled') then 'runs_on' else 'unchanged' end
                when x.cut_at_end then case when x.late_us is not null then 'late_stop' else 'same_stop' end
                else 'cut' end as outcome,
           -- the ceilings left unknown before the cut (or the run's end): the candidate might have stopped it earlier
           concat_ws(', ',
                     case when x.steps_unknown_at < coalesce(x.cut_idx, x.steps_unknown_at + 1) then 'max_steps' end,
                     case when x.tokens_unknown_at < coalesce(x.cut_idx, x.tokens_unknown_at + 1) then 'max_tokens' end,
                     case when x.prompt_unknown_at < coalesce(x.cut_idx, x.prompt_unknown_at + 1) then 'max_prompt_tokens' end,
                     case when x.completion_unknown_at < coalesce(x.cut_idx, x.completion_unknown_at + 1)
                          then 'max_completion_tokens' end,
                     case when x.wall_unknown_at < coalesce(x.cut_idx, x.wall_unknown_at + 1) then 'max_wall_seconds' end,
                     case when x.cost_unknown_at < coalesce(x.cut_idx, x.cost_unknown_at + 1) then 'max_cost_micros' end,
                     case when x.loop_unknown_at < coalesce(x.cut_idx, x.loop_unknown_at + 1) then 'loop_detector' end)
               as not_judged
    from _replay_judged x join runs r on r.run_id = x.run_id
)
select l.run_id, l.group_key, r.status, r.stop_reason, l.fence,
       l.loop_detector, l.loop_limit, l.loop_window, l.max_steps, l.max_tokens, l.max_prompt_tokens,
       l.max_completion_tokens, l.max_wall_seconds, l.max_cost_micros, l.wrap_up,
       x.outcome, x.cut_idx, x.calls_made, x.ceiling,
       case when x.ceiling is null then null when x.ceiling = 'loop' then 'stalled'
            when x.ceiling = 'wall_seconds' then 'timed_out' else 'budget_exceeded' end as new_status,
       x.budget_calls_made,
       coalesce(t.charged_calls, 0) as charged_calls,
       case when t.run_id is null then 0 else t.spend_micros end as spend_micros,
       case when x.ceiling = 'loop' then f.fired_at end as loop_fired_at,
       f.pattern as loop_pattern,
       coalesce(a.steps_saved, 0) as steps_saved,
       coalesce(a.tool_steps_saved, 0) as tool_steps_saved,
       coalesce(a.model_calls_saved, 0) as model_calls_saved,
       case when x.outcome = 'cut' then a.spend_saved_micros else 0 end as spend_saved_micros,
       case when l.wrap_up and x.outcome = 'cut' then a.cut_call_micros end as wrap_up_micros,
       case when x.outcome = 'cut' then date_diff('millisecond', a.cut_at, r.ended_at)
            when x.outcome = 'late_stop' then cast(floor(x.late_us / 1000) as bigint) else 0 end as ms_saved,
       cast(floor(x.late_us / 1000) as bigint) as late_ms,
       nullif(x.not_judged, '') as not_judged
from _fence_limits l
join runs r on r.run_id = l.run_id
join outcomes x on x.run_id = l.run_id
left join after_cut a on a.run_id = l.run_id
left join totals t on t.run_id = l.run_id
left join _fence_loops f on f.run_id = l.run_id
