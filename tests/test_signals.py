"""Fleet signals (issue 49): planted nights cross, a clean night with noise does not, and every figure
equals the one recomputed in plain Python from the raw journal lines (no reconcile code, no SQL)."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from reconcile import store
from reconcile.checks.signal_files import SignalDefinitionError, Threshold, parse_signal, parse_threshold
from reconcile.checks.signals import judge
from reconcile.ingest.driver import ingest
from signal_nights import write_nights
from test_oracles import step_cost  # the hand-written price table's cost of one call


@pytest.fixture(scope="module")
def nights(tmp_path_factory) -> dict[str, tuple[Path, list[Path]]]:
    """Two stores of eight nights each, ingested once: the last night planted, or clean with its own noise."""
    made = {}
    for name, plant in (("planted", True), ("clean", False)):
        folder = tmp_path_factory.mktemp(name)
        files = write_nights(folder / "journals", plant)
        db = folder / "store.duckdb"
        with store.connect(db) as con:
            ingest(con, [folder / "journals"])
        made[name] = (db, files)
    return made


# ---- the oracle: the raw lines, read in plain Python -------------------------------------------------

def _night(ts: str) -> str:
    """The night a moment belongs to: noon to noon UTC, named by its evening."""
    moment = datetime.fromisoformat(ts.replace("Z", "+00:00"))
    return (moment - timedelta(hours=12)).strftime("%Y-%m-%d")


def raw_observations(files: list[Path]) -> dict[str, list[tuple[str, str, float]]]:
    """(night, key, value) of the three planted signals, from every line of the journals."""
    found: dict[str, list[tuple[str, str, float]]] = defaultdict(list)
    runs = {}
    for path in files:
        for line in path.read_text().splitlines():
            record = json.loads(line)
            if record["type"] == "run_start":
                runs[record["run_id"]] = record
            if record["type"] != "step":
                continue
            night = _night(record["ts"])
            if record["kind"] == "model":
                found["provider_error_rate"].append(
                    (night, record["model"], 1.0 if record.get("error_class") in ("transport", "rate_limit") else 0.0))
                cost = step_cost(runs[record["run_id"]], record)
                if cost is not None:
                    found["cost_per_request"].append((night, runs[record["run_id"]]["task_class"], float(cost)))
            elif record["kind"] == "tool" and record["status"] not in ("started", "not_run"):
                found["tool_failure_rate"].append(
                    (night, record["tool"], 1.0 if record["status"] in ("error", "timeout", "invalid_args") else 0.0))
    return found


def oracle(observations: list[tuple[str, str, float]], threshold: dict) -> dict[tuple[str, str], dict]:
    """Each (night, key): the mean, the count, the median of up to seven earlier nights with 20 or more, crossed."""
    by_key: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for night, key, value in observations:
        by_key[key][night].append(value)
    out = {}
    for key, per_night in by_key.items():
        history = []
        for night in sorted(per_night):
            values = per_night[night]
            mean, count = sum(values) / len(values), len(values)
            base = statistics.median(history[-7:]) if history else None
            bounds = []
            if "above" in threshold:
                bounds.append(mean > threshold["above"])
            if "rise" in threshold and base is not None:
                bounds.append(mean > base * (1 + threshold["rise"]))
            judged = count >= 20 and bool(bounds)
            out[(night, key)] = {"value": mean, "count": count, "baseline": base, "crossed": judged and all(bounds)}
            if count >= 20:
                history.append(mean)
    return out


THRESHOLDS = {"provider_error_rate": {"above": 0.05, "rise": 1.0}, "tool_failure_rate": {"above": 0.25, "rise": 1.0},
              "cost_per_request": {"rise": 0.20}}


def _readings(cli, db: Path, *extra: str) -> list[dict]:
    result = cli("signals", "--db", db, "--since", "2026-11-20", "--json", *extra)
    assert result.code == 0, result.err
    return result.json()


@pytest.mark.parametrize("kind", ["planted", "clean"])
def test_every_figure_equals_the_raw_journals(cli, nights, kind):
    db, files = nights[kind]
    raw = raw_observations(files)
    readings = _readings(cli, db, *(f"--signal={name}" for name in THRESHOLDS))
    assert readings, "no readings"
    for name, threshold in THRESHOLDS.items():
        expected = oracle(raw[name], threshold)
        ours = {(r["window"], r["key"]): r for r in readings if r["signal"] == name}
        assert set(ours) == set(expected), name
        for cell, want in expected.items():
            got = ours[cell]
            scale = 1e-6 if name == "cost_per_request" else 1  # JSON gives dollars; the oracle micro-dollars
            assert got["count"] == want["count"], (name, cell)
            assert got["value"] == pytest.approx(want["value"] * scale, rel=1e-9), (name, cell)
            if want["baseline"] is None:
                assert got["baseline"] is None, (name, cell)
            else:
                assert got["baseline"] == pytest.approx(want["baseline"] * scale, rel=1e-9), (name, cell)
            assert got["crossed"] == want["crossed"], (name, cell, got["why"])


def test_the_planted_night_crosses_what_was_planted_and_nothing_else(cli, nights):
    db, _ = nights["planted"]
    crossed = {(r["signal"], r["key"]) for r in _readings(cli, db) if r["crossed"]}
    assert crossed == {("provider_error_rate", "gpt-5-mini"), ("cost_per_request", "fix_bug"),
                       ("tool_failure_rate", "lookup")}
    assert cli("signals", "--db", db, "--alert").code == 1
    hour = cli("signals", "--db", db, "--by", "hour", "--signal", "tool_failure_rate", "--since", "2026-11-27T22:00Z",
               "--crossed", "--json").json()
    assert hour and min(r["window"] for r in hour) == "2026-11-28 02:00"  # the hour the tool's schema changed


def test_a_clean_night_with_noise_pages_nobody(cli, nights):
    db, _ = nights["clean"]
    result = cli("signals", "--db", db, "--alert")
    assert result.code == 0, result.out
    assert "0 of" in result.out
    assert cli("signals", "--db", db, "--crossed", "--json").json() == []


def test_thresholds_come_from_reconcile_toml(cli, nights, tmp_path):
    db, _ = nights["planted"]
    (tmp_path / "reconcile.toml").write_text("[signals.provider_error_rate]\nalert_if = { above = 0.5 }\n"
                                             "[signals.cost_per_request]\nenabled = false\n")
    crossed = {(r["signal"], r["key"]) for r in _readings(cli, db) if r["crossed"]}
    assert crossed == {("tool_failure_rate", "lookup")}
    (tmp_path / "reconcile.toml").write_text("[signals.provider_error_rate]\nalert_if = { abov = 0.5 }\n")
    result = cli("signals", "--db", db)
    assert result.code == 2 and "reconcile.toml" in result.err and "'abov'" in result.err
    (tmp_path / "reconcile.toml").write_text("[signals.no_such]\nenabled = false\n")
    result = cli("signals", "--db", db)
    assert result.code == 2 and "no_such" in result.err


def test_a_team_adds_its_own_signal_as_a_file(cli, nights, tmp_path):
    db, _ = nights["planted"]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "long_answers.sql").write_text(
        "-- name: long_answers\n-- measures: the mean output tokens of a model call, by model\n-- aggregate: mean\n"
        "-- key: model\n-- unit: tokens\n-- alert_if: above 150, min_count 20\n-- remedy: ask for shorter answers\n"
        "select started_at as at, model as key, output_tokens as value from step_view where kind = 'model'\n")
    readings = [r for r in _readings(cli, db, "--signals-dir", mine, "--signal", "long_answers") if r["crossed"]]
    assert {r["key"] for r in readings} == {"claude-sonnet-4-5", "gpt-5-mini"}  # 200 a tool call, 100 the answer
    (mine / "long_answers.sql").write_text((mine / "long_answers.sql").read_text().replace("aggregate: mean",
                                                                                          "aggregate: median"))
    result = cli("signals", "--db", db, "--signals-dir", mine)
    assert result.code == 2 and "long_answers.sql:3" in result.err and "median" in result.err


def test_min_count_keeps_one_in_two_from_being_a_rate():
    assert judge(Threshold(above=0.05), 0.5, 2, None) == (False, False,
                                                          "too few observations to judge (2 < 20)")
    assert judge(Threshold(above=0.05, min_count=2), 0.5, 2, None)[0]


@pytest.mark.parametrize("threshold, value, baseline, crossed", [
    (Threshold(above=0.05), 0.05, None, False),  # exactly at the bound: not crossed
    (Threshold(above=0.05), 0.0500001, None, True),
    (Threshold(rise=1.0), 0.02, 0.01, False),  # exactly doubled: not crossed
    (Threshold(rise=1.0), 0.0200001, 0.01, True),
    (Threshold(rise=1.0), 0.001, 0.0, True),  # from nothing to something
    (Threshold(rise=1.0), 0.0, 0.0, False),
    (Threshold(above=0.05, rise=1.0), 0.06, 0.04, False),  # above, but not doubled: both must hold
    (Threshold(above=0.05, rise=1.0), 0.3, None, True),  # no baseline yet: the absolute bound decides
    (Threshold(below=0.25), 0.25, None, False),
    (Threshold(below=0.25), 0.2, None, True),
])
def test_exactly_at_a_bound_is_not_a_crossing(threshold, value, baseline, crossed):
    assert judge(threshold, value, 100, baseline)[0] is crossed


def test_a_rise_alone_without_a_baseline_is_not_judged():
    assert judge(Threshold(rise=0.2), 5.0, 100, None) == (
        False, False, "no baseline yet (no earlier window with enough observations)")


@pytest.mark.parametrize("text, message", [
    ("above", "is not 'above N'"), ("above 1, above 2", "twice"), ("min_count 5", "at least one of"),
    ("rise -0.5", "is a fall"), ("above 1, min_count 0.5", "whole number"), ("sideways 3", "is not 'above N'"),
])
def test_a_bad_alert_if_names_the_problem(text, message):
    with pytest.raises(SignalDefinitionError, match=message):
        parse_threshold(text, "f.sql:6")


def test_every_built_in_signal_parses_and_names_its_failure():
    from reconcile.checks.signal_files import load_signals

    signals = load_signals()
    assert len(signals) >= 10
    for signal in signals:
        assert signal.failure and signal.remedy and signal.measures, signal.name
        assert parse_signal(signal.path, True) == signal


def test_the_morning_report_opens_with_the_signals_that_crossed(cli, nights, tmp_path):
    planted, clean = nights["planted"][0], nights["clean"][0]
    assert cli("report", "morning", "--db", planted, "--out", tmp_path / "planted.html").code == 0
    html = (tmp_path / "planted.html").read_text()
    section = html[html.index('id="signals"'):html.index('id="glance"')]  # before the glance and the findings
    for name, key in (("provider_error_rate", "gpt-5-mini"), ("cost_per_request", "fix_bug"),
                      ("tool_failure_rate", "lookup")):
        assert f"<b>{name}</b>" in section and f"<b>{key}</b>" in section
    assert section.count("<svg") == 3  # a chart of its recent nights each
    assert cli("report", "morning", "--db", clean, "--out", tmp_path / "clean.html").code == 0
    assert 'id="signals"' not in (tmp_path / "clean.html").read_text()


def _in_pty(args: list[str], columns: int) -> list[str]:
    """``python -m reconcile.cli ARGS`` run in a real pseudo-terminal ``columns`` wide; its lines, escapes removed."""
    import fcntl
    import os
    import pty
    import re
    import struct
    import subprocess
    import sys
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    process = subprocess.Popen([sys.executable, "-m", "reconcile.cli", *args], stdin=slave, stdout=slave,
                               stderr=slave, env={**env, "TERM": "xterm"})
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert process.wait(timeout=60) in (0, 1)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.decode()).splitlines()


@pytest.mark.parametrize("columns", [80, 120])
def test_signals_fit_the_terminal(nights, columns):
    lines = _in_pty(["signals", "--db", str(nights["planted"][0])], columns)
    assert sum("ALERT" in line for line in lines) == 3
    assert max(len(line) for line in lines) <= columns, "\n".join(lines)
