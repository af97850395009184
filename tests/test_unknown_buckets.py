"""A token bucket a record leaves out is unknown: the call's cost, the run's totals and the cost report say so.

The store is written by the native journal (which defines an omitted bucket as 0) and then one
call's cache reads are made unknown, as a reader of a format that omits them writes them.
"""

from __future__ import annotations

import shutil

import pytest

from conftest import ROOT
from journals import journal_file
from reconcile import store
from reconcile.checks import load_checks, run_checks, select_checks
from reconcile.analyses.costs import BUCKETS, cost_report
from reconcile.ingest.driver import ingest
from reconcile.money import described
from reconcile.engine import DuckDBEngine

SWE_AGENT = ROOT / "tests" / "fixtures" / "realdata" / "swe-agent"
SWE_AGENT_RUN = "test_data__gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1__swe-agent__test-repo-i1"


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    path = tmp_path_factory.mktemp("buckets")
    connection = store.connect(path / "s.duckdb")
    ingest(connection, [journal_file(path / "j.jsonl", runs=("known", "partial"))])
    connection.execute("update steps set cache_read = null where run_id = 'partial' and idx = 0")
    store.rebuild_kept(connection)  # a store edited by hand: its kept totals written again (docs/architecture.md)
    yield connection
    connection.close()


def test_the_native_journal_writes_an_omitted_bucket_as_zero(con):
    # the second model step's usage leaves out cache_write_5m and cache_write_1h: the format says none
    assert con.execute("select cache_write_5m, cache_write_1h from steps where run_id = 'known' and idx = 4").fetchone() == (0, 0)


def test_a_call_with_an_unknown_bucket_has_an_unknown_cost(con):
    known, partial = con.execute("""select cost_micros, unknown_buckets, input_tokens from step_view
                                    where idx = 0 and run_id in ('known', 'partial') order by run_id""").fetchall()
    assert known[0] > 0 and known[1] is None and known[2] == 100 + 2000 + 300 + 40
    assert partial == (None, "cache_read", None)


def test_the_run_totals_of_that_bucket_are_unknown_the_others_kept(con):
    row = con.execute("""select cache_read, input_tokens, total_tokens, output_tokens, cache_write_5m, unknown_bucket_steps
                         from run_view where run_id = 'partial'""").fetchone()
    assert row == (None, None, None, 130, 300, 1)
    cost = con.execute("select ours_complete, calls_with_unknown_buckets from run_costs where run_id = 'partial'").fetchone()
    assert cost == (False, 1)
    assert con.execute("select ours_complete from run_costs where run_id = 'known'").fetchone() == (True,)


def test_the_cost_report_says_which_calls_it_could_not_price(con):
    by_run = {row["key"]: row for row in cost_report(DuckDBEngine(con), by="run", source="ours")["groups"]}
    assert by_run["known"]["cost_complete"] and by_run["known"]["calls_with_unknown_buckets"] == 0
    assert not by_run["partial"]["cost_complete"] and by_run["partial"]["calls_with_unknown_buckets"] == 1
    assert "at least $" in described(by_run["partial"]) and "1 call with a token count unknown" in described(by_run["partial"])
    assert by_run["partial"]["cost_per_completed_task_micros"] is None  # a partial sum is not the spend


def test_the_ledger_check_does_not_judge_a_run_whose_token_sums_are_unknown(con):
    report = run_checks(DuckDBEngine(con), select_checks(load_checks(), ["ledger_matches_transcript"]), record=False)
    assert report.findings == []
    (result,) = report.results
    assert [n.text() for n in result.not_judged] == [
        "1 native run: a model call's usage leaves a token bucket unknown (a cache or output count the record does not "
        "carry): the token sums are unknown"]


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_cost_buckets_are_null_where_a_run_records_no_usage(cli, tmp_path):
    """SWE-agent records no token usage: ``cost --json`` says its buckets are unknown (null), never 0, in its
    group and in the total; a native journal's are numbers; a store of both has the total unknown, each run its own."""
    swe, native, both = tmp_path / "swe", tmp_path / "native", tmp_path / "both"
    swe.mkdir()
    native.mkdir()
    shutil.copy(SWE_AGENT / f"{SWE_AGENT_RUN}.traj", swe)
    journal_file(native / "j.jsonl")
    shutil.copytree(swe, both)
    shutil.copytree(native, both, dirs_exist_ok=True)
    for folder in (swe, native, both):
        assert cli("ingest", folder, "--db", tmp_path / f"{folder.name}.duckdb").code == 0

    def cost(name: str, *by: str) -> dict:
        return cli("cost", "--json", *by, "--db", tmp_path / f"{name}.duckdb").json()

    swe_only = cost("swe")
    assert [swe_only["total"][bucket] for bucket in BUCKETS] == [None] * 5
    assert [swe_only["groups"][0][bucket] for bucket in BUCKETS] == [None] * 5
    assert swe_only["total"]["cache_hit_rate"] is None
    assert [cost("native")["total"][bucket] for bucket in BUCKETS] == [110, 4400, 300, 40, 130]
    mixed = cost("both", "--by", "run")
    assert [mixed["total"][bucket] for bucket in BUCKETS] == [None] * 5
    by_run = {group["key"]: [group[bucket] for bucket in BUCKETS] for group in mixed["groups"]}
    assert by_run == {"r1": [110, 4400, 300, 40, 130], SWE_AGENT_RUN: [None] * 5}


def test_the_cost_report_sums_a_bucket_only_where_every_call_knows_it(con):
    report = cost_report(DuckDBEngine(con), by="run", source="ours")
    by_run = {row["key"]: row for row in report["groups"]}
    assert by_run["known"]["cache_read"] == 4400 and by_run["known"]["cache_hit_rate"] is not None
    assert by_run["partial"]["cache_read"] is None and by_run["partial"]["output_tokens"] == 130
    assert by_run["partial"]["cache_hit_rate"] is None  # its input is unknown
    assert report["total"]["cache_read"] is None and report["total"]["output_tokens"] == 260
