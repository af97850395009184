"""Docs that could drift from the code are generated, and these tests fail when they do."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from conftest import ROOT
from reconcile.docs_gen import GENERATED


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_doc_is_up_to_date(name):
    committed = (ROOT / "docs" / name).read_text()
    assert committed == GENERATED[name](), f"docs/{name} is stale: run python -m reconcile.docs_gen"


def test_journal_format_doc_mentions_every_schema_field():
    schema = json.loads((resources.files("reconcile") / "schema" / "journal-v1.schema.json").read_text())
    doc = (ROOT / "docs" / "journal-format.md").read_text()
    fields = set()

    def collect(node):
        if isinstance(node, dict):
            fields.update(node.get("properties", {}))
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(schema)
    missing = sorted(f for f in fields if f"`{f}`" not in doc)
    assert not missing, f"docs/journal-format.md does not mention {missing}"


def quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```(?:sh|bash)\n(.+?)\n```", section, re.S)


def test_readme_quick_start_is_exactly_two_commands_and_ci_runs_the_test_one():
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    assert "sample_runs" in commands[0]
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci, ".ci/run must call the README's test command"


def test_readme_documents_every_command_and_exit_code():
    from reconcile.cli import app, load_commands
    load_commands()
    from reconcile.errors import ExitCode
    readme = (ROOT / "README.md").read_text()
    for command in app.registered_commands:
        assert f"reconcile {command.name}" in readme, command.name
    for code in ExitCode:
        assert re.search(rf"\|\s*{code.value}\s*\|\s*`?{code.name}", readme), code.name


def test_every_fact_a_format_records_has_a_real_example_file():
    from reconcile.format_docs import example_path
    from reconcile.formats import transcript_formats

    for fmt in transcript_formats():
        assert set(fmt.examples) <= set(fmt.facts), f"{fmt.name}: an example of a fact it does not declare"
        for fact in fmt.facts:
            example = fmt.examples.get(fact)
            assert example, f"{fmt.name}: no example file for {fact}"
            if example.startswith("(no real file"):  # said so, with where the format documents the fact
                assert len(example) > 30, example
                continue
            assert example_path(example).is_file(), f"{fmt.name}: {fact} example {example} is not there"
        assert set(fmt.zero_buckets) <= {"input_uncached", "cache_read", "cache_write_5m", "cache_write_1h",
                                         "output_tokens"}, fmt.name
