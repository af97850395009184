-- name: tokens_match_provider
-- invariant: the tokens the provider reports for each bucket equal the tokens of the journal calls that answered in it, and a run's provider-reported usage equals what its harness ledger counted
-- severity: error
-- remedy: unexplained tokens are calls the journals never recorded (a crashed writer, a run outside the harness, a leaked key); phantom tokens are journal steps the provider never billed (a step written twice, an invented one); a ledger off from the provider's counts miscounts
-- needs: journals
select case when array_length(runs) = 1 then runs[1] end as run_id, null as step,
       format('{} {} {} bucket {}: provider {} tokens, journals {} (unexplained {}, phantom {}; {} / {})',
              provider, coalesce(model, 'all models'), coalesce(bucket_width, 'reported'), strftime(bucket_start, '%Y-%m-%d %H:%M'),
              provider_input_uncached + provider_cache_read + provider_cache_write_5m + provider_cache_write_1h + provider_output_tokens,
              journal_input_uncached + journal_cache_read + journal_cache_write_5m + journal_cache_write_1h + journal_output_tokens,
              unexplained_input_uncached + unexplained_cache_read + unexplained_cache_write_5m + unexplained_cache_write_1h + unexplained_output_tokens,
              phantom_input_uncached + phantom_cache_read + phantom_cache_write_5m + phantom_cache_write_1h + phantom_output_tokens,
              -- a model no price list covers: its dollars are unknown, never $0
              coalesce(format('${:.4f}', unexplained_micros / 1e6), 'unknown $'),
              coalesce(format('${:.4f}', phantom_micros / 1e6), 'unknown $')) as detail,
       bucket_start as at
from usage_reconciliation
where provider in (select provider from journal_usage_minutes)  -- no journal of the provider at all: nothing to match
  and (unexplained_input_uncached + unexplained_cache_read + unexplained_cache_write_5m + unexplained_cache_write_1h
        + unexplained_output_tokens > getvariable('usage_tolerance_tokens')::bigint
   or phantom_input_uncached + phantom_cache_read + phantom_cache_write_5m + phantom_cache_write_1h
        + phantom_output_tokens > getvariable('usage_tolerance_tokens')::bigint)
union all
select run_id, null,
       format('its model calls carry {} input and {} output tokens as the provider reported them; the harness ledger counted {} and {}',
              input_tokens, output_tokens, ledger_input_tokens, ledger_output_tokens),
       null::timestamptz
from run_view v
where ledger_input_tokens is not null and input_tokens is not null
  and exists (select 1 from steps s where s.run_id = v.run_id and s.kind = 'model' and s.request_id is not null)
  and abs(input_tokens + output_tokens - ledger_input_tokens - ledger_output_tokens) > getvariable('usage_tolerance_tokens')::bigint
