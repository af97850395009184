-- name: every_step
-- invariant: planted for bench/RESULTS.md: a finding on every step, so a check's findings are many
-- severity: warn
-- remedy: none: a benchmark's load, not a rule
select run_id, idx as step, 'step ' || idx || ' of kind ' || kind as detail from steps
