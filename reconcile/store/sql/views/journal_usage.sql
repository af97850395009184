-- journal_usage: every journalled model call as a provider counts it — answered at its start plus its
-- duration, each token bucket (0 where the journal left it out, and buckets_unknown says so) — for the match
-- with the providers' usage.
select coalesce(s.provider, r.provider) as provider, s.run_id, s.idx, coalesce(s.model, r.model) as model,
       r.api_key_id, r.workspace_id, r.project_id,
       s.started_at + to_milliseconds(coalesce(s.ms, 0)) as responded_at,  -- providers count a call when it answers
       coalesce(s.input_uncached, 0) as input_uncached, coalesce(s.cache_read, 0) as cache_read,
       coalesce(s.cache_write_5m, 0) as cache_write_5m, coalesce(s.cache_write_1h, 0) as cache_write_1h,
       coalesce(s.output_tokens, 0) as output_tokens,
       -- a bucket the journal left out is counted 0 above: what it explains is then a floor, not a figure
       s.input_uncached is null or s.cache_read is null or s.cache_write_5m is null or s.cache_write_1h is null
           or s.output_tokens is null as buckets_unknown
from steps s join runs r using (run_id)
where s.kind = 'model' and s.started_at is not null
