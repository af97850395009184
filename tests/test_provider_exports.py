"""Provider usage and cost exports: real and documented shapes, overlaps, the cents trap."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal

import pytest

from conftest import ROOT
from reconcile.ingest.driver import ingest

FIXTURES = ROOT / "tests" / "fixtures"
PROVIDER = FIXTURES / "provider"


def totals(con, table="usage_buckets"):
    if table == "billed_costs":
        return con.execute("select count(*), sum(amount_usd) from billed_costs").fetchall()[0]
    return con.execute("select count(*), sum(input_uncached), sum(cache_read), sum(cache_write_5m), "
                       "sum(cache_write_1h), sum(output_tokens) from usage_buckets").fetchall()[0]


def test_the_real_openai_usage_export(con):
    source = FIXTURES / "realdata" / "openai-usage-api" / "cookbook_usage_completions_buckets.json"
    report = ingest(con, [source])
    assert report.files[0].format == "openai_usage" and (report.files[0].loaded, report.files[0].rejected) == (26, 0)
    data = json.loads(source.read_text())
    expected_input = sum(r["input_tokens"] for bucket in data for r in bucket["results"])
    row = con.execute("select sum(input_uncached + cache_read), sum(cache_read), sum(output_tokens), sum(requests) "
                      "from usage_buckets").fetchall()[0]
    assert row == (expected_input, sum(r["input_cached_tokens"] for b in data for r in b["results"]),
                   sum(r["output_tokens"] for b in data for r in b["results"]),
                   sum(r["num_model_requests"] for b in data for r in b["results"]))


def test_anthropic_usage_pages_are_additive_buckets(con):
    ingest(con, [PROVIDER / "anthropic_usage_pages.json"])
    rows = con.execute("select model, bucket_width, input_uncached, cache_read, cache_write_5m, cache_write_1h, "
                       "output_tokens, web_search_requests, api_key_id, workspace_id from usage_buckets "
                       "order by bucket_start, model").fetchall()
    assert rows[0] == ("claude-haiku-4-5-20251001", "1d", 700, 50000, 9000, 1200, 2500, 0, "apikey_01", "wrkspc_01")
    assert len(rows) == 3


def test_an_overlapping_download_changes_no_total(con, tmp_path):
    ingest(con, [PROVIDER / "anthropic_usage_page1.json"])
    first = totals(con)
    ingest(con, [PROVIDER / "anthropic_usage_pages.json"])  # page 1 again, and page 2
    both = totals(con)
    assert both[0] == 3 and both[1] == first[1] + 300
    replaced = con.execute("select count(*), any_value(replaced_file) like '%page1.json' from usage_replacements").fetchall()
    assert replaced == [(2, True)]  # page 1's two rows, replaced by the later download
    copy = tmp_path / "again.json"
    shutil.copy(PROVIDER / "anthropic_usage_pages.json", copy)
    ingest(con, [copy])
    assert totals(con) == both


def test_the_cents_string_trap(con):
    ingest(con, [PROVIDER / "anthropic_cost_report.json"])
    amounts = con.execute("select line_item, amount_usd, cost_type from billed_costs order by amount_usd desc").fetchall()
    assert amounts == [("Claude Sonnet 4.5 Usage - Input Tokens", Decimal("1.2345"), "tokens"),
                       ("Web search", Decimal("0.005"), "web_search")]  # "123.45" cents is $1.2345


def test_openai_costs_are_dollars(con):
    ingest(con, [PROVIDER / "openai_costs_page.json"])
    assert totals(con, "billed_costs") == (2, Decimal("0.1612"))


def test_csv_forms(con):
    report = ingest(con, [PROVIDER / "anthropic_usage.csv", PROVIDER / "openai_usage.csv"])
    assert sorted(f.format for f in report.files) == ["anthropic_usage", "openai_usage"]
    rows = dict(con.execute("select provider, (input_uncached, cache_read, cache_write_5m, output_tokens) "
                            "from usage_buckets").fetchall())
    assert rows == {"anthropic": (1500, 200000, 30000, 8000), "openai": (20000, 30000, 0, 4000)}


@pytest.mark.parametrize("mutate,reason", [
    (lambda r: r.pop("output_tokens"), 'result 1: result has no "output_tokens"'),
    (lambda r: r.pop("uncached_input_tokens"), 'result 1: result has no "uncached_input_tokens"'),
])
def test_a_result_missing_a_required_field_is_rejected(con, tmp_path, mutate, reason):
    page = json.loads((PROVIDER / "anthropic_usage_page1.json").read_text())
    mutate(page["data"][0]["results"][0])
    page["data"][0]["results"][0]["future_field"] = {"ignored": True}
    path = tmp_path / "usage.json"
    path.write_text(json.dumps(page))
    file = ingest(con, [path]).files[0]
    assert (file.lines, file.loaded, file.rejected) == (2, 1, 1)
    assert con.execute("select line, reason from rejects").fetchall() == [(1, reason)]


def test_a_repeated_result_within_one_file_is_skipped(con, tmp_path):
    page = json.loads((PROVIDER / "anthropic_usage_page1.json").read_text())
    path = tmp_path / "twice.json"
    path.write_text(json.dumps([page, page]))
    file = ingest(con, [path]).files[0]
    assert (file.lines, file.loaded, file.skipped) == (4, 2, 2)
    assert totals(con)[0] == 2
