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
from terminal import in_pty
from reconcile.ingest.driver import ingest
from signal_nights import NEW_SHAPE, write_nights
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
    runs, shapes, costs = {}, [], {}
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
                if cost is not None:  # a run's calls: one observation a run, its mean
                    costs.setdefault(record["run_id"], []).append(cost)
            elif record["kind"] == "tool" and record["status"] not in ("started", "not_run"):
                found["tool_failure_rate"].append(
                    (night, record["tool"], 1.0 if record["status"] in ("error", "timeout", "invalid_args") else 0.0))
                shapes.append((record["ts"], record["tool"], shape_of(json.loads(record["result_preview"]))))
    found["tool_result_shape"] = new_shapes(shapes)
    found["cost_per_request"] = [(_night(runs[run]["ts"]), runs[run]["task_class"], sum(c) / len(c))
                                 for run, c in costs.items()]
    return found


def shape_of(value, path: str = "$") -> str:
    """A JSON value's key paths and value types, sorted, an array's items merged: "$ object, $.a number"."""
    kinds = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null", int: "number",
             float: "number"}
    found = {f"{path} {kinds[type(value)]}"}
    children = value.items() if isinstance(value, dict) else (("[]", item) for item in value) if isinstance(
        value, list) else ()
    for key, item in children:
        found |= set(shape_of(item, f"{path}{key}" if key == "[]" else f"{path}.{key}").split(", "))
    return ", ".join(sorted(found))


def new_shapes(shapes: list[tuple[str, str, str]]) -> list[tuple[str, str, float]]:
    """1 for a result whose shape its tool first returned in the 24 hours before (and a day or more after the
    tool's first result), else 0."""
    moment = lambda ts: datetime.fromisoformat(ts.replace("Z", "+00:00"))  # noqa: E731
    first_shape, first_tool = {}, {}
    for ts, tool, shape in shapes:
        first_shape[(tool, shape)] = min(first_shape.get((tool, shape), moment(ts)), moment(ts))
        first_tool[tool] = min(first_tool.get(tool, moment(ts)), moment(ts))
    day = timedelta(hours=24)
    return [(_night(ts), tool, 1.0 if first_shape[(tool, shape)] >= first_tool[tool] + day
             and moment(ts) < first_shape[(tool, shape)] + day else 0.0) for ts, tool, shape in shapes]


def oracle(observations: list[tuple[str, str, float]], threshold: dict) -> dict[tuple[str, str], dict]:
    """Each (night, key): the mean, the count, the median over the seven nights before of those with min_count or
    more observations, crossed."""
    least = threshold.get("min_count", 20)
    by_key: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for night, key, value in observations:
        by_key[key][night].append(value)
    out = {}
    for key, per_night in by_key.items():
        history = []
        for night in sorted(per_night):
            values = per_night[night]
            mean, count = sum(values) / len(values), len(values)
            day = datetime.fromisoformat(night)
            recent = [v for n, v in history if datetime.fromisoformat(n) >= day - timedelta(days=7)]
            base = statistics.median(recent) if recent else None
            bounds = []
            if "above" in threshold:
                bounds.append(mean > threshold["above"])
            if "rise" in threshold and base is not None:
                bounds.append(mean > base * (1 + threshold["rise"]))
            judged = count >= least and bool(bounds)
            out[(night, key)] = {"value": mean, "count": count, "baseline": base, "crossed": judged and all(bounds)}
            if count >= least:
                history.append((night, mean))
    return out


THRESHOLDS = {"provider_error_rate": {"above": 0.05, "rise": 1.0}, "tool_failure_rate": {"above": 0.25, "rise": 1.0},
              "cost_per_request": {"rise": 0.20, "min_count": 10}, "tool_result_shape": {"above": 0.20, "rise": 1.0}}


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
                       ("tool_failure_rate", "lookup"), ("tool_result_shape", "lookup")}
    assert cli("signals", "--db", db, "--alert").code == 1
    hour = cli("signals", "--db", db, "--by", "hour", "--signal", "tool_failure_rate", "--since", "2026-11-27T22:00Z",
               "--crossed", "--json").json()
    assert hour and min(r["window"] for r in hour) == "2026-11-28 02:00"  # the hour the tool's schema changed


def test_a_new_result_shape_names_the_shape_before_and_after_and_the_failure_rate_beside_it(cli, nights):
    db, _ = nights["planted"]
    [reading] = [r for r in _readings(cli, db, "--signal", "tool_result_shape", "--crossed")]
    assert reading["key"] == "lookup" and reading["window"] == "2026-11-27"
    assert reading["detail"] == shape_of(json.loads(NEW_SHAPE))
    assert reading["detail_before"] == "$ object, $.rows array, $.rows[] number"
    assert reading["beside"]["signal"] == "tool_failure_rate" and reading["beside"]["crossed"]


