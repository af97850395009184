"""``reconcile prices add|list|remove`` and ``reconcile reprice``: the prices costs are computed with."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer

from reconcile import store
from reconcile.errors import BadInput
from reconcile.prices import pricing
from reconcile.prices.reprice import reprice
from reconcile.sheets import Column, Sheet, every_key, in_dollars, json_rows
from reconcile.cli.root import app
from reconcile.cli.options import Output, Store, grouped
from reconcile.cli.render import console, output

prices_app = typer.Typer(help="The prices costs are computed with.", no_args_is_help=True)
app.add_typer(prices_app, name="prices")


@prices_app.command("add")
@grouped
def prices_add_command(
    file: Annotated[Path, typer.Argument(help="CSV or TOML: provider, model, from, to, input, output, "
                                              "cache_read, cache_write_5m, cache_write_1h (dollars per million "
                                              "tokens).")],
    source: Store = Store(),
) -> None:
    """Load price overrides (negotiated rates, models genai-prices lacks); they win over the shipped prices.

    Example: reconcile prices add negotiated.csv
    """
    with store.connect(source.path, create=False) as con:
        count = pricing.load_overrides(con, file.resolve())
        pricing.resolve(con)
    console.print(f"{count} price(s) loaded from {file}; costs now use them where they match.")


PRICE_COLUMNS = [
    Column("provider", "provider"), Column("model", "model"), Column("effective_from", "from"),
    Column("effective_to", "to"), Column("uncached_mtok", "input", "decimal"),
    Column("cache_read_mtok", "cache read", "decimal"), Column("cache_write_5m_mtok", "cache write 5m", "decimal"),
    Column("cache_write_1h_mtok", "cache write 1h", "decimal"), Column("output_mtok", "output", "decimal"),
    Column("source", "source"), Column("source_version", "version"),
]


@prices_app.command("list")
@grouped
def prices_list_command(
    model: Annotated[str | None, typer.Option("--model", help="Only prices whose model contains this text.")] = None,
    snapshot: Annotated[bool, typer.Option("--snapshot", help="List the shipped prices too: reconcile's dated "
                                                      "corrections and the genai-prices snapshot.")] = False,
    given: Output = Output(),
    source: Store = Store(),
) -> None:
    """List the price overrides (dollars per million tokens), and with --snapshot the shipped prices.

    Example: reconcile prices list --snapshot --model sonnet
    """
    with store.connect(source.path, read_only=True) as con:
        rows = pricing.list_prices(con, model, snapshot)
    what = "Prices" if snapshot else "Price overrides"
    sheet = Sheet(PRICE_COLUMNS, rows,
                  title=f"{what} (dollars per million tokens; overrides win over the shipped prices)")
    if output(sheet, given) and not rows:
        console.print("No price overrides are loaded: costs use the genai-prices snapshot and reconcile's dated "
                      "corrections of it. Add one with reconcile prices add FILE; see the shipped prices with "
                      "--snapshot." if not snapshot else "No price matches.")


@prices_app.command("remove")
@grouped
def prices_remove_command(
    file: Annotated[Path | None, typer.Argument(help="Remove the overrides loaded from this file.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Remove the overrides of this model (exactly as "
                                                               "listed).")] = None,
    provider: Annotated[str | None, typer.Option("--provider", help="With --model: only this provider's.")] = None,
    source: Store = Store(),
) -> None:
    """Remove price overrides (by the file they came from, or by model); costs fall back to the snapshot.

    Example: reconcile prices remove negotiated.csv
    """
    if (file is None) == (model is None):
        raise BadInput("give the file the overrides came from, or --model MODEL (see reconcile prices list)")
    with store.connect(source.path, create=False) as con:
        removed = pricing.remove_overrides(con, str(file.resolve()) if file else None, model, provider)
        pricing.resolve(con)
    console.print(f"{removed} price override(s) removed; costs now use the snapshot where no other override matches.")


@app.command("reprice")
@grouped
def reprice_command(
    as_of: Annotated[str | None, typer.Option("--as-of", help="Price the same usage with the snapshot's prices of this date.")] = None,
    prices: Annotated[Path | None, typer.Option("--prices", help="Price the same usage with this file's prices only.")] = None,
    given: Output = Output(),
    source: Store = Store(),
) -> None:
    """The same usage under other prices, and the difference per model.

    Example: reconcile reprice --as-of 2026-01-01
    """
    try:
        day = dt.date.fromisoformat(as_of) if as_of else None
    except ValueError as exc:
        raise BadInput(f"--as-of {as_of!r} is not a date like 2026-01-01") from exc
    with store.connect(source.path, read_only=True) as con:
        result = reprice(con, day, prices.resolve() if prices else None)
    columns = [Column("model", "model"), Column("steps", "steps", "count"), Column("cost_micros", "now", "money"),
               Column("repriced_micros", "repriced", "money"), Column("difference_micros", "difference", "signed_money"),
               Column("repriced_as", "priced as")]
    rows = [{**m, "repriced_as": m["repriced_as"] or "(no price)"} for m in result["models"]]
    sheet = Sheet(every_key(columns, rows), rows)
    output(sheet, given, json_data={**in_dollars(result), "models": json_rows(sheet)})
    return None
