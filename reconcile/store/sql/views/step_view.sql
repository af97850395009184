-- step_view: every step, priced (its columns are documented in docs/sql-api.md).
-- A step's cost: its tokens of each bucket times the bucket's price per million tokens (= micro-dollars a
-- token); every token of a request whose input passes the tier start is priced at the tier's prices. A
-- step with no usage recorded has an unknown cost, not a zero one; so has a step whose usage leaves a bucket
-- unknown (a format writes 0 only where the provider bills none of it: its zero_buckets).
-- The catalogue (tool schemas) leads the prompt, so each call billed it as the prompt's first tokens: cache
-- reads first, then cache writes, then uncached input; its tax is those tokens at those prices.
-- These rows come in no order: a freeze materialises them as they are (sorting 50-odd columns of every step
-- costs more than pricing them: 23 s against 14 s at 9 M steps). step_view is the same rows in step order.
with wrap_up_turns as (
    -- the turn after a wrap_up event that asks for no tool: found among the few wrap_up events (an anti
    -- join there), not by a subquery per step
    select e.run_id, e.idx + 1 as idx from steps e where e.kind = 'event' and e.event = 'wrap_up'
    and not exists (select 1 from tool_calls q where q.run_id = e.run_id and q.step_idx = e.idx + 1)
),
joined as (
    select s.*, r.agent, r.task_class, r.status as run_status, r.catalogue_tokens as run_catalogue_tokens,
           coalesce(s.provider, r.provider) as price_provider, coalesce(s.model, r.model) as price_model,
           w.idx is not null as after_wrap_up,
           mp.matched_model, mp.lookup_model, mp.source as price_source, mp.source_version as price_version,
           mp.uncached_mtok, mp.output_mtok, mp.tier_uncached_mtok, mp.tier_output_mtok,
           -- each bucket's price for this request: the tier's once its input passes the tier start
           case when all_input > mp.tier_start then mp.tier_uncached_mtok else mp.uncached_mtok end as uncached_price,
           case when all_input > mp.tier_start then mp.tier_cache_read_mtok else mp.cache_read_mtok end as cache_read_price,
           case when all_input > mp.tier_start then mp.tier_cache_write_5m_mtok else mp.cache_write_5m_mtok end
               as cache_write_5m_price,
           case when all_input > mp.tier_start then mp.tier_cache_write_1h_mtok else mp.cache_write_1h_mtok end
               as cache_write_1h_price,
           case when all_input > mp.tier_start then mp.tier_output_mtok else mp.output_mtok end as output_price,
           all_input > mp.tier_start as past_tier,
           -- priced only with a price found and every bucket's count known
           s.kind = 'model' and mp.matched_model is not null and s.input_uncached is not null
               and s.cache_read is not null and s.cache_write_5m is not null and s.cache_write_1h is not null
               and s.output_tokens is not null as priceable,
           -- the catalogue's tokens on this call: at most the call's input
           least(coalesce(r.catalogue_tokens, 0), all_input) as catalogue
    from (select *, coalesce(input_uncached, 0) + coalesce(cache_read, 0) + coalesce(cache_write_5m, 0)
                    + coalesce(cache_write_1h, 0) as all_input
          from steps) s
    join runs r using (run_id)
    left join wrap_up_turns w on s.kind = 'model' and w.run_id = s.run_id and w.idx = s.idx
    left join model_prices mp on mp.provider is not distinct from coalesce(s.provider, r.provider)
        and mp.model = coalesce(s.model, r.model)
        and mp.day = coalesce(s.started_at, r.started_at, now())::date
),
catalogue_read as (  -- the catalogue billed as cache reads first
    select *, least(catalogue, coalesce(cache_read, 0)) as catalogue_cache_read from joined
),
catalogue_5m as (  -- then as 5-minute cache writes
    select *, least(catalogue - catalogue_cache_read, coalesce(cache_write_5m, 0)) as catalogue_cache_write_5m
    from catalogue_read
),
catalogue_1h as (  -- then as 1-hour cache writes; the rest as uncached input
    select *, least(catalogue - catalogue_cache_read - catalogue_cache_write_5m, coalesce(cache_write_1h, 0))
                  as catalogue_cache_write_1h
    from catalogue_5m
)
select
    s.run_id,
    s.idx,
    s.kind,
    s.tool_name,
    case when s.priceable then
        round(coalesce(s.input_uncached, 0) * s.uncached_price + coalesce(s.cache_read, 0) * s.cache_read_price
              + coalesce(s.cache_write_5m, 0) * s.cache_write_5m_price
              + coalesce(s.cache_write_1h, 0) * s.cache_write_1h_price
              + coalesce(s.output_tokens, 0) * s.output_price)::bigint
    end as cost_micros,
    s.ms,
    s.error,
    s.started_at,
    s.agent_label,
    case s.kind
        when 'model' then coalesce(s.finish_reason, 'model call')
            || case when s.is_final then ' (final answer)' else '' end
        when 'tool' then s.tool_name || ' → ' || coalesce(s.tool_status, '?')
        else coalesce(s.event, 'event')
    end as what,
    s.model,
    s.input_uncached,
    s.cache_read,
    s.cache_write_5m,
    s.cache_write_1h,
    s.output_tokens,
    s.reasoning_tokens,
    -- all input: known when every input bucket is (a missing cache count leaves it unknown)
    case when s.kind = 'model' and s.input_uncached is not null and s.cache_read is not null
              and s.cache_write_5m is not null and s.cache_write_1h is not null
         then s.input_uncached + s.cache_read + s.cache_write_5m + s.cache_write_1h end as input_tokens,
    -- what the call's usage leaves out, by name (NULL when it has no usage at all): its cost is unknown
    case when s.kind = 'model' and coalesce(s.input_uncached, s.cache_read, s.cache_write_5m, s.cache_write_1h,
                                            s.output_tokens) is not null
         then nullif(concat_ws(', ', case when s.input_uncached is null then 'input_uncached' end,
                                     case when s.cache_read is null then 'cache_read' end,
                                     case when s.cache_write_5m is null then 'cache_write_5m' end,
                                     case when s.cache_write_1h is null then 'cache_write_1h' end,
                                     case when s.output_tokens is null then 'output_tokens' end), '')
    end as unknown_buckets,
    s.finish_reason,
    s.is_final,
    s.context_tokens,
    s.input_hash,
    s.attempt,
    s.error_class,
    -- the designed graceful stop (seed 001): a tool-free model call right after a wrap_up event
    s.kind = 'model' and s.after_wrap_up as is_wrap_up,
    -- a call the provider refused in transport or for its rate limit (seed 003 charges those to tokens, not steps)
    s.kind = 'model' and coalesce(s.error_class in ('transport', 'rate_limit'), false) as provider_refused,
    s.harness_cost_micros,
    s.call_id,
    s.args_json,
    s.args_hash,
    s.idempotency_key,
    s.side_effect,
    s.tool_status,
    s.result_tokens,
    s.result_bytes,
    s.bounded,
    s.event,
    s.tokens_before,
    s.tokens_after,
    s.agent,
    s.task_class,
    s.run_status,
    s.price_provider,
    -- what it would cost with no cache: all input at the input price
    case when s.priceable then
        round(case when s.past_tier
                   then s.all_input * s.tier_uncached_mtok + coalesce(s.output_tokens, 0) * s.tier_output_mtok
                   else s.all_input * s.uncached_mtok + coalesce(s.output_tokens, 0) * s.output_mtok end)::bigint
    end as uncached_cost_micros,
    -- a format that records no catalogue size: its tax is not recorded (NULL), never $0
    case when s.kind = 'model' and s.run_catalogue_tokens is not null then s.catalogue end as catalogue_tokens,
    case when s.run_catalogue_tokens is not null and s.priceable then  -- the tool schemas' cost on this call
        round(s.catalogue_cache_read * s.cache_read_price + s.catalogue_cache_write_5m * s.cache_write_5m_price
              + s.catalogue_cache_write_1h * s.cache_write_1h_price
              + (s.catalogue - s.catalogue_cache_read - s.catalogue_cache_write_5m - s.catalogue_cache_write_1h)
                * s.uncached_price)::bigint
    end as catalogue_tax_micros,
    s.matched_model as priced_as,
    s.lookup_model as priced_from,  -- the normalised id the price was found under, if not the model as written
    s.price_source,
    s.price_version,
    s.price_model,
    s.kind = 'model' and s.matched_model is null
        and greatest(coalesce(s.input_uncached, 0), coalesce(s.cache_read, 0), coalesce(s.cache_write_5m, 0),
                     coalesce(s.cache_write_1h, 0), coalesce(s.output_tokens, 0)) > 0  -- any bucket, not the first known
        as unpriced
from catalogue_1h s
