-- provider_usage: the providers' usage rows at their finest grouping. Several downloads may group one bucket
-- differently (by model, API key, workspace, project): only the finest grouping is compared — how finely a
-- row is grouped is one bit a dimension it names. Written without QUALIFY so it reads the same in Spark
-- (docs/scale-out.md): a join to the finest grouping.
select u.*, u.source_file || '#' || u.source_record as usage_row
from usage_buckets u
join (select provider, bucket_start, bucket_end,
             max((model is not null)::int * 8 + (api_key_id is not null)::int * 4
                 + (workspace_id is not null)::int * 2 + (project_id is not null)::int) as finest
      from usage_buckets group by provider, bucket_start, bucket_end) f
  on f.provider is not distinct from u.provider and f.bucket_start is not distinct from u.bucket_start
 and f.bucket_end is not distinct from u.bucket_end
where (u.model is not null)::int * 8 + (u.api_key_id is not null)::int * 4
      + (u.workspace_id is not null)::int * 2 + (u.project_id is not null)::int = f.finest
