"""Configuration: reconcile.toml / [tool.reconcile] / --config, strict keys, severities, thresholds, scopes."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT
from reconcile.config import load_config
from reconcile.errors import BadInput, ExitCode

REAL = ROOT / "tests" / "fixtures" / "realdata"


def write(path, text):
    path.write_text(text, encoding="utf-8")
    return path


def findings_of(result, check):
    return [f for f in result.json()["findings"] if f["check"] == check]


def check_json(cli, *args):
    result = cli("check", "--json", *args)
    assert result.code in (ExitCode.OK, ExitCode.FINDINGS), result.err
    return result


def test_the_file_is_found_in_order_and_an_explicit_one_must_exist(tmp_path):
    assert load_config(folder=tmp_path).path is None  # nothing: built-in defaults
    write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n[tool.reconcile.settings]\nloop_limit = 4\n")
    config = load_config(folder=tmp_path)
    assert config.path == tmp_path / "pyproject.toml" and config.setting("loop_limit").value == "4"
    write(tmp_path / "reconcile.toml", "[settings]\nloop_limit = 5\n")
    assert load_config(folder=tmp_path).setting("loop_limit").value == "5"  # reconcile.toml wins
    other = write(tmp_path / "other.toml", "[settings]\nloop_limit = 7\n")
    assert load_config(other, folder=tmp_path).setting("loop_limit").origin == f"{other} [settings]"
    with pytest.raises(BadInput, match="--config .*nope.toml: no such file"):
        load_config(tmp_path / "nope.toml")


@pytest.mark.parametrize("text, message", [
    ("colour = 'red'\n", "unknown key 'colour' in the top level"),
    ("[settings]\nloop_window = 'six'\n", "loop_window = 'six'; expected a whole number"),
    ("[settings]\nstall_repeats = 3\n", "the setting 'stall_repeats' is now loop_limit"),
    ("[settings]\nloop_detector = 'sometimes'\n", "loop_detector = 'sometimes'; expected one of none, results_in_a_row"),
    ("[settings]\nno_such = 1\n", "no such setting 'no_such'"),
    ("[settings]\ntool_error_pattern = '(unclosed'\n", "is not a valid RE2 regular expression"),
    # valid RE2 that Spark's Java regex refuses or reads otherwise: the common subset only (issue 31)
    ("[settings]\ntool_error_pattern = '(?P<e>error)'\n", "named group, which Spark's Java regular expressions refuse"),
    ("[settings]\ntool_error_pattern = '[[:alpha:]]+ error'\n", "POSIX class .* read as a set of letters"),
    ("[settings]\ntransport_error_pattern = '(?U)reset.*peer'\n", "the U flag .* Unicode character classes"),
    ("[checks.tool_errors_flagged]\nseverity = 'fatal'\n", "severity = 'fatal'; expected one of error, warn"),
    ("[checks.tool_errors_flagged]\nerror_if = 'lots'\n", "error_if = 'lots'; expected a comparison"),
    ("[checks.tool_errors_flagged]\nloud = true\n", "unknown key 'loud' in \\[checks.tool_errors_flagged\\]"),
    ("[formats.claude_code]\nbounds = 1\n", "unknown key 'bounds' in \\[formats.claude_code\\]"),
    ("[settings\n", "not valid TOML"),
])
def test_a_bad_file_is_an_error_naming_the_file_the_key_and_the_value(tmp_path, text, message):
    path = write(tmp_path / "reconcile.toml", text)
    with pytest.raises(BadInput, match=message) as caught:
        load_config(folder=tmp_path)
    assert str(path) in str(caught.value)


def test_the_store_path_comes_from_the_file(cli, tmp_path, monkeypatch):
    write(tmp_path / "reconcile.toml", 'db = "stores/night.duckdb"\n')
    (tmp_path / "stores").mkdir()
    assert cli("ingest", ROOT / "sample_runs" / "2026-11-28" / "triage.jsonl").code == ExitCode.OK
    assert (tmp_path / "stores" / "night.duckdb").is_file()
    assert "120 runs" in cli("summary").out
    shown = cli("config", "--json").json()
    db = next(r for r in shown if r["what"] == "db")
    assert db["value"] == str(tmp_path / "stores" / "night.duckdb") and "reconcile.toml" in db["from"]


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_severity_thresholds_and_switching_a_check_off(cli, night_db, tmp_path):
    plain = check_json(cli, "--db", night_db)
    assert {c["name"]: c["outcome"] for c in plain.json()["checks"]}["tool_errors_flagged"] == "warn"
    write(tmp_path / "reconcile.toml", """
