-- name: budgets_enforced
-- invariant: every budget is checked before each model call, as the run's fence declares it: no call was made once the calls before it had reached a ceiling (steps, tokens, prompt or completion tokens, spend at >=; the wall clock at >= or, where the run's rules say so, only past the deadline), a budget shared by an agent tree holding every call of the tree that had returned by then; no run that stopped on a fence took longer past its deadline than the grace with nothing journalled; no tool ran past its timeout
-- severity: error
-- remedy: check every budget before each call with the comparison the fence declares (>= reaches a ceiling: a > lets one more call through), against the run's totals so far (not the last call's), across the whole agent tree when the budget is shared; stop as soon as the deadline passes; kill tools at their timeout
-- needs: limits
-- judges: each run
-- cites: seed 001 (the four budget ceilings, checked before each model call); seed 003 (its wall-clock rule)
with made as (  -- the charged calls each run made from the check where a budget was first reached
    select w.run_id, count(*) as calls
    from fence_as_run w join step_view s on s.run_id = w.run_id
    where w.budget_idx is not null and not w.budget_at_end and s.kind = 'model' and s.idx >= w.budget_idx
      and not s.is_wrap_up and not s.provider_refused
    group by w.run_id
),
limits as (  -- the limits the fence held the run to: its own, or its tree's shared budget's
    select w.*, b.max_steps, b.max_tokens, b.max_prompt_tokens, b.max_completion_tokens, b.max_wall_seconds,
           b.max_cost_micros, r.status, r.stop_reason,
           case when w.budget_key <> w.run_id then format('the budget it shares with its agent tree (root {}): ', w.budget_key)
                else '' end as shared
    from fence_as_run w join runs b on b.run_id = w.budget_key join runs r on r.run_id = w.run_id
)
select l.run_id, l.budget_idx as step,
       format('{}the fence should have stopped the run before this model call: {}{}', l.shared,
              case l.budget_ceiling
                  when 'steps' then format('{} charged call(s) already made, with max_steps {}', l.budget_calls_made,
                                           l.max_steps)
                  when 'tokens' then format('{:,} tokens already spent, with max_tokens {:,}', l.budget_tokens_before,
                                            l.max_tokens)
                  when 'prompt_tokens' then format('{:,} prompt tokens already spent, with max_prompt_tokens {:,}',
                                                   l.budget_prompt_before, l.max_prompt_tokens)
                  when 'completion_tokens' then format('{:,} completion tokens already spent, with '
                                                       'max_completion_tokens {:,}', l.budget_completion_before,
                                                       l.max_completion_tokens)
                  when 'cost_micros' then format('${:.4f} already spent, with a spend ceiling of ${:.4f}',
                                                 l.budget_cost_before / 1e6, l.max_cost_micros / 1e6)
                  else format('it started {:.3f} s in, with a wall clock of {:g} s', l.budget_at_us / 1e6,
                              l.max_wall_seconds) end,
              case when m.calls > 1 then format(' (and it made {} more charged call(s) after it)', m.calls - 1)
                   else '' end) as detail
from limits l left join made m on m.run_id = l.run_id
where l.budget_idx is not null and not l.budget_at_end
union all
-- the check a fence-stopped run made after its last call came well past its deadline, with no step running then
select l.run_id, null,
       format('{}it stopped ({}) {:.1f} s in, {:.1f} s past its wall clock of {:g} s with no step journalled in '
              'that time: the wall-clock fence fired late', l.shared, coalesce(l.stop_reason, l.status),
              l.end_at_us / 1e6, l.late_us / 1e6, l.max_wall_seconds)
from limits l
where l.late_us is not null
union all
-- each tool is killed at its timeout (a second's grace for the kill itself)
select s.run_id, s.idx, format('{} ran {:.1f} s, past its tool timeout of {:g} s', s.tool_name, s.ms / 1000.0,
                               r.tool_timeout_seconds)
from steps s join runs r on r.run_id = s.run_id
where s.kind = 'tool' and s.ms > 1000 * r.tool_timeout_seconds + 1000
