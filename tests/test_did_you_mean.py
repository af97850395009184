"""Small kindnesses from issue 28: "did you mean", a session's prefix, the notebook raising the CLI's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconcile.errors import ExitCode, RunNotFound, did_you_mean

ROOT = Path(__file__).resolve().parents[1]
SPOTTER = ROOT / "tests" / "fixtures" / "realdata" / "spotter-real-sessions"


@pytest.mark.parametrize("typed,meant", [("sweagent", "swe_agent"), ("claudecode", "claude_code"),
                                         ("Claude-Code", "claude_code"), ("inspect", "inspect_ai")])
def test_a_format_typed_nearly_right_is_suggested(cli, tmp_path, db_path, typed, meant):
    (tmp_path / "j.jsonl").write_text("{}\n")
    result = cli("ingest", tmp_path / "j.jsonl", "--format", typed, "--db", db_path)
    assert result.code == ExitCode.BAD_INPUT
    assert f"Did you mean {meant!r}?" in result.err and "Known formats" in result.err


def test_nothing_close_suggests_nothing():
    assert did_you_mean("klingon", ["native", "claude_code", "swe_agent"]) == ""


def test_a_check_typed_nearly_right_is_suggested(cli, night_db):
    result = cli("check", "--only", "step_equal_tool_results", "--db", night_db)
    assert result.code == ExitCode.BAD_INPUT and "Did you mean 'steps_equal_tool_results'?" in result.err


def test_a_session_s_prefix_is_the_session_not_ambiguous_with_its_subagents(cli, db_path):
    assert cli("ingest", SPOTTER / "projects", "--db", db_path).code == ExitCode.OK
    sessions = [r["run_id"] for r in cli("runs", "--json", "--db", db_path).json()]
    session = next(s for s in sessions if not any(o != s and o.startswith(s[:6]) for o in sessions))
    shown = cli("show", session[:6], "--db", db_path)
    assert shown.code == ExitCode.OK, shown.err
    assert session in shown.out


def test_the_notebook_raises_the_cli_s_error_for_an_unknown_run(night_db):
    import reconcile

    rc = reconcile.connect(night_db)
    with pytest.raises(RunNotFound, match="No run with id 'typo'"):
        rc.steps("typo")
    assert rc.steps("8f3a").height > 12  # a prefix still works
