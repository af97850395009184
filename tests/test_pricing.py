"""Prices: oracles (genai-prices' own calc_price, ccusage), overrides, dated prices, unknown models."""

from __future__ import annotations

import datetime as dt
import json
from decimal import ROUND_HALF_UP, Decimal

import pytest
from genai_prices import Usage, calc_price

from conftest import ROOT
from journals import StepClock, write_simple_run
from reconcile.prices import price_files, pricing
from reconcile import store
from reconcile.errors import BadInput
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal

REAL = ROOT / "tests" / "fixtures" / "realdata"


@pytest.fixture(scope="module")
def claude(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("price") / "cc.duckdb")
    ingest(con, [REAL / "spotter-real-sessions", REAL / "claude-code-viewer"])
    yield con
    con.close()


def test_every_step_costs_what_genai_prices_calc_price_says(claude):
    steps = claude.execute(
        """select s.price_model, s.price_provider, s.started_at, s.input_uncached, s.cache_read, s.cache_write_5m,
                  s.cache_write_1h, s.output_tokens, s.cost_micros
           from step_view s where s.kind = 'model' and s.cost_micros is not null""").fetchall()
    assert len(steps) > 500
    for model, provider, started, uncached, read, write_5m, write_1h, output, cost in steps:
        usage = Usage(input_tokens=uncached + read + write_5m + write_1h, cache_read_tokens=read,
                      cache_write_tokens=write_5m + write_1h, cache_write_1h_tokens=write_1h, output_tokens=output)
        expected = calc_price(usage, model_ref=model, provider_id=provider, genai_request_timestamp=started).total_price
        assert cost == int((expected * 1_000_000).quantize(Decimal(1), rounding=ROUND_HALF_UP)), (model, started)


@pytest.mark.parametrize("folder", ["spotter-real-sessions", "claude-code-viewer"])
def test_session_cost_is_within_half_a_percent_of_ccusage(claude, folder):
    reference = json.loads((REAL / "ccusage-reference" / f"v20.0.24_{folder}_session.json").read_text())
    for session in reference["sessions"]:  # ccusage's sessions are files: <id>.jsonl and its subagents/ folder
        ours = claude.execute("""select sum(cost_micros) from run_view
                                 where (source_file like '%/' || $s || '.jsonl' or source_file like '%/' || $s || '/subagents/%')
                                   and starts_with(source_file, $folder)""",
                              {"s": session["sessionId"], "folder": str(REAL / folder)}).fetchall()[0][0]
        assert abs(ours / 1e6 - session["totalCost"]) <= 0.005 * session["totalCost"], session["sessionId"]


def test_each_priced_step_names_its_price_source(claude):
    sources = claude.execute("select distinct price_source, price_version, priced_as from step_view "
                             "where cost_micros is not null order by priced_as").fetchall()
    assert {s[0] for s in sources} == {"genai-prices"} and all(s[1] for s in sources)
    assert ("genai-prices", pricing.snapshot_version(), "claude-sonnet-4-0") in sources


def test_tiers_price_every_token_of_a_long_request(con, tmp_path):
    path = tmp_path / "long.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        run = journal.start_run("long", agent="a", model="claude-sonnet-4-5", provider="anthropic")
        run.model_step(usage={"input_uncached": 200_000, "output": 1000})
        run.model_step(usage={"input_uncached": 200_001, "output": 1000})
        run.end("model_finished", status="succeeded")
    ingest(con, [path])
    costs = [c for (c,) in con.execute("select cost_micros from step_view order by idx").fetchall()]
    assert costs == [200_000 * 3 + 1000 * 15, 200_001 * 6 + int(1000 * 22.5)]


