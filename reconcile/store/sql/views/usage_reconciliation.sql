-- usage_reconciliation: the journals and the providers' usage rows side by side, row by row, with what the
-- journals explain, what they leave unexplained and what they carry that nobody billed ("phantom") — in
-- tokens and, at the model's base prices, in micro-dollars. docs/usage.md says how the match is made.
with aligned as (  -- every provider window starts and ends on a whole minute (windows of a minute, an hour, a day)
    select coalesce(bool_and(bucket_start = date_trunc('minute', bucket_start)
                             and bucket_end = date_trunc('minute', bucket_end)), true) as whole_minutes
    from provider_usage
),
calls as (  -- the journals' calls: each run's by the minute they answered in where every window allows, else one by one
    select provider, run_id, null::integer as idx, model, api_key_id, workspace_id, project_id, minute as responded_at,
           calls, calls_unknown, input_uncached, cache_read, cache_write_5m, cache_write_1h, output_tokens
    from journal_usage_minutes
    where (select whole_minutes from aligned)
    union all
    select provider, run_id, idx, model, api_key_id, workspace_id, project_id, responded_at,
           1, case when buckets_unknown then 1 else 0 end, input_uncached, cache_read, cache_write_5m, cache_write_1h,
           output_tokens
    from journal_usage
    where not (select whole_minutes from aligned)
),
matched as (
    select u.usage_row, j.*
    from provider_usage u join calls j
      on j.provider = u.provider and j.responded_at >= u.bucket_start and j.responded_at < u.bucket_end
     and (u.model is null or (u.model = j.model or starts_with(u.model, j.model || '-')
                              or starts_with(j.model, u.model || '-')))
     and (u.api_key_id is null or u.api_key_id = j.api_key_id)
     and (u.workspace_id is null or u.workspace_id = j.workspace_id)
     and (u.project_id is null or u.project_id = j.project_id)
),
row_models as (select usage_row, model, sum(calls) as n from matched where model is not null group by all),
row_model as (  -- the model most of a row's journal calls name (the first by name among equals)
    select usage_row, min(model) as journal_model
    from (select *, max(n) over (partition by usage_row) as top from row_models) as counted
    where n = top group by usage_row
),
per_row as (
    select usage_row, sum(calls)::bigint as journal_calls, any_value(journal_model) as journal_model,
           sum(calls_unknown)::bigint as journal_calls_unknown,
           sum(input_uncached)::bigint as journal_input_uncached,
           sum(cache_read)::bigint as journal_cache_read,
           sum(cache_write_5m)::bigint as journal_cache_write_5m,
           sum(cache_write_1h)::bigint as journal_cache_write_1h,
           sum(output_tokens)::bigint as journal_output_tokens,
           list({'run_id': run_id,
                 'tokens': input_uncached + cache_read + cache_write_5m + cache_write_1h + output_tokens}) as run_tokens
    from matched left join row_model using (usage_row) group by usage_row
),
windows as (select distinct provider, bucket_start, bucket_end from provider_usage),
unmatched as (  -- journal calls inside a window the provider reported on, that no provider row accounts for
    select w.provider, w.bucket_start, w.bucket_end, j.model, j.api_key_id, j.workspace_id, j.project_id,
           sum(j.calls)::bigint as journal_calls, sum(j.calls_unknown)::bigint as journal_calls_unknown,
           sum(j.input_uncached)::bigint as journal_input_uncached,
           sum(j.cache_read)::bigint as journal_cache_read,
           sum(j.cache_write_5m)::bigint as journal_cache_write_5m,
           sum(j.cache_write_1h)::bigint as journal_cache_write_1h,
           sum(j.output_tokens)::bigint as journal_output_tokens,
           list(distinct j.run_id order by j.run_id) as runs,
           list({'run_id': j.run_id,
                 'tokens': j.input_uncached + j.cache_read + j.cache_write_5m + j.cache_write_1h + j.output_tokens})
               as run_tokens
    from calls j join windows w
      on j.provider = w.provider and j.responded_at >= w.bucket_start and j.responded_at < w.bucket_end
    where not exists (select 1 from matched m where m.run_id = j.run_id and m.responded_at = j.responded_at
                          and m.provider = j.provider and m.model is not distinct from j.model
                          and m.idx is not distinct from j.idx)
    group by all
),
side_by_side as (
    select u.provider, u.bucket_start, u.bucket_end, u.bucket_width, coalesce(u.model, r.journal_model) as model,
           u.model is not null as model_reported, u.api_key_id, u.workspace_id, u.project_id, u.usage_row,
           coalesce(r.journal_calls, 0) as journal_calls,
           -- journal calls with a bucket left out (counted 0): what they explain is known only as a floor
           coalesce(r.journal_calls_unknown, 0) as journal_calls_unknown, null::varchar[] as runs,
           r.run_tokens,  -- each journal call's run and tokens: lets the ledger be allocated call by call
           u.input_uncached as provider_input_uncached, coalesce(r.journal_input_uncached, 0) as journal_input_uncached,
           u.cache_read as provider_cache_read, coalesce(r.journal_cache_read, 0) as journal_cache_read,
           u.cache_write_5m as provider_cache_write_5m, coalesce(r.journal_cache_write_5m, 0) as journal_cache_write_5m,
           u.cache_write_1h as provider_cache_write_1h, coalesce(r.journal_cache_write_1h, 0) as journal_cache_write_1h,
           u.output_tokens as provider_output_tokens, coalesce(r.journal_output_tokens, 0) as journal_output_tokens
    from provider_usage u left join per_row r using (usage_row)
    union all
    select provider, bucket_start, bucket_end, null, model, false, api_key_id, workspace_id, project_id, null,
           journal_calls, journal_calls_unknown, runs, run_tokens,
           0, journal_input_uncached, 0, journal_cache_read, 0, journal_cache_write_5m, 0, journal_cache_write_1h,
           0, journal_output_tokens
    from unmatched
)
select b.*,
       least(provider_input_uncached, journal_input_uncached) as explained_input_uncached,
       greatest(provider_input_uncached - journal_input_uncached, 0) as unexplained_input_uncached,
       greatest(journal_input_uncached - provider_input_uncached, 0) as phantom_input_uncached,
       least(provider_cache_read, journal_cache_read) as explained_cache_read,
       greatest(provider_cache_read - journal_cache_read, 0) as unexplained_cache_read,
       greatest(journal_cache_read - provider_cache_read, 0) as phantom_cache_read,
       least(provider_cache_write_5m, journal_cache_write_5m) as explained_cache_write_5m,
       greatest(provider_cache_write_5m - journal_cache_write_5m, 0) as unexplained_cache_write_5m,
       greatest(journal_cache_write_5m - provider_cache_write_5m, 0) as phantom_cache_write_5m,
       least(provider_cache_write_1h, journal_cache_write_1h) as explained_cache_write_1h,
       greatest(provider_cache_write_1h - journal_cache_write_1h, 0) as unexplained_cache_write_1h,
       greatest(journal_cache_write_1h - provider_cache_write_1h, 0) as phantom_cache_write_1h,
       least(provider_output_tokens, journal_output_tokens) as explained_output_tokens,
       greatest(provider_output_tokens - journal_output_tokens, 0) as unexplained_output_tokens,
       greatest(journal_output_tokens - provider_output_tokens, 0) as phantom_output_tokens,
       -- dollars at the model's base prices: an aggregate does not show which requests passed a tier
       round(provider_input_uncached * mp.uncached_mtok
             + provider_cache_read * mp.cache_read_mtok
             + provider_cache_write_5m * mp.cache_write_5m_mtok
             + provider_cache_write_1h * mp.cache_write_1h_mtok
             + provider_output_tokens * mp.output_mtok)::bigint as provider_micros,
       round(least(provider_input_uncached, journal_input_uncached) * mp.uncached_mtok
             + least(provider_cache_read, journal_cache_read) * mp.cache_read_mtok
             + least(provider_cache_write_5m, journal_cache_write_5m) * mp.cache_write_5m_mtok
             + least(provider_cache_write_1h, journal_cache_write_1h) * mp.cache_write_1h_mtok
             + least(provider_output_tokens, journal_output_tokens) * mp.output_mtok)::bigint as explained_micros,
       round(greatest(provider_input_uncached - journal_input_uncached, 0) * mp.uncached_mtok
             + greatest(provider_cache_read - journal_cache_read, 0) * mp.cache_read_mtok
             + greatest(provider_cache_write_5m - journal_cache_write_5m, 0) * mp.cache_write_5m_mtok
             + greatest(provider_cache_write_1h - journal_cache_write_1h, 0) * mp.cache_write_1h_mtok
             + greatest(provider_output_tokens - journal_output_tokens, 0) * mp.output_mtok)::bigint
           as unexplained_micros,
       round(greatest(journal_input_uncached - provider_input_uncached, 0) * mp.uncached_mtok
             + greatest(journal_cache_read - provider_cache_read, 0) * mp.cache_read_mtok
             + greatest(journal_cache_write_5m - provider_cache_write_5m, 0) * mp.cache_write_5m_mtok
             + greatest(journal_cache_write_1h - provider_cache_write_1h, 0) * mp.cache_write_1h_mtok
             + greatest(journal_output_tokens - provider_output_tokens, 0) * mp.output_mtok)::bigint as phantom_micros
from side_by_side b
left join model_prices mp on mp.provider is not distinct from b.provider and mp.model = b.model
    and mp.day = b.bucket_start::date
