-- step_view: every step, priced (its columns are documented in docs/sql-api.md).
-- A step's cost: its tokens of each bucket times the bucket's price per million tokens (= micro-dollars a
-- token); every token of a request whose input passes the tier start is priced at the tier's prices. A
-- step with no usage recorded has an unknown cost, not a zero one; so has a step whose usage leaves a bucket
-- unknown (a format writes 0 only where the provider bills none of it: its zero_buckets).
-- The catalogue (tool schemas) leads the prompt, so each call billed it as the prompt's first tokens: cache
-- reads first, then cache writes, then uncached input; its tax is those tokens at those prices.
-- These rows come in no order: a freeze materialises them as they are (sorting 50-odd columns of every step
-- costs more than pricing them: 23 s against 14 s at 9 M steps). step_view is the same rows in step order.
with joined as (  -- a model call among wrap_up_turns is the designed graceful stop
    select s.*, r.agent, r.task_class, r.status as run_status, r.catalogue_tokens as run_catalogue_tokens,
           coalesce(s.provider, r.provider) as price_provider, coalesce(s.model, r.model) as price_model,
           w.idx is not null as after_wrap_up,
           mp.matched_model, mp.lookup_model, mp.source as price_source, mp.source_version as price_version,
           mp.min_cache_tokens, mp.web_search_kcount,
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
           -- the catalogue's tokens on this call: at most the call's input
           least(coalesce(r.catalogue_tokens, 0), all_input) as catalogue
    from (select *,
                 -- all input: the buckets', or, where the record gives the whole input (the context) but not its
                 -- split into buckets, that whole (a request's tier is decided on it)
                 case when split_unknown then context_tokens
                      else coalesce(input_uncached, 0) + coalesce(cache_read, 0) + coalesce(cache_write_5m, 0)
                           + coalesce(cache_write_1h, 0) end as all_input
          from (select *, kind = 'model' and context_tokens is not null
                          and (input_uncached is null or cache_read is null or cache_write_5m is null
                               or cache_write_1h is null)
                          and context_tokens >= coalesce(input_uncached, 0) + coalesce(cache_read, 0)
                                               + coalesce(cache_write_5m, 0) + coalesce(cache_write_1h, 0)
                          as split_unknown
                from steps) as known) s
    join runs r using (run_id)
    left join wrap_up_turns w on s.kind = 'model' and w.run_id = s.run_id and w.idx = s.idx
    left join model_prices mp on mp.provider is not distinct from coalesce(s.provider, r.provider)
        and mp.model = coalesce(s.model, r.model)
        and mp.day = coalesce(s.started_at, r.started_at, now())::date
),
unsplit as (  -- the input a record gives whole, beyond the buckets it gives (NULL: none unsplit)
    select *, case when split_unknown then all_input - coalesce(input_uncached, 0) - coalesce(cache_read, 0)
                   - coalesce(cache_write_5m, 0) - coalesce(cache_write_1h, 0) end as unsplit,
              -- no cache could have served this prompt, so an unknown split of its input is all uncached: a price
              -- that bills cache reads and writes as uncached input (no prompt cache to speak of: genai-prices falls
              -- back), or a prompt shorter than the shortest the provider caches (cache_minimums) that records no
              -- cache read or write of its own. Only where the uncached share is itself unknown (an unknown split
              -- of cache writes into lifetimes is not an uncached input)
              matched_model is not null and input_uncached is null
                  and (cache_read_price = uncached_price and cache_write_5m_price = uncached_price
                       and cache_write_1h_price = uncached_price
                       or all_input < min_cache_tokens and coalesce(cache_read, 0) = 0
                          and coalesce(cache_write_5m, 0) = 0 and coalesce(cache_write_1h, 0) = 0) as no_prompt_cache
    from joined
),
filled as (  -- the buckets as known: an unsplit input of a model with no prompt cache is all uncached
    select *,
           case when unsplit is not null and no_prompt_cache then coalesce(input_uncached, 0) + unsplit
                else input_uncached end as f_uncached,
           case when unsplit is not null and no_prompt_cache then coalesce(cache_read, 0) else cache_read end as f_read,
           case when unsplit is not null and no_prompt_cache then coalesce(cache_write_5m, 0) else cache_write_5m end
               as f_write_5m,
           case when unsplit is not null and no_prompt_cache then coalesce(cache_write_1h, 0) else cache_write_1h end
               as f_write_1h,
           case when no_prompt_cache then null else unsplit end as f_unsplit
    from unsplit
),
bounded as (
    select *,
           -- priced only with a price found and every bucket's count known
           kind = 'model' and matched_model is not null and f_uncached is not null and f_read is not null
               and f_write_5m is not null and f_write_1h is not null and output_tokens is not null
               as priceable,
           -- the known input buckets at their prices
           coalesce(f_uncached, 0) * uncached_price + coalesce(f_read, 0) * cache_read_price
               + coalesce(f_write_5m, 0) * cache_write_5m_price + coalesce(f_write_1h, 0) * cache_write_1h_price
               as known_input_micros,
           -- an unsplit input's cheapest and dearest prices: those of the buckets it may be in
           least(case when f_uncached is null then uncached_price end,
                 case when f_read is null then cache_read_price end,
                 case when f_write_5m is null then cache_write_5m_price end,
                 case when f_write_1h is null then cache_write_1h_price end) as unsplit_low_price,
           greatest(case when f_uncached is null then uncached_price end,
                    case when f_read is null then cache_read_price end,
                    case when f_write_5m is null then cache_write_5m_price end,
                    case when f_write_1h is null then cache_write_1h_price end) as unsplit_high_price
    from filled
),
searched as (
    -- hosted web searches, billed per use beside the tokens: known where none ran, or where the price list prices
    -- them (dollars per thousand = micro-dollars per search x 1,000); a search of an unknown price leaves the
    -- call's cost "at least" (NULL fee)
    select *, case when coalesce(web_searches, 0) = 0 then 0
                   when web_search_kcount is not null then web_searches * web_search_kcount * 1000 end as search_fee
    from bounded
),
costed as (
    -- each call's cost in micro-dollars, unrounded (a run or a group adds these and rounds once): exact where every
    -- count and the price are known, or where every count is known and zero (nothing was billed, priced or not);
    -- else between a floor -- the known counts at their prices, an unsplit input all at its cheapest bucket, what
    -- is unknown at nothing -- and, where only the split of a known whole is unknown, a ceiling (all at the dearest)
    select *,
           case when priceable then known_input_micros + output_tokens * output_price + search_fee
                when kind = 'model' and f_uncached = 0 and f_read = 0 and f_write_5m = 0 and f_write_1h = 0
                     and output_tokens = 0 and coalesce(web_searches, 0) = 0 then 0 end as exact_cost,
           case when kind = 'model' and f_unsplit is not null and matched_model is not null
                     and output_tokens is not null and unsplit_high_price is not null
                then known_input_micros + f_unsplit * unsplit_high_price + output_tokens * output_price + search_fee
           end as range_high
    from searched
),
catalogue_read as (  -- the catalogue billed as cache reads first (and each call's bounds)
    select *, least(catalogue, coalesce(f_read, 0)) as catalogue_cache_read,
           case when kind <> 'model' then null
                when exact_cost is not null then exact_cost
                when matched_model is null then 0
                else known_input_micros + coalesce(f_unsplit * unsplit_low_price, 0)
                     + coalesce(output_tokens * output_price, 0) + coalesce(search_fee, 0) end as cost_low_unrounded,
           coalesce(exact_cost, range_high) as cost_high_unrounded
    from costed
),
catalogue_5m as (  -- then as 5-minute cache writes
    select *, least(catalogue - catalogue_cache_read, coalesce(f_write_5m, 0)) as catalogue_cache_write_5m
    from catalogue_read
),
catalogue_1h as (  -- then as 1-hour cache writes; the rest as uncached input
    select *, least(catalogue - catalogue_cache_read - catalogue_cache_write_5m, coalesce(f_write_1h, 0))
                  as catalogue_cache_write_1h
    from catalogue_5m
)
select
    s.run_id,
    s.idx,
    s.kind,
    s.tool_name,
    round(s.exact_cost)::bigint as cost_micros,  -- exact, rounded to the micro-dollar; NULL where not known exactly
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
    s.f_uncached as input_uncached,
    s.f_read as cache_read,
    s.f_write_5m as cache_write_5m,
    s.f_write_1h as cache_write_1h,
    s.output_tokens,
    s.reasoning_tokens,
    s.web_searches,  -- hosted web searches the call ran, billed per use (NULL: the format does not record them)
    -- all input: known when every input bucket is, or when the record gives it whole (the context) with its
    -- split into buckets unknown
    case when s.kind = 'model' and s.f_uncached is not null and s.f_read is not null
              and s.f_write_5m is not null and s.f_write_1h is not null
         then s.f_uncached + s.f_read + s.f_write_5m + s.f_write_1h
         when s.split_unknown then s.all_input end as input_tokens,
    -- what the call's usage leaves out, by name (NULL when it has no usage at all): its cost is unknown
    case when s.kind = 'model' and coalesce(s.f_uncached, s.f_read, s.f_write_5m, s.f_write_1h,
                                            s.output_tokens) is not null
         then nullif(concat_ws(', ', case when s.f_uncached is null then 'input_uncached' end,
                                     case when s.f_read is null then 'cache_read' end,
                                     case when s.f_write_5m is null then 'cache_write_5m' end,
                                     case when s.f_write_1h is null then 'cache_write_1h' end,
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
    s.result_shape,   -- a JSON result's sorted key paths and value types (schema drift: docs/signals.md)
    s.result_schema,  -- the result schema's hash the harness pins, where its journal gives one
    s.event,
    s.tokens_before,
    s.tokens_after,
    s.agent,
    s.task_class,
    s.run_status,
    s.price_provider,
    -- what it would cost with no cache: all input at the input price (known wherever the whole input, the output
    -- and the price are, whatever the input's split into cached and uncached)
    case when s.kind = 'model' and s.matched_model is not null and s.output_tokens is not null
              and (s.split_unknown or s.f_uncached is not null and s.f_read is not null and s.f_write_5m is not null
                   and s.f_write_1h is not null) then
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
    -- a call whose input is known whole but not its split into cached and uncached: its cost lies between the
    -- input all at the cheapest bucket it may be in and all at the dearest (all cached … all uncached), exactly
    -- known otherwise; kept out of cost_micros, which holds only what is known exactly
    -- its bounds: the cost itself where exact; else a floor (never NULL for a model call: the known counts at their
    -- prices, an unsplit input at its cheapest bucket, nothing for what is unknown -- $0 with no price at all) and a
    -- ceiling where only the split of a known whole is unknown (NULL: unbounded). Rounded here; the unrounded
    -- figures are what sums add (a run, a group: rounded once, never a rounding per call)
    round(s.cost_low_unrounded)::bigint as cost_low_micros,
    round(s.cost_high_unrounded)::bigint as cost_high_micros,
    s.cost_low_unrounded,
    s.cost_high_unrounded,
    s.matched_model as priced_as,
    s.lookup_model as priced_from,  -- the normalised id the price was found under, if not the model as written
    s.price_source,
    s.price_version,
    s.price_model,
    s.kind = 'model' and s.matched_model is null
        and greatest(coalesce(s.f_uncached, 0), coalesce(s.f_read, 0), coalesce(s.f_write_5m, 0),
                     coalesce(s.f_write_1h, 0), coalesce(s.output_tokens, 0)) > 0  -- any bucket, not the first known
        as unpriced
from catalogue_1h s
