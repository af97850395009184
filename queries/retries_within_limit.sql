-- name: retries_within_limit
-- invariant: no model call was retried after a transport failure more than the run's max_retries times (rate-limited retries count as attempts)
-- severity: error
-- remedy: count every attempt, rate-limited ones too, against max_retries, and give up or fall back when it is reached: a dead provider is paid for again and again
-- needs: retry_limit
-- judges: each run
-- cites: seed 003 (transport retries)
with model_calls as (
    select s.run_id, s.idx, s.error, s.error_class,
           lag(s.error) over w as previous_error, lag(s.error_class) over w as previous_class
    from steps s join runs r on r.run_id = s.run_id
    where s.kind = 'model' and r.max_retries is not null
    window w as (partition by s.run_id, coalesce(s.agent_label, '') order by s.idx)
),
classified as (  -- a retry is a call after a failed one; the failure's class from error_class, else its text
    select *, previous_error is not null as retry,
           coalesce(previous_class, case when regexp_matches(previous_error, getvariable('transport_error_pattern'))
                                         then 'transport' else 'invalid_output' end) as after
    from model_calls
),
chains as (
    select *, sum(case when retry and after in ('transport', 'rate_limit') then 0 else 1 end)
                  over (partition by run_id order by idx) as chain
    from classified
),
numbered as (
    select *, row_number() over (partition by run_id, chain order by idx) - 1 as attempt
    from chains
)
select n.run_id, n.idx as step,
       format('retry {} of a call that failed in transport ({}), past max_retries {}', n.attempt,
              left(n.previous_error, 80), r.max_retries) as detail
from numbered n join runs r on r.run_id = n.run_id
where n.retry and n.after = 'transport' and n.attempt > r.max_retries
