-- request_cost_hours: the priced model requests of each run by the hour (UTC) they started in (the run's start for
-- a step with no time of its own) — how many, and their cost — what a week-over-week cost per request adds up.
-- Kept in a store like run_totals; this query elsewhere.
select s.run_id, s.agent, s.task_class, date_trunc('hour', coalesce(s.started_at, r.started_at)) as hour,
       count(*) as requests, sum(s.cost_micros)::bigint as cost_micros
from step_view s join runs r using (run_id)
where s.kind = 'model' and s.cost_micros is not null
group by all
