"""The root command: the Typer application every ``*_cmd`` module adds its commands to."""

from __future__ import annotations

import typer

from reconcile.cli.help import MorningOrder, version_option

app = typer.Typer(
    name="reconcile",
    help="Morning-after reconciliation of LLM agent runs: ingest journals, inspect runs, query the store.",
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion for bash, zsh, fish, PowerShell
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    cls=MorningOrder,
)


@app.callback()
def _root(
    show_version: bool = typer.Option(False, "--version", callback=version_option, is_eager=True,
                                      help="Print reconcile's version (and DuckDB's) and exit."),
) -> None:
    """Morning-after reconciliation of LLM agent runs: ingest journals, inspect runs, query the store."""
