-- name: cost_per_request_stable
-- invariant: the cost per model request of each agent and task class does not rise week over week by more than the check setting cost_rise_threshold (default 20 %)
-- severity: warn
-- remedy: find what made each request dearer: a longer prompt or catalogue, a lost cache (hit rate), a model or price change; reconcile cost --by day and reconcile reprice tell prices apart from usage
-- needs: usage
with weekly as (
    select s.agent, coalesce(s.task_class, '(none)') as task_class,
           date_trunc('week', coalesce(s.started_at, r.started_at)) as week,
           avg(s.cost_micros) as per_request, count(*) as requests
    from step_view s join runs r using (run_id)
    where s.kind = 'model' and s.cost_micros is not null
    group by all
),
compared as (
    select *, lag(per_request) over w as previous, lag(week) over w as previous_week
    from weekly
    window w as (partition by agent, task_class order by week)
)
select null as run_id, null as step,
       format('{} / {}: ${:.6f} per request in the week of {}, up {:.0f} % from ${:.6f} the week of {} ({} requests)',
              agent, task_class, per_request / 1e6, strftime(week, '%Y-%m-%d'), (per_request / previous - 1) * 100,
              previous / 1e6, strftime(previous_week, '%Y-%m-%d'), requests) as detail,
       week as at
from compared
where previous > 0 and per_request > previous * (1 + getvariable('cost_rise_threshold')::double)
  -- week over week: against the week just before; weeks months apart (other work, other people) say nothing
  and previous_week = week - interval 7 day
