"""The root command: the Typer application every ``*_cmd`` module adds its commands to.

It is also why a command starts fast: the root group knows each command's name and the module that
defines it, and imports that module (and the libraries it needs) only when the command is asked for,
so ``reconcile --version`` imports typer and nothing heavy, and ``reconcile runs`` never imports
pyarrow or jinja2.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

import typer

from reconcile.cli.help import MorningOrder, version_option

if TYPE_CHECKING:
    from typer import _click as click

# Each top-level command and the module of reconcile.cli that defines it (imported when it is asked for).
COMMAND_MODULES = {
    "ingest": "ingest_cmd", "morning": "report_cmd", "check": "check_cmd", "cost": "cost_cmd", "usage": "usage_cmd",
    "budgets": "budgets_cmd", "replay": "replay_cmd", "reprice": "prices_cmd", "prices": "prices_cmd",
    "report": "report_cmd", "export": "export_cmd", "runs": "runs_cmd", "show": "inspect_cmd",
    "summary": "inspect_cmd", "sql": "inspect_cmd", "config": "config_cmd", "signals": "signals_cmd", "watch": "watch_cmd",
    "rebuild": "rebuild_cmd",
}


def load_commands() -> None:
    """Import every command module, so the application has every command registered."""
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        importlib.import_module(f"reconcile.cli.{module}")


class RootGroup(MorningOrder):
    """``reconcile``: its commands in the morning's order, each module imported when its command is asked for."""

    lazy_names = list(COMMAND_MODULES)

    def build(self, name: str) -> click.Command | None:
        import typer.main

        importlib.import_module(f"reconcile.cli.{COMMAND_MODULES[name]}")
        for info in app.registered_commands:
            if info.name == name:
                return typer.main.get_command_from_info(info, pretty_exceptions_short=app.pretty_exceptions_short,
                                                        rich_markup_mode=app.rich_markup_mode)
        for group in app.registered_groups:
            if group.name == name:
                return typer.main.get_group_from_info(group, pretty_exceptions_short=app.pretty_exceptions_short,
                                                      rich_markup_mode=app.rich_markup_mode,
                                                      suggest_commands=app.suggest_commands)
        return None


app = typer.Typer(
    name="reconcile",
    help="Morning-after reconciliation of LLM agent runs: ingest journals, inspect runs, query the store.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=RootGroup,
)


@app.callback()
def _root(
    show_version: bool = typer.Option(False, "--version", callback=version_option, is_eager=True,
                                      help="Print reconcile's version (and DuckDB's) and exit."),
) -> None:
    """Morning-after reconciliation of LLM agent runs: ingest journals, inspect runs, query the store."""
