-- name: cost_per_request_stable
-- invariant: the cost per model request of each agent and task class does not rise week over week by more than the check setting cost_rise_threshold (default 20 %)
-- severity: warn
-- remedy: find what made each request dearer: a longer prompt or catalogue, a lost cache (hit rate), a model or price change; reconcile cost --by day and reconcile reprice tell prices apart from usage
-- needs: usage
with weekly as (  -- added up from each run's priced requests by the hour they started in (an hour lies within a week)
    select agent, coalesce(task_class, '(none)') as task_class, date_trunc('week', hour) as week,
           sum(cost_micros) / sum(requests) as per_request, sum(requests)::bigint as requests
    from request_cost_hours
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
