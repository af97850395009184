-- chosen_costs: each run's cost as each --cost-source asks for it — one row a run and a source asked
-- ('auto', 'ours', 'harness'); a query picks its rows with asked = $source. 'auto' takes reconcile's prices
-- where they are exact, else the harness's own figure where it records one that is not below reconcile's floor
-- for the same calls (one below it cannot be the cost: ours is shown, the harness's beside it, and the run is
-- flagged: harness_below_floor), else reconcile's range or floor.
-- Each row's figure follows the one rule: cost_micros where exact (complete), else cost_low_micros .. cost_high_micros
-- (a range), or at least cost_low_micros (cost_high_micros NULL); cost_low_micros is never NULL ($0: nothing known).
-- The *_unrounded columns are what sums over runs add (rounded once).
with asked as (
    select c.*, a.asked,
           -- reconcile's floor, to the micro-dollar below: a harness's figure under it cannot be these calls' cost
           c.harness_micros is not null and not c.ours_complete and c.harness_micros < floor(c.ours_low_unrounded)
               as harness_below_floor,
           case when a.asked = 'ours' then 'ours' when a.asked = 'harness' then 'harness'
                when c.ours_complete then 'ours'
                when c.harness_micros is not null and c.harness_micros >= floor(c.ours_low_unrounded) then 'harness'
                else 'ours' end as source
    from run_costs c cross join (values ('auto'), ('ours'), ('harness')) as a(asked)
)
select *,
       case source when 'ours' then ours_micros else harness_micros end as cost_micros,
       case source when 'ours' then ours_low_micros else coalesce(harness_micros, harness_partial_micros, 0) end
           as cost_low_micros,
       case source when 'ours' then ours_high_micros else harness_micros end as cost_high_micros,
       case source when 'ours' then ours_low_unrounded
                   else cast(coalesce(harness_micros, harness_partial_micros, 0) as decimal(38, 9)) end as cost_low_unrounded,
       case source when 'ours' then ours_high_unrounded else cast(harness_micros as decimal(38, 9)) end
           as cost_high_unrounded,
       case source when 'ours' then ours_complete else harness_micros is not null end as complete
from asked