[checks.tool_errors_flagged]
severity = "error"
[checks.tool_calls_paired]
error_if = "> 10"      # 3 findings: a warning, not a failure
[checks.cost_per_request_stable]
enabled = false
""")
    data = check_json(cli, "--db", night_db).json()
    outcomes = {c["name"]: (c["severity"], c["outcome"]) for c in data["checks"]}
    assert outcomes["tool_errors_flagged"] == ("error", "error")
    assert outcomes["tool_calls_paired"] == ("error", "warn")
    assert "cost_per_request_stable" not in outcomes
    assert data["disabled"] == [{"name": "cost_per_request_stable", "by": f"{tmp_path / 'reconcile.toml'} [checks.cost_per_request_stable]"}]
    write(tmp_path / "reconcile.toml", "[checks.tool_calls_paired]\nerror_if = '> 10'\nwarn_if = '> 10'\n")
    quiet = {c["name"]: c["outcome"] for c in check_json(cli, "--db", night_db).json()["checks"]}
    assert quiet["tool_calls_paired"] == "pass"
    # the text says which thresholds let its findings pass
    shown = " ".join(cli("check", "--db", night_db, "--only", "tool_calls_paired").out.split())
    assert "tool_calls_paired (error, passes its thresholds; warn_if > 10, error_if > 10)" in shown, shown


def test_every_error_check_below_its_threshold_exits_zero(cli, night_db, tmp_path):
    names = [c["name"] for c in check_json(cli, "--db", night_db).json()["checks"] if c["severity"] == "error"]
    write(tmp_path / "reconcile.toml", "".join(f"[checks.{n}]\nerror_if = '> 1000'\n" for n in names))
    assert cli("check", "--db", night_db).code == ExitCode.OK


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_settings_by_agent_and_format_and_where_they_came_from(cli, night_db, tmp_path):
    flagged = findings_of(check_json(cli, "--db", night_db), "tool_errors_flagged")
    run = flagged[0]["run_id"]
    agent = cli("sql", f"select agent from runs where run_id = '{run}'", "--json", "--db", night_db).json()[0]["agent"]
    write(tmp_path / "reconcile.toml", f"[agents.{agent}.settings]\ntool_error_pattern = '^never$'\n")
    assert findings_of(check_json(cli, "--db", night_db), "tool_errors_flagged") == []
    back = check_json(cli, "--db", night_db, "--set", f"agent.{agent}.tool_error_pattern=503")
    assert [f["run_id"] for f in findings_of(back, "tool_errors_flagged")] == [run]  # --set beats the file
    write(tmp_path / "reconcile.toml", "[formats.native.checks.tool_results_bounded]\nenabled = false\n")
    data = check_json(cli, "--db", night_db).json()
    assert findings_of(cli("check", "--json", "--db", night_db), "tool_results_bounded") == []
    bounded = next(c for c in data["checks"] if c["name"] == "tool_results_bounded")
    assert bounded["not_judged"] == 300 and "switched off for format native" in bounded["not_judged_why"][0]["reason"]
    shown = cli("config", "--set", "loop_limit=4", "--json", "--db", night_db).json()
    rows = {(r["what"], r["scope"]): r for r in shown}
    assert rows[("setting loop_limit", "every run")]["from"] == "--set loop_limit"
    assert rows[("check tool_results_bounded enabled", "format native")]["value"] == "false"
    assert rows[("setting result_bound_tokens", "format claude_code (its documented default)")]["value"] == "25000"


def test_a_format_s_documented_default_applies_only_until_configuration_speaks(cli, tmp_path):
    db = tmp_path / "cc.duckdb"
    cli("ingest", REAL / "spotter-real-sessions", "--db", db)
    base = check_json(cli, "--only", "tool_results_bounded", "--db", db).json()
    assert base["findings"] == [] and base["checks"][0]["not_judged"] == 0  # judged against Claude Code's 25,000
    strict = check_json(cli, "--only", "tool_results_bounded", "--set", "format.claude_code.result_bound_tokens=5000",
                        "--db", db).json()
    assert strict["findings"] and all("from --set format.claude_code.result_bound_tokens" in f["detail"]
                                      for f in strict["findings"])


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_morning_takes_config_set_and_checks_dir(cli, tmp_path):
    night = tmp_path / "night"
    shutil.copytree(ROOT / "sample_runs", night)
    mine = tmp_path / "mine"
    mine.mkdir()
    write(mine / "every_run_named.sql", "-- name: every_run_named\n-- invariant: x\n-- severity: warn\n-- remedy: y\n"
                                         "select run_id, null as step, 'seen' as detail from runs where run_id = '8f3a'")
    from reconcile.checks import load_checks

    config = write(tmp_path / "quiet.toml", "".join(f"[checks.{c.name}]\nerror_if = '> 1000'\n"
                                                    for c in load_checks() if c.severity == "error"))
    result = cli("morning", night, "--out", tmp_path / "out", "--db", tmp_path / "m.duckdb", "--config", config,
                 "--checks-dir", mine, "--set", "loop_limit=3")
    assert result.code == ExitCode.OK, result.out + result.err
    findings = json.loads((tmp_path / "out" / "findings.json").read_text())
    assert {"check": "every_run_named", "severity": "warn", "run_id": "8f3a", "step": None, "detail": "seen"} in [
        {k: v for k, v in f.items() if k not in ("file", "line")} for f in findings["findings"]]
    assert str(config) in (tmp_path / "out" / "morning.html").read_text()
