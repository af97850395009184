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


def test_the_command_reference_documents_every_command_and_exit_code():
    """Issue 61: the full reference lives in docs/cli.md, written from each command's --help (the README links it)."""
    from reconcile.errors import ExitCode

    reference = (ROOT / "docs" / "cli.md").read_text()
    for path, _ in _commands():
        assert f"## `reconcile {path}`" in reference, path
    for code in ExitCode:
        assert re.search(rf"\|\s*{code.value}\s*\|\s*`?{code.name}", reference), code.name
    assert "docs/cli.md" in (ROOT / "README.md").read_text()


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


def _commands():
    """Every (command path, click command) the CLI has, subcommands included."""
    import typer

    from reconcile.cli import app, load_commands

    load_commands()

    def walk(command, path):
        if hasattr(command, "list_commands"):
            ctx = type(command).context_class(command)
            for name in command.list_commands(ctx):
                yield from walk(command.get_command(ctx, name), [*path, name])
        else:
            yield " ".join(path), command

    return list(walk(typer.main.get_command(app), []))


def test_the_command_reference_names_every_option_each_command_has():
    """Issue 50, moved by issue 61: the reference and --help agree, option for option (the reference is written from
    the commands, so this holds while it is fresh), and it says the default file an --out writes."""
    reference = (ROOT / "docs" / "cli.md").read_text()
    problems = []
    for path, command in _commands():
        section = reference.split(f"## `reconcile {path}`\n", 1)[1].split("\n## ", 1)[0]
        for p in command.params:
            if type(p).__name__.endswith("Option") and "--help" not in p.opts:
                problems += [f"reconcile {path}: {o} is missing" for o in [*p.opts, *p.secondary_opts]
                             if f"`{o}`" not in section]
                if "--out" in p.opts and p.default and f"`{p.default}`" not in section:
                    problems.append(f"reconcile {path}: --out writes {p.default} by default; the reference does not say")
    assert not problems, "\n".join(problems)


def test_the_readme_reads_in_one_screenful_a_task():
    """Issue 61: what it is, the two commands, six everyday tasks each with its command, then links."""
    readme = (ROOT / "README.md").read_text()
    tasks = readme.split("## Everyday tasks", 1)[1].split("\n## ", 1)[0]
    numbered = re.findall(r"^(\d)\. \*\*", tasks, re.M)
    assert numbered == [str(n) for n in range(1, 7)]
    assert all("reconcile " in item for item in re.split(r"^\d\. ", tasks, flags=re.M)[1:])
    assert "| `reconcile" not in readme  # no command table of paragraphs: docs/cli.md has the reference


def test_no_readme_link_points_outside_the_repository():
    readme = (ROOT / "README.md").read_text()
    assert "../" not in readme, "a clone has nothing above its own folder"
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", readme):
        if not re.match(r"[a-z]+://", target):
            assert (ROOT / target).exists(), target
