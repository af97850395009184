"""What an agent loop will cost as it runs longer: ``reconcile cost project``.

The model: every turn sends the static prefix (system prompt and tool catalogue), the task, and
the history so far, which grows by a fixed number of tokens per completed turn; every turn
writes a fixed number of output tokens. Turn k (from 1) sends
``prefix + task + (k - 1) * growth`` input tokens.

- Uncached: all input at the input price, all output at the output price.
- Cached: turn 1 writes its whole input to the cache (at the write multiplier); each later turn
  reads the previous turn's input from the cache (at the read multiplier) and writes its new
  tokens (``growth``) at the write multiplier.
- Catalogue tax: the catalogue's tokens on every turn, uncached at the input price (the seed's column), and cached:
  written to the cache on the first turn, read from it on every later one — how ``reconcile cost`` bills it.
- Per completed task: cost / success rate (``money.cost_per_completed_task``: failed runs are paid for too).

Money is computed in exact decimals; ``--json`` gives them unrounded, the table to 1/100 of a cent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any


from reconcile.money import NONE_COMPLETED, cost_per_completed_task
from reconcile.sheets import MISSING_AS, Column, Sheet
from reconcile.engine import Engine

MILLION = Decimal(1_000_000)


@dataclass(frozen=True)
class Inputs:
    prefix_tokens: int = 9000  # system prompt + tool catalogue, sent every turn
    catalogue_tokens: int = 7500  # of which the tool schemas
    task_tokens: int = 400
    growth_tokens: int = 1650  # history added per completed turn
    output_tokens: int = 250  # written per turn
    input_price: Decimal = Decimal(2)  # dollars per million tokens
    output_price: Decimal = Decimal(10)
    cache_read_multiplier: Decimal = Decimal("0.10")
    cache_write_multiplier: Decimal = Decimal("1.25")
    success_rate: Decimal = Decimal("0.72")


def project(inputs: Inputs, turns: int) -> dict[str, Any]:
    """One row of the projection for ``turns`` turns."""
    sent = [inputs.prefix_tokens + inputs.task_tokens + k * inputs.growth_tokens for k in range(turns)]
    cumulative_input = sum(sent)
    output = inputs.output_tokens * turns
    per_input, per_output = inputs.input_price / MILLION, inputs.output_price / MILLION
    output_cost = output * per_output
    uncached = cumulative_input * per_input + output_cost
    cached_input = sent[0] * per_input * inputs.cache_write_multiplier + sum(
        sent[k - 1] * per_input * inputs.cache_read_multiplier + (sent[k] - sent[k - 1]) * per_input
        * inputs.cache_write_multiplier for k in range(1, turns))
    cached = cached_input + output_cost
    tax_tokens = inputs.catalogue_tokens * turns
    tax_cached = inputs.catalogue_tokens * per_input * (inputs.cache_write_multiplier
                                                        + (turns - 1) * inputs.cache_read_multiplier) if turns else 0
    return {"turns": turns, "cumulative_input_tokens": cumulative_input, "output_tokens": output,
            "catalogue_tax_tokens": tax_tokens, "catalogue_tax_uncached_usd": tax_tokens * per_input,
            "catalogue_tax_cached_usd": tax_cached,
            "uncached_usd": uncached, "cached_usd": cached,
            "per_completed_task_uncached_usd": cost_per_completed_task(uncached, inputs.success_rate),
            "per_completed_task_cached_usd": cost_per_completed_task(cached, inputs.success_rate)}


def projection_table(inputs: Inputs, turns: list[int]) -> list[dict[str, Any]]:
    return [project(inputs, n) for n in turns]


PROJECTION_COLUMNS = [
    Column("turns", "turns", "count"), Column("cumulative_input_tokens", "cumulative input", "count"),
    Column("output_tokens", "output", "count"), Column("catalogue_tax_tokens", "tool description tokens", "count"),
    Column("catalogue_tax_uncached_micros", "tool descriptions, uncached", "money4"),
    Column("catalogue_tax_cached_micros", "tool descriptions, cached", "money4"), Column("uncached_micros", "uncached", "money4"),
    Column("cached_micros", "cached", "money4"),
    Column("per_completed_task_uncached_micros", "per completed task, uncached", "money4"),
    Column("per_completed_task_cached_micros", "per completed task, cached", "money4"),
]


def projection_sheet(rows: list[dict[str, Any]], success_rate: Decimal, title: str = "Projected cost by turns") -> Sheet:
    """The projection as a table; money to the micro-dollar (``--json`` keeps the exact decimals)."""
    # no task completed at a success rate of 0: the cost per completed task is unbounded, not unknown
    words = ({MISSING_AS: dict.fromkeys(("per_completed_task_uncached_micros", "per_completed_task_cached_micros"),
                                        NONE_COMPLETED)} if not success_rate else {})
    shown = [{**row, **{key.removesuffix("_usd") + "_micros": _micros(value) for key, value in row.items()
                        if key.endswith("_usd")}, **words} for row in rows]
    return Sheet(PROJECTION_COLUMNS, shown, title=f"{title} (per completed task at a success rate of {success_rate:.1%})")


def _micros(dollars: Decimal | None) -> int | None:
    if dollars is None:
        return None
    return int((dollars * MILLION).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def fit(engine: Engine, turns: list[int] | None = None) -> list[dict[str, Any]]:
    """The projection's inputs as each agent's own runs show them (medians over its runs).

    Projected at ``turns``, else at the median and p99 turn counts of the agent's succeeded runs.
    """
    rows = engine.records("""
        with model_steps as (
            select s.run_id, s.idx, s.input_tokens, s.output_tokens,
                   row_number() over (partition by s.run_id order by s.idx) as turn,
                   count(*) over (partition by s.run_id) as turns
            from step_view s where s.kind = 'model' and s.input_tokens is not null
        ),
        per_run as (
            select run_id, max(input_tokens) filter (where turn = 1) as first_input,
                   max(input_tokens) filter (where turn = turns) as last_input, max(turns) as turns,
                   avg(output_tokens) as output_per_turn
            from model_steps group by run_id
        ),
        prices as (
            select r.agent, median(mp.uncached_mtok) as input_price, median(mp.output_mtok) as output_price,
                   median(mp.cache_read_mtok / nullif(mp.uncached_mtok, 0)) as read_multiplier,
                   median(mp.cache_write_5m_mtok / nullif(mp.uncached_mtok, 0)) as write_multiplier
            from runs r join step_view s using (run_id)
            join model_prices mp on mp.model = s.price_model and mp.provider is not distinct from s.price_provider
            group by r.agent
        )
        select coalesce(r.agent, '(none)') as agent, count(*) as runs,
               count(*) filter (where r.status = 'succeeded') / count(*) as success_rate,
               median(p.first_input)::bigint as first_input, median(r.catalogue_tokens)::bigint as catalogue_tokens,
               median((p.last_input - p.first_input) / nullif(p.turns - 1, 0))::bigint as growth_tokens,
               median(p.output_per_turn)::bigint as output_tokens,
               quantile_cont(p.turns, 0.5) filter (where r.status = 'succeeded') as p50_turns,
               quantile_cont(p.turns, 0.99) filter (where r.status = 'succeeded') as p99_turns,
               any_value(pr.input_price) as input_price, any_value(pr.output_price) as output_price,
               any_value(pr.read_multiplier) as read_multiplier, any_value(pr.write_multiplier) as write_multiplier,
               -- a mean over the runs whose cost is exact would be a part's mean: only where every run's is
               case when count(v.cost_micros) = count(*) then avg(v.cost_micros) end as mean_cost_micros
        from runs r join per_run p using (run_id) join run_view v using (run_id) left join prices pr on pr.agent = r.agent
        group by 1 order by 1""")
    fitted = []
    for row in rows:
        if row["input_price"] is None or not row["success_rate"]:
            continue
        catalogue = row["catalogue_tokens"] or 0
        inputs = Inputs(prefix_tokens=int(row["first_input"] or 0), catalogue_tokens=int(catalogue), task_tokens=0,
                        growth_tokens=int(row["growth_tokens"] or 0), output_tokens=int(row["output_tokens"] or 0),
                        input_price=Decimal(row["input_price"]), output_price=Decimal(row["output_price"]),
                        cache_read_multiplier=Decimal(row["read_multiplier"] or 1).quantize(Decimal("0.0001")),
                        cache_write_multiplier=Decimal(row["write_multiplier"] or 1).quantize(Decimal("0.0001")),
                        success_rate=Decimal(str(round(row["success_rate"], 4))))
        counts = turns or sorted({max(1, round(row["p50_turns"] or 1)), max(1, round(row["p99_turns"] or 1))})
        observed = None if row["mean_cost_micros"] is None else Decimal(str(row["mean_cost_micros"])) / MILLION
        fitted.append({"agent": row["agent"], "runs": row["runs"], "inputs": asdict(inputs),
                       "observed_mean_cost_usd": observed, "rows": projection_table(inputs, counts)})
    return fitted
