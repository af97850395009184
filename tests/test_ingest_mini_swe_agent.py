"""mini-swe-agent trajectories (1 and 1.1): per-call usage, the harness's own cost, exit statuses, submissions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest import ingest

MINI = ROOT / "tests" / "fixtures" / "realdata" / "mini-swe-agent"
TRAJECTORIES = sorted(MINI.rglob("*.traj.json"))


def independent(path: Path) -> dict:
    """Written here from the raw file: token sums over the assistant messages' provider usage, and costs."""
    data = json.loads(path.read_text(encoding="utf-8"))
    usages = [m["extra"]["response"]["usage"] for m in data["messages"]
              if m["role"] == "assistant" and m.get("extra", {}).get("response", {}).get("usage")]
    costs = [m["extra"].get("cost", m["extra"]["response"]["usage"].get("cost"))
             for m in data["messages"] if m["role"] == "assistant" and m.get("extra", {}).get("response")]
    return {"run": path.name.removesuffix(".traj.json"), "calls": len(usages),
            "prompt": sum(u["prompt_tokens"] for u in usages),
            "cached": sum((u.get("prompt_tokens_details") or {}).get("cached_tokens", 0) for u in usages),
            "completion": sum(u["completion_tokens"] for u in usages),
            "cost": sum(c or 0 for c in costs), "instance_cost": data["info"]["model_stats"]["instance_cost"],
            "exit_status": data["info"]["exit_status"]}


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("mini") / "mini.duckdb")
    report = ingest(con, [MINI])
    yield con, report
    con.close()


def test_every_trajectory_loads_without_a_reject(mini):
    _, report = mini
    loaded = [f for f in report.files if f.format == "mini_swe_agent"]
    assert len(loaded) == len(TRAJECTORIES) == 5
    assert all(f.rejected == 0 and f.loaded + f.skipped == f.lines for f in loaded)
    assert {Path(p.path).suffix for p in report.passed_over} >= {".yaml"}  # exit statuses and preds: not runs


@pytest.mark.parametrize("path", TRAJECTORIES, ids=lambda p: p.name[-40:])
def test_tokens_and_the_harness_cost_equal_the_raw_file(mini, path):
    con, _ = mini
    expected = independent(path)
    got = con.execute("""select count(*) filter (where input_uncached is not null), sum(input_uncached + cache_read),
                                sum(cache_read), sum(output_tokens), sum(harness_cost_micros)
                         from steps where run_id = ? and kind = 'model'""", [expected["run"]]).fetchall()[0]
    assert got[:4] == (expected["calls"], expected["prompt"] or None, expected["cached"] or None,
                       expected["completion"] or None)
    if expected["calls"]:
        assert abs(got[4] - round(expected["cost"] * 1e6)) <= expected["calls"]  # per-call rounding to micro-dollars
    ledger = con.execute("select ledger_cost_micros, stop_reason from runs where run_id = ?", [expected["run"]]).fetchall()[0]
    assert ledger == (round(expected["instance_cost"] * 1e6), expected["exit_status"])


def test_statuses_submissions_and_calls(mini):
    con, _ = mini
    statuses = dict(con.execute("select run_id, status from runs").fetchall())
    assert statuses == {
        "20251118_gemini-3-pro-74pct__django__django-11163": "succeeded",
        "20251118_gemini-3-pro-74pct__django__django-16255": "succeeded",
        "deepseek_reasoner_dev__sqlfluff__sqlfluff-2419": "succeeded",
        "deepseek_reasoner_dev__pvlib__pvlib-python-1606": "failed",  # InternalServerError (SSL EOF)
        "deepseek_reasoner_dev__pvlib__pvlib-python-1154": "timed_out"}
    final = con.execute("""select count(*), bool_and(s.tool_name is null) from steps s
                           where s.is_final and s.run_id like '%sqlfluff%'""").fetchall()[0]
    assert final == (1, True)  # the echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT step is the answer, not a call
    output = con.execute("select final_output from runs where run_id like '%django-16255'").fetchall()[0][0]
    assert output.startswith("diff --git a/django/contrib/sitemaps/__init__.py")
    calls = con.execute("""select tool_name, args_json::json ->> 'command', count(*) over () from tool_calls
                           where run_id like '%django-16255' order by step_idx limit 1""").fetchall()[0]
    assert calls[0] == "bash" and calls[1] and "```" not in calls[1] and calls[2] == 16  # 17 steps, the last submits
    pairs = con.execute("""select count(*) from tool_calls q where not exists
                           (select 1 from steps s where s.run_id = q.run_id and s.call_id = q.call_id)""").fetchall()[0][0]
    assert pairs == 0


def test_cost_matches_the_harness_with_the_provider_s_own_prices(mini):
    """OpenRouter's Gemini costs equal genai-prices' exactly; DeepSeek's equal DeepSeek's V3.2 list.

    genai-prices 0.2.3 still lists deepseek-reasoner at R1's prices (its default the night price 0.135 / 0.035 /
    0.55 $/Mtok); reconcile's shipped correction (reconcile/price_corrections.toml) prices April 2026 at V3.2's
    0.28 input, 0.028 cache hit, 0.42 output, which is what LiteLLM recorded, so no override is needed.
    """
    con, _ = mini
    gemini = con.execute("""select sum(cost_micros), sum(harness_cost_micros) from step_view
                            where run_id like '20251118_gemini%' and kind = 'model'""").fetchall()[0]
    assert abs(gemini[0] - gemini[1]) / gemini[1] < 0.005
    deepseek = con.execute("""select run_id, sum(cost_micros), sum(harness_cost_micros), any_value(price_source)
                              from step_view where run_id like 'deepseek%' and kind = 'model'
                              and harness_cost_micros > 0 group by run_id""").fetchall()
    assert deepseek
    for run_id, ours, theirs, source in deepseek:
        assert source == "reconcile-corrections", run_id
        assert abs(ours - theirs) / theirs < 0.005, run_id
