"""The three-way match: provider bill ↔ journals ↔ harness ledger (``reconcile usage``).

``usage_reconciliation`` (a view) sets each row of the provider's usage export beside the journal
model calls that answered inside the same bucket with the same model and dimensions, per token
bucket: *explained* (both agree), *unexplained* (the provider counted more: calls never
journalled) and *phantom* (the journals counted more: duplicated or invented steps). Journal calls
inside a reported window that no provider row accounts for are phantom rows of their own.
Coverage is the share of the provider's tokens — and dollars, at base prices — the journals
explain. The ledger column is the harness's own counters, for the runs started in the group.
"""

from __future__ import annotations

from typing import Any

import duckdb

from .errors import BadInput
from .store import records

GROUPS = {
    "day": "strftime(bucket_start, '%Y-%m-%d')",
    "hour": "strftime(date_trunc('hour', bucket_start), '%Y-%m-%d %H:00')",
    "model": "coalesce(model, '(not grouped by model)')",
    "api_key": "coalesce(api_key_id, '(not grouped by key)')",
    "workspace": "coalesce(workspace_id, '(not grouped by workspace)')",
    "project": "coalesce(project_id, '(not grouped by project)')",
}
_LEDGER_KEYS = {"day": "strftime(r.started_at, '%Y-%m-%d')", "hour": "strftime(date_trunc('hour', r.started_at), '%Y-%m-%d %H:00')",
                "model": "r.model", "api_key": "r.api_key_id", "workspace": "r.workspace_id", "project": "r.project_id"}
BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")


def _tokens(prefix: str) -> str:
    return " + ".join(f"{prefix}_{b}" for b in BUCKETS)


def usage_report(con: duckdb.DuckDBPyConnection, by: str = "day") -> dict[str, Any]:
    if by not in GROUPS:
        raise BadInput(f"--by {by!r}: choose one of {', '.join(GROUPS)}")
    per_bucket = ", ".join(f"sum(explained_{b})::bigint as explained_{b}, sum(unexplained_{b})::bigint as unexplained_{b}, "
                           f"sum(phantom_{b})::bigint as phantom_{b}" for b in BUCKETS)
    measures = f"""
        sum({_tokens('provider')})::bigint as provider_tokens, sum({_tokens('journal')})::bigint as journal_tokens,
        sum({_tokens('explained')})::bigint as explained_tokens, sum({_tokens('unexplained')})::bigint as unexplained_tokens,
        sum({_tokens('phantom')})::bigint as phantom_tokens, sum(provider_micros)::bigint as provider_micros,
        sum(explained_micros)::bigint as explained_micros, sum(unexplained_micros)::bigint as unexplained_micros,
        sum(phantom_micros)::bigint as phantom_micros, {per_bucket}"""
    groups = records(con, f"select {GROUPS[by]} as key, {measures} from usage_reconciliation group by 1 order by 1")
    total = records(con, f"select 'total' as key, {measures} from usage_reconciliation")[0]
    ledger = dict(con.execute(
        f"""select {_LEDGER_KEYS[by]} as key, sum(coalesce(r.ledger_input_tokens, 0) + coalesce(r.ledger_output_tokens, 0))
            from runs r where r.provider in (select distinct provider from usage_buckets) group by 1""").fetchall())
    for row in [*groups, total]:
        if row is total:
            row["ledger_tokens"] = sum(v for v in ledger.values() if v)
        else:  # a run's model may be the undated name of the provider's dated one (claude-haiku-4-5[-20251001])
            matches = [v for k, v in ledger.items() if k is not None and v is not None
                       and (k == row["key"] or (by == "model" and str(row["key"]).startswith(f"{k}-")))]
            row["ledger_tokens"] = sum(matches) if matches else None
        row["coverage_tokens"] = row["explained_tokens"] / row["provider_tokens"] if row["provider_tokens"] else None
        row["coverage_usd"] = (row["explained_micros"] / row["provider_micros"]
                               if row["provider_micros"] else None)
    phantom_runs = [r["run"] for r in records(con, """select distinct unnest(runs) as run from usage_reconciliation
                                                      where runs is not null order by 1""")]
    billed = records(con, """select provider, strftime(bucket_start, '%Y-%m-%d') as day, sum(amount_usd) as billed_usd
                             from billed_costs group by all order by all""")
    return {"by": by, "groups": groups, "total": total, "phantom_runs": phantom_runs, "billed": billed}
