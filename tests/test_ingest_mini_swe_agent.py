"""mini-swe-agent trajectories (1 and 1.1): per-call usage (unknown where the record is silent), the harness's own
cost, tool outcomes from exit codes, limits, exit statuses (inferred without one), submissions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.formats.mini_swe_agent import MiniSweAgent
from reconcile.ingest.driver import ingest

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
                         from steps where split_part(run_id, '@', 1) = ? and kind = 'model'""", [expected["run"]]).fetchall()[0]
    assert got[:4] == (expected["calls"], expected["prompt"] or None, expected["cached"] or None,
                       expected["completion"] or None)
    if expected["calls"]:
        assert abs(got[4] - round(expected["cost"] * 1e6)) <= expected["calls"]  # per-call rounding to micro-dollars
    ledger = con.execute("select ledger_cost_micros, stop_reason from runs where split_part(run_id, '@', 1) = ?", [expected["run"]]).fetchall()[0]
    assert ledger == (round(expected["instance_cost"] * 1e6), expected["exit_status"])


def test_statuses_submissions_and_calls(mini):
    con, _ = mini
    statuses = dict(con.execute("select split_part(run_id, '@', 1), status from runs").fetchall())
    assert statuses == {
        "20251118_gemini-3-pro-74pct__django__django-11163": "succeeded",
        "20251118_gemini-3-pro-74pct__django__django-16255": "succeeded",
        "deepseek_reasoner_dev__sqlfluff__sqlfluff-2419": "succeeded",
        "deepseek_reasoner_dev__pvlib__pvlib-python-1606": "failed",  # InternalServerError (SSL EOF)
        # litellm's Timeout: the model call timed out in transport and ended the run; mini-swe-agent keeps no wall
        # clock, so it is not a time limit (reconcile replay --as-run found no fence that could have stopped it)
        "deepseek_reasoner_dev__pvlib__pvlib-python-1154": "failed"}
    final = con.execute("""select count(*), bool_and(s.tool_name is null) from steps s
                           where s.is_final and s.run_id like '%sqlfluff%'""").fetchall()[0]
    assert final == (1, True)  # the echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT step is the answer, not a call
    output = con.execute("select final_output from runs where run_id like '%django-16255@%'").fetchall()[0][0]
    assert output.startswith("diff --git a/django/contrib/sitemaps/__init__.py")
    calls = con.execute("""select tool_name, args_json::json ->> 'command', count(*) over () from tool_calls
                           where run_id like '%django-16255@%' order by step_idx limit 1""").fetchall()[0]
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


# --- what the record does not say stays unknown; what it says is read -------------------------------------------

V1 = MINI / "v1_mini-swe-agent-1" / "20251118_gemini-3-pro-74pct__django__django-16255.traj.json"  # Gemini, OpenRouter
V2 = MINI / "v2_mini-swe-agent-1.1" / "deepseek_reasoner_dev__sqlfluff__sqlfluff-2419.traj.json"  # DeepSeek
BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens", "reasoning_tokens",
           "context_tokens")
CACHE = {"input_uncached", "cache_read", "cache_write_5m", "cache_write_1h"}
# (name, source, usage keys deleted from the first assistant message, the buckets that become unknown)
DELETIONS = [
    ("v1-usage", V1, ["."], set(BUCKETS)),
    ("v1-prompt", V1, ["prompt_tokens"], {"input_uncached", "context_tokens"}),
    ("v1-prompt-details", V1, ["prompt_tokens_details"], CACHE),
    ("v1-cached", V1, ["prompt_tokens_details.cached_tokens"], CACHE),
    ("v1-completion", V1, ["completion_tokens"], {"output_tokens"}),
    ("v1-reasoning", V1, ["completion_tokens_details"], {"reasoning_tokens"}),
    ("v2-usage", V2, ["."], set(BUCKETS)),
    ("v2-cache", V2, ["prompt_tokens_details", "prompt_cache_hit_tokens", "prompt_cache_miss_tokens"], CACHE),
    # DeepSeek says each thing twice: one key gone, the other still tells it
    ("v2-prompt-details", V2, ["prompt_tokens_details"], set()),
    ("v2-prompt", V2, ["prompt_tokens"], set()),
    ("v2-completion", V2, ["completion_tokens"], {"output_tokens"}),
]


def first_assistant(data: dict) -> dict:
    return next(m for m in data["messages"] if m["role"] == "assistant")


