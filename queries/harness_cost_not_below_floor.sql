-- name: harness_cost_not_below_floor
-- invariant: a cost the harness recorded for a run is not less than the least its calls can have cost at list prices (the known token counts at their prices, an input of unknown split all at its cheapest bucket)
-- severity: warn
-- remedy: the harness priced these calls below the price list (a stale or test price table, or calls it left out): fix its prices; until then the cost reports show reconcile's range for the run, the harness's figure beside it
-- needs: usage
-- judges: each run
-- cites: the money rule (docs/costs.md): a recorded figure below reconcile's own floor is never taken as the cost
select run_id, null as step,
       format('the harness recorded ${:.6f} ({}); its calls cost at least ${:.6f} at list prices (${:.6f} more)',
              harness_micros / 1e6, case harness_basis when 'ledger' then 'its ledger' else 'its calls'' own costs' end,
              ours_low_micros / 1e6, (ours_low_micros - harness_micros) / 1e6) as detail
from chosen_costs
where asked = 'auto' and harness_below_floor
