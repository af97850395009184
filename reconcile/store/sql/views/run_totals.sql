-- run_totals: one row a run that has steps, its steps rolled up and priced — what run_view and run_costs add to the
-- run's own row. In a store it is kept (a table, written when a run's rows or the prices it reads change:
-- store/kept_totals.py); in an export read back or on Spark it is this query over step_view.
-- Money is summed unrounded (a run rounds once, a group of runs adds the unrounded figures).
select
    run_id,
    count(*) filter (where kind = 'model') as model_steps,
    count(*) filter (where is_wrap_up) as wrap_up_steps,
    count(*) filter (where provider_refused) as refused_steps,
    coalesce(sum(input_tokens) filter (where is_wrap_up), 0)::bigint as wrap_up_input_tokens,
    coalesce(sum(output_tokens) filter (where is_wrap_up), 0)::bigint as wrap_up_output_tokens,
    sum(harness_cost_micros) filter (where is_wrap_up)::bigint as wrap_up_harness_cost_micros,
    -- money is exact or NULL here: a sum over calls some of which are unknown is no cost (run_costs has the bounds)
    case when count(*) filter (where is_wrap_up and cost_micros is null) = 0
         then round(sum(cost_low_unrounded) filter (where is_wrap_up)) end::bigint as wrap_up_cost_micros,
    count(*) filter (where kind = 'tool' and tool_status is distinct from 'started') as tool_results,  -- in flight: no result yet
    count(*) filter (where kind = 'event') as events,
    count(*) filter (where kind = 'model' and coalesce(input_uncached, cache_read, cache_write_5m, cache_write_1h,
                                                       output_tokens) is not null) as usage_steps,
    -- calls whose record gives no usage at all (a call Codex compacted remotely, a Gemini message with its counts
    -- zeroed, an OpenHands message without metadata): every token total of the run is unknown, its known part no total
    count(*) filter (where kind = 'model' and coalesce(input_uncached, cache_read, cache_write_5m, cache_write_1h,
                                                       output_tokens, input_tokens) is null) as usage_unknown_steps,
    coalesce(sum(input_uncached), 0)::bigint as input_uncached,
    coalesce(sum(cache_read), 0)::bigint as cache_read,
    coalesce(sum(cache_write_5m), 0)::bigint as cache_write_5m,
    coalesce(sum(cache_write_1h), 0)::bigint as cache_write_1h,
    coalesce(sum(output_tokens), 0)::bigint as output_tokens,
    count(*) filter (where unknown_buckets is not null) as unknown_bucket_steps,
    -- all input, known for a call whose buckets are, or whose record gives it whole (its split unknown)
    count(*) filter (where kind = 'model' and coalesce(input_uncached, cache_read, cache_write_5m, cache_write_1h,
                                                       output_tokens) is not null and input_tokens is null)
        as input_unknown_steps,
    coalesce(sum(input_tokens), 0)::bigint as all_input_tokens,
    -- buckets some call with usage leaves unknown: the run's total of those is unknown too
    coalesce(bool_or(unknown_buckets is not null and input_uncached is null), false) as input_uncached_unknown,
    coalesce(bool_or(unknown_buckets is not null and cache_read is null), false) as cache_read_unknown,
    coalesce(bool_or(unknown_buckets is not null and cache_write_5m is null), false) as cache_write_5m_unknown,
    coalesce(bool_or(unknown_buckets is not null and cache_write_1h is null), false) as cache_write_1h_unknown,
    coalesce(bool_or(unknown_buckets is not null and output_tokens is null), false) as output_tokens_unknown,
    coalesce(sum(reasoning_tokens), 0)::bigint as reasoning_tokens,
    -- calls with usage that do not say their reasoning: the run's reasoning total is unknown, not 0
    count(*) filter (where kind = 'model' and reasoning_tokens is null
                     and coalesce(input_uncached, cache_read, cache_write_5m, cache_write_1h, output_tokens) is not null)
        as reasoning_unknown_steps,
    coalesce(bool_or(is_final), false) as has_final_answer,
    min(idx) filter (where is_final) as final_answer_step,
    max(idx) filter (where kind = 'model') as last_call,
    list(distinct model order by model) filter (where model is not null) as models,
    sum(harness_cost_micros)::bigint as harness_step_cost_micros,
    count(harness_cost_micros) filter (where kind = 'model') as harness_steps,
    count(*) filter (where kind = 'model' and cost_micros is not null) as exact_steps,
    count(cost_high_unrounded) filter (where kind = 'model') as bounded_steps,
    -- calls known whole but not split into cached and uncached input: a cost range, not a cost
    count(*) filter (where cost_micros is null and cost_high_micros is not null) as unsplit_steps,
    sum(cost_low_unrounded) as cost_low_unrounded,
    sum(cost_high_unrounded) as cost_high_unrounded,
    count(*) filter (where kind = 'model' and uncached_cost_micros is null) as uncached_unknown_steps,
    sum(uncached_cost_micros)::bigint as uncached_cost_micros,
    sum(catalogue_tokens)::bigint as catalogue_tax_tokens,
    count(*) filter (where catalogue_tokens is not null and catalogue_tax_micros is null) as catalogue_tax_unknown_steps,
    sum(catalogue_tax_micros)::bigint as catalogue_tax_micros,
    count(*) filter (where unpriced) as unpriced_steps,
    coalesce(sum(input_tokens + coalesce(output_tokens, 0)) filter (where unpriced), 0)::bigint as unpriced_tokens
from step_view
group by run_id
