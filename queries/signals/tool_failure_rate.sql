-- name: tool_failure_rate
-- measures: the share of tool results that failed (an error, a timeout, arguments the tool refused), by tool: how a tool's response schema drifting under the harness's validation shows up
-- aggregate: rate
-- kept: by run
-- key: tool_name
-- unit: share
-- alert_if: above 0.25, rise 1.0, min_count 20
-- failure: tool response schema drift after a server update
-- remedy: compare the tool's results before and after the rise (reconcile show RUN); pin the tool server's version or update the harness's schema
select s.run_id, s.started_at as at, coalesce(s.tool_name, '(unnamed tool)') as key,
       case when s.tool_status in ('error', 'timeout', 'invalid_args') then 1 else 0 end as value
from step_view s
where s.kind = 'tool' and s.tool_status is not null and s.tool_status not in ('started', 'not_run')
