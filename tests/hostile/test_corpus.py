"""The hostile corpus, ingested in one pass: every case's accounting, rejects and passed-over files, exactly.

Then every command runs over the store the corpus left, and none may fail as a bug (exit 3).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import corpus
from reconcile import store
from reconcile.cli import main
from reconcile.errors import ExitCode
from reconcile.ingest.driver import ingest

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

RUNNABLE = [c for c in corpus.CASES if c.skip is None]


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    root = tmp_path_factory.mktemp("hostile")
    for case in RUNNABLE:
        corpus.write(case, root / "corpus")
    db = root / "hostile.duckdb"
    with store.connect(db) as con:
        report = ingest(con, [root / "corpus"])
        rejects = con.execute("select path, line, reason from rejects order by path, line").fetchall()
    yield root / "corpus", db, report, rejects
    for folder in (root / "corpus").rglob("*"):  # give permissions back so the folder can be removed
        if folder.is_dir() and not folder.is_symlink():
            folder.chmod(0o755)
    shutil.rmtree(root, ignore_errors=True)


def test_the_corpus_covers_enough_classes_and_every_format():
    assert len(corpus.classes()) >= 25, sorted(corpus.classes())
    from reconcile.formats import FORMATS

    transcript_formats = {"native", "claude_code", "codex", "gemini_cli", "gemini_cli_jsonl", "langfuse", "inspect_ai",
                          "mini_swe_agent", "swe_agent", "openhands", "otel"}
    assert transcript_formats <= corpus.formats() and transcript_formats <= set(FORMATS)
    assert corpus.formats() & {"anthropic_usage", "openai_usage", "anthropic_costs", "openai_costs"}


def _failed_if_nothing_read(expected: tuple) -> tuple:
    """Issue 57: a file of which nothing could be read (lines rejected, none loaded) is ``failed``, never ``loaded``
    (its rejects kept, its accounting whole)."""
    status, lines, loaded, rejected, skipped = expected
    return ("failed" if status == "loaded" and rejected and not loaded else status, lines, loaded, rejected, skipped)


@pytest.mark.parametrize("case", corpus.CASES, ids=[c.id for c in corpus.CASES])
def test_case_accounting(loaded, case):
    if case.skip:
        pytest.skip(case.skip)
    root, _, report, rejects = loaded
    folder = root / case.id
    files = {str(Path(f.path).relative_to(folder)): f for f in report.files if Path(f.path).is_relative_to(folder)}
    got = {name: (f.status, f.lines, f.loaded, f.rejected, f.skipped) for name, f in files.items()}
    assert got == {name: _failed_if_nothing_read(expected) for name, expected in case.expect.items()}
    for name, result in files.items():
        assert result.loaded + result.rejected + result.skipped == result.lines, name
    for name, fragment in case.notes.items():
        assert fragment in files[name].notes[0], (name, files[name].notes)
    for name in case.expect:
        path = str(folder / name)
        got_rejects = [(line, reason) for p, line, reason in rejects if p == path]
        wanted = case.rejects.get(name, [])
        assert [line for line, _ in got_rejects] == [line for line, _ in wanted], (name, got_rejects)
        for (line, reason), (_, fragment) in zip(got_rejects, wanted):
            assert fragment in reason, (name, line, reason)
    passed = {str(Path(p.path).relative_to(folder)): p.reason for p in report.passed_over
              if Path(p.path).is_relative_to(folder)}
    assert set(passed) == set(case.passed_over), passed
    for name, fragment in case.passed_over.items():
        assert fragment in passed[name], (name, passed[name])


def test_the_whole_corpus_adds_up(loaded):
    _, _, report, rejects = loaded
    totals = report.totals
    assert totals["lines"] == totals["loaded"] + totals["rejected"] + totals["skipped"]
    assert totals["rejected"] == len(rejects)


def test_reingesting_the_corpus_changes_nothing(loaded, tmp_path):
    root, db, _, _ = loaded
    copy = tmp_path / "again.duckdb"
    shutil.copy(db, copy)
    accounting = "select path, status, lines, loaded, rejected, skipped from ingested_files order by path"
    with store.connect(copy) as con:
        before = con.execute("select count(*), sum(hash(run_id, idx, kind)) from steps").fetchall()
        files, rejects = con.execute(accounting).fetchall(), con.execute("select count(*) from rejects").fetchall()
        report = ingest(con, [root])
        after = con.execute("select count(*), sum(hash(run_id, idx, kind)) from steps").fetchall()
        assert con.execute(accounting).fetchall() == files
        assert con.execute("select count(*) from rejects").fetchall() == rejects
    assert before == after
    # a file that failed is read again, and says again that it failed (never silently "unchanged")
    assert {f.status for f in report.files} <= {"unchanged", "unreadable", "failed"}


COMMANDS = [
    ["summary"], ["check"], ["check", "--json"], ["cost"], ["cost", "--json"], ["usage"], ["budgets"],
    ["budgets", "--json"], ["config"], ["sql", "select s.run_id, agent, s.error, st.result_preview from step_view s join steps st using (run_id, idx)"],
    ["show", "[mk]:x:"], ["show", "[mk]:x:", "--step", "2"], ["show", "[mk-cc]", "--step", "2"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=[" ".join(a[:2]) for a in COMMANDS])
def test_no_command_fails_as_a_bug_on_the_corpus_store(loaded, args, capsys):
    _, db, _, _ = loaded
    code = main([*args, "--db", str(db)])
    captured = capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.FINDINGS), captured.err
    assert "internal error" not in captured.err


# Every read command, as text and as each export it offers, with the groupings that change its SQL.
# The store holds every shape the corpus has, the runs with their optional fields left out among them.
_EXPORTS = ([], ["--json"], ["--csv"])
READ_COMMANDS = [
    *[[*command, *export] for export in _EXPORTS for command in (
        ["runs"], ["runs", "--tree"], ["runs", "--sort", "cost"], ["show", "opt-bare"], ["show", "opt-nosteps"],
        ["show", "opt-bare", "--step", "0"], ["sql", "select * from run_view order by run_id limit 60"], ["cost"], ["cost", "--by", "run"],
        ["cost", "--by", "agent"], ["cost", "project"], ["usage"], ["budgets"], ["check"], ["replay"],
        ["replay", "--runs"], ["reprice", "--as-of", "2025-01-01"], ["config"], ["prices", "list"])],
    *[["cost", "--by", by] for by in ("day", "week", "month", "model", "task_class", "tree")],
    ["cost", "--cost-source", "ours", "--by", "run"], ["cost", "--cost-source", "harness", "--by", "run"],
    ["cost", "project", "--fit"],
    *[["usage", "--by", by] for by in ("hour", "day", "week", "month", "model", "api_key", "workspace", "project")],
    *[["budgets", "--by", by] for by in ("agent", "task_class", "model")], ["budgets", "--unit", "tree"],
    ["budgets", "--emit", "toml"], ["replay", "--by", "model"], ["replay", "--detector", "all"], ["summary"],
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=[" ".join(a) for a in READ_COMMANDS])
def test_every_read_command_runs_on_the_corpus_store(loaded, args, capsys):
    _, db, _, _ = loaded
    code = main([*args, "--db", str(db)])
    captured = capsys.readouterr()
    assert code in (ExitCode.OK, ExitCode.FINDINGS, ExitCode.BAD_INPUT), captured.err
    assert "internal error" not in captured.err.lower() and "Traceback" not in captured.err, captured.err
    if code != ExitCode.BAD_INPUT:  # a read that worked printed something, and never a Python None for unknown
        assert captured.out.strip()
        assert "None" not in captured.out.replace("\"None\"", ""), captured.out[:2000]


def test_a_model_call_nobody_named_is_unpriced_and_named_so(loaded, capsys):
    """The run with its optional fields left out: its cost is unknown, never $0, and the warning names why."""
    _, db, _, _ = loaded
    assert main(["cost", "--by", "run", "--json", "--db", str(db)]) == ExitCode.OK
    import json

    report = json.loads(capsys.readouterr().out)
    bare = next(g for g in report["groups"] if g["key"] == "opt-bare")
    assert bare["cost_usd"] is None and not bare["cost_complete"]
    assert bare["unpriced_models"] == ["(model not recorded)"]
    assert main(["cost", "--by", "run", "--db", str(db)]) == ExitCode.OK
    assert "no price for (model not recorded)" in " ".join(capsys.readouterr().out.split())


def test_reports_render_over_the_corpus_store(loaded, tmp_path, capsys):
    _, db, _, _ = loaded
    for kind in ("finance", "morning"):
        code = main(["report", kind, "--db", str(db), "--out", str(tmp_path / f"{kind}.html")])
        assert code in (ExitCode.OK, ExitCode.FINDINGS), capsys.readouterr().err
        html = (tmp_path / f"{kind}.html").read_text()
        assert "<script>alert(1)</script>" not in html
