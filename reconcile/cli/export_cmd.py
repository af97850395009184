"""``reconcile export --to DIR``: the store as partitioned Parquet, for other engines and for --from-parquet."""

from __future__ import annotations

from typing import Annotated

import typer

from reconcile.engines.export import export
from reconcile.cli.root import app
from reconcile.cli.options import DatasetLocation, JsonOption, Store, grouped, to_folder
from reconcile.cli.render import console, fitted_table, print_json


@app.command("export")
@grouped
def export_command(
    to: Annotated[DatasetLocation, typer.Option("--to", metavar="DIR", parser=to_folder,
                                     help="The dataset's folder (created if missing), a file:// URL, or a folder in an object store (s3://, s3a://, gs://, abfss://).")],
    json_out: JsonOption = False,
    source: Store = Store(),
) -> None:
    """Write the canonical tables as Parquet partitioned by UTC day (hive layout), with a manifest.

    Only the days that changed since the last export to DIR are written again. Read the dataset
    back with --from-parquet DIR (check, cost, budgets, usage, report), or with any engine that
    reads partitioned Parquet (docs/scale-out.md).
    Example: reconcile export --to /data/agent-runs
    """
    result = export(source.path, to)
    if json_out:
        print_json(result.to_json())
        return
    rows = [[name, result.rows[name], _days(result.written.get(name, [])), result.unchanged.get(name, 0),
             _days(result.removed.get(name, []))] for name in result.rows]
    console.print(fitted_table(["table", "rows", "written", "unchanged days", "removed"], rows,
                        title=f"Exported to {to}", right={"rows", "unchanged days"}))


def _days(days: list[str]) -> str:
    if not days:
        return "-"
    if days == ["all"]:
        return "all"
    return days[0] if len(days) == 1 else f"{len(days)} days ({days[0]} … {days[-1]})"
