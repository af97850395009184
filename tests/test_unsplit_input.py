"""Recorded totals kept when only their split is unknown (issue 47, item 11).

An Inspect log written before inspect 0.3.184 counts OpenAI's cache reads inside ``input_tokens``; a log that
records no ``input_tokens_cache_read`` leaves the split of that input into cached and uncached unknown — but not
the input itself, nor the total. The input and the total are kept; where the price list bills no prompt cache
(a model with no cache to speak of) the split is known, all uncached, and so is the cost; elsewhere the cost is a
range — all cached to all uncached — said so, and kept out of the exact figures. Every expectation here is
recomputed from the raw logs, with the hand-written prices of tests/oracle_prices.py.
"""

from __future__ import annotations

import json
import zipfile
from decimal import ROUND_HALF_UP, Decimal

import pytest

from conftest import ROOT
from oracle_prices import PRICES
from reconcile import store
from reconcile.ingest.driver import ingest

OLD = (ROOT / "tests" / "fixtures" / "realdata" / "inspect-ai"
       / "tests__scorer__logs__2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval")


def _samples(path):
    with zipfile.ZipFile(path) as archive:
        return [json.loads(archive.read(n)) for n in archive.namelist() if n.startswith("samples/")]


def _usages(sample) -> list[dict]:
    return [e["output"]["usage"] for e in sample["events"] if e.get("event") == "model"]


def _micros(tokens_at_prices) -> int:
    return int(sum(tokens_at_prices, Decimal(0)).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def _synthetic(model: str, uuid: str, input_tokens: int = 66) -> dict:
    """The old log's first sample as a .json log of an older inspect, its model swapped: input, output, total only."""
    with zipfile.ZipFile(OLD) as archive:
        header = json.loads(archive.read("header.json"))
    sample = _samples(OLD)[0]
    sample["uuid"] = uuid
    for event in sample["events"]:
        if event.get("event") == "model":
            event["model"] = model
            event["output"]["model"] = model.split("/", 1)[1]  # the model the provider says answered
            event["output"]["usage"] = {"input_tokens": input_tokens, "output_tokens": 1, "total_tokens": input_tokens + 1}
    sample["model_usage"] = {model: {"input_tokens": input_tokens, "output_tokens": 1, "total_tokens": input_tokens + 1}}
    header["eval"]["model"] = model
    header["eval"]["packages"]["inspect_ai"] = "0.3.42.dev"
    return {**header, "samples": [sample]}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    folder = tmp_path_factory.mktemp("unsplit")
    (folder / "old.eval").write_bytes(OLD.read_bytes())
    # the held-out log: a Llama on Azure AI (no price in the list), and a model whose price has no cache
    (folder / "llama.json").write_text(json.dumps(_synthetic("azureai/Meta-Llama-3-1-405B-Instruct", "llama")))
    (folder / "mistral.json").write_text(json.dumps(_synthetic("mistral/mistral-large-latest", "mistral")))
    # a prompt long enough to have been cached (OpenAI caches from 1,024 tokens): its split, and cost, a range
    (folder / "long.json").write_text(json.dumps(_synthetic("openai/gpt-4o-mini", "long", input_tokens=3000)))
    path = folder / "store.duckdb"
    with store.connect(path) as con:
        assert ingest(con, [folder]).totals["rejected"] == 0
    return path


def test_the_recorded_input_and_total_are_kept(cli, db):
    runs = {r["run_id"]: r for r in cli("runs", "--json", "--db", db).json()}
    for sample in _samples(OLD):
        usage = _usages(sample)
        run = runs[f"{sample['uuid']}" if sample.get("uuid") else next(k for k in runs if k.endswith(
            f"/{sample['id']}/epoch {sample['epoch']}"))]
        assert run["total_tokens"] == sum(u["total_tokens"] for u in usage)
    for uuid in ("llama", "mistral"):
        assert runs[uuid]["total_tokens"] == 67
    steps = cli("sql", "select run_id, input_tokens, input_uncached, cache_read from step_view where kind = 'model' "
                       "and run_id in ('llama', 'mistral') order by run_id", "--json", "--db", db).json()
    assert [(s["run_id"], s["input_tokens"]) for s in steps] == [("llama", 66), ("mistral", 66)]


def test_no_prompt_cache_means_the_split_is_known_and_the_cost_exact(cli, db):
    """Mistral Large's price bills no cache: its 66 input tokens are all uncached, its cost exact."""
    rows = cli("sql", "select input_uncached, cache_read, cost_micros from step_view where run_id = 'mistral' and "
                      "kind = 'model'", "--json", "--db", db).json()
    price = PRICES["mistral-large"][0]
    assert rows == [{"input_uncached": 66, "cache_read": 0,
                     "cost_micros": _micros([66 * price["input"], 1 * price["output"]])}]
    assert rows[0]["cost_micros"] == 138


def test_a_prompt_too_short_to_cache_is_all_uncached_and_exact(cli, db):
    """Issue 56: OpenAI caches only prompts of 1,024 tokens or more. Every prompt of the old log is shorter, so none
    was cached: the split is known (all uncached) and the cost exact."""
    price = PRICES["gpt-4o-mini"][0]
    usages = [u for sample in _samples(OLD) for u in _usages(sample)]
    assert usages and all(u["input_tokens"] < 1024 for u in usages)
    exact = _micros([Decimal(u["input_tokens"]) * price["input"] + u["output_tokens"] * price["output"] for u in usages])
    data = cli("cost", "--by", "run", "--json", "--db", db).json()
    old = [g for g in data["groups"] if g["key"] not in ("llama", "mistral", "long")]
    assert sum(g["model_calls"] for g in old) == len(usages)
    assert all(g["cost_usd"] is not None for g in old)
    assert round(sum(Decimal(str(g["cost_usd"])) for g in old) * 1_000_000) == pytest.approx(exact, abs=len(old))
    assert all(g["cache_read"] == 0 for g in old)


def test_a_model_with_a_cache_gets_a_range_kept_out_of_the_exact_figures(cli, db):
    """gpt-4o-mini caches a 3,000-token prompt: its input is all cached at the least, all uncached at the most."""
    price = PRICES["gpt-4o-mini"][0]
    low = _micros([3000 * price["cache_read"], 1 * price["output"]])
    high = _micros([3000 * price["input"], 1 * price["output"]])
    data = cli("cost", "--by", "run", "--json", "--db", db).json()
    group = next(g for g in data["groups"] if g["key"] == "long")
    assert group["cost_usd"] is None  # no exact figure: the split, and so the cost, is not known exactly
    assert (round(group["cost_low_usd"] * 1e6), round(group["cost_high_usd"] * 1e6)) == (low, high)
    assert group["input_uncached"] is None and group["cache_read"] is None  # the split stays unknown
    text = cli("cost", "--by", "run", "--db", db).out
    assert "1 call's cached share unknown" in text
    # the total is never the exact calls' part alone: no exact figure, at least the sum of the floors (the Llama on
    # Azure has no price at all, so no ceiling)
    runs = {g["key"]: g for g in data["groups"]}
    floors = sum(round(Decimal(str(g["cost_low_usd"])) * 1_000_000) for g in runs.values())
    assert data["total"]["cost_usd"] is None and data["total"]["cost_high_usd"] is None
    assert round(Decimal(str(data["total"]["cost_low_usd"])) * 1_000_000) == pytest.approx(floors, abs=len(runs))
    assert runs["mistral"]["cost_usd"] == 0.000138 and runs["llama"]["cost_usd"] is None
