-- Each run's limits held against the fence's ledger at each check (_fence_points): where its fence would first
-- have stopped it, and why. Reads _fence_limits (a run's limits: its own, or a candidate's; the rules its fence
-- follows, fence; the seconds of grace a stop may take, grace_us), _fence_loops (where the run's loop detector
-- fires: loop_firings.sql) and _fence_rules (each rule set's order of checks and its wall-clock comparison:
-- reconcile/store/fences.py). One row a run of _fence_limits.
--
-- The check before the retry of a refused call is made only by a fence that checks before every attempt (not seed
-- 003's, which retries inside step()). A count ceiling is reached at >= (every seed). The wall clock is reached at >= or only past the limit, as the
-- rule set says (seed 003: Date.now() > deadline). A loop detector that fired at a step stops the run before the
-- next call. When several ceilings are reached at one check, the first in the rule set's order names the stop.
-- A ledger that is only a lower bound reaches a ceiling it already passes, and leaves the others unknown: the
-- check where each ceiling first became unknown is kept, so a verdict never passes what it could not judge.
--
-- cut: the first check where a ceiling (the loop detector among them) is reached; budget: the first where a
-- budget is (steps, tokens, prompt, completion, wall clock, spend) — at a call, a call the fence should not have
-- made. late_us: at the check a fence-stopped run made after its last call, the time past its deadline that the
-- journal does not account for (no step ran then): a wall clock that fired late.
with judged as (
    select p.run_id, l.budget_key, p.idx, p.at_end, p.at_us, p.steps_before, p.tokens_before, p.prompt_before, p.completion_before,
           p.cost_before,
           case when l.max_steps is null then false when p.steps_before >= l.max_steps then true
                when p.steps_unknown then null else false end as hit_steps,
           case when l.max_tokens is null then false when p.tokens_before >= l.max_tokens then true
                when p.tokens_unknown then null else false end as hit_tokens,
           case when l.max_prompt_tokens is null then false when p.prompt_before >= l.max_prompt_tokens then true
                when p.prompt_unknown then null else false end as hit_prompt,
           case when l.max_completion_tokens is null then false
                when p.completion_before >= l.max_completion_tokens then true
                when p.completion_unknown then null else false end as hit_completion,
           case when l.max_cost_micros is null then false when p.cost_before >= l.max_cost_micros then true
                when p.cost_unknown then null else false end as hit_cost,
           case when l.max_wall_seconds is null then false when p.at_us is null then null
                when p.at_us > round(l.max_wall_seconds * 1000000) then true
                when p.at_us = round(l.max_wall_seconds * 1000000) then f.wall_at_limit else false end as hit_wall,
           case when l.loop_detector is null then false when g.fired_at < p.idx then true
                when not coalesce(g.evidence_complete, true) then null else false end as hit_loop,
           case when p.at_end and l.max_wall_seconds is not null
                then p.at_us - greatest(round(l.max_wall_seconds * 1000000), coalesce(p.last_us, 0)) end as late_us,
           l.grace_us, f.pos_steps, f.pos_tokens, f.pos_prompt_tokens, f.pos_completion_tokens, f.pos_wall_seconds,
           f.pos_cost_micros, f.pos_loop
    from _fence_points p
    join _fence_limits l on l.run_id = p.run_id
    join _fence_rules f on f.fence = l.fence
    left join _fence_loops g on g.run_id = p.run_id
    where f.checks_retries or not p.retry  -- a fence that retries inside the call checks only the first attempt
),
named as (
    select *,
           coalesce(hit_steps or hit_tokens or hit_prompt or hit_completion or hit_wall or hit_cost or hit_loop,
                    false) as hit,
           coalesce(hit_steps or hit_tokens or hit_prompt or hit_completion or hit_wall or hit_cost, false) as budget_hit,
           least(case when hit_steps then pos_steps end, case when hit_tokens then pos_tokens end,
                 case when hit_prompt then pos_prompt_tokens end, case when hit_completion then pos_completion_tokens end,
                 case when hit_wall then pos_wall_seconds end, case when hit_cost then pos_cost_micros end,
                 case when hit_loop then pos_loop end) as first_pos,
           least(case when hit_steps then pos_steps end, case when hit_tokens then pos_tokens end,
                 case when hit_prompt then pos_prompt_tokens end, case when hit_completion then pos_completion_tokens end,
                 case when hit_wall then pos_wall_seconds end, case when hit_cost then pos_cost_micros end)
               as first_budget_pos
    from judged
),
ceilings as (
    select *,
           case first_pos when pos_steps then 'steps' when pos_tokens then 'tokens' when pos_prompt_tokens
                then 'prompt_tokens' when pos_completion_tokens then 'completion_tokens' when pos_wall_seconds
                then 'wall_seconds' when pos_cost_micros then 'cost_micros' when pos_loop then 'loop' end as ceiling,
           case first_budget_pos when pos_steps then 'steps' when pos_tokens then 'tokens' when pos_prompt_tokens
                then 'prompt_tokens' when pos_completion_tokens then 'completion_tokens' when pos_wall_seconds
                then 'wall_seconds' when pos_cost_micros then 'cost_micros' end as budget_ceiling
    from named
)
select run_id, max(budget_key) as budget_key,
       min(idx) filter (where hit) as cut_idx,
       arg_min(at_end, idx) filter (where hit) as cut_at_end,
       arg_min(ceiling, idx) filter (where hit) as ceiling,
       arg_min(steps_before, idx) filter (where hit) as calls_made,
       min(idx) filter (where budget_hit) as budget_idx,
       arg_min(at_end, idx) filter (where budget_hit) as budget_at_end,
       arg_min(budget_ceiling, idx) filter (where budget_hit) as budget_ceiling,
       arg_min(steps_before, idx) filter (where budget_hit) as budget_calls_made,
       arg_min(tokens_before, idx) filter (where budget_hit) as budget_tokens_before,
       arg_min(prompt_before, idx) filter (where budget_hit) as budget_prompt_before,
       arg_min(completion_before, idx) filter (where budget_hit) as budget_completion_before,
       arg_min(cost_before, idx) filter (where budget_hit) as budget_cost_before,
       arg_min(at_us, idx) filter (where budget_hit) as budget_at_us,
       max(late_us) filter (where at_end and late_us > grace_us) as late_us,
       max(at_us) filter (where at_end) as end_at_us,
       min(idx) filter (where hit_steps is null) as steps_unknown_at,
       min(idx) filter (where hit_tokens is null) as tokens_unknown_at,
       min(idx) filter (where hit_prompt is null) as prompt_unknown_at,
       min(idx) filter (where hit_completion is null) as completion_unknown_at,
       min(idx) filter (where hit_wall is null) as wall_unknown_at,
       min(idx) filter (where hit_cost is null) as cost_unknown_at,
       min(idx) filter (where hit_loop is null) as loop_unknown_at
from ceilings
group by run_id