def test_an_override_file_wins_and_is_named(con, tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        write_simple_run(journal, "r1")
    ingest(con, [path])
    rates = tmp_path / "negotiated.csv"
    rates.write_text("provider,model,from,input,output,cache_read,cache_write_5m,cache_write_1h\n"
                     "anthropic,claude-sonnet-4-5,2026-01-01,2,10,0.2,2.5,4\n")
    assert pricing.load_overrides(con, rates) == 1
    pricing.resolve(con)
    row = con.execute("select cost_micros, price_source from step_view where idx = 0").fetchall()
    assert row == [(100 * 2 + 2000 * 0.2 + 300 * 2.5 + 40 * 4 + 80 * 10, str(rates))]


def test_dated_override_applies_from_its_date(con, tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal(path, clock=StepClock(dt.datetime(2026, 6, 1, tzinfo=dt.timezone.utc))) as journal:
        run = journal.start_run("early", agent="a", model="acme-7b", provider="acme")
        run.model_step(usage={"input_uncached": 1_000_000, "output": 0}, final=True, text="x")
        run.end("model_finished")
    ingest(con, [path])
    rates = tmp_path / "acme.toml"
    rates.write_text('[[price]]\nprovider = "acme"\nmodel = "acme-"\nfrom = 2026-07-01\ninput = 1\noutput = 2\n')
    pricing.load_overrides(con, rates)
    pricing.resolve(con)
    assert con.execute("select cost_micros, unpriced from step_view").fetchall() == [(None, True)]  # not yet valid
    rates.write_text('[[price]]\nprovider = "*"\nmodel = "acme-"\nfrom = 2026-05-01\ninput = 1\noutput = 2\n')
    pricing.load_overrides(con, rates)
    pricing.resolve(con)
    assert con.execute("select cost_micros, unpriced from step_view").fetchall() == [(1_000_000, False)]


@pytest.mark.parametrize("content,message", [
    ("provider,model,input\nacme,x,1\n", "the header lacks output"),
    ("provider,model,input,output\nacme,x,cheap,2\n", "input = 'cheap' is not a number"),
    ("provider,model,input,output,from\nacme,x,1,2,yesterday\n", "from = 'yesterday' is not a date"),
    ("provider,model,input,output\n,x,1,2\n", "'provider' is missing"),
])
def test_bad_override_files_say_where_and_how_to_fix(con, tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(BadInput, match=message):
        pricing.load_overrides(con, path)


def test_an_unknown_model_is_never_zero(con, tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        run = journal.start_run("m", agent="a", model="mystery-model-9")
        run.model_step(usage={"input_uncached": 500, "output": 20}, final=True, text="x")
        run.end("model_finished")
    ingest(con, [path])
    assert con.execute("select cost_micros, unpriced_steps from run_view").fetchall() == [(None, 1)]


@pytest.mark.parametrize("written, priced_as, via", [
    ("us.anthropic.claude-3-5-sonnet-20240620-v1:0", "regional.anthropic.claude-3-5-sonnet-20240620-v1:0", None),
    ("bedrock/anthropic.claude-3-haiku-20240307-v1:0", "regional.anthropic.claude-3-haiku-20240307-v1:0",
     "anthropic.claude-3-haiku-20240307-v1:0"),
    ("projects/p1/locations/europe-central2/publishers/google/models/gemini-2.5-flash", "gemini-2.5-flash",
     "gemini-2.5-flash"),
    ("vertex_ai/gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-pro"),
    ("anthropic/claude-sonnet-4-5", "claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("gemini-2.5-flash-001", "gemini-2.5-flash", "gemini-2.5-flash"),
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", None),  # genai-prices matches the dated id as written
])
def test_model_ids_are_normalised_before_pricing_and_the_lookup_is_recorded(tmp_path, written, priced_as, via):
    path = tmp_path / "j.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        run = journal.start_run("r", agent="a", model=written)
        run.model_step(usage={"input_uncached": 1000, "output": 100}, final=True, text="done")
        run.end("model_finished")
    con = store.connect(tmp_path / "s.duckdb")
    ingest(con, [path])
    assert con.execute("select priced_as, priced_from, cost_micros > 0, unpriced from step_view").fetchall() == [
        (priced_as, via, True, False)]


def _deepseek_step(con, tmp_path, name: str, day: dt.date) -> None:
    path = tmp_path / f"{name}.jsonl"
    with Journal(path, clock=StepClock(dt.datetime(day.year, day.month, day.day, 12, tzinfo=dt.timezone.utc))) as journal:
        run = journal.start_run(name, agent="a", model="deepseek-reasoner", provider="deepseek")
        run.model_step(usage={"input_uncached": 1_000_000, "cache_read": 1_000_000, "output": 1_000_000}, final=True,
                       text="x")
        run.end("model_finished")
    ingest(con, [path])


def test_a_shipped_correction_prices_its_period_and_the_library_the_rest(con, tmp_path):
    """genai-prices lists deepseek-reasoner at R1's night price; from 2025-09-29 DeepSeek charged V3.2's list."""
    _deepseek_step(con, tmp_path, "v32", dt.date(2026, 4, 13))
    _deepseek_step(con, tmp_path, "r1", dt.date(2025, 6, 1))
    priced = dict(con.execute("select run_id, (cost_micros, price_source, priced_as) from step_view").fetchall())
    assert priced["v32"] == (280_000 + 28_000 + 420_000, "reconcile-corrections", "deepseek-reasoner")
    assert priced["r1"] == (135_000 + 35_000 + 550_000, "genai-prices", "deepseek-reasoner")  # before any correction
    rates = tmp_path / "negotiated.csv"
    rates.write_text("provider,model,input,output,cache_read\ndeepseek,deepseek-reasoner,0.1,0.2,0.01\n")
    pricing.load_overrides(con, rates)
    pricing.resolve(con)
    assert con.execute("select cost_micros, price_source from step_view where run_id = 'v32'").fetchall() == [
        (100_000 + 10_000 + 200_000, str(rates))]  # a user's override wins over a correction


def test_corrections_are_listed_with_the_shipped_prices_and_cannot_be_removed(con, tmp_path):
    pricing.ensure_snapshot(con)
    assert pricing.list_prices(con) == []  # not a user's override
    listed = pricing.list_prices(con, "deepseek-reasoner", snapshot=True)
    assert listed[0]["source"] == "reconcile-corrections" and listed[-1]["source"] == "genai-prices"
    assert {(str(p["effective_from"]), str(p["uncached_mtok"])) for p in listed if p["effective_from"]} >= {
        ("2025-09-29", "0.280000000")}
    with pytest.raises(BadInput, match="no price override matches"):
        pricing.remove_overrides(con, model="deepseek-reasoner")


def test_a_changed_corrections_file_is_loaded_again(con, monkeypatch):
    pricing.ensure_snapshot(con)
    version, rows = price_files.corrections()
    monkeypatch.setattr(pricing, "corrections", lambda: ("newer", rows[:1]))
    pricing.ensure_snapshot(con)
    assert con.execute("select distinct source_version, count(*) from prices where source = 'reconcile-corrections' "
                       "group by 1").fetchall() == [("newer", 1)]


def test_an_override_period_that_ends_before_it_starts_is_refused(con, tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("provider,model,from,to,input,output\nacme,x,2026-05-01,2026-04-01,1,2\n")
    with pytest.raises(BadInput, match="to = 2026-04-01 is not after from = 2026-05-01"):
        pricing.load_overrides(con, path)
