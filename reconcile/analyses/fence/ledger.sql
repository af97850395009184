-- The fence's ledger at every check: before each model call (and, for a run that ended on a fence, once more
-- after its last call), what the calls before it spent. Reads _fence_steps (the steps, priced) and _fence_owners
-- (whose budget each run spends: budget_key, tree, the budget's start, the run's status and end); writes one row
-- a check (run_id, idx, at_end, at_us, each ledger and whether it is only a lower bound).
--
-- What a call charges (seeds 000, 001, 003): a step (not when the provider refused it: a transport or rate-limit
-- failure is retried, not charged to the step budget, seed 003), its input + output tokens (retries included:
-- seed 003 charges them to tokens), its input and its output apart (seed 000's two ceilings), and its price — the
-- harness's own where it recorded one, since that is what it enforced. A tool-free wrap-up turn (seed 001) comes
-- after the stop: it is neither checked nor charged. The retry of a refused call is marked (retry): a fence that
-- retries inside the call (seed 003's step()) checked once, before the first attempt.
--
-- A budget of its own is spent in the run's order of steps. A budget shared by an agent tree (seed 001: the
-- root's limits with scope "tree") is spent in time: a call is charged when it returns (its start plus its
-- duration; without a duration, no later than the run's next step began), so a check sees every call of the tree
-- that had returned by then, and a sub-agent's call in flight beside it is not yet charged. Times are microseconds
-- from the budget's start. A count some call leaves unknown makes the ledger a lower bound from there (*_unknown):
-- a ceiling it already reaches is reached; one it does not is not known to be.
with steps_in as (
    select s.run_id, s.idx, s.kind, s.is_wrap_up, s.provider_refused, s.input_tokens, s.output_tokens,
           s.cost_micros, s.harness_cost_micros, s.event, o.budget_key, o.tree,
           date_diff('microsecond', o.budget_started_at, s.started_at) as at_us,
           round(s.ms * 1000)::bigint as took_us
    from _fence_steps s join _fence_owners o on o.run_id = s.run_id
),
calls as (
    select run_id, idx, budget_key, tree, at_us, took_us,
           case when provider_refused then 0 else 1 end as charged,
           -- a count left unknown adds nothing it does not record: what is recorded is a lower bound
           coalesce(input_tokens, 0) + coalesce(output_tokens, 0) as tokens,
           case when input_tokens is null or output_tokens is null then 1 else 0 end as tokens_missing,
           coalesce(input_tokens, 0) as prompt, case when input_tokens is null then 1 else 0 end as prompt_missing,
           coalesce(output_tokens, 0) as completion,
           case when output_tokens is null then 1 else 0 end as completion_missing,
           coalesce(harness_cost_micros, cost_micros, 0) as fence_cost,
           case when coalesce(harness_cost_micros, cost_micros) is null then 1 else 0 end as cost_missing,
           coalesce(lag(provider_refused) over (partition by run_id order by idx), false) as retry
    from steps_in where kind = 'model' and not is_wrap_up
),
ends as (  -- the check a run that ended on a fence made after its last call: at its wrap-up turn, else at its end
    select o.run_id, o.budget_key, o.tree, coalesce(max(s.idx), -1) + 1 as idx,
           coalesce(min(s.at_us) filter (where s.kind = 'event' and s.event = 'wrap_up'),
                    date_diff('microsecond', o.budget_started_at, o.ended_at)) as at_us
    from _fence_owners o left join steps_in s on s.run_id = o.run_id
    where o.status in ('budget_exceeded', 'timed_out', 'stalled')
    group by o.run_id, o.budget_key, o.tree, o.budget_started_at, o.ended_at
),
activity as (  -- the last moment the journal accounts for before that check: where the run's steps before it ended
    select e.run_id, max(s.at_us + coalesce(s.took_us, 0)) as last_us
    from ends e join steps_in s on s.run_id = e.run_id
    where s.at_us <= e.at_us and not s.is_wrap_up and not (s.kind = 'event' and s.event = 'wrap_up')
    group by e.run_id
),
checked as (  -- the calls (each charges, and each is checked before unless it retries a refused call) and the end checks
    select run_id, idx, budget_key, tree, at_us, took_us, charged, tokens, tokens_missing, prompt, prompt_missing,
           completion, completion_missing, fence_cost, cost_missing, retry, false as at_end
    from calls
    union all
    select run_id, idx, budget_key, tree, at_us, null, 0, 0, 0, 0, 0, 0, 0, 0, 0, false, true from ends
),
own_budget as (
    select run_id, budget_key, idx, at_end, retry, at_us,
           coalesce(sum(charged) over before, 0) as steps_before, false as steps_unknown,
           coalesce(sum(tokens) over before, 0) as tokens_before,
           coalesce(sum(tokens_missing) over before, 0) > 0 as tokens_unknown,
           coalesce(sum(prompt) over before, 0) as prompt_before,
           coalesce(sum(prompt_missing) over before, 0) > 0 as prompt_unknown,
           coalesce(sum(completion) over before, 0) as completion_before,
           coalesce(sum(completion_missing) over before, 0) > 0 as completion_unknown,
           coalesce(sum(fence_cost) over before, 0) as cost_before,
           coalesce(sum(cost_missing) over before, 0) > 0 as cost_unknown
    from checked where not tree
    window before as (partition by run_id order by idx rows between unbounded preceding and 1 preceding)
),
tree_next as (  -- a shared budget's calls: when each run's next step began (a bound on when a call returned)
    select run_id, idx, lead(at_us) over (partition by run_id order by idx) as next_us from steps_in where tree
),
tree_events as (  -- a shared budget's charges (when each call returned) and checks (when each began), in time
    select c.budget_key, coalesce(c.at_us + c.took_us, n.next_us) as t, 0 as rank, c.run_id, c.idx,
           c.charged, c.tokens, c.tokens_missing, c.prompt, c.prompt_missing, c.completion, c.completion_missing,
           c.fence_cost, c.cost_missing, false as is_check, false as at_end, false as retry, c.at_us
    from checked c left join tree_next n on n.run_id = c.run_id and n.idx = c.idx
    where c.tree and not c.at_end
    union all
    select budget_key, at_us, 1, run_id, idx, 0, 0, 0, 0, 0, 0, 0, 0, 0, true, at_end, retry, at_us
    from checked where tree
),
shared_budget as (
    select run_id, budget_key, idx, at_end, retry, at_us, is_check,
           coalesce(sum(charged) over so_far, 0) as steps_before,
           coalesce(sum(tokens) over so_far, 0) as tokens_before,
           coalesce(sum(tokens_missing) over so_far, 0) > 0 as tokens_unknown,
           coalesce(sum(prompt) over so_far, 0) as prompt_before,
           coalesce(sum(prompt_missing) over so_far, 0) > 0 as prompt_unknown,
           coalesce(sum(completion) over so_far, 0) as completion_before,
           coalesce(sum(completion_missing) over so_far, 0) > 0 as completion_unknown,
           coalesce(sum(fence_cost) over so_far, 0) as cost_before,
           coalesce(sum(cost_missing) over so_far, 0) > 0 as cost_unknown
    from tree_events
    window so_far as (partition by budget_key order by t nulls last, rank, run_id, idx
                      rows between unbounded preceding and current row)
),
points as (
    select run_id, budget_key, idx, at_end, retry, at_us, steps_before, steps_unknown, tokens_before, tokens_unknown,
           prompt_before, prompt_unknown, completion_before, completion_unknown, cost_before, cost_unknown
    from own_budget
    union all
    select run_id, budget_key, idx, at_end, retry, at_us, steps_before, false, tokens_before, tokens_unknown,
           prompt_before, prompt_unknown, completion_before, completion_unknown, cost_before, cost_unknown
    from shared_budget where is_check and at_us is not null
    union all  -- a check whose time is unknown cannot place itself among the tree's charges: nothing is known
    select run_id, budget_key, idx, at_end, retry, at_us, 0, true, 0, true, 0, true, 0, true, 0, true
    from shared_budget where is_check and at_us is null
)
select p.run_id, p.budget_key, p.idx, p.at_end, p.retry, p.at_us, p.steps_before, p.steps_unknown, p.tokens_before, p.tokens_unknown,
       p.prompt_before, p.prompt_unknown, p.completion_before, p.completion_unknown, p.cost_before, p.cost_unknown,
       a.last_us
from points p
left join activity a on p.at_end and a.run_id = p.run_id
