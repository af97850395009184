"""``reconcile rebuild``: drop the store's kept totals and write them again from the runs' own rows."""

from __future__ import annotations

from reconcile import store
from reconcile.cli.options import Store, grouped
from reconcile.cli.render import console
from reconcile.cli.root import app


@app.command("rebuild")
@grouped
def rebuild_command(source: Store = Store()) -> None:
    """Drop the kept run totals and write every run's again from its steps and the prices in force.

    The kept totals (each run's priced totals, and by model) are derived data: every command keeps them up
    to date as runs load and prices change, and this writes them from scratch. Nothing else in the store
    changes. Use it after editing the store by hand, or to rule them out.
    Example: reconcile rebuild --db runs.duckdb
    """
    with store.connect(source.path, create=False) as con:
        runs = store.rebuild_kept(con)
    console.print(f"kept totals written again for {runs:,} run(s)")
