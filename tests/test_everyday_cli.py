"""The everyday CLI: `reconcile runs`, time words and zones, CSV and Parquet exports, one table code."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timezone
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from conftest import ROOT
from reconcile.errors import BadInput, ExitCode
from reconcile.when import local_zone, parse_when, resolve_zone, window

def micros(dollars):
    """A --json amount (exact dollars, as --csv has it) back in micro-dollars, to compare with sums and ratios."""
    return None if dollars is None else round(dollars * 1_000_000)


SPOTTER = ROOT / "tests" / "fixtures" / "realdata" / "spotter-real-sessions"
CCUSAGE = ROOT / "tests" / "fixtures" / "realdata" / "ccusage-reference"
NOW = datetime(2026, 12, 1, 9, 30, tzinfo=timezone.utc)


def rows_of(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


# --- time -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, end, zone, expected", [
    ("today", False, "UTC", "2026-12-01T00:00:00+00:00"),
    ("today", True, "UTC", "2026-12-02T00:00:00+00:00"),
    ("yesterday", False, "Europe/Paris", "2026-11-29T23:00:00+00:00"),  # midnight in Paris is 23:00 UTC
    ("yesterday", True, "Europe/Paris", "2026-11-30T23:00:00+00:00"),
    ("7d", False, "UTC", "2026-11-24T09:30:00+00:00"),
    ("2w", False, "America/New_York", "2026-11-17T09:30:00+00:00"),
    ("12h", False, "UTC", "2026-11-30T21:30:00+00:00"),
    ("now", True, "UTC", "2026-12-01T09:30:00+00:00"),
    ("2026-11-28", False, "America/Los_Angeles", "2026-11-28T08:00:00+00:00"),
    ("2026-11-28", True, "America/Los_Angeles", "2026-11-29T08:00:00+00:00"),
    ("2026-11-28T22:00", False, "Europe/Paris", "2026-11-28T21:00:00+00:00"),  # no offset: the zone's wall clock
    ("2026-11-28T22:00:00Z", False, "Europe/Paris", "2026-11-28T22:00:00+00:00"),  # an offset wins
])
def test_time_words_dates_and_zones(text, end, zone, expected):
    assert parse_when(text, zone, end=end, now=NOW).isoformat() == expected


@pytest.mark.parametrize("text", ["tomorrowish", "7x", "2026-13-01", "-3d", "99999999d"])
def test_a_bad_moment_names_the_option_the_value_and_the_forms(text):
    with pytest.raises(BadInput) as caught:
        window(text, None, "UTC", now=NOW)
    message = str(caught.value)
    assert f"--since {text!r}" in message and "yesterday" in message and "7d" in message


def test_reversed_window_and_unknown_zone_are_refused():
    with pytest.raises(BadInput, match="not after --since"):
        window("today", "yesterday", "UTC", now=NOW)
    with pytest.raises(BadInput, match="Europe/Paris") as caught:
        resolve_zone("Europe/Pariss")
    assert "close: Europe/Paris" in str(caught.value)


def test_the_default_zone_is_the_machine_s_and_utc_has_one_name(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    assert local_zone() == resolve_zone(None) == "Asia/Tokyo"
    monkeypatch.setenv("TZ", "Etc/UTC")
    assert local_zone() == "UTC"
    monkeypatch.setenv("TZ", "../../etc/passwd")  # a zone name is never a path: the machine's zone is used instead
    assert "passwd" not in local_zone() and resolve_zone(local_zone()) == local_zone()
    monkeypatch.setenv("TZ", "Not/A_Zone")
    assert local_zone() != "Not/A_Zone"


def test_one_night_is_one_day_in_the_team_s_zone(cli, night_db):
    """The sample night (22:02 to 05:29 UTC) is two UTC days, and one day in Los Angeles."""
    utc = cli("cost", "--by", "day", "--tz", "UTC", "--json", "--db", night_db).json()
    assert [(g["key"], g["runs"]) for g in utc["groups"]] == [("2026-11-28", 97), ("2026-11-29", 203)]
    pacific = cli("cost", "--by", "day", "--tz", "America/Los_Angeles", "--json", "--db", night_db).json()
    assert [(g["key"], g["runs"]) for g in pacific["groups"]] == [("2026-11-28", 300)]
    week = cli("cost", "--by", "week", "--json", "--db", night_db).json()
    month = cli("cost", "--by", "month", "--json", "--db", night_db).json()
    assert [g["key"] for g in week["groups"]] == ["2026-W48"] and [g["key"] for g in month["groups"]] == ["2026-11"]
    assert micros(week["total"]["cost_usd"]) == micros(month["total"]["cost_usd"]) == micros(utc["total"]["cost_usd"])
    table = cli("cost", "--by", "day", "--tz", "America/Los_Angeles", "--db", night_db).out
    assert "days in America/Los_Angeles" in table


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_every_reporting_command_takes_the_same_window(cli, night_db):
    early = ["--since", "2026-11-28T22:00Z", "--until", "2026-11-29T00:00Z"]
    runs = cli("runs", *early, "--json", "--db", night_db).json()
    assert len(runs) == 97 and all(r["started_at"] < "2026-11-29" for r in runs)
    assert cli("cost", *early, "--json", "--db", night_db).json()["total"]["runs"] == 97
    assert cli("budgets", *early, "--json", "--db", night_db).json()["groups"]
    assert cli("check", *early, "--json", "--exit-zero", "--db", night_db).json()["runs"] == 97
    assert cli("usage", "--since", "2026-11-29", "--tz", "UTC", "--json", "--db", night_db).json()["groups"][0]["key"] \
        == "2026-11-29"
    for command in (["runs"], ["cost"], ["budgets"], ["usage"], ["check", "--exit-zero"]):
        assert cli(*command, "--since", "yesterday", "--tz", "Mars/Olympus", "--db", night_db).code == ExitCode.BAD_INPUT
        assert cli(*command, "--since", "3 days ago", "--db", night_db).code == ExitCode.BAD_INPUT
    empty = cli("report", "finance", "--since", "today", "--db", night_db, "--out", "f.html")
    assert empty.code == ExitCode.BAD_INPUT and "no runs since" in empty.err and "the store spans" in empty.err


# --- reconcile runs -------------------------------------------------------------------------------------

def test_runs_filters_sorts_and_cuts(cli, night_db):
    every = cli("runs", "--json", "--db", night_db).json()
    assert len(every) == 300 and [r["started_at"] for r in every] == sorted(r["started_at"] for r in every)
    costly = cli("runs", "--sort", "cost", "-n", "5", "--json", "--db", night_db).json()
    assert len(costly) == 5 and costly[0]["run_id"] == "0ca2"
    assert [micros(r["cost_usd"]) for r in costly] == sorted((micros(r["cost_usd"]) for r in costly), reverse=True)
    assert micros(costly[0]["cost_usd"]) == max(micros(r["cost_usd"]) or 0 for r in every)
    longest = cli("runs", "--sort", "wall", "-n", "1", "--json", "--db", night_db).json()[0]
    assert longest["wall_seconds"] == max(r["wall_seconds"] or 0 for r in every)
    steps = cli("runs", "--sort", "steps", "-n", "3", "--json", "--db", night_db).json()
    assert [r["steps"] for r in steps] == sorted((r["steps"] for r in every), reverse=True)[:3]
    failed = cli("runs", "--status", "failed", "--status", "stalled", "--agent", "coder", "--json", "--db", night_db).json()
    assert failed and {(r["status"], r["agent"]) for r in failed} <= {("failed", "coder"), ("stalled", "coder")}
    assert len(failed) == sum(1 for r in every if r["agent"] == "coder" and r["status"] in ("failed", "stalled"))
    table = cli("runs", "--status", "failed", "--db", night_db).out
    assert "run(s): 10 failed" in table and "│ f423 " in table
    for bad in (["--status", "exploded"], ["--sort", "colour"], ["-n", "0"], ["--cost-source", "guess"]):
        result = cli("runs", *bad, "--db", night_db)
        assert result.code == ExitCode.BAD_INPUT and bad[1] in result.err


def test_runs_fold_claude_code_subagents_into_sessions_like_ccusage(cli, db_path):
    assert cli("ingest", SPOTTER / "projects", "--db", db_path).code == ExitCode.OK
    sessions = cli("runs", "--json", "--db", db_path).json()
    reference = json.loads((CCUSAGE / "v20.0.24_spotter-real-sessions_session.json").read_text())["sessions"]
    assert {r["run_id"]: r["total_tokens"] for r in sessions} == {s["sessionId"]: s["totalTokens"] for s in reference}
    for row in sessions:  # cost within half a percent of ccusage's (it prices 1-hour cache writes as 5-minute ones)
        theirs = next(s["totalCost"] for s in reference if s["sessionId"] == row["run_id"])
        assert abs(row["cost_usd"] - theirs) / theirs < 0.005 and row["subagents"] == 2
    apart = cli("runs", "--no-fold-subagents", "--json", "--db", db_path).json()
    assert len(apart) == 6 and "subagents" not in apart[0]
    assert sum(r["total_tokens"] for r in apart) == sum(r["total_tokens"] for r in sessions)


# --- exports --------------------------------------------------------------------------------------------

TABULAR = [
    (["runs"], "cost_usd"), (["cost", "--by", "agent"], "cost_usd"), (["budgets"], "p99"), (["usage"], "phantom_usd"),
    (["check", "--exit-zero"], "detail"), (["reprice", "--as-of", "2026-01-01"], "difference_usd"), (["show", "0ca2"], "cost_usd"),
    (["prices", "list", "--snapshot", "--model", "haiku-4-5"], "output_mtok"), (["cost", "project"], "cached_usd"),
    (["summary"], "cost_usd"), (["config"], "value"), (["sql", "select run_id, cost_micros from run_view order by run_id limit 3"], "cost_micros"),
]


@pytest.mark.parametrize("command, column", [t for t in TABULAR if t[1]], ids=lambda value: str(value))
def test_every_tabular_command_exports_csv_and_parquet(cli, night_db, tmp_path, command, column):
    exported = cli(*command, "--csv", "--db", night_db)
    assert exported.code == ExitCode.OK, exported.err
    assert "\r" not in exported.out and exported.out.endswith("\n")
    rows = rows_of(exported.out)
    assert rows and column in rows[0]
    target = tmp_path / "out.parquet"
    written = cli(*command, "--parquet", target, "--db", night_db)
    assert written.code == ExitCode.OK and written.out == "" and "row(s) to" in written.err
    table = pq.read_table(target)
    assert table.num_rows == len(rows) and column in table.column_names
    assert cli(*command, "--csv", "--json", "--db", night_db).code == ExitCode.BAD_INPUT


def test_exported_money_is_exact_dollars_equal_to_the_json_dollars(cli, night_db, tmp_path):
    as_json = {g["key"]: g["cost_usd"] for g in cli("cost", "--by", "agent", "--json", "--db", night_db).json()["groups"]}
    dollars = {row["key"]: row["cost_usd"] for row in rows_of(cli("cost", "--by", "agent", "--csv", "--db", night_db).out)}
    assert as_json and all(Decimal(dollars[key]) == Decimal(str(as_json[key])) for key in as_json)  # same digits
    cli("cost", "--by", "agent", "--parquet", tmp_path / "c.parquet", "--db", night_db)
    table = pq.read_table(tmp_path / "c.parquet")
    assert str(table.schema.field("cost_usd").type) == "decimal128(20, 6)"
    assert {k: v for k, v in zip(table["key"].to_pylist(), table["cost_usd"].to_pylist())} == {
        key: Decimal(value) for key, value in dollars.items()}
    runs = pq.read_table(_parquet(cli, night_db, tmp_path, "runs"))
    assert str(runs.schema.field("started_at").type) == "timestamp[us, tz=UTC]"


def _parquet(cli, db, tmp_path, *command):
    target = tmp_path / f"{command[0]}.parquet"
    assert cli(*command, "--parquet", target, "--db", db).code == ExitCode.OK
    return target


def test_parquet_into_a_folder_or_nowhere_is_a_clear_error(cli, night_db, tmp_path):
    result = cli("runs", "--parquet", tmp_path, "--db", night_db)
    assert result.code == ExitCode.BAD_INPUT and "is a folder" in result.err


def test_prices_list_and_remove(cli, night_db, tmp_path):
    import shutil
    db = tmp_path / "night.duckdb"
    shutil.copy(night_db, db)
    prices = tmp_path / "negotiated.csv"
    prices.write_text("provider,model,input,output,cache_read\nanthropic,claude-sonnet-4-5,2.5,12,0\n")
    assert "No price overrides are loaded" in cli("prices", "list", "--db", db).out
    before = cli("cost", "--by", "model", "--json", "--db", db).json()
    assert cli("prices", "add", prices, "--db", db).code == ExitCode.OK
    listed = cli("prices", "list", "--json", "--db", db).json()
    assert [(p["model"], p["cache_read_mtok"], p["source"]) for p in listed] == [
        ("claude-sonnet-4-5", "0.000000000", str(prices))]  # a free cache read is a price of 0, not "missing"
    exported = rows_of(cli("prices", "list", "--csv", "--db", db).out)
    assert exported[0]["cache_read_mtok"] == "0.000000000" and exported[0]["uncached_mtok"] == "2.500000000"
    during = {g["key"]: micros(g["cost_usd"]) for g in cli("cost", "--by", "model", "--json", "--db", db).json()["groups"]}
    assert during["claude-sonnet-4-5"] != next(micros(g["cost_usd"]) for g in before["groups"] if g["key"] == "claude-sonnet-4-5")
    missing = cli("prices", "remove", tmp_path / "other.csv", "--db", db)
    assert missing.code == ExitCode.BAD_INPUT and "claude-sonnet-4-5" in missing.err  # it says what is loaded
    assert cli("prices", "remove", "--db", db).code == ExitCode.BAD_INPUT
    assert "1 price override(s) removed" in cli("prices", "remove", prices, "--db", db).out
    assert cli("prices", "list", "--json", "--db", db).json() == []
    after = cli("cost", "--by", "model", "--json", "--db", db).json()
    assert micros(after["total"]["cost_usd"]) == micros(before["total"]["cost_usd"])
    cli("prices", "add", prices, "--db", db)
    assert "1 price override(s)" in cli("prices", "remove", "--model", "claude-sonnet-4-5", "--db", db).out
