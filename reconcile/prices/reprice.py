"""The same usage under other prices: ``reconcile reprice --as-of DATE`` or ``--prices FILE``.

Every model step is priced twice with one formula (``views.STEP_COST``): with the prices in
force (``model_prices``) and with the alternative — the genai-prices snapshot's prices for
another day, or a price file's rows only — and the difference is reported per model.
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
from reconcile.store.views import STEP_COST


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
    rows = records(con, f"""
        select s.price_model as model, count(*) as steps,
               sum(s.cost_micros)::bigint as cost_micros, sum({STEP_COST})::bigint as repriced_micros,
               any_value(mp.matched_model) as repriced_as, any_value(mp.source) as repriced_source,
               count(*) filter (where mp.matched_model is null) as unpriced_after
        from step_view s join runs r using (run_id)
        -- the other prices under the name the shared step cost reads them by (mp), so it applies as it is
        left join _alt_prices mp on mp.provider is not distinct from s.price_provider and mp.model = s.price_model
            and mp.day = coalesce(s.started_at, r.started_at, now())::date
        where s.kind = 'model' group by 1 order by 1""")
    for row in rows:
        row["difference_micros"] = (row["repriced_micros"] - row["cost_micros"]
                                    if row["repriced_micros"] is not None and row["cost_micros"] is not None else None)
    return {"as_of": as_of, "prices": str(prices_file) if prices_file else None, "models": rows,
            "total": {key: sum(r[key] or 0 for r in rows) for key in ("cost_micros", "repriced_micros")}}

