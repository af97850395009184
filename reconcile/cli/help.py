"""How ``reconcile --help`` reads: commands in the order of the morning, plain metavars, ``--version``.

A group may name its commands and build each when first asked for (``LazyCommands``): the root
does (``reconcile.cli.root``), so a command starts without importing every other command's libraries.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING

import typer
from typer.core import TyperGroup

if TYPE_CHECKING:  # typer carries its own click; only the types are named here
    from typer import _click as click

# The morning's order: load the night, judge it, count its money and limits, report, then look closer.
SECTIONS = [
    ("Load", ["ingest", "morning"]),
    ("Judge", ["check", "signals", "watch"]),
    ("Money and limits", ["cost", "usage", "budgets", "replay", "reprice", "prices"]),
    ("Report", ["report", "export"]),
    ("Inspect", ["runs", "show", "summary", "sql", "config", "rebuild"]),
]

# Option and argument names, as a reader would say what goes there (typer would print "<list[str]>").
METAVARS = {
    "db": "STORE", "config_file": "FILE", "since": "WHEN", "until": "WHEN", "agent": "AGENT", "only": "CHECK",
    "checks_dir": "FOLDER", "signals_dir": "FOLDER", "baseline": "N", "set_values": "KEY=VALUE", "settings": "KEY=VALUE", "setting": "KEY=VALUE", "junit": "FILE", "out": "PATH",
    "usage": "EXPORT", "by": "GROUP", "cost_source": "SOURCE", "format": "FORMAT", "prices": "FILE",
    "run_id": "RUN", "step": "N", "query": "SELECT", "folder": "FOLDER", "alert_rate": "RATE", "as_of": "WHEN",
    "emit_style": "STYLE", "limits": "FILE", "base": "BASE", "status": "STATUS", "sort": "KEY", "limit": "N", "tz": "ZONE", "parquet": "FILE",
}


class LazyCommands(MutableMapping):
    """A group's commands: each name is known from the start, its command built on first use by ``build``."""

    def __init__(self, built: dict, names: list[str], build: Callable[[str], click.Command | None]) -> None:
        self._built, self._names, self._build = dict(built), names, build

    def __getitem__(self, name: str) -> click.Command:
        if name not in self._built:
            command = self._build(name) if name in self._names else None
            if command is None:
                raise KeyError(name)
            plain_metavars(command)
            self._built[name] = command
        return self._built[name]

    def __setitem__(self, name: str, command: click.Command) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def built(self) -> list[click.Command]:
        """The commands built so far (building the rest would import every command's module)."""
        return list(self._built.values())

    def __contains__(self, name: object) -> bool:
        return name in self._built or name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._names, *self._built]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self._names, *self._built]))


class MorningOrder(TyperGroup):
    """A command group that lists its commands by section, in the order of the morning.

    A subclass that names its commands (``lazy_names``) and builds one (``build``) loads each on first use.
    """

    lazy_names: list[str] = []

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if self.lazy_names:
            self.commands = LazyCommands(self.commands, self.lazy_names, self.build)

    def build(self, name: str) -> click.Command | None:
        """The command ``name``, built when first asked for (a group that names its commands lazily)."""
        return None

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
                # its first sentence whole, folded over lines: a description cut with "..." says nothing
                rows.append((name, command.get_short_help_str(limit=10_000)))
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
    subcommands = getattr(command, "commands", {})
    for sub in (subcommands.built() if isinstance(subcommands, LazyCommands) else subcommands.values()):
        plain_metavars(sub)  # (a lazy group's others get theirs when they are built)


def version() -> str:
    from reconcile.version import __version__

    return f"reconcile {__version__} (DuckDB {_duckdb_version()})"


def _duckdb_version() -> str:
    """DuckDB's version from its installed metadata's folder name, without importing DuckDB (0.1 s).

    ``importlib.metadata`` costs a third of that again; the folder (``duckdb-2.0.1.dist-info``) is
    beside the package wherever pip or uv put it. Anything else: ask DuckDB itself.
    """
    import importlib.util
    import os

    spec = importlib.util.find_spec("duckdb")
    if spec is not None and spec.origin:
        site = os.path.dirname(os.path.dirname(spec.origin))
        found = [entry.name[len("duckdb-"):-len(".dist-info")] for entry in os.scandir(site)
                 if entry.name.startswith("duckdb-") and entry.name.endswith(".dist-info")]
        if len(found) == 1:
            return found[0]
    import duckdb

    return duckdb.__version__


def version_option(value: bool) -> None:
    if value:
        typer.echo(version())
        raise typer.Exit()
