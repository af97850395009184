"""``reconcile usage``: the three-way match of the provider's bill, the journals and the ledgers."""

from __future__ import annotations

from typing import Annotated

import typer

from reconcile.sheets import Column, Sheet, every_key, in_dollars, json_rows
from reconcile.when import use_zone
from reconcile.cli.root import app
from reconcile.cli.options import Output, Source, WideOption, Window, grouped
from reconcile.cli.render import console, output


USAGE_COLUMNS = [
    Column("provider_tokens", "provider tokens", "count"), Column("journal_tokens", "journal tokens", "count"),
    Column("ledger_tokens", "ledger tokens", "count"), Column("coverage_tokens", "coverage", "share"),
    Column("unexplained_tokens", "unexplained tokens", "count"), Column("unexplained_micros", "unexplained $", "money"),
    Column("phantom_tokens", "phantom tokens", "count"), Column("phantom_micros", "phantom $", "money"),
    Column("coverage_usd", "coverage $", "share"), Column("unpriced_rows", "unpriced buckets", "count"),
]


NO_EXPORT = ("No provider usage or cost export is loaded for this window ({window}, {zone}), so there is no bill to match the journals "
             "against. Load the providers' exports (reconcile ingest EXPORT; docs/usage.md lists the kinds) to see "
             "the bill beside the journals and the harness's counters; reconcile cost prices the journals alone.")


@app.command("usage")
@grouped
def usage_command(
    by: Annotated[str, typer.Option("--by", help="Group by hour, day, week, month, model, api_key, workspace or "
                                                 "project.")] = "day",
    scope: Window = Window(),
    given: Output = Output(),
    wide: WideOption = False,
    source: Source = Source(),
) -> None:
    """The three-way match: what the provider billed, what the journals say, what the ledger counted.

    A provider's daily buckets are UTC days: --tz UTC keeps each one whole.
    Example: reconcile usage --by model --since 7d
    """
    from reconcile.analyses.coverage import coverage
    from reconcile.analyses.usage import usage_report
    with source.reading(scope) as engine:
        use_zone(engine, scope.zone)
        found = coverage(engine, scope, source.described)
        report = usage_report(engine, by, scope)
    # a bucket whose model has no price leaves its dollars unknown (empty), never $0: "unpriced buckets" says how many
    columns = every_key([Column("key", by), *USAGE_COLUMNS], [*report["groups"], report["total"]])
    sheet = Sheet(columns, report["groups"], zone=scope.zone, totals=[report["total"]],  # the total apart, as in cost
                  headline=("provider_tokens", "journal_tokens", "unexplained_micros", "phantom_micros"),
                  title=f"Provider usage beside the journals and ledgers ({scope.describe()}, {scope.zone})")
    data = {**in_dollars(report), "groups": json_rows(sheet), "total": json_rows(Sheet(columns, [report["total"]]))[0]}
    if not report["groups"] and given.as_table:  # nothing billed to match: a sentence, not a row of blanks
        if found.bounded and not found.within:  # no runs either: what the store spans, as every command says it
            console.print(found.empty_line())
        console.print(NO_EXPORT.format(window=scope.describe(), zone=scope.zone))
        return None
    if output(sheet, given, json_data=data, wide=wide) and report["phantom_runs"]:
        console.print(f"Phantom calls come from runs: {', '.join(report['phantom_runs'][:20])}")
    return None
