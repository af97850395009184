"""The documented SQL API: views users query and checks build on.

Views hold no data, so they are (re)created on every read-write open rather than by
migrations: changing a view is a code change, not a schema change. ``docs/sql-api.md``
documents their columns.
"""

from __future__ import annotations

import hashlib

import duckdb

from reconcile.store.facts import RUN_FACTS_VIEW
from reconcile.store.usage_views import JOURNAL_USAGE, PROVIDER_USAGE, USAGE_RECONCILIATION
from reconcile.store.status import canonical_status_macro_sql, install_status_macro

# The price of a step: tokens of each bucket times its price per million tokens (= micro-dollars
# per token); every token of a request whose input passes the tier start at the tier's prices.
_BUCKET_TOKENS = {"uncached": "s.input_uncached", "cache_read": "s.cache_read", "cache_write_5m": "s.cache_write_5m",
                  "cache_write_1h": "s.cache_write_1h", "output": "s.output_tokens"}
_INPUT = "(coalesce(s.input_uncached, 0) + coalesce(s.cache_read, 0) + coalesce(s.cache_write_5m, 0) + coalesce(s.cache_write_1h, 0))"


def _priced(prefix: str) -> str:
    return " + ".join(f"coalesce({tokens}, 0) * mp.{prefix}{bucket}_mtok" for bucket, tokens in _BUCKET_TOKENS.items())


