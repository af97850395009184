"""How ``reconcile --help`` reads: commands in the order of the morning, plain metavars, ``--version``."""

from __future__ import annotations

from importlib import metadata
from typing import TYPE_CHECKING

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:  # typer carries its own click; only the types are named here
    from typer import _click as click

# The morning's order: load the night, judge it, count its money and limits, report, then look closer.
SECTIONS = [
    ("Load", ["ingest", "morning"]),
    ("Judge", ["check"]),
    ("Money and limits", ["cost", "usage", "budgets", "replay", "reprice", "prices"]),
    ("Report", ["report", "export"]),
    ("Inspect", ["runs", "show", "summary", "sql", "config"]),
]

# Option and argument names, as a reader would say what goes there (typer would print "<list[str]>").
METAVARS = {
    "db": "STORE", "config_file": "FILE", "since": "WHEN", "until": "WHEN", "agent": "AGENT", "only": "CHECK",
    "checks_dir": "FOLDER", "set_values": "KEY=VALUE", "settings": "KEY=VALUE", "setting": "KEY=VALUE", "junit": "FILE", "out": "PATH",
    "usage": "EXPORT", "by": "GROUP", "cost_source": "SOURCE", "format": "FORMAT", "prices": "FILE",
    "run_id": "RUN", "step": "N", "query": "SELECT", "folder": "FOLDER", "alert_rate": "RATE", "as_of": "WHEN",
    "emit_style": "STYLE", "limits": "FILE", "base": "BASE", "status": "STATUS", "sort": "KEY", "limit": "N", "tz": "ZONE", "parquet": "FILE",
}


class MorningOrder(TyperGroup):
    """A command group that lists its commands by section, in the order of the morning."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        known = [name for _, names in SECTIONS for name in names if name in self.commands]
        return known + sorted(name for name in self.commands if name not in known)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        listed = set()
        for title, names in [*SECTIONS, ("Other", [n for n in self.list_commands(ctx)])]:
            rows = []
            for name in names:
                command = self.commands.get(name)
                if command is None or command.hidden or name in listed:
                    continue
                listed.add(name)
                rows.append((name, command.get_short_help_str(limit=formatter.width - 20)))
            if rows:
                with formatter.section(f"{title} commands"):
                    formatter.write_dl(rows)


def plain_metavars(command: click.Command) -> None:
    """Give every option and argument without an explicit metavar a plain one (``STORE``, ``WHEN``)."""
    for param in command.params:
        if getattr(param, "metavar", None) is None and not getattr(param, "is_flag", False) and param.name:
            param.metavar = METAVARS.get(param.name, param.name.upper())
        if getattr(param, "param_type_name", "") == "argument" and hasattr(param, "display_type_rich"):
            param.display_type_rich = lambda ctx: ""  # the name says what goes there; typer would add "<str>"
    for sub in getattr(command, "commands", {}).values():
        plain_metavars(sub)


def version() -> str:
    import duckdb

    return f"reconcile {metadata.version('reconcile')} (DuckDB {duckdb.__version__})"


def version_option(value: bool) -> None:
    if value:
        typer.echo(version())
        raise typer.Exit()
