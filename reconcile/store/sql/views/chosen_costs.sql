-- chosen_costs: each run's cost as each --cost-source asks for it — one row a run and a source asked
-- ('auto', 'ours', 'harness'); a query picks its rows with asked = $source. 'auto' takes reconcile's prices
-- when they leave nothing out, else the harness's figure, else reconcile's partial one. complete: the cost
-- leaves nothing out — a figure nobody knows is never complete, whatever the flags say (a sum over it
-- would read as $0).
with asked as (
    select c.*, a.asked,
           case when a.asked = 'ours' then 'ours' when a.asked = 'harness' then 'harness'
                when c.ours_complete then 'ours' when c.harness_micros is not null then 'harness'
                else 'ours' end as source
    from run_costs c cross join (values ('auto'), ('ours'), ('harness')) as a(asked)
)
select *, case source when 'ours' then ours_micros else harness_micros end as cost_micros,
       -- the bounds of a cost known only as a range (the cache split of some calls unknown); the cost itself when known
       case source when 'ours' then ours_low_micros else harness_micros end as cost_low_micros,
       case source when 'ours' then ours_high_micros else harness_micros end as cost_high_micros,
       case source when 'ours' then ours_complete and ours_micros is not null
                   else harness_micros is not null end as complete
from asked
