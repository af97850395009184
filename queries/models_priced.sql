-- name: models_priced
-- invariant: every model step that used tokens has a price for its model on its day
-- severity: warn
-- remedy: an unpriced model's spend is unknown, never $0 (its runs' costs read "at least"): add its price to a CSV or TOML file (provider, model, from, input, output, cache_read, cache_write_5m, cache_write_1h in dollars per million tokens) and load it with reconcile prices add FILE; a local model (ollama, a self-hosted one) costs nothing per token: provider = "ollama", model = "*", input = 0, output = 0
-- needs: usage
-- judges: each run
select run_id, min(idx) as step,
       format('model {} (provider {}) has no price; {} step(s) of this run are unpriced',
              coalesce(price_model, 'unnamed'), coalesce(price_provider, 'unknown'), count(*)) as detail
from step_view
where unpriced
group by run_id, price_model, price_provider
