"""The three-way match: provider bill ↔ journals ↔ harness ledger (``reconcile usage``).

``usage_reconciliation`` (a view) sets each row of the provider's usage export beside the journal
model calls that answered inside the same bucket with the same model and dimensions, per token
bucket: *explained* (both agree), *unexplained* (the provider counted more: calls never
journalled) and *phantom* (the journals counted more: duplicated or invented steps). Journal calls
inside a reported window that no provider row accounts for are phantom rows of their own.
Coverage is the share of the provider's tokens — and dollars, at base prices — the journals
explain.

Every column is allocated call by call, so each grouping adds up to the ungrouped total: the
provider and journal columns follow the row each call matched; the ledger column (the harness's
own counters, kept per run) is split across a run's rows in proportion to the tokens of its calls
there, in whole tokens (largest remainder), so a run's ledger is counted once, in full. Dollars of
a model no price list covers are unknown: a group with such a row says so (``unpriced_rows``)
and its dollar sums leave that row out rather than count it as $0.
"""

from __future__ import annotations

from typing import Any


from reconcile.errors import BadInput
from reconcile.when import TIME_GROUPS, Window, bucket
from reconcile.engine import Engine

GROUPS = {  # hours, days, weeks and months of the chosen zone (a provider's daily buckets are UTC days)
    **{period: bucket("bucket_start", period) for period in ("hour", *TIME_GROUPS)},
    "model": "coalesce(model, '(not grouped by model)')",
    "api_key": "coalesce(api_key_id, '(not grouped by key)')",
    "workspace": "coalesce(workspace_id, '(not grouped by workspace)')",
    "project": "coalesce(project_id, '(not grouped by project)')",
}
BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")


def _tokens(prefix: str) -> str:
    return " + ".join(f"{prefix}_{b}" for b in BUCKETS)


# The buckets that started in the window.
WITHIN = ("(select * from usage_reconciliation where ($since is null or bucket_start >= $since) "
          "and ($until is null or bucket_start < $until))")


def _ledger_by_call(engine: Engine, key: str, window: dict) -> dict[str, int]:
    """Each run's ledger tokens (input + output) allocated to the groups its journal calls fell in."""
    rows = engine.rows(f"""
        with calls as (select {key} as key, unnest(run_tokens) as c from {WITHIN} where run_tokens is not null),
        per as (select key, c.run_id as run_id, sum(c.tokens)::hugeint as tokens from calls group by all),
        ledger as (select run_id, (coalesce(ledger_input_tokens, 0) + coalesce(ledger_output_tokens, 0))::hugeint as ledger
                   from runs where coalesce(ledger_input_tokens, ledger_output_tokens) is not null),
        shares as (
            select p.key, p.run_id, l.ledger, sum(p.tokens) over (partition by p.run_id) as run_tokens, p.tokens,
                   count(*) over (partition by p.run_id) as groups
            from per p join ledger l using (run_id)
        ),
        floored as (
            select *, case when run_tokens > 0 then ledger * tokens // run_tokens else ledger // groups end as base,
                      case when run_tokens > 0 then ledger * tokens % run_tokens else ledger % groups end as rest
            from shares
        ),
        ranked as (
            select *, ledger - sum(base) over (partition by run_id) as left_over,
                   row_number() over (partition by run_id order by rest desc, key) as rank
            from floored
        )
        select key, sum(base + case when rank <= left_over then 1 else 0 end)::bigint
        from ranked group by key""", window)
    return {k: v for k, v in rows}


