-- name: costs_match_provider
-- invariant: what the provider billed for each day and model equals the journals' usage of that day and model priced with reconcile's prices (within the cost tolerance settings)
-- severity: error
-- remedy: a difference with matching tokens is a stale or wrong price (update genai-prices, or add an override with reconcile prices add); with differing tokens see tokens_match_provider
-- needs: journals
with billed as (
    select provider, bucket_start::date as day,
           coalesce(model, nullif(trim(split_part(line_item, ',', 1)), '')) as model,  -- OpenAI: "gpt-4o, input"
           sum(amount_usd) as billed_usd
    from billed_costs
    where coalesce(cost_type, 'tokens') = 'tokens'
      and provider in (select provider from journal_usage)  -- no journal of the provider at all: nothing to match
    group by all
),
priced as (
    select j.provider, j.responded_at::date as day, j.model, sum(s.cost_micros) as priced_micros,
           count(*) filter (where s.unpriced) as unpriced
    from journal_usage j join step_view s using (run_id, idx)
    group by all
),
compared as (
    select b.provider, b.day, b.model, b.billed_usd, coalesce(sum(p.priced_micros), 0) / 1e6 as priced_usd,
           coalesce(sum(p.unpriced), 0) as unpriced
    from billed b
    left join priced p on p.provider = b.provider and p.day = b.day
        and (p.model = b.model or starts_with(b.model, p.model || '-') or starts_with(p.model, b.model || '-'))
    where b.model is not null
    group by all
)
select null as run_id, null as step,
       format('{} {} on {}: billed ${:.4f}, journals priced at ${:.4f} (billed {} ${:.4f})',
              provider, model, strftime(day, '%Y-%m-%d'), billed_usd, priced_usd,
              case when billed_usd < priced_usd then 'less by' else 'more by' end, abs(billed_usd - priced_usd)) as detail,
       day::timestamptz as at
from compared
where unpriced = 0  -- journals we cannot price have an unknown cost, not $0 (models_priced reports them)
  and abs(billed_usd - priced_usd) > greatest(getvariable('cost_tolerance_usd')::double,
                                              getvariable('cost_tolerance_share')::double * billed_usd)