def without(usage: dict, key: str) -> None:
    *parents, last = key.split(".")
    for parent in parents:
        usage = usage[parent]
    del usage[last]


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Copies of real trajectories, each changed in one way (usage keys deleted, outcomes, exit statuses); one ingest."""
    folder = tmp_path_factory.mktemp("planted")
    originals = {V1: json.loads(V1.read_text()), V2: json.loads(V2.read_text())}

    def plant(name: str, source: Path, change) -> None:
        data = json.loads(json.dumps(originals[source]))
        change(data)
        (folder / f"{name}.traj.json").write_text(json.dumps(data))

    for name, source, keys, _ in DELETIONS:
        def delete(data, keys=keys):
            response = first_assistant(data)["extra"]["response"]
            for key in keys:
                response.pop("usage") if key == "." else without(response["usage"], key)
        plant(name, source, delete)
    plant("v1-original", V1, lambda data: None)
    plant("v2-original", V2, lambda data: None)
    plant("v1-exit-code-1", V1, lambda data: data["messages"].__setitem__(
        3, {"role": "user", "content": data["messages"][3]["content"].replace("<returncode>0<", "<returncode>1<", 1)}))
    plant("v1-timeout", V1, lambda data: data["messages"].__setitem__(3, {"role": "user", "content": (
        "The last command <command>ls django/contrib/sitemaps</command> timed out and has been killed.\n"
        "The output of the command was:\n <output>\n\n</output>\nPlease try another command.")}))
    plant("v1-no-exit-code", V1, lambda data: data["messages"].__setitem__(3, {"role": "user", "content": "hello"}))

    def v2_tool(change):
        def plant_change(data):
            change(next(m for m in data["messages"] if m["role"] == "tool"))
        return plant_change

    plant("v2-exit-code-2", V2, v2_tool(lambda m: (m["extra"].__setitem__("returncode", 2), m.__setitem__(
        "content", m["content"].replace("<returncode>0<", "<returncode>2<", 1)))))
    plant("v2-timeout", V2, v2_tool(lambda m: (m["extra"].update(returncode=-1, exception_info=(
        "An error occurred while executing the command: Command 'ls' timed out after 60 seconds")))))

    def no_status(data):
        del data["info"]["exit_status"]

    def no_status_anywhere(data):
        no_status(data)
        data["messages"] = [m for m in data["messages"] if m["role"] != "exit"]

    def stopped_mid_work(data):
        no_status(data)
        data["messages"] = data["messages"][:-2]  # neither the submitting step nor the submission

    plant("v1-no-exit-status", V1, no_status)
    plant("v1-stopped-mid-work", V1, stopped_mid_work)
    plant("v2-exit-message-only", V2, lambda data: data["info"].update(exit_status=None, submission=None))
    plant("v2-no-exit-status", V2, no_status_anywhere)
    con = store.connect(tmp_path_factory.mktemp("planted_db") / "planted.duckdb")
    report = ingest(con, [folder])
    assert report.totals["rejected"] == 0
    yield con
    con.close()


def first_model_step(con, run_id: str) -> dict:
    cursor = con.execute(f"select {', '.join(BUCKETS)} from steps where split_part(run_id, '@', 1) = ? and kind = 'model' order by idx limit 1",
                         [run_id])
    return dict(zip(BUCKETS, cursor.fetchall()[0]))


@pytest.mark.parametrize("name, source, keys, unknown", DELETIONS, ids=[d[0] for d in DELETIONS])
def test_a_usage_key_the_record_leaves_out_is_unknown_never_zero(planted, name, source, keys, unknown):
    original = first_model_step(planted, f"{name[:2]}-original")
    changed = first_model_step(planted, name)
    assert all(value is not None for value in original.values())
    assert {bucket for bucket, value in changed.items() if value is None} == unknown
    assert {bucket: value for bucket, value in changed.items() if value is not None} == \
        {bucket: value for bucket, value in original.items() if bucket not in unknown}


def test_cache_writes_are_zero_only_where_the_provider_bills_none(mini):
    """Gemini via OpenRouter and DeepSeek, neither with set_cache_control: reads are reported, writes billed by none."""
    con, _ = mini
    assert set(MiniSweAgent.zero_buckets) == {"cache_write_5m", "cache_write_1h"}
    for path in TRAJECTORIES:
        data = json.loads(path.read_text(encoding="utf-8"))
        assert data["info"]["config"]["model"]["set_cache_control"] is None
        assert not any("cache_creation_input_tokens" in str(m.get("extra", {}).get("response", {}).get("usage"))
                       or "cache_write_tokens" in str(m.get("extra", {}).get("response", {}).get("usage"))
                       for m in data["messages"])
    writes = con.execute("""select count(*), count(*) filter (where cache_write_5m = 0 and cache_write_1h = 0),
                                   sum(cache_read) filter (where run_id like 'deepseek%')
                            from steps where kind = 'model' and input_uncached is not null""").fetchall()[0]
    assert writes[0] == writes[1] > 0 and writes[2] > 0


def test_the_context_is_the_whole_prompt(mini):
    con, _ = mini
    bad = con.execute("""select count(*) from steps where kind = 'model' and input_uncached is not null
                         and context_tokens <> input_uncached + cache_read + cache_write_5m + cache_write_1h""").fetchall()
    assert bad == [(0,)]


def test_exit_codes_are_the_tool_outcome(mini, planted):
    con, _ = mini
    statuses = con.execute("select tool_status, count(*) from steps where kind = 'tool' group by all").fetchall()
    assert statuses == [("ok", 86)]  # every real observation says <returncode>0</returncode>
    outcomes = dict(((run_id, tool_status), error) for run_id, tool_status, error in planted.execute(
        """select split_part(run_id, '@', 1), tool_status, error from steps where kind = 'tool' and split_part(run_id, '@', 1) in
           ('v1-exit-code-1', 'v1-timeout', 'v1-no-exit-code', 'v2-exit-code-2', 'v2-timeout')
           and idx = (select min(idx) from steps s where s.run_id = steps.run_id and s.kind = 'tool')""").fetchall())
    assert outcomes == {("v1-exit-code-1", "error"): "returncode 1", ("v1-timeout", "timeout"): "timed out",
                        ("v1-no-exit-code", None): None, ("v2-exit-code-2", "error"): "returncode 2",
                        ("v2-timeout", "timeout"): "An error occurred while executing the command: Command 'ls' "
                                                   "timed out after 60 seconds"}


def test_without_an_exit_status_the_status_is_inferred(planted):
    rows = {r[0]: r[1:] for r in planted.execute(
        """select split_part(r.run_id, '@', 1), r.status, r.status_inferred, r.stop_reason, f.run_status, left(r.final_output, 13)
           from runs r join run_facts f using (run_id)
           where split_part(r.run_id, '@', 1) in ('v1-original', 'v1-no-exit-status', 'v1-stopped-mid-work', 'v2-exit-message-only',
                              'v2-no-exit-status')""").fetchall()}
    assert rows == {
        "v1-original": ("succeeded", False, "Submitted", True, "diff --git a/"),
        "v1-no-exit-status": ("succeeded", True, None, False, "diff --git a/"),  # its last message submits
        # info.submission is kept; no end, and silent for far longer than a day: abandoned, not running
        "v1-stopped-mid-work": ("abandoned", True, None, False, "diff --git a/"),
        "v2-exit-message-only": ("succeeded", False, "Submitted", True, "diff --git a/"),  # as its exit message says
        "v2-no-exit-status": ("succeeded", True, None, False, "diff --git a/"),
    }


def test_limits_come_from_the_agent_configuration(mini):
    con, _ = mini
    limits = con.execute("select distinct max_steps, max_cost_micros, tool_timeout_seconds from runs").fetchall()
    assert limits == [(250, 3_000_000, 60)]  # step_limit 250, cost_limit 3.0, environment.timeout 60 in every file


def test_a_model_call_that_failed_and_ended_the_run_is_a_failed_step(mini):
    con, _ = mini
    failed = con.execute("""select split_part(run_id, '@', 1), error_class, left(error, 40), input_uncached, cost_micros from step_view
                            where kind = 'model' and error is not null order by run_id""").fetchall()
    assert failed == [
        ("deepseek_reasoner_dev__pvlib__pvlib-python-1154", "transport", "litellm.Timeout: Timeout Error: Deepseek",
         None, None),
        ("deepseek_reasoner_dev__pvlib__pvlib-python-1606", "transport", "litellm.InternalServerError: InternalSer",
         None, None)]


def test_time_model_and_provider_come_from_the_trajectory(mini):
    """2.x stamps every reply and observation (extra.timestamp), each when it arrived: the run starts when its first
    call was made — the provider's created time of its response (whole seconds), before the reply's stamp; a run whose
    only call failed has no stamp and no start. The model is the one that
    answered, else the one the configuration asked for (without LiteLLM's provider prefix); the provider is that prefix,
    or OpenRouter for its model class."""
    con, _ = mini
    for path in TRAJECTORIES:
        data = json.loads(path.read_text(encoding="utf-8"))
        stamps = [m["extra"]["timestamp"] for m in data["messages"] if "timestamp" in (m.get("extra") or {})]
        responses = [m["extra"]["response"] for m in data["messages"] if (m.get("extra") or {}).get("response")]
        run_id = path.name.removesuffix(".traj.json")
        started, model, provider = con.execute("select epoch(started_at), model, provider from runs where split_part(run_id, '@', 1) = ?",
                                               [run_id]).fetchall()[0]
        first = min([*stamps, *(r["created"] for r in responses)], default=None)
        assert started == pytest.approx(first, abs=1e-6) if first is not None else started is None, run_id
        configured = data["info"]["config"]["model"]["model_name"]
        assert model == (responses[0]["model"] if responses else configured.split("/", 1)[1]), run_id
        assert provider == ("openrouter" if "OpenRouter" in data["info"]["config"]["model_type"]
                            else configured.split("/", 1)[0]), run_id
