-- run_costs: one row a run — its cost by reconcile's prices, what its harness recorded (the ledger, else the steps'
-- own costs), and what is unknown. chosen_costs picks between them.
-- Every figure follows one rule: exact where every part is known (ours_micros), else between a floor and a ceiling
-- (ours_low_micros .. ours_high_micros: a ceiling where every call is priced or bounded), else "at least" the floor
-- (ours_high_micros NULL). The floor is never NULL (what is unknown counts for nothing in it), and no figure is the
-- known part alone under the cost's name. Calls are summed unrounded and the run rounded once.
with s as (
    select run_id,
           count(*) filter (where kind = 'model') as model_steps,
           count(*) filter (where kind = 'model' and coalesce(input_uncached, cache_read, cache_write_5m, cache_write_1h,
                                                              output_tokens) is not null) as usage_steps,
           count(*) filter (where unpriced) as unpriced_steps,
           count(*) filter (where unknown_buckets is not null) as unknown_bucket_steps,
           -- calls known whole but not split into cached and uncached input: a cost range, not a cost
           count(*) filter (where cost_micros is null and cost_high_micros is not null) as unsplit_steps,
           count(*) filter (where kind = 'model' and cost_micros is not null) as exact_steps,
           count(cost_high_unrounded) filter (where kind = 'model') as bounded_steps,
           sum(cost_low_unrounded) as low_unrounded,
           sum(cost_high_unrounded) as high_unrounded,
           coalesce(sum(input_tokens + coalesce(output_tokens, 0)) filter (where unpriced), 0)::bigint as unpriced_tokens,
           -- the harness's own figure from its steps: a sum only where every model call carries one
           count(harness_cost_micros) filter (where kind = 'model') as harness_steps,
           sum(harness_cost_micros)::bigint as harness_step_micros
    from step_view group by run_id
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
