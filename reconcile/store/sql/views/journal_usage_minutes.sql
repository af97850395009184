-- journal_usage_minutes: journal_usage summed by run and by the minute (UTC) its calls answered in, with the calls'
-- priced cost (step_view's floor and ceiling, unrounded, and how many calls have no ceiling): what the match with
-- the providers' usage rows and bills adds up, a run's few rows instead of its calls. Kept in a store like
-- run_totals; this query elsewhere. A provider's bucket starts and ends on a whole minute (its windows of a
-- minute, an hour, a day): usage_reconciliation reads the calls themselves where one does not.
select j.provider, j.run_id, j.model, j.api_key_id, j.workspace_id, j.project_id,
       date_trunc('minute', j.responded_at) as minute,
       count(*) as calls,
       count(*) filter (where j.buckets_unknown) as calls_unknown,
       sum(j.input_uncached)::bigint as input_uncached,
       sum(j.cache_read)::bigint as cache_read,
       sum(j.cache_write_5m)::bigint as cache_write_5m,
       sum(j.cache_write_1h)::bigint as cache_write_1h,
       sum(j.output_tokens)::bigint as output_tokens,
       sum(s.cost_low_unrounded) as cost_low_unrounded,
       sum(s.cost_high_unrounded) as cost_high_unrounded,
       count(*) filter (where s.cost_high_unrounded is null) as unbounded_calls
from journal_usage j join step_view s using (run_id, idx)
group by all
