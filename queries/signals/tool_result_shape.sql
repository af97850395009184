-- name: tool_result_shape
-- measures: the share of a tool's results whose shape (its JSON key paths and value types, or the schema hash the harness pins) was first seen in the 24 hours before, by tool; a tool's first day in the store sets its shapes and is not counted
-- aggregate: rate
-- key: tool_name
-- unit: share
-- alert_if: above 0.20, rise 1.0, min_count 20
-- beside: tool_failure_rate
-- failure: tool response schema drift after a server update
-- remedy: compare the tool's result shape before and after (reconcile signals --json: detail_before, detail); pin the tool server's version, or update the harness's schema and its validation
-- detail: the observation's shape (a reading gives its window's most common new shape, and the most common shape of
-- the window before).
with shaped as (
    select s.started_at, s.tool_name, coalesce('schema ' || s.result_schema, s.result_shape) as shape
    from steps s  -- the raw columns only: no price is read
    where s.kind = 'tool' and s.started_at is not null and coalesce(s.result_schema, s.result_shape) is not null
),
firsts as (
    select *, min(started_at) over (partition by tool_name, shape) as shape_first,
              min(started_at) over (partition by tool_name) as tool_first
    from shaped
)
select started_at as at, coalesce(tool_name, '(unnamed tool)') as key,
       case when shape_first >= tool_first + interval 24 hour and started_at < shape_first + interval 24 hour
            then 1 else 0 end as value,
       shape as detail
from firsts