def test_a_harness_pinned_schema_hash_is_the_shape(cli, tmp_path):
    """A journal's result_schema (the hash the harness pins) is what the shape signal compares, before any text."""
    from reconcile.journal import Journal
    from signal_nights import Clock

    clock = Clock(datetime(2026, 11, 1, 22, 0).astimezone())
    path = tmp_path / "pinned.jsonl"
    with Journal(path, clock=clock) as journal:
        for night in range(3):
            clock.now = datetime(2026, 11, 1 + night, 21, 59).astimezone()
            run = journal.start_run(f"p{night}", agent="a", tools=[{"name": "lookup"}])
            for call in range(30):
                clock.now = datetime(2026, 11, 1 + night, 22, 0).astimezone() + timedelta(minutes=call)
                step = run.model_step(usage={"input_uncached": 10, "output": 1}, tool_calls=[("lookup", {"n": call})])
                run.tool_step(step.calls[0], result="not json at all", result_schema="v2" if night == 2 else "v1")
            run.end("done")
    assert cli("ingest", path, "--db", tmp_path / "p.duckdb").code == 0
    [reading] = cli("signals", "--db", tmp_path / "p.duckdb", "--signal", "tool_result_shape", "--json").json()
    assert reading["crossed"] and reading["detail"] == "schema v2" and reading["detail_before"] == "schema v1"


def test_a_baseline_is_the_nights_just_before_not_the_last_with_data(cli, tmp_path):
    """Two nights a month apart: the later one has no baseline (a month-old night says nothing of it)."""
    from reconcile.journal import Journal
    from signal_nights import Clock

    clock = Clock(datetime(2026, 10, 1, 22, 0).astimezone())
    path = tmp_path / "apart.jsonl"
    with Journal(path, clock=clock) as journal:
        for night, day in enumerate((datetime(2026, 10, 1, 22), datetime(2026, 11, 1, 22))):
            clock.now = day.astimezone()
            run = journal.start_run(f"a{night}", agent="a", model="gpt-5-mini", provider="openai")
            for call in range(30):
                clock.now += timedelta(seconds=30)
                refused = night == 1 and call % 3 == 0
                run.model_step(usage={} if refused else {"input_uncached": 10, "output": 1}, model="gpt-5-mini",
                               **({"error_class": "transport"} if refused else {}))
            run.end("done")
    assert cli("ingest", path, "--db", tmp_path / "a.duckdb").code == 0
    [reading] = cli("signals", "--db", tmp_path / "a.duckdb", "--signal", "provider_error_rate", "--json").json()
    assert reading["baseline"] is None and reading["baseline_windows"] == 0
    assert reading["crossed"] and reading["why"] == "crossed: above 0.05"  # the absolute bound decides alone
    # with a month's baseline allowed, the month-old night is the baseline
    [reading] = cli("signals", "--db", tmp_path / "a.duckdb", "--signal", "provider_error_rate", "--baseline", "40",
                    "--json").json()
    assert reading["baseline"] == 0.0 and reading["baseline_windows"] == 1


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
    assert crossed == {("tool_failure_rate", "lookup"), ("tool_result_shape", "lookup")}
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
    shown = cli("signals", "--db", db, "--signals-dir", mine, "--signal", "long_answers")
    assert "long_answers is read from the steps each time, not from kept sums: its header does not promise" in shown.out
    (mine / "long_answers.sql").write_text((mine / "long_answers.sql").read_text().replace(
        "-- unit:", "-- kept: by run\n-- unit:").replace("select started_at", "select run_id, started_at"))
    kept = [r for r in _readings(cli, db, "--signals-dir", mine, "--signal", "long_answers") if r["crossed"]]
    assert [(r["key"], r["count"], r["value"]) for r in kept] == [(r["key"], r["count"], r["value"]) for r in readings]
    assert "read from the steps" not in cli("signals", "--db", db, "--signals-dir", mine, "--signal", "long_answers").out
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


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_the_morning_report_opens_with_the_signals_that_crossed(cli, nights, tmp_path):
    planted, clean = nights["planted"][0], nights["clean"][0]
    assert cli("report", "morning", "--db", planted, "--out", tmp_path / "planted.html").code == 0
    html = (tmp_path / "planted.html").read_text()
    section = html[html.index('id="signals"'):html.index("<h2>Findings")]  # after the glance, before the findings
    assert html.index('id="glance"') < html.index('id="signals"') and 'href="#signals"' in html.split("<section")[0]
    for name, key in (("provider_error_rate", "gpt-5-mini"), ("cost_per_request", "fix_bug"),
                      ("tool_failure_rate", "lookup")):
        assert f"<b>{name}</b>" in section and f"<b>{key}</b>" in section
    assert section.count("<svg") == 4  # a chart of its recent nights each
    assert "Now: $ object, $.data object" in section and "Before: $ object, $.rows array" in section
    assert cli("report", "morning", "--db", clean, "--out", tmp_path / "clean.html").code == 0
    assert 'id="signals"' not in (tmp_path / "clean.html").read_text()


@pytest.mark.parametrize("columns", [80, 120])
def test_signals_fit_the_terminal(nights, columns):
    lines = in_pty(["signals", "--db", str(nights["planted"][0])], columns)
    assert sum("ALERT" in line for line in lines) == 4
    assert max(len(line) for line in lines) <= columns, "\n".join(lines)
