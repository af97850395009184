-- run_costs: one row a run — its cost by reconcile's prices (and whether every call could be priced), what its
-- harness recorded (the ledger, else the steps' own costs), and what is unknown. chosen_costs picks between them.
with s as (
    select run_id,
           count(*) filter (where kind = 'model') as model_steps,
           count(*) filter (where kind = 'model' and coalesce(input_uncached, cache_read, cache_write_5m, cache_write_1h,
                                                              output_tokens) is not null) as usage_steps,
           count(*) filter (where unpriced) as unpriced_steps,
           count(*) filter (where unknown_buckets is not null) as unknown_bucket_steps,
           -- calls known whole but not split into cached and uncached input: a cost range, not a cost
           count(*) filter (where cost_micros is null and cost_low_micros is not null) as unsplit_steps,
           count(cost_low_micros) filter (where kind = 'model') as bounded_steps,
           sum(cost_low_micros)::bigint as low_micros,
           sum(cost_high_micros)::bigint as high_micros,
           coalesce(sum(input_tokens + coalesce(output_tokens, 0)) filter (where unpriced), 0)::bigint as unpriced_tokens,
           sum(cost_micros)::bigint as priced_micros,
           sum(harness_cost_micros)::bigint as harness_step_micros
    from step_view group by run_id
)
select r.run_id,
       coalesce(s.model_steps, 0) as model_steps,
       coalesce(s.model_steps, 0) = coalesce(s.usage_steps, 0) and coalesce(s.unpriced_steps, 0) = 0
           and coalesce(s.unknown_bucket_steps, 0) = 0 as ours_complete,
       case when coalesce(s.model_steps, 0) = 0 then 0 else s.priced_micros end as ours_micros,
       coalesce(s.unpriced_steps, 0) as unpriced_steps,
       coalesce(s.unpriced_tokens, 0) as unpriced_tokens,
       coalesce(s.model_steps, 0) - coalesce(s.usage_steps, 0) as calls_without_usage,
       coalesce(s.unknown_bucket_steps, 0) as calls_with_unknown_buckets,  -- usage recorded, some bucket left out
       coalesce(s.unsplit_steps, 0) as calls_with_unknown_split,  -- of those, input known whole, not its cache split
       -- reconcile's cost as a range where every call is priced or bounded (a call's input known, its split not)
       case when coalesce(s.model_steps, 0) = 0 then 0 when s.bounded_steps = s.model_steps then s.low_micros end
           as ours_low_micros,
       case when coalesce(s.model_steps, 0) = 0 then 0 when s.bounded_steps = s.model_steps then s.high_micros end
           as ours_high_micros,
       coalesce(r.ledger_cost_micros, s.harness_step_micros) as harness_micros,
       case when r.ledger_cost_micros is not null then 'ledger' when s.harness_step_micros is not null then 'steps' end
           as harness_basis
from runs r left join s using (run_id)
