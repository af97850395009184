-- name: rate_limits_fall_back
-- invariant: a call refused for load again after one retry — rate-limited (429) or overloaded (529) — goes to the run's fallback model (fall back fast: after one retry, not four)
-- severity: warn
-- remedy: the harness kept waiting on a model that refused for load; after one retry route the call to the fallback model the policy names (and journal the fallback event) — retrying every 5xx on the same route up to the retry limit keeps waiting on a model that is overloaded
-- needs: fallback_route
-- judges: each run
-- cites: seed 003 ("fall back fast, not slow"; failure matrix, provider 529 mid-run: "fallback route after one retry, not four")
with model_calls as (
    select s.run_id, s.idx, coalesce(s.model, r.model) as model, r.fallback_model,
           lag(s.error) over w as previous_error, lag(s.error_class) over w as previous_class
    from steps s join runs r on r.run_id = s.run_id
    where s.kind = 'model' and r.fallback_model is not null
    window w as (partition by s.run_id, coalesce(s.agent_label, '') order by s.idx)
),
classified as (  -- seed 003's classes: 429 is a rate limit; a 529 (overloaded) is the transport failure its matrix names
    select *,
           case when coalesce(previous_class, case when regexp_matches(previous_error,
                                                                      '(?i)\b429\b|rate[ _-]?limit|too many requests')
                                                   then 'rate_limit' end) = 'rate_limit' then 'for its rate limit (429)'
                when coalesce(previous_class, 'transport') = 'transport'
                     and regexp_matches(previous_error, '(?i)\b529\b|overloaded') then 'as overloaded (529)' end as refused
    from model_calls
),
chains as (
    select *, sum(case when refused is not null then 0 else 1 end) over (partition by run_id order by idx) as chain
    from classified
),
numbered as (
    select *, row_number() over (partition by run_id, chain order by idx) - 1 as retry
    from chains
)
select run_id, idx as step,
       format('retry {} of a call refused {} went to {} again, not to the fallback model {}', retry, refused, model,
              fallback_model) as detail
from numbered
where refused is not null and retry >= 2 and model <> fallback_model
