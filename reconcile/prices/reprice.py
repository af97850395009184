"""The same usage under other prices: ``reconcile reprice --as-of DATE`` or ``--prices FILE``.

Every model step is priced twice by the same view (``step_view``): with the prices in force
(``model_prices``), then with the alternative — the genai-prices snapshot's prices for another
day, or a price file's rows only — put in a temporary table of the same name, which this
connection reads instead (the temp schema comes first). The difference is reported per model.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import duckdb

from reconcile.prices import pricing
from reconcile.prices.price_files import read_override_rows
from reconcile.errors import BadInput
from reconcile.store import records


def reprice(con: duckdb.DuckDBPyConnection, as_of: dt.date | None = None, prices_file: Path | None = None) -> dict[str, Any]:
    if (as_of is None) == (prices_file is None):
        raise BadInput("Give exactly one of --as-of DATE or --prices FILE.")
    con.execute("create or replace temp table _alt_prices as select * from model_prices limit 0")
    pairs = con.execute("select distinct provider, model, day from model_prices").fetchall()
    if prices_file is not None:  # the file's prices only: its rows, in a table shaped like prices
        con.execute("create or replace temp table _file_prices as select * from prices limit 0")
        rows = read_override_rows(prices_file)
        if rows:
            con.executemany(f"insert into _file_prices values ({', '.join(['?'] * 17)})", [[*r, "file"] for r in rows])
    for provider, model, day in pairs:  # per distinct model and day, not per step
        tail = (pricing.match_sql(con, provider, model, day, table="_file_prices", snapshot=False)
                if prices_file is not None else pricing.match_sql(con, provider, model, as_of))
        con.execute("insert into _alt_prices select ?, ?, ?, " + tail, [provider, model, day])
    # a model priced under several names (providers sharing a model name) lists them all, in order
    # each model's cost by the one rule: exact where every call's is, else its bounds (summed unrounded, rounded once)
    per_model = """select price_model as model, count(*) as steps,
                          case when count(cost_micros) = count(*) then round(sum(cost_low_unrounded)) end::bigint as micros,
                          round(sum(cost_low_unrounded))::bigint as low,
                          case when count(cost_high_unrounded) = count(*) then round(sum(cost_high_unrounded)) end::bigint
                              as high,
                          string_agg(distinct priced_as, ', ' order by priced_as) as priced_as,
                          string_agg(distinct price_source, ', ' order by price_source) as price_source,
                          count(*) filter (where priced_as is null) as unpriced
                   from step_view where kind = 'model' group by 1"""
    con.execute(f"create or replace temp table _in_force as {per_model}")
    con.execute("create temp table model_prices as select * from _alt_prices")  # read before main.model_prices
    try:
        rows = records(con, f"""
            select f.model, f.steps, f.micros as cost_micros, f.low as cost_low_micros, f.high as cost_high_micros,
                   a.micros as repriced_micros, a.low as repriced_low_micros, a.high as repriced_high_micros,
                   a.priced_as as repriced_as, a.price_source as repriced_source, a.unpriced as unpriced_after
            from _in_force f join ({per_model}) a on a.model is not distinct from f.model order by 1""")
    finally:
        con.execute("drop table temp.model_prices")
    for row in rows:
        row["difference_micros"] = (row["repriced_micros"] - row["cost_micros"]
                                    if row["repriced_micros"] is not None and row["cost_micros"] is not None else None)
    total = {}
    for key in ("cost", "repriced"):  # the one rule: exact if every model's is, else bounds
        exact = [r[f"{key}_micros"] for r in rows]
        highs = [r[f"{key}_high_micros"] for r in rows]
        total.update({f"{key}_micros": None if None in exact else sum(exact),
                      f"{key}_low_micros": sum(r[f"{key}_low_micros"] or 0 for r in rows),
                      f"{key}_high_micros": None if None in highs else sum(highs)})
    return {"as_of": as_of, "prices": str(prices_file) if prices_file else None, "models": rows, "total": total}

