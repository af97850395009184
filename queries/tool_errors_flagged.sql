-- name: tool_errors_flagged
-- invariant: no tool result the harness recorded as ok starts the way failures start (a traceback, an "Error:"-style prefix, a non-zero exit code, an HTTP 4xx/5xx status or an error object in a JSON body)
-- severity: warn
-- remedy: the harness took a failure for a success: inspect results before marking them ok; the pattern is the check setting tool_error_pattern (reconcile.toml, or reconcile check --set tool_error_pattern=…)
-- needs: tool_status
-- judges: each run
select s.run_id, s.idx as step,
       format('{} returned status ok but its result starts like an error: {}', s.tool_name,
              left(regexp_replace(s.result_preview, '\s+', ' ', 'g'), 100)) as detail
from steps s
join run_settings p using (run_id)
where s.kind = 'tool'
  and s.tool_status = 'ok'
  -- the global pattern is a constant (compiled once); a run-specific one is read per row
  and case when p.tool_error_pattern = getvariable('tool_error_pattern')
           then regexp_matches(s.result_preview, getvariable('tool_error_pattern'))
           else regexp_matches(s.result_preview, p.tool_error_pattern) end
