-- name: tool_errors_flagged
-- invariant: no tool result with status ok looks like an error (error, exception, traceback, or an HTTP 4xx/5xx status in a JSON body)
-- severity: warn
-- remedy: the harness took a failure for a success: inspect results before marking them ok; the pattern is the check setting tool_error_pattern (reconcile check --set tool_error_pattern=…)
select run_id, idx as step,
       format('{} returned status ok but its result looks like an error: {}', tool_name,
              left(regexp_replace(result_preview, '\s+', ' ', 'g'), 100)) as detail
from steps
where kind = 'tool'
  and tool_status = 'ok'
  and regexp_matches(result_preview, getvariable('tool_error_pattern'))
