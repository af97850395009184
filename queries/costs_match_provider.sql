-- name: costs_match_provider
-- invariant: what the provider billed for each day and model equals the journals' usage of that day and model priced with reconcile's prices (within the cost tolerance settings), or lies within its bounds where some calls' cost is known only between bounds
-- severity: error
-- remedy: a difference with matching tokens is a stale or wrong price (update genai-prices, or add an override with reconcile prices add); with differing tokens see tokens_match_provider
-- needs: journals
with billed as (
    select provider, bucket_start::date as day,
           coalesce(model, nullif(trim(split_part(line_item, ',', 1)), '')) as model,  -- OpenAI: "gpt-4o, input"
           sum(amount_usd) as billed_usd
    from billed_costs
    where coalesce(cost_type, 'tokens') = 'tokens'
      and provider in (select provider from journal_usage_minutes)  -- no journal of the provider at all: nothing to match
    group by all
),
-- the journals' calls priced by the one rule: exact where every call is, else between a floor (what is unknown counts
-- for nothing) and a ceiling (NULL where a call is unpriced or lacks a count): a bill outside them is a finding.
-- Added up from each run's calls by the minute they answered in (a minute lies within one day).
priced as (
    select provider, minute::date as day, model, sum(cost_low_unrounded) as low_micros,
           sum(cost_high_unrounded) as high_micros, sum(unbounded_calls) as unbounded
    from journal_usage_minutes
    group by all
),
compared as (
    select b.provider, b.day, b.model, b.billed_usd, coalesce(sum(p.low_micros), 0) / 1e6 as low_usd,
           case when coalesce(sum(p.unbounded), 0) = 0 then coalesce(sum(p.high_micros), 0) / 1e6 end as high_usd
    from billed b
    left join priced p on p.provider = b.provider and p.day = b.day
        and (p.model = b.model or starts_with(b.model, p.model || '-') or starts_with(p.model, b.model || '-'))
    where b.model is not null
    group by all
),
judged as (
    select *, greatest(getvariable('cost_tolerance_usd')::double, getvariable('cost_tolerance_share')::double * billed_usd)
                  as tolerance
    from compared
)
select null as run_id, null as step,
       case when low_usd = high_usd
            then format('{} {} on {}: billed ${:.4f}, journals priced at ${:.4f} (billed {} ${:.4f})',
                        provider, model, strftime(day, '%Y-%m-%d'), billed_usd, low_usd,
                        case when billed_usd < low_usd then 'less by' else 'more by' end, abs(billed_usd - low_usd))
            when billed_usd < low_usd
            then format('{} {} on {}: billed ${:.4f}, journals priced at least ${:.4f} (billed less by ${:.4f})',
                        provider, model, strftime(day, '%Y-%m-%d'), billed_usd, low_usd, low_usd - billed_usd)
            else format('{} {} on {}: billed ${:.4f}, journals priced at most ${:.4f} (billed more by ${:.4f})',
                        provider, model, strftime(day, '%Y-%m-%d'), billed_usd, high_usd, billed_usd - high_usd)
       end as detail,
       day::timestamptz as at
from judged
where billed_usd < low_usd - tolerance or billed_usd > high_usd + tolerance
