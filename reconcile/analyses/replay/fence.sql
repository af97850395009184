-- The fence, replayed: for every run in _replay_limits (the limits a candidate puts on it), the model call a
-- check-before-each-call fence would not have made, and why. Reads _replay_limits, _replay_loops (where the
-- candidate's loop detector fires: loop_firings.sql over the candidate's detectors) and _replay_steps (the
-- columns of step_view it needs, priced once for every candidate); one row a run.
--
-- The ledger before each model call (a wrap-up turn is not checked: it comes after the stop) is what the calls
-- before it spent: charged calls for max_steps (a call the provider refused is not charged, seed 003), every
-- call's input + output for max_tokens (retries are charged against tokens, seed 003), input for
-- max_prompt_tokens and output for max_completion_tokens (seed 000), the harness's own price else reconcile's
-- for the spend (the harness enforced its ceiling in its prices), and the time since the run started for the
-- wall clock. A ceiling is reached at >= (seeds 000 and 001). A count some call before leaves unknown makes
-- the check unknown from there: it is reported as not judged, never as passed.
--
-- A run that ended on a fence (budget_exceeded, timed_out, stalled) was checked once more after its last
-- call, at its end: that check is replayed too, so a candidate either stops it where it stopped, or lets it
-- run on (what it would then have done is not in the journal).
--
-- Seed 001's one budget for the agent tree: the runs under a root whose limits have scope "tree" share its
-- ledger (budget_key, the root): each checks, before each of its calls, what every run of the tree spent
-- before that moment, against the root's limits, with the time counted from the root's start.
with calls as (
    select s.run_id, s.idx, s.started_at, l.budget_key,
           case when l.tree then s.started_at end as tree_at,  -- a shared budget sees its runs' calls in time order
           case when s.provider_refused then 0 else 1 end as charged,
           s.input_tokens + s.output_tokens as tokens,
           s.input_tokens as prompt,
           s.output_tokens as completion,
           coalesce(s.harness_cost_micros, s.cost_micros) as fence_cost
    from _replay_steps s join _replay_limits l on l.run_id = s.run_id
    where s.kind = 'model' and not s.is_wrap_up
),
before_each as (  -- what the ledger held when the fence checked before each call
    select run_id, idx, started_at,
           coalesce(sum(charged) over before, 0) as steps_before,
           case when coalesce(sum(case when tokens is null then 1 else 0 end) over before, 0) = 0
                then coalesce(sum(tokens) over before, 0) end as tokens_before,
           case when coalesce(sum(case when prompt is null then 1 else 0 end) over before, 0) = 0
                then coalesce(sum(prompt) over before, 0) end as prompt_before,
           case when coalesce(sum(case when completion is null then 1 else 0 end) over before, 0) = 0
                then coalesce(sum(completion) over before, 0) end as completion_before,
           case when coalesce(sum(case when fence_cost is null then 1 else 0 end) over before, 0) = 0
                then coalesce(sum(fence_cost) over before, 0) end as cost_before,
           false as at_end
    from calls
    window before as (partition by budget_key order by tree_at, idx, run_id
                      rows between unbounded preceding and 1 preceding)
),
ends as (  -- when a fence-stopped run checked after its last call: at its wrap-up turn, else at its end
    select l.run_id, any_value(l.budget_key) as budget_key, bool_or(l.tree) as tree,
           coalesce(max(s.idx), -1) + 1 as idx,
           coalesce(min(s.started_at) filter (where s.kind = 'event' and s.event = 'wrap_up'),
                    max(r.ended_at)) as check_at
    from _replay_limits l
    join runs r on r.run_id = l.run_id
    left join steps s on s.run_id = l.run_id
    where r.status in ('budget_exceeded', 'timed_out', 'stalled')
    group by l.run_id
),
at_end as (  -- the ledger then: the run's calls, and under a shared budget its tree's calls made by that time
    select e.run_id, e.idx, e.check_at as started_at,
           coalesce(sum(c.charged), 0) as steps_before,
           case when count(c.idx) = count(c.tokens) then coalesce(sum(c.tokens), 0) end as tokens_before,
           case when count(c.idx) = count(c.prompt) then coalesce(sum(c.prompt), 0) end as prompt_before,
           case when count(c.idx) = count(c.completion) then coalesce(sum(c.completion), 0) end as completion_before,
           case when count(c.idx) = count(c.fence_cost) then coalesce(sum(c.fence_cost), 0) end as cost_before,
           true as at_end
    from ends e
    left join calls c on c.budget_key = e.budget_key and (c.run_id = e.run_id or (e.tree and c.started_at <= e.check_at))
    group by e.run_id, e.idx, e.check_at
),
points as (select * from before_each union all select * from at_end),
judged as (  -- each ceiling at each point: true (reached), false (not, or no such ceiling), null (unknown)
    select p.run_id, p.idx, p.at_end, p.steps_before,
           case when l.max_steps is null then false else p.steps_before >= l.max_steps end as hit_steps,
           case when l.max_tokens is null then false else p.tokens_before >= l.max_tokens end as hit_tokens,
           case when l.max_prompt_tokens is null then false else p.prompt_before >= l.max_prompt_tokens end as hit_prompt,
           case when l.max_completion_tokens is null then false
                else p.completion_before >= l.max_completion_tokens end as hit_completion,
           case when l.max_wall_seconds is null then false
                else date_diff('millisecond', l.started_at, p.started_at) >= l.max_wall_seconds * 1000 end as hit_wall,
           case when l.max_cost_micros is null then false else p.cost_before >= l.max_cost_micros end as hit_cost,
           case when l.loop_detector is null then false when f.fired_at < p.idx then true
                when not coalesce(f.evidence_complete, true) then null else false end as hit_loop
    from points p
    join _replay_limits l on l.run_id = p.run_id
    left join _replay_loops f on f.run_id = p.run_id
),
named as (  -- at each point: is some ceiling reached, and which first, in the seeds' order of checks
    select *,
           coalesce(hit_steps or hit_tokens or hit_prompt or hit_completion or hit_wall or hit_cost or hit_loop,
                    false) as hit,
           coalesce(hit_steps or hit_tokens or hit_prompt or hit_completion or hit_wall or hit_cost, false) as budget_hit,
           case when hit_steps then 'steps' when hit_tokens then 'tokens' when hit_prompt then 'prompt_tokens'
                when hit_completion then 'completion_tokens' when hit_wall then 'wall_seconds'
                when hit_cost then 'cost_micros' when hit_loop then 'loop' end as ceiling
    from judged
),
cuts as (  -- one pass over the points: the first where a ceiling is reached (the cut), where the budgets alone
           -- (no detector) would stop, and where each ceiling first became unknown
    select run_id,
           min(idx) filter (where hit) as cut_idx,
           arg_min(steps_before, idx) filter (where hit) as calls_made,
           arg_min(ceiling, idx) filter (where hit) as ceiling,
           arg_min(at_end, idx) filter (where hit) as at_end,
           min(steps_before) filter (where budget_hit) as budget_calls_made,
           min(idx) filter (where hit_tokens is null) as tokens_unknown_at,
           min(idx) filter (where hit_prompt is null) as prompt_unknown_at,
           min(idx) filter (where hit_completion is null) as completion_unknown_at,
           min(idx) filter (where hit_wall is null) as wall_unknown_at,
           min(idx) filter (where hit_cost is null) as cost_unknown_at,
           min(idx) filter (where hit_loop is null) as loop_unknown_at
    from named
    group by run_id
),
stopped as (  -- the cut runs; and, for every run, the ceilings left unknown before its cut (or its end): the
              -- candidate might have stopped it earlier
    select run_id, cut_idx, at_end, calls_made, ceiling, budget_calls_made,
           concat_ws(', ', case when tokens_unknown_at < coalesce(cut_idx, tokens_unknown_at + 1) then 'max_tokens' end,
                     case when prompt_unknown_at < coalesce(cut_idx, prompt_unknown_at + 1) then 'max_prompt_tokens' end,
                     case when completion_unknown_at < coalesce(cut_idx, completion_unknown_at + 1)
                          then 'max_completion_tokens' end,
                     case when wall_unknown_at < coalesce(cut_idx, wall_unknown_at + 1) then 'max_wall_seconds' end,
                     case when cost_unknown_at < coalesce(cut_idx, cost_unknown_at + 1) then 'max_cost_micros' end,
                     case when loop_unknown_at < coalesce(cut_idx, loop_unknown_at + 1) then 'loop_detector' end)
               as not_judged
    from cuts
),
after_cut as (  -- what the run did from the call the fence would not have made
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
    from stopped x join _replay_steps s on s.run_id = x.run_id  -- an equi-join, then the range: a hash join
    where x.cut_idx is not null and not x.at_end and s.idx >= x.cut_idx
    group by x.run_id
),
totals as (  -- each run's charged calls and spend (each model call: reconcile's price, else the harness's)
    select s.run_id,
           count(*) filter (where s.kind = 'model' and not s.is_wrap_up and not s.provider_refused) as charged_calls,
           case when count(*) filter (where s.kind = 'model') = count(coalesce(s.cost_micros, s.harness_cost_micros))
                                                                  filter (where s.kind = 'model')
                then coalesce(sum(coalesce(s.cost_micros, s.harness_cost_micros)) filter (where s.kind = 'model'), 0)
           end as spend_micros
    from _replay_steps s join _replay_limits l on l.run_id = s.run_id
    group by s.run_id
)
select l.run_id, l.group_key, r.status, r.stop_reason,
       l.loop_detector, l.loop_limit, l.loop_window, l.max_steps, l.max_tokens, l.max_prompt_tokens,
       l.max_completion_tokens, l.max_wall_seconds, l.max_cost_micros, l.wrap_up,
       case when x.cut_idx is null then
                case when r.status in ('budget_exceeded', 'timed_out', 'stalled') then 'runs_on' else 'unchanged' end
            when x.at_end then 'same_stop' else 'cut' end as outcome,
       x.cut_idx, x.calls_made, x.ceiling,
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
       case when x.at_end or x.cut_idx is null then 0 else a.spend_saved_micros end as spend_saved_micros,
       case when l.wrap_up and not x.at_end then a.cut_call_micros end as wrap_up_micros,
       case when x.at_end or x.cut_idx is null then 0
            else date_diff('millisecond', a.cut_at, r.ended_at) end as ms_saved,
       nullif(x.not_judged, '') as not_judged
from _replay_limits l
join runs r on r.run_id = l.run_id
left join stopped x on x.run_id = l.run_id
left join after_cut a on a.run_id = l.run_id
left join totals t on t.run_id = l.run_id
left join _replay_loops f on f.run_id = l.run_id
