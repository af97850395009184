-- name: result_size_p99
-- measures: the 99th percentile of a tool result's size in tokens, by tool
-- aggregate: p99
-- key: tool_name
-- unit: tokens
-- alert_if: above 20000, rise 1.0, min_count 20
-- failure: a tool returns 40 K tokens
-- remedy: bound the tool's output (the harness's result bound) or page it; the tool_results_bounded check names the runs that received an unbounded result
select s.started_at as at, coalesce(s.tool_name, '(unnamed tool)') as key, s.result_tokens as value
from steps s  -- the raw columns only: no price is read, so the priced view is not needed
where s.kind = 'tool' and s.result_tokens is not null
