"""The command line a new user meets: --version, completion, help in the order of the morning, plain metavars."""

from __future__ import annotations

import re
from importlib import metadata

import pytest

from reconcile.cli import main
from reconcile.cli.help import SECTIONS

COMMANDS = [["ingest"], ["morning"], ["check"], ["cost"], ["cost", "project"], ["usage"], ["budgets"], ["replay"], ["reprice"],
            ["prices"], ["prices", "add"], ["report"], ["report", "finance"], ["report", "morning"], ["summary"],
            ["show"], ["sql"], ["config"]]


def _help(capsys, *args) -> str:
    capsys.readouterr()
    assert main([*args, "--help"]) == 0
    return capsys.readouterr().out


def test_version_names_reconcile_and_duckdb(capsys):
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert re.fullmatch(rf"reconcile {re.escape(metadata.version('reconcile'))} \(DuckDB \d+\.\d+\.\d+\)\n", out)


def test_help_lists_commands_in_the_order_of_the_morning(capsys):
    out = _help(capsys)
    titles = [f"{title} commands:" for title, _ in SECTIONS]
    assert [line for line in out.splitlines() if line.endswith("commands:")] == titles
    sections = out[out.index(titles[0]):]
    listed = [line.split()[0] for line in sections.splitlines() if line.startswith("  ") and not line.startswith("   ")]
    assert listed == [name for _, names in SECTIONS for name in names]
    assert "--install-completion" in out and "--show-completion" in out


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a) for a in COMMANDS])
def test_no_metavar_is_a_python_type(capsys, args):
    out = _help(capsys, *args)
    assert not re.search(r"<[a-z]+(\[[A-Za-z]+\])?>", out), out
    assert "list[" not in out
