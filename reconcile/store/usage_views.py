"""The views of the three-way match: what the journals say each provider served, beside what it billed.

``journal_usage`` is every journalled model call as the provider counts it (answered at its start
plus its duration); ``provider_usage`` the providers' usage rows at their finest grouping;
``usage_reconciliation`` the two side by side, row by row, with what the journals explain, what
they leave unexplained and what they carry that nobody billed — in tokens and, at the model's
base prices, in micro-dollars. ``docs/usage.md`` says how the match is made.
"""

from __future__ import annotations

_BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")
_PRICE_OF = {"input_uncached": "uncached_mtok", "cache_read": "cache_read_mtok", "cache_write_5m": "cache_write_5m_mtok",
             "cache_write_1h": "cache_write_1h_mtok", "output_tokens": "output_mtok"}
_SAME_MODEL = ("(u.model = j.model or starts_with(u.model, j.model || '-') or starts_with(j.model, u.model || '-'))")

JOURNAL_USAGE = """
create or replace view journal_usage as
select coalesce(s.provider, r.provider) as provider, s.run_id, s.idx, coalesce(s.model, r.model) as model,
       r.api_key_id, r.workspace_id, r.project_id,
       s.started_at + to_milliseconds(coalesce(s.ms, 0)) as responded_at,  -- providers count a call when it answers
       coalesce(s.input_uncached, 0) as input_uncached, coalesce(s.cache_read, 0) as cache_read,
       coalesce(s.cache_write_5m, 0) as cache_write_5m, coalesce(s.cache_write_1h, 0) as cache_write_1h,
       coalesce(s.output_tokens, 0) as output_tokens
from steps s join runs r using (run_id)
where s.kind = 'model' and s.started_at is not null
"""


def _grouping(alias: str = "") -> str:
    """How finely a usage row is grouped: one bit a dimension it names (``alias``: the table's, when joined)."""
    return (f"(({alias}model is not null)::int * 8 + ({alias}api_key_id is not null)::int * 4"
            f" + ({alias}workspace_id is not null)::int * 2 + ({alias}project_id is not null)::int)")


# Written without QUALIFY so it reads the same in Spark (docs/scale-out.md): a join to the finest grouping.
PROVIDER_USAGE = f"""
create or replace view provider_usage as
select u.*, u.source_file || '#' || u.source_record as usage_row
from usage_buckets u
-- several downloads may group one bucket differently: compare against the finest grouping only
join (select provider, bucket_start, bucket_end, max({_grouping()}) as finest
      from usage_buckets group by provider, bucket_start, bucket_end) f
  on f.provider is not distinct from u.provider and f.bucket_start is not distinct from u.bucket_start
 and f.bucket_end is not distinct from u.bucket_end
where {_grouping("u.")} = f.finest
"""

USAGE_RECONCILIATION = f"""
create or replace view usage_reconciliation as
with matched as (
    select u.usage_row, j.*
    from provider_usage u join journal_usage j
      on j.provider = u.provider and j.responded_at >= u.bucket_start and j.responded_at < u.bucket_end
     and (u.model is null or {_SAME_MODEL}) and (u.api_key_id is null or u.api_key_id = j.api_key_id)
     and (u.workspace_id is null or u.workspace_id = j.workspace_id) and (u.project_id is null or u.project_id = j.project_id)
),
per_row as (
    select usage_row, count(*) as journal_calls, mode(model) as journal_model,
           {", ".join(f"sum({b})::bigint as journal_{b}" for b in _BUCKETS)},
           list({{'run_id': run_id, 'tokens': {" + ".join(_BUCKETS)}}}) as run_tokens
    from matched group by usage_row
),
windows as (select distinct provider, bucket_start, bucket_end from provider_usage),
unmatched as (  -- journal calls inside a window the provider reported on, that no provider row accounts for
    select w.provider, w.bucket_start, w.bucket_end, j.model, j.api_key_id, j.workspace_id, j.project_id,
           count(*) as journal_calls, {", ".join(f"sum(j.{b})::bigint as journal_{b}" for b in _BUCKETS)},
           list(distinct j.run_id order by j.run_id) as runs,
           list({{'run_id': j.run_id, 'tokens': {" + ".join("j." + b for b in _BUCKETS)}}}) as run_tokens
    from journal_usage j join windows w
      on j.provider = w.provider and j.responded_at >= w.bucket_start and j.responded_at < w.bucket_end
    where not exists (select 1 from matched m where m.run_id = j.run_id and m.idx = j.idx)
    group by all
),
side_by_side as (
    select u.provider, u.bucket_start, u.bucket_end, u.bucket_width, coalesce(u.model, r.journal_model) as model,
           u.model is not null as model_reported, u.api_key_id, u.workspace_id, u.project_id, u.usage_row,
           coalesce(r.journal_calls, 0) as journal_calls, null::varchar[] as runs,
           r.run_tokens,  -- each journal call's run and tokens: lets the ledger be allocated call by call
           {", ".join(f"u.{b} as provider_{b}, coalesce(r.journal_{b}, 0) as journal_{b}" for b in _BUCKETS)}
    from provider_usage u left join per_row r using (usage_row)
    union all
    select provider, bucket_start, bucket_end, null, model, false, api_key_id, workspace_id, project_id, null,
           journal_calls, runs, run_tokens, {", ".join(f"0, journal_{b}" for b in _BUCKETS)}
    from unmatched
)
select b.*,
       {", ".join(f"least(provider_{b}, journal_{b}) as explained_{b}, greatest(provider_{b} - journal_{b}, 0) as unexplained_{b}, greatest(journal_{b} - provider_{b}, 0) as phantom_{b}" for b in _BUCKETS)},
       -- dollars at the model's base prices: an aggregate does not show which requests passed a tier
       round({" + ".join(f"provider_{b} * mp.{_PRICE_OF[b]}" for b in _BUCKETS)})::bigint as provider_micros,
       round({" + ".join(f"least(provider_{b}, journal_{b}) * mp.{_PRICE_OF[b]}" for b in _BUCKETS)})::bigint as explained_micros,
       round({" + ".join(f"greatest(provider_{b} - journal_{b}, 0) * mp.{_PRICE_OF[b]}" for b in _BUCKETS)})::bigint as unexplained_micros,
       round({" + ".join(f"greatest(journal_{b} - provider_{b}, 0) * mp.{_PRICE_OF[b]}" for b in _BUCKETS)})::bigint as phantom_micros
from side_by_side b
left join model_prices mp on mp.provider is not distinct from b.provider and mp.model = b.model
    and mp.day = b.bucket_start::date
"""
