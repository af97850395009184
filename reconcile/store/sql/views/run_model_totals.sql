-- run_model_totals: a run's steps rolled up by the model each was priced as (price_model) — and, for a run with no
-- start of its own, by each step's start (a time grouping places such a run's steps by their own times) — with the
-- parts a cost report adds over a group: each token bucket with the calls that leave it unknown, the priced cost's
-- floor and ceiling unrounded, the uncached counterfactual, the catalogue tax, the harness's own figures, what could
-- not be priced. Kept in a store like run_totals; this query over step_view elsewhere.
with marked as (
    select s.*, case when r.started_at is null then s.started_at end as step_started_at,
           -- where a run's success is credited: its final answer, else its last model call (else every step)
           coalesce(min(case when s.is_final then s.idx end) over (partition by s.run_id),
                    max(case when s.kind = 'model' then s.idx end) over (partition by s.run_id), s.idx) as credited_idx
    from step_view s join runs r using (run_id)
)
select
    run_id,
    price_model,
    step_started_at,
    count(*) as steps,
    count(*) filter (where kind = 'model') as model_steps,
    bool_or(idx = credited_idx) as credited,
    sum(input_uncached)::bigint as input_uncached,
    sum(cache_read)::bigint as cache_read,
    sum(cache_write_5m)::bigint as cache_write_5m,
    sum(cache_write_1h)::bigint as cache_write_1h,
    sum(output_tokens)::bigint as output_tokens,
    -- calls that leave a bucket out although they record usage (a group's total of it is unknown), and calls that
    -- leave it out at all (unknown too where the run's own total of it is)
    count(*) filter (where kind = 'model' and input_uncached is null and unknown_buckets is not null) as input_uncached_left_out,
    count(*) filter (where kind = 'model' and cache_read is null and unknown_buckets is not null) as cache_read_left_out,
    count(*) filter (where kind = 'model' and cache_write_5m is null and unknown_buckets is not null) as cache_write_5m_left_out,
    count(*) filter (where kind = 'model' and cache_write_1h is null and unknown_buckets is not null) as cache_write_1h_left_out,
    count(*) filter (where kind = 'model' and output_tokens is null and unknown_buckets is not null) as output_tokens_left_out,
    count(*) filter (where kind = 'model' and input_uncached is null) as input_uncached_missing,
    count(*) filter (where kind = 'model' and cache_read is null) as cache_read_missing,
    count(*) filter (where kind = 'model' and cache_write_5m is null) as cache_write_5m_missing,
    count(*) filter (where kind = 'model' and cache_write_1h is null) as cache_write_1h_missing,
    count(*) filter (where kind = 'model' and output_tokens is null) as output_tokens_missing,
    count(*) filter (where kind = 'model' and cost_micros is not null) as exact_steps,
    count(cost_high_unrounded) filter (where kind = 'model') as bounded_steps,
    sum(cost_low_unrounded) as cost_low_unrounded,
    sum(cost_high_unrounded) as cost_high_unrounded,
    count(*) filter (where kind = 'model' and cost_micros is null and cost_high_micros is not null) as unsplit_steps,
    count(*) filter (where kind = 'model' and uncached_cost_micros is null) as uncached_unknown_steps,
    sum(uncached_cost_micros)::bigint as uncached_cost_micros,
    sum(catalogue_tokens)::bigint as catalogue_tax_tokens,
    count(*) filter (where catalogue_tokens is not null and catalogue_tax_micros is null) as catalogue_tax_unknown_steps,
    sum(catalogue_tax_micros)::bigint as catalogue_tax_micros,
    sum(harness_cost_micros)::bigint as harness_cost_micros,
    sum(harness_cost_micros - cost_micros)::bigint as harness_difference_micros,
    count(*) filter (where unpriced) as unpriced_steps,
    sum(case when unpriced then input_tokens + coalesce(output_tokens, 0) else 0 end)::bigint as unpriced_tokens,
    count(*) filter (where kind = 'model' and coalesce(input_uncached, cache_read, cache_write_5m, cache_write_1h,
                                                       output_tokens) is null) as calls_without_usage,
    count(*) filter (where kind = 'model' and unknown_buckets is not null) as calls_with_unknown_buckets
from marked
group by run_id, price_model, step_started_at
