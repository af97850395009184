-- run_costs: one row a run — its cost by reconcile's prices, what its harness recorded (the ledger, else the steps'
-- own costs), and what is unknown. chosen_costs picks between them.
-- Every figure follows one rule: exact where every part is known (ours_micros), else between a floor and a ceiling
-- (ours_low_micros .. ours_high_micros: a ceiling where every call is priced or bounded), else "at least" the floor
-- (ours_high_micros NULL). The floor is never NULL (what is unknown counts for nothing in it), and no figure is the
-- known part alone under the cost's name. Calls are summed unrounded and the run rounded once.
with s as (  -- a run's steps rolled up and priced (kept in a store)
    select run_id, model_steps, usage_steps, unpriced_steps, unknown_bucket_steps, unsplit_steps, exact_steps,
           bounded_steps, cost_low_unrounded as low_unrounded, cost_high_unrounded as high_unrounded, unpriced_tokens,
           harness_steps, harness_step_cost_micros as harness_step_micros
    from run_totals
),
ours as (
    select r.run_id, r.ledger_cost_micros, s.model_steps, s.usage_steps, s.unpriced_steps, s.unknown_bucket_steps,
           s.unsplit_steps, s.exact_steps, s.bounded_steps, s.unpriced_tokens, s.harness_steps, s.harness_step_micros,
           case when coalesce(s.model_steps, 0) = 0 then 0 else round(s.low_unrounded)::bigint end as low_micros,
           case when coalesce(s.model_steps, 0) = 0 then 0
                when s.bounded_steps = s.model_steps then round(s.high_unrounded)::bigint end as high_micros,
           case when coalesce(s.model_steps, 0) = 0 then 0 else s.low_unrounded end as low_exact,
           case when coalesce(s.model_steps, 0) = 0 then 0 when s.bounded_steps = s.model_steps then s.high_unrounded end
               as high_exact
    from runs r left join s using (run_id)
)
select run_id,
       coalesce(model_steps, 0) as model_steps,
       -- exact: every call's cost known (a call with every count zero costs nothing, priced or not)
       coalesce(exact_steps, 0) = coalesce(model_steps, 0) as ours_complete,
       case when coalesce(exact_steps, 0) = coalesce(model_steps, 0) then low_micros end as ours_micros,
       low_micros as ours_low_micros,    -- never NULL: the floor
       high_micros as ours_high_micros,  -- NULL: no ceiling (a call unpriced, without usage, or with a count unknown)
       low_exact as ours_low_unrounded,  -- the same, unrounded, for sums over runs
       high_exact as ours_high_unrounded,
       coalesce(unpriced_steps, 0) as unpriced_steps,
       coalesce(unpriced_tokens, 0) as unpriced_tokens,
       coalesce(model_steps, 0) - coalesce(usage_steps, 0) as calls_without_usage,
       coalesce(unknown_bucket_steps, 0) as calls_with_unknown_buckets,  -- usage recorded, some bucket left out
       coalesce(unsplit_steps, 0) as calls_with_unknown_split,  -- of those, input known whole, not its cache split
       coalesce(ledger_cost_micros, case when harness_steps = model_steps and model_steps > 0 then harness_step_micros end)
           as harness_micros,
       case when ledger_cost_micros is not null then 'ledger'
            when harness_steps = model_steps and model_steps > 0 then 'steps' end as harness_basis,
       -- what the harness recorded for only some of its calls: a floor, never its cost
       case when ledger_cost_micros is null and harness_steps > 0 and harness_steps < model_steps
            then harness_step_micros end as harness_partial_micros
from ours
