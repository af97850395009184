"""Options declared once (issue 30): a command takes a group (Store, Source, Window, Output) and gets all of its
options, never some; a group's values are checked before the store is opened."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reconcile.cli import app
from reconcile.cli.options import Output, Source, grouped
from reconcile.errors import ExitCode
from reconcile.when import Window

CLI = Path(__file__).resolve().parent.parent / "reconcile" / "cli"
GROUPS = {  # the options of a group, as a command's --help shows them
    "window": ["--since", "--until", "--tz"],
    "output": ["--json", "--csv", "--parquet"],
    "source": ["--config", "--db", "--from-parquet", "--engine", "--master", "--remote"],
}
ALIASES = {"SinceOption", "UntilOption", "JsonOption", "CsvOption", "ParquetOption", "ConfigOption", "DbOption",
           "FromParquetOption", "MasterOption", "RemoteOption"}


def _commands():
    import typer.main

    root = typer.main.get_command(app)

    def walk(group, prefix=()):
        for name, command in sorted(group.commands.items()):
            yield (*prefix, name), command
            if hasattr(command, "commands"):
                yield from walk(command, (*prefix, name))

    return list(walk(root))


def test_a_command_has_all_of_a_groups_options_or_none_beyond_the_declared_singles():
    singles = {("ingest",): {"--json", "--engine", "--master", "--remote"}, ("export",): {"--json"},
               ("morning",): {"--tz"}, ("report", "finance"): {"--from-parquet"},
               ("report", "morning"): {"--from-parquet"},
               ("watch",): {"--json"}}  # a stream of events, one JSON object a line: no table to write as CSV
    checked = 0
    for path, command in _commands():
        options = {opt for param in command.params for opt in getattr(param, "opts", [])}
        for group, names in GROUPS.items():
            held = options & set(names)
            allowed = singles.get(path, set())
            if group == "source" and {"--config", "--db"} <= options:  # Store is the first two of Source
                held -= {"--config", "--db"}
            assert not held or held == set(names) - ({"--config", "--db"} if group == "source" else set()) \
                or held <= allowed, (path, group, sorted(held))
            checked += bool(held)
    assert checked >= 15


def test_the_command_modules_declare_no_grouped_option_themselves():
    """A group's options are written in cli/options.py only: a command module names the group, not its options."""
    for module in sorted(CLI.glob("*_cmd.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.arg) and isinstance(node.annotation, ast.Name):
                name = node.annotation.id
                allowed = {"ingest_cmd.py": {"JsonOption", "MasterOption", "RemoteOption"},
                           "export_cmd.py": {"JsonOption"},
                           "report_cmd.py": {"FromParquetOption"}}.get(module.name, set())
                assert name not in ALIASES - allowed, f"{module.name}: {node.arg}: {name}"


@pytest.mark.parametrize("args,fragment", [
    (["cost", "--json", "--csv"], "choose one of --json, --csv and --parquet FILE"),
    (["cost", "--cost-source", "vibes"], "--cost-source 'vibes': choose one of auto, ours, harness"),
    (["runs", "--since", "the day after"], "--since"),
    (["usage", "--since", "2026-11-28", "--until", "2026-11-27"], "is not after --since"),
])
def test_a_group_refuses_its_values_before_the_store_is_opened(cli, tmp_path, args, fragment):
    missing = tmp_path / "no-store.duckdb"
    result = cli(*args, "--db", missing)
    assert result.code == ExitCode.BAD_INPUT, result.err
    assert result.err.startswith("error: ") and fragment in result.err, result.err
    assert not missing.exists()  # refused at parse time: no store was looked for, let alone made


def test_a_grouped_command_receives_the_group_built_from_its_options(tmp_path):
    seen = {}

    def probe(name: str = "x", scope: Window = Window(), given: Output = Output(), source: Source = Source()):
        seen.update(name=name, scope=scope, given=given, source=source)

    wrapped = grouped(probe)
    assert [p for p in wrapped.__signature__.parameters][:4] == ["name", "since", "until", "tz"]
    wrapped(name="y", since="2026-11-28", until=None, tz="UTC", json_out=True, csv_out=False, parquet=None,
            config_file=None, db=tmp_path / "s.duckdb", from_parquet=None, engine="duckdb", master=None, remote=None)
    assert seen["name"] == "y" and seen["given"] == Output(json=True)
    assert seen["scope"].since.isoformat() == "2026-11-28T00:00:00+00:00" and seen["scope"].zone == "UTC"
    assert seen["source"].db == tmp_path / "s.duckdb" and seen["source"].described == "the store"