# A step with no usage recorded has an unknown cost, not a zero one; so has a step whose usage leaves
# a bucket unknown (a format writes 0 only where the provider bills none of it: its ``zero_buckets``).
_HAS_USAGE = "coalesce(s.input_uncached, s.cache_read, s.cache_write_5m, s.cache_write_1h, s.output_tokens) is not null"
_FULL_USAGE = " and ".join(f"{tokens} is not null" for tokens in _BUCKET_TOKENS.values())
_FULL_INPUT = " and ".join(f"{tokens} is not null" for bucket, tokens in _BUCKET_TOKENS.items() if bucket != "output")
# the buckets a model step's usage leaves out, by name (NULL when it has none, or no usage at all)
UNKNOWN_BUCKETS = ("case when s.kind = 'model' and " + _HAS_USAGE + " then nullif(concat_ws(', ', "
                   + ", ".join(f"case when s.{column} is null then '{column}' end" for column in
                               ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens"))
                   + "), '') end")

STEP_COST = f"""case when s.kind = 'model' and mp.matched_model is not null and {_FULL_USAGE} then
        round(case when {_INPUT} > mp.tier_start then {_priced("tier_")} else {_priced("")} end)::bigint
    end"""
UNCACHED_COST = f"""case when s.kind = 'model' and mp.matched_model is not null and {_FULL_USAGE} then
        round(case when {_INPUT} > mp.tier_start
                   then {_INPUT} * mp.tier_uncached_mtok + coalesce(s.output_tokens, 0) * mp.tier_output_mtok
                   else {_INPUT} * mp.uncached_mtok + coalesce(s.output_tokens, 0) * mp.output_mtok end)::bigint
    end"""

# The catalogue (tool schemas) leads the prompt, so on each call it was billed as the prompt's
# first tokens: cache reads first, then cache writes, then uncached input.
_CATALOGUE = "least(coalesce(r.catalogue_tokens, 0), " + _INPUT + ")"
_CAT_READ = "least(" + _CATALOGUE + ", coalesce(s.cache_read, 0))"
_CAT_W5 = "least(" + _CATALOGUE + " - " + _CAT_READ + ", coalesce(s.cache_write_5m, 0))"
_CAT_W1H = "least(" + _CATALOGUE + " - " + _CAT_READ + " - " + _CAT_W5 + ", coalesce(s.cache_write_1h, 0))"
_CAT_REST = "(" + _CATALOGUE + " - " + _CAT_READ + " - " + _CAT_W5 + " - " + _CAT_W1H + ")"


def _catalogue_priced(prefix: str) -> str:
    return (f"{_CAT_READ} * mp.{prefix}cache_read_mtok + {_CAT_W5} * mp.{prefix}cache_write_5m_mtok"
            f" + {_CAT_W1H} * mp.{prefix}cache_write_1h_mtok + {_CAT_REST} * mp.{prefix}uncached_mtok")


CATALOGUE_TAX = f"""case when s.kind = 'model' and mp.matched_model is not null and {_FULL_USAGE} then
        round(case when {_INPUT} > mp.tier_start then {_catalogue_priced("tier_")} else {_catalogue_priced("")} end)::bigint
    end"""

# The priced steps in no order: what a freeze materialises (sorting 50-odd columns of every step cost
# more than pricing them: 23 s against 14 s at 9 M steps). ``step_view`` is the same rows in order.
STEP_ROWS = f"""
select
    s.run_id,
    s.idx,
    s.kind,
    s.tool_name,
    {STEP_COST} as cost_micros,
    s.ms,
    s.error,
    s.started_at,
    s.agent_label,
    case s.kind
        when 'model' then coalesce(s.finish_reason, 'model call')
            || case when s.is_final then ' (final answer)' else '' end
        when 'tool' then s.tool_name || ' → ' || coalesce(s.tool_status, '?')
        else coalesce(s.event, 'event')
    end as what,
    s.model,
    s.input_uncached,
    s.cache_read,
    s.cache_write_5m,
    s.cache_write_1h,
    s.output_tokens,
    s.reasoning_tokens,
    -- all input: known when every input bucket is (a missing cache count leaves it unknown)
    case when s.kind = 'model' and {_FULL_INPUT} then s.input_uncached + s.cache_read + s.cache_write_5m
        + s.cache_write_1h end as input_tokens,
    {UNKNOWN_BUCKETS} as unknown_buckets,  -- what the call's usage leaves out: its cost is unknown
    s.finish_reason,
    s.is_final,
    s.context_tokens,
    s.input_hash,
    s.attempt,
    s.error_class,
    -- the designed graceful stop (seed 001): a tool-free model call right after a wrap_up event
    s.kind = 'model' and w.idx is not null as is_wrap_up,
    -- a call the provider refused in transport or for its rate limit (seed 003 charges those to tokens, not steps)
    s.kind = 'model' and coalesce(s.error_class in ('transport', 'rate_limit'), false) as provider_refused,
    s.harness_cost_micros,
    s.call_id,
    s.args_json,
    s.args_hash,
    s.idempotency_key,
    s.side_effect,
    s.tool_status,
    s.result_tokens,
    s.result_bytes,
    s.bounded,
    s.event,
    s.tokens_before,
    s.tokens_after,
    r.agent,
    r.task_class,
    r.status as run_status,
    coalesce(s.provider, r.provider) as price_provider,
    {UNCACHED_COST} as uncached_cost_micros,   -- what it would cost with no cache: all input at the input price
    -- a format that records no catalogue size: its tax is not recorded (NULL), never $0
    case when s.kind = 'model' and r.catalogue_tokens is not null then {_CATALOGUE} end as catalogue_tokens,
    case when r.catalogue_tokens is not null then {CATALOGUE_TAX} end as catalogue_tax_micros,  -- the tool schemas' cost on this call
    mp.matched_model as priced_as,
    mp.lookup_model as priced_from,            -- the normalised id the price was found under, if not the model as written
    mp.source as price_source,
    mp.source_version as price_version,
    coalesce(s.model, r.model) as price_model,
    s.kind = 'model' and mp.matched_model is null
        and greatest(coalesce(s.input_uncached, 0), coalesce(s.cache_read, 0), coalesce(s.cache_write_5m, 0),
                     coalesce(s.cache_write_1h, 0), coalesce(s.output_tokens, 0)) > 0  -- any bucket, not the first known
        as unpriced
from steps s
join runs r using (run_id)
-- the wrap-up turns: found among the few wrap_up events (an anti join there), not by a subquery per step
left join (select e.run_id, e.idx + 1 as idx from steps e where e.kind = 'event' and e.event = 'wrap_up'
           and not exists (select 1 from tool_calls q where q.run_id = e.run_id and q.step_idx = e.idx + 1)) w
    on s.kind = 'model' and w.run_id = s.run_id and w.idx = s.idx
left join model_prices mp on mp.provider is not distinct from coalesce(s.provider, r.provider)
    and mp.model = coalesce(s.model, r.model)
    and mp.day = coalesce(s.started_at, r.started_at, now())::date
"""

STEP_VIEW = f"\ncreate or replace view step_view as\n{STEP_ROWS.lstrip()}order by s.run_id, s.idx\n"

TREE_DEPTH = 6  # levels of sub-agents the tree root is looked up through
_ANCESTORS = "\n".join(f"left join runs a{n} on a{n}.run_id = {'r' if n == 1 else f'a{n - 1}'}.parent_run_id"
                       for n in range(1, TREE_DEPTH + 1))
_ROOT = ", ".join(f"a{n}.run_id" for n in range(TREE_DEPTH, 0, -1))


def tree_roots_sql() -> str:
    """``(run_id, root_run_id)`` of every run: the topmost ancestor in the store, as ``run_view`` finds it."""
    return f"select r.run_id, coalesce({_ROOT}, r.run_id) as root_run_id from runs r\n{_ANCESTORS}"

RUN_VIEW = f"""
create or replace view run_view as
with step_totals as (
    select
        run_id,
        count(*) filter (where kind = 'model') as model_steps,
        count(*) filter (where is_wrap_up) as wrap_up_steps,
        count(*) filter (where provider_refused) as refused_steps,
        coalesce(sum(input_tokens) filter (where is_wrap_up), 0)::bigint as wrap_up_input_tokens,
        coalesce(sum(output_tokens) filter (where is_wrap_up), 0)::bigint as wrap_up_output_tokens,
        sum(harness_cost_micros) filter (where is_wrap_up)::bigint as wrap_up_harness_cost_micros,
        sum(cost_micros) filter (where is_wrap_up)::bigint as wrap_up_cost_micros,
        count(*) filter (where kind = 'tool' and tool_status is distinct from 'started') as tool_results,  -- in flight: no result yet
        count(*) filter (where kind = 'event') as events,
        count(*) filter (where kind = 'model' and coalesce(input_uncached, cache_read, cache_write_5m, cache_write_1h,
                                                           output_tokens) is not null) as usage_steps,
        coalesce(sum(input_uncached), 0)::bigint as input_uncached,
        coalesce(sum(cache_read), 0)::bigint as cache_read,
        coalesce(sum(cache_write_5m), 0)::bigint as cache_write_5m,
        coalesce(sum(cache_write_1h), 0)::bigint as cache_write_1h,
        coalesce(sum(output_tokens), 0)::bigint as output_tokens,
        count(*) filter (where unknown_buckets is not null) as unknown_bucket_steps,
        -- buckets some call with usage leaves unknown: the run's total of those is unknown too
        bool_or(unknown_buckets is not null and input_uncached is null) as input_uncached_unknown,
        bool_or(unknown_buckets is not null and cache_read is null) as cache_read_unknown,
        bool_or(unknown_buckets is not null and cache_write_5m is null) as cache_write_5m_unknown,
        bool_or(unknown_buckets is not null and cache_write_1h is null) as cache_write_1h_unknown,
        bool_or(unknown_buckets is not null and output_tokens is null) as output_tokens_unknown,
        coalesce(sum(reasoning_tokens), 0)::bigint as reasoning_tokens,
        coalesce(bool_or(is_final), false) as has_final_answer,
        min(idx) filter (where is_final) as final_answer_step,
        list(distinct model order by model) filter (where model is not null) as models,
        sum(harness_cost_micros)::bigint as harness_step_cost_micros,
        sum(cost_micros)::bigint as cost_micros,
        sum(uncached_cost_micros)::bigint as uncached_cost_micros,
        sum(catalogue_tokens)::bigint as catalogue_tax_tokens,
        sum(catalogue_tax_micros)::bigint as catalogue_tax_micros,
        count(*) filter (where unpriced) as unpriced_steps
    from step_view
    group by run_id
)
select
    r.run_id,
    r.agent,
    r.task_class,
    r.model,
    coalesce(t.models, case when r.model is null then [] else [r.model] end) as models,
    r.provider,
    r.status,
    coalesce(r.status_inferred, false) as status_inferred,  -- reconcile read the status off the transcript
    r.harness_status,                         -- the harness's own word for how the run ended, as written
    r.stop_reason,
    r.predicted_stop_reason,
    r.started_at,
    r.ended_at,
    date_diff('millisecond', r.started_at, r.ended_at) / 1000.0 as wall_seconds,
    r.working_seconds,  -- time spent working, where the harness records it apart from waiting (Inspect AI)
    coalesce(t.model_steps, 0) as steps,
    coalesce(t.wrap_up_steps, 0) as wrap_up_steps,  -- tool-free wrap-up turns after a budget ran out (seed 001)
    coalesce(t.refused_steps, 0) as refused_steps,  -- calls the provider refused (transport, rate limit)
    -- what a step ceiling counts: model calls, less the wrap-up turn and the provider's refusals
    coalesce(t.model_steps, 0) - coalesce(t.wrap_up_steps, 0) - coalesce(t.refused_steps, 0) as charged_steps,
    coalesce(t.tool_results, 0) as tool_results,
    coalesce(t.events, 0) as events,
    -- Token totals are NULL, not 0, when no step of the run recorded usage (e.g. SWE-agent), and a bucket's
    -- total is NULL when some call's usage leaves that bucket out (unknown_bucket_steps counts those calls).
    case when t.usage_steps > 0 and not t.input_uncached_unknown then t.input_uncached end as input_uncached,
    case when t.usage_steps > 0 and not t.cache_read_unknown then t.cache_read end as cache_read,
    case when t.usage_steps > 0 and not t.cache_write_5m_unknown then t.cache_write_5m end as cache_write_5m,
    case when t.usage_steps > 0 and not t.cache_write_1h_unknown then t.cache_write_1h end as cache_write_1h,
    case when t.usage_steps > 0 and not t.output_tokens_unknown then t.output_tokens end as output_tokens,
    case when t.usage_steps > 0 then t.reasoning_tokens end as reasoning_tokens,
    case when t.usage_steps > 0 and not (t.input_uncached_unknown or t.cache_read_unknown or t.cache_write_5m_unknown
                                         or t.cache_write_1h_unknown)
         then t.input_uncached + t.cache_read + t.cache_write_5m + t.cache_write_1h
    end as input_tokens,  -- all input buckets together
    case when t.usage_steps > 0 and t.unknown_bucket_steps = 0
         then t.input_uncached + t.cache_read + t.cache_write_5m + t.cache_write_1h + t.output_tokens
    end as total_tokens,
    coalesce(t.unknown_bucket_steps, 0) as unknown_bucket_steps,  -- calls whose usage leaves a bucket unknown
    t.cost_micros,                            -- priced from model_prices; see unpriced_steps
    t.uncached_cost_micros,                   -- the same usage with no cache (all input at the input price)
    t.catalogue_tax_tokens,                   -- tool-schema tokens sent, summed over model calls
    t.catalogue_tax_micros,                   -- and what they cost, billed as each call billed them
    coalesce(t.unpriced_steps, 0) as unpriced_steps,
    t.harness_step_cost_micros,               -- what the harness priced its own steps at, if it did
    case when t.usage_steps > 0 then t.wrap_up_input_tokens end as wrap_up_input_tokens,
    case when t.usage_steps > 0 then t.wrap_up_output_tokens end as wrap_up_output_tokens,
    t.wrap_up_cost_micros,
    t.wrap_up_harness_cost_micros,
    coalesce(t.has_final_answer, false) as has_final_answer,
    t.final_answer_step,
    r.final_output,
    r.max_steps,
    r.max_tokens,
    r.max_prompt_tokens,
    r.max_completion_tokens,
    r.max_wall_seconds,
    r.max_cost_micros,
    r.max_repeats,
    r.max_retries,
    coalesce(r.budget_scope, 'run') as budget_scope,  -- 'tree': the limits are shared by every run under this one
    r.loop_detector,
    r.loop_limit,
    r.loop_window,
    r.fallback_model,
    r.tool_timeout_seconds,
    r.result_bound_tokens,
    r.catalogue_tokens,
    r.ledger_steps,
    r.ledger_input_tokens,
    r.ledger_output_tokens,
    r.ledger_tokens,
    r.ledger_cost_micros,
    r.ledger_tool_results,
    r.api_key_id,
    r.workspace_id,
    r.project_id,
    r.parent_run_id,
    -- the topmost ancestor in the store (the run itself when it has none): its agent tree. Joins, not a
    -- recursive query, so the view reads the same in Spark; trees deeper than TREE_DEPTH levels stop there.
    coalesce({_ROOT}, r.run_id) as root_run_id,
    r.source_format,
    r.source_file
from runs r
left join step_totals t using (run_id)
{_ANCESTORS}
"""

# One row a run that kept a ledger: the ledger beside what its steps add up to, over the runs the ledger
# covers — the run, or, for the root of an agent tree sharing one budget (seed 001), every run of the tree —
# with the wrap-up turns apart, since a harness may charge them or not.
LEDGER_VIEW = """
create or replace view ledger_view as
with members as (
    select run_id as subject, run_id from run_view where not (budget_scope = 'tree' and root_run_id = run_id)
    union all
    select t.run_id, m.run_id from run_view t join run_view m on m.root_run_id = t.run_id
    where t.budget_scope = 'tree' and t.root_run_id = t.run_id
)
select l.run_id, case when count(*) > 1 or any_value(l.budget_scope) = 'tree' then 'tree' else 'run' end as ledger_scope,
       count(*) as runs, sum(v.steps) as steps, sum(v.wrap_up_steps) as wrap_up_steps,
       sum(v.input_tokens) as input_tokens, sum(v.output_tokens) as output_tokens,
       sum(v.wrap_up_input_tokens) as wrap_up_input_tokens, sum(v.wrap_up_output_tokens) as wrap_up_output_tokens,
       sum(v.harness_step_cost_micros) as cost_micros, sum(v.wrap_up_harness_cost_micros) as wrap_up_cost_micros,
       sum(v.tool_results) as tool_results,
       any_value(l.ledger_steps) as ledger_steps, any_value(l.ledger_input_tokens) as ledger_input_tokens,
       any_value(l.ledger_output_tokens) as ledger_output_tokens, any_value(l.ledger_tokens) as ledger_tokens,
       any_value(l.ledger_cost_micros) as ledger_cost_micros, any_value(l.ledger_tool_results) as ledger_tool_results
from members x
join run_view l on l.run_id = x.subject
join run_view v on v.run_id = x.run_id
group by l.run_id
"""

# One row a run: what it cost by our prices, by its harness's own record, and what is unknown. A
# run is "complete" by our prices when every model call carries usage and every one is priced
# (a run with no model call cost nothing); the harness's figure is its ledger, else the sum of
# its steps' own costs. ``reconcile cost --cost-source`` chooses between them.
RUN_COSTS = """
create or replace view run_costs as
with s as (
    select run_id,
           count(*) filter (where kind = 'model') as model_steps,
           count(*) filter (where kind = 'model' and coalesce(input_uncached, cache_read, cache_write_5m, cache_write_1h,
                                                              output_tokens) is not null) as usage_steps,
           count(*) filter (where unpriced) as unpriced_steps,
           count(*) filter (where unknown_buckets is not null) as unknown_bucket_steps,
           coalesce(sum(input_tokens + coalesce(output_tokens, 0)) filter (where unpriced), 0)::bigint as unpriced_tokens,
           sum(cost_micros)::bigint as priced_micros,
           sum(harness_cost_micros)::bigint as harness_step_micros
    from step_view group by run_id
)
select r.run_id,
       coalesce(s.model_steps, 0) as model_steps,
       coalesce(s.model_steps, 0) = coalesce(s.usage_steps, 0) and coalesce(s.unpriced_steps, 0) = 0
           and coalesce(s.unknown_bucket_steps, 0) = 0 as ours_complete,
       case when coalesce(s.model_steps, 0) = 0 then 0 else s.priced_micros end as ours_micros,
       coalesce(s.unpriced_steps, 0) as unpriced_steps,
       coalesce(s.unpriced_tokens, 0) as unpriced_tokens,
       coalesce(s.model_steps, 0) - coalesce(s.usage_steps, 0) as calls_without_usage,
       coalesce(s.unknown_bucket_steps, 0) as calls_with_unknown_buckets,  -- usage recorded, some bucket left out
       coalesce(r.ledger_cost_micros, s.harness_step_micros) as harness_micros,
       case when r.ledger_cost_micros is not null then 'ledger' when s.harness_step_micros is not null then 'steps' end
           as harness_basis
from runs r left join s using (run_id)
"""

# Tool calls with no result. One asked for by the last model step of a run still running, with no event
# after it, is in flight (the harness is mid-call, or died there); any other has lost its result.
OPEN_CALLS = """
create or replace view open_calls as
-- the run's last model call or event: a call after it may still be answered; one before it was passed by
with last_model as (select run_id, max(idx) as idx from steps where kind in ('model', 'event') group by run_id),
answered as (  -- a call recorded as started, never completed, has no result yet
    select distinct run_id, call_id from steps where kind = 'tool' and tool_status is distinct from 'started'
)
select q.run_id, q.step_idx, q.call_id, q.tool_name, r.status as run_status,
       r.status = 'running' and q.step_idx >= coalesce(m.idx, -1) as in_flight
from tool_calls q
join runs r using (run_id)
left join last_model m using (run_id)
where not exists (select 1 from answered a where a.run_id = q.run_id and a.call_id = q.call_id)
"""

# in dependency order: each reads only those before it
VIEWS = {"step_view": STEP_VIEW, "run_view": RUN_VIEW, "ledger_view": LEDGER_VIEW, "run_costs": RUN_COSTS,
         "open_calls": OPEN_CALLS,
         "journal_usage": JOURNAL_USAGE, "provider_usage": PROVIDER_USAGE, "usage_reconciliation": USAGE_RECONCILIATION,
         "run_facts": RUN_FACTS_VIEW}
ALL_VIEWS = list(VIEWS.values())
FORMAT_FACTS_COLUMNS = ("format varchar not null, fact varchar not null, recorded boolean not null, how varchar, "
                        "inferred boolean not null")


def views_fingerprint() -> str:
    """A hash of the view definitions, so a read-only open can tell they are stale."""
    parts = [*ALL_VIEWS, canonical_status_macro_sql()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def create_views(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create every documented view and macro and record which definitions are in place."""
    install_status_macro(con, temporary=False)
    # What each format records: written by the ingest, which knows the formats (here only its shape).
    con.execute(f"create table if not exists format_facts ({FORMAT_FACTS_COLUMNS})")
    for sql in ALL_VIEWS:
        con.execute(sql)
    con.execute("create or replace table _views (fingerprint varchar)")
    con.execute("insert into _views values (?)", [views_fingerprint()])
