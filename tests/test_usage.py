"""The three-way match on the sample night: exactly the planted gaps, and full coverage without them."""

from __future__ import annotations

import json

import pytest


from conftest import SAMPLE_RUNS
from reconcile.errors import ExitCode

def micros(dollars):
    """A --json amount (exact dollars, as --csv has it) back in micro-dollars, to compare with sums and ratios."""
    return None if dollars is None else round(dollars * 1_000_000)


BUCKETS = {"input_uncached": "input_uncached", "cache_read": "cache_read", "cache_write_5m": "cache_write_5m",
           "cache_write_1h": "cache_write_1h", "output": "output_tokens"}



def test_usage_reports_exactly_the_planted_unexplained_and_phantom_tokens(cli, night_db):
    planted = json.loads((SAMPLE_RUNS / "planted_usage.json").read_text())
    result = cli("usage", "--by", "model", "--json", "--db", night_db)
    assert result.code == ExitCode.OK
    report = result.json()
    for kind in ("unexplained", "phantom"):
        expected = {bucket: sum(v[bucket] for v in planted[kind].values()) for bucket in BUCKETS}
        got = {bucket: report["total"][f"{kind}_{column}"] for bucket, column in BUCKETS.items()}
        assert got == expected, kind
        for key, tokens in planted[kind].items():
            provider, model, day = key.split("|")
            group = next(g for g in report["groups"] if g["key"] == model)
            assert group[f"{kind}_tokens"] == sum(tokens.values())


def test_coverage_is_full_once_the_planted_gaps_are_removed(cli, night_db):
    total = cli("usage", "--json", "--db", night_db).json()["total"]
    assert total["provider_tokens"] - total["unexplained_tokens"] == total["explained_tokens"]
    assert total["journal_tokens"] - total["phantom_tokens"] == total["explained_tokens"]
    assert 0.99 < total["coverage_tokens"] < 1 and micros(total["unexplained_usd"]) > 0 and micros(total["phantom_usd"]) > 0


def test_every_grouping_and_the_billed_side(cli, night_db):
    for by in ("day", "hour", "model", "api_key", "workspace", "project"):
        report = cli("usage", "--by", by, "--json", "--db", night_db).json()
        assert sum(g["provider_tokens"] for g in report["groups"]) == report["total"]["provider_tokens"], by
    assert cli("usage", "--by", "planet", "--db", night_db).code == ExitCode.BAD_INPUT
    billed = cli("usage", "--json", "--db", night_db).json()["billed"]
    assert {b["provider"] for b in billed} == {"anthropic", "openai"}
    out = cli("usage", "--db", night_db).out
    header = set(out.split("┡")[0].replace("┃", " ").split())  # a header may break between its words
    assert {"unexplained", "tokens"} <= header and "│ total" in out and "46,522" in out  # the lost run's tokens


def test_reingesting_an_overlapping_export_changes_no_total(cli, night_db, tmp_path):
    copy = tmp_path / "night.duckdb"
    copy.write_bytes(night_db.read_bytes())
    before = cli("usage", "--json", "--db", copy).json()["total"]
    again = tmp_path / "again_usage.json"
    again.write_text((SAMPLE_RUNS / "provider" / "anthropic_usage_report.json").read_text())
    assert cli("ingest", again, "--db", copy).code == ExitCode.OK
    assert cli("usage", "--json", "--db", copy).json()["total"] == before
    replaced = cli("sql", "select count(*) as n from usage_replacements", "--json", "--db", copy).json()[0]["n"]
    assert replaced > 0


@pytest.mark.parametrize("by", ["day", "hour", "model", "api_key", "workspace", "project"])
def test_every_grouping_adds_up_to_the_ungrouped_total(cli, night_db, by):
    report = cli("usage", "--by", by, "--json", "--db", night_db).json()
    ungrouped = cli("usage", "--json", "--db", night_db).json()["total"]
    for column in ("provider_tokens", "journal_tokens", "ledger_tokens", "explained_tokens", "unexplained_tokens",
                   "phantom_tokens", "provider_usd", "explained_usd", "unexplained_usd", "phantom_usd"):
        exact = micros if column.endswith("_usd") else (lambda v: v)  # dollars summed as micro-dollars: exact
        assert sum(exact(g[column]) or 0 for g in report["groups"]) == exact(report["total"][column]) \
            == exact(ungrouped[column]), column


def test_the_ledger_is_allocated_call_by_call(cli, night_db):
    by_workspace = {g["key"]: g for g in cli("usage", "--by", "workspace", "--json", "--db", night_db).json()["groups"]}
    nightly = by_workspace["wrkspc_nightly"]  # anthropic's rows only: the ledger follows those runs' calls
    assert nightly["ledger_tokens"] <= nightly["journal_tokens"] * 1.05 < nightly["provider_tokens"] * 1.1


def test_with_no_provider_export_usage_says_so_in_a_sentence(cli, tmp_path):
    """Issue 50: journals with no bill to match print what to load, not a total row of blanks and "unknown"."""
    from datetime import datetime, timezone

    from journals import StepClock, write_simple_run
    from reconcile.journal import Journal

    with Journal(tmp_path / "night.jsonl", clock=StepClock(datetime(2026, 11, 28, 22, tzinfo=timezone.utc))) as journal:
        write_simple_run(journal)
    assert cli("ingest", tmp_path / "night.jsonl", "--db", tmp_path / "s.duckdb").code == 0
    result = cli("usage", "--db", tmp_path / "s.duckdb")
    assert result.code == 0 and "No provider usage or cost export is loaded" in result.out
    assert "unknown" not in result.out and "total" not in result.out
    assert cli("usage", "--json", "--db", tmp_path / "s.duckdb").json()["groups"] == []  # machines: the empty shape
