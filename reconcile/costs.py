"""What the runs cost, and why: ``reconcile cost``.

All money is integer micro-dollars summed in SQL from ``step_view`` (exact; no float sums). Per
group: priced cost, the uncached counterfactual (every input token at the input price) and the
savings the cache made, the cache hit rate (cache reads / all input), the catalogue tax (tool
schemas re-sent on every call, billed as each call billed them) and its share, the harness's
own cost where it recorded one and the difference, and how many steps could not be priced.
Beside the groups: cost per *completed* task (total cost / success rate) by agent, task class,
model and limits, and the share of spend on runs that failed, stalled or hit a budget.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import duckdb

from .errors import BadInput
from .store import records

GROUPS = {
    "day": "strftime(coalesce(r.started_at, s.started_at), '%Y-%m-%d')",
    "agent": "coalesce(r.agent, '(none)')",
    "model": "coalesce(s.price_model, '(none)')",
    "task_class": "coalesce(r.task_class, '(none)')",
    "run": "r.run_id",
}
LIMITS = ("'steps=' || coalesce(r.max_steps::varchar, '-') || ' tokens=' || coalesce(r.max_tokens::varchar, '-') "
          "|| ' wall=' || coalesce(r.max_wall_seconds::varchar, '-') || 's cost=' "
          "|| coalesce(r.max_cost_micros::varchar, '-') || 'µ$'")
WASTE_STATUSES = ("failed", "stalled", "budget_exceeded", "timed_out")

_MEASURES = """
    count(distinct r.run_id) as runs,
    count(distinct r.run_id) filter (where r.status = 'succeeded') as succeeded,
    count(*) filter (where s.kind = 'model') as model_calls,
    coalesce(sum(s.input_uncached), 0)::bigint as input_uncached,
    coalesce(sum(s.cache_read), 0)::bigint as cache_read,
    coalesce(sum(s.cache_write_5m), 0)::bigint as cache_write_5m,
    coalesce(sum(s.cache_write_1h), 0)::bigint as cache_write_1h,
    coalesce(sum(s.output_tokens), 0)::bigint as output_tokens,
    coalesce(sum(s.cost_micros), 0)::bigint as cost_micros,
    coalesce(sum(s.uncached_cost_micros), 0)::bigint as uncached_cost_micros,
    coalesce(sum(s.catalogue_tokens), 0)::bigint as catalogue_tax_tokens,
    coalesce(sum(s.catalogue_tax_micros), 0)::bigint as catalogue_tax_micros,
    sum(s.harness_cost_micros)::bigint as harness_cost_micros,
    count(*) filter (where s.unpriced) as unpriced_steps,
    list(distinct s.price_model order by s.price_model) filter (where s.unpriced) as unpriced_models
"""


def cost_report(con: duckdb.DuckDBPyConnection, by: str = "model", since: datetime | None = None,
                until: datetime | None = None) -> dict[str, Any]:
    """The cost of the runs started in [since, until), grouped ``by`` day, agent, model, task_class or run."""
    if by not in GROUPS:
        raise BadInput(f"--by {by!r}: choose one of {', '.join(GROUPS)}")
    window = "($since is null or r.started_at >= $since) and ($until is null or r.started_at < $until)"
    params = {"since": since, "until": until}
    base = f"from step_view s join runs r using (run_id) where {window}"
    groups = [_derive(row) for row in records(con, f"select {GROUPS[by]} as key, {_MEASURES} {base} group by 1 order by 1",
                                              params)]
    total = _derive(records(con, f"select 'total' as key, {_MEASURES} {base}", params)[0])
    per_task = records(con, f"""
        select coalesce(r.agent, '(none)') as agent, coalesce(r.task_class, '(none)') as task_class,
               coalesce(r.model, '(none)') as model, {LIMITS} as limits, count(*) as runs,
               count(*) filter (where r.status = 'succeeded') as succeeded,
               sum(v.cost_micros)::bigint as cost_micros, sum(v.unpriced_steps)::bigint as unpriced_steps
        from runs r join run_view v using (run_id) where {window}
        group by all order by 1, 2, 3, 4""", params)
    for row in per_task:
        rate = row["succeeded"] / row["runs"] if row["runs"] else 0
        row["success_rate"] = rate
        known = row["cost_micros"] is not None and not row["unpriced_steps"]  # a partial sum is not the cost
        row["cost_per_completed_task_micros"] = round(row["cost_micros"] / rate) if rate and known else None
    waste = records(con, f"""
        select r.status, count(*) as runs, coalesce(sum(v.cost_micros), 0)::bigint as cost_micros
        from runs r join run_view v using (run_id) where {window} group by 1 order by 1""", params)
    spent = sum(row["cost_micros"] for row in waste)
    for row in waste:
        row["share"] = row["cost_micros"] / spent if spent else 0
    wasted = sum(row["cost_micros"] for row in waste if row["status"] in WASTE_STATUSES)
    return {"by": by, "groups": groups, "total": total, "cost_per_completed_task": per_task,
            "spend_by_status": waste,
            "spend_on_failed_stalled_budget_stopped": {"cost_micros": wasted, "share": wasted / spent if spent else 0},
            "prices": price_sources(con)}


def _derive(row: dict[str, Any]) -> dict[str, Any]:
    all_input = row["input_uncached"] + row["cache_read"] + row["cache_write_5m"] + row["cache_write_1h"]
    row["savings_micros"] = row["uncached_cost_micros"] - row["cost_micros"]
    row["cache_hit_rate"] = row["cache_read"] / all_input if all_input else None
    row["catalogue_tax_share"] = row["catalogue_tax_micros"] / row["cost_micros"] if row["cost_micros"] else None
    row["harness_difference_micros"] = (row["harness_cost_micros"] - row["cost_micros"]
                                        if row["harness_cost_micros"] is not None else None)
    row["unpriced_models"] = row["unpriced_models"] or []
    return row


def price_sources(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Which price lists priced the steps: the genai-prices snapshot version, override files."""
    # genai-prices records no data date; the newest price change its snapshot knows of dates it
    return records(con, """select m.source, m.source_version, count(*) as models,
                                  (select max(effective_from) from prices p where p.source = m.source) as newest_price_change
                           from model_prices m where m.source is not null group by all order by 1""")
