"""Start-up (issue 48, target 1): what a command imports before it does its work.

Speed itself is measured in bench/ (bench/startup.py); here, what would make it slow: ``--version``
imports no DuckDB, rich or command module, and a listing never imports the libraries only other
commands use (pyarrow, numpy, polars, jinja2, pydantic). Each is checked in a fresh interpreter,
as a user's shell starts one.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from importlib import metadata

import pytest

# Run reconcile's entry point, then print which top-level packages and reconcile modules were imported.
PROBE = """
import json, sys
from reconcile.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
sys.stdout.flush()
print("\\nIMPORTED " + json.dumps(sorted(sys.modules)))
"""
HEAVY = {"duckdb", "rich", "pyarrow", "numpy", "polars", "jinja2", "pydantic", "genai_prices", "sqlglot", "pyspark"}
ONLY_FOR_OTHERS = {"pyarrow", "numpy", "polars", "jinja2", "pydantic", "genai_prices", "sqlglot", "pyspark"}


def _imported(*args: str) -> tuple[str, set[str]]:
    done = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120)
    out, _, modules = done.stdout.rpartition("\nIMPORTED ")
    assert modules, done.stderr
    return out, set(json.loads(modules))


def _tops(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_version_imports_nothing_heavy_and_says_what_is_installed():
    import duckdb

    out, modules = _imported("--version")
    assert out.strip() == f"reconcile {metadata.version('reconcile')} (DuckDB {duckdb.__version__})"
    assert not _tops(modules) & HEAVY, sorted(_tops(modules) & HEAVY)
    assert not {m for m in modules if m.endswith("_cmd") or m.startswith(("reconcile.store", "reconcile.formats"))}


def test_one_commands_help_loads_that_command_alone():
    out, modules = _imported("usage", "--help")
    assert "--db" in out
    loaded = {m.rsplit(".", 1)[1] for m in modules if m.startswith("reconcile.cli.") and m.endswith("_cmd")}
    assert loaded == {"usage_cmd"}


def test_listing_runs_imports_only_what_a_listing_needs(night_db):
    out, modules = _imported("runs", "-n", "2", "--db", str(night_db))
    assert "2 run(s)" in out
    assert not _tops(modules) & ONLY_FOR_OTHERS, sorted(_tops(modules) & ONLY_FOR_OTHERS)
    readers = {m for m in modules if m.startswith(("reconcile.formats.", "reconcile.ingest.landing"))}
    assert readers <= {"reconcile.formats.journal_spec"}, readers  # no file is read: no format is loaded


def test_every_command_is_where_the_lazy_root_looks_for_it():
    import typer.main

    from reconcile.cli import app, load_commands
    from reconcile.cli.root import COMMAND_MODULES

    load_commands()
    registered = {info.name: info.callback.__module__ for info in app.registered_commands}
    registered |= {info.name: info.typer_instance.registered_commands[0].callback.__module__
                   for info in app.registered_groups}
    assert {name: module.rsplit(".", 1)[1] for name, module in registered.items()} == COMMAND_MODULES
    root = typer.main.get_command(app)
    assert sorted(root.commands) == sorted(COMMAND_MODULES)


@pytest.mark.parametrize("name", ["FORMATS", "Format", "TranscriptFormat"])
def test_the_formats_load_on_first_use(name):
    formats = importlib.import_module("reconcile.formats")
    assert getattr(formats, name) is getattr(formats, name)
    with pytest.raises(AttributeError):
        formats.NOT_A_FORMAT  # noqa: B018