# The coverage dollars by the one rule (docs/costs.md): exact where every row is priced and every journal call's
# buckets known; else bounds. A row whose journal calls leave a bucket out (counted 0) explains at least what it
# shows and at most what the provider billed, so its unexplained dollars lie between 0 and what it shows, and its
# phantom ones are unbounded; a row no price covers bounds nothing above.
COVERAGE_PRICED = f"provider_micros is not null or {_tokens('provider')} + {_tokens('journal')} = 0"
COVERAGE_MONEY = f"""
        case when bool_and({COVERAGE_PRICED}) then sum(provider_micros) end::bigint as provider_micros,
        coalesce(sum(provider_micros), 0)::bigint as provider_low_micros,
        case when bool_and({COVERAGE_PRICED}) then sum(provider_micros) end::bigint as provider_high_micros,
        case when bool_and({COVERAGE_PRICED} and journal_calls_unknown = 0) then sum(explained_micros) end::bigint
            as explained_micros,
        coalesce(sum(explained_micros), 0)::bigint as explained_low_micros,
        case when bool_and({COVERAGE_PRICED}) then sum(case when journal_calls_unknown > 0 then provider_micros
                                                    else explained_micros end) end::bigint as explained_high_micros,
        case when bool_and({COVERAGE_PRICED} and journal_calls_unknown = 0) then sum(unexplained_micros) end::bigint
            as unexplained_micros,
        coalesce(sum(unexplained_micros) filter (where journal_calls_unknown = 0), 0)::bigint as unexplained_low_micros,
        case when bool_and({COVERAGE_PRICED}) then sum(unexplained_micros) end::bigint as unexplained_high_micros,
        case when bool_and({COVERAGE_PRICED} and journal_calls_unknown = 0) then sum(phantom_micros) end::bigint as phantom_micros,
        coalesce(sum(phantom_micros), 0)::bigint as phantom_low_micros,
        case when bool_and({COVERAGE_PRICED} and journal_calls_unknown = 0) then sum(phantom_micros) end::bigint
            as phantom_high_micros"""


def usage_report(engine: Engine, by: str = "day", window: Window | None = None) -> dict[str, Any]:
    """Provider buckets that started in ``window`` beside the journals and ledgers, grouped ``by``."""
    window = window or Window()
    params = {"since": window.since, "until": window.until}
    if by not in GROUPS:
        raise BadInput(f"--by {by!r}: choose one of {', '.join(GROUPS)}")
    per_bucket = ", ".join(f"sum(explained_{b})::bigint as explained_{b}, sum(unexplained_{b})::bigint as unexplained_{b}, "
                           f"sum(phantom_{b})::bigint as phantom_{b}" for b in BUCKETS)
    measures = f"""
        sum({_tokens('provider')})::bigint as provider_tokens, sum({_tokens('journal')})::bigint as journal_tokens,
        sum({_tokens('explained')})::bigint as explained_tokens, sum({_tokens('unexplained')})::bigint as unexplained_tokens,
        sum({_tokens('phantom')})::bigint as phantom_tokens,
        count(*) filter (where provider_micros is null and {_tokens('provider')} + {_tokens('journal')} > 0) as unpriced_rows,
        count(*) filter (where journal_calls_unknown > 0) as rows_with_unknown_journal,
        {COVERAGE_MONEY},
        {per_bucket}"""
    groups = engine.records(f"select {GROUPS[by]} as key, {measures} from {WITHIN} group by 1 order by 1", params)
    total = engine.records(f"select 'total' as key, {measures} from {WITHIN}", params)[0]
    ledger = _ledger_by_call(engine, GROUPS[by], params)
    for row in [*groups, total]:
        row["ledger_tokens"] = (sum(ledger.values()) if ledger else None) if row is total else ledger.get(row["key"])
        row["coverage_tokens"] = row["explained_tokens"] / row["provider_tokens"] if row["provider_tokens"] else None
        row["coverage_usd"] = (row["explained_micros"] / row["provider_micros"]
                               if row["provider_micros"] and row["explained_micros"] is not None else None)
    phantom_runs = [r["run"] for r in engine.records(f"""select distinct unnest(runs) as run from {WITHIN}
                                                       where runs is not null order by 1""", params)]
    billed = engine.records(f"""select provider, {bucket('bucket_start', 'day')} as day, sum(amount_usd) as billed_usd,
                                     round(sum(amount_usd) * 1000000)::bigint as billed_micros
                              from billed_costs where ($since is null or bucket_start >= $since)
                                and ($until is null or bucket_start < $until) group by all order by all""", params)
    return {"by": by, "groups": groups, "total": total, "phantom_runs": phantom_runs, "billed": billed}
