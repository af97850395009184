"""``reconcile config``: the effective configuration, and where each value came from."""

from __future__ import annotations

from typing import Annotated

import typer

from reconcile.checks import load_checks
from reconcile.config.settings import loop_firings_sql, run_settings_statements, variable_statements
from reconcile.config import describe
from reconcile.sheets import Column, Sheet
from reconcile.cli.root import app
from reconcile.cli.options import ChecksDirOption, Output, SetOption, Store, grouped
from reconcile.cli.render import console, output


@app.command("config")
@grouped
def config_command(
    checks_dir: ChecksDirOption = None,
    setting: SetOption = None,
    sql: Annotated[bool, typer.Option("--sql", help="Print the SQL that sets the check variables and run_settings "
                                                    "for the store (to paste a check into the duckdb shell).")] = False,
    given: Output = Output(),
    source: Store = Store(),
) -> None:
    """Print the effective settings — store, check settings, check severities — and where each came from.

    Example: reconcile config --set result_bound_tokens=4000
    """
    config, path = source.configured(setting)
    if sql:
        with source.reading(path=path) as engine:
            statements = variable_statements(config) + run_settings_statements(engine, config) + loop_firings_sql()
        console.print("\n".join(f"{statement.strip()};" for statement in statements))
        return
    rows = describe(config, load_checks(checks_dir), path, source.db is not None)
    output(Sheet([Column("what", "what"), Column("scope", "scope"), Column("value", "value"), Column("from", "from")],
                 rows), given)
