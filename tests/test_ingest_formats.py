"""Langfuse, SWE-agent, OpenHands and OTLP: real files, documented shapes, and bad files."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.checks import load_checks, run_checks
from reconcile.errors import ExitCode
from reconcile.ingest.driver import ingest
from reconcile.engine import DuckDBEngine

FIXTURES = ROOT / "tests" / "fixtures"
REAL = FIXTURES / "realdata"
EXPECTED_FORMAT = {"claude-code-viewer": "claude_code", "spotter-real-sessions": "claude_code",
                   "langfuse-framework-traces": "langfuse", "swe-agent": "swe_agent", "openhands": "openhands"}


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("real") / "real.duckdb")
    folders = [REAL / name for name in EXPECTED_FORMAT] + [FIXTURES / "otel"]
    report = ingest(con, folders)
    yield con, report
    con.close()


def test_every_real_file_is_detected_and_loads_without_a_reject(everything):
    con, report = everything
    assert report.totals["rejected"] == 0
    for file in report.files:
        folder = file.path.split("/realdata/")[1].split("/")[0] if "/realdata/" in file.path else "otel"
        assert file.format == EXPECTED_FORMAT.get(folder, "otel"), file.path
        assert file.loaded + file.skipped == file.lines
    assert len(report.files) == 14 + 20 + 6 + 4 + 2
    passed = {p.path.rsplit("/", 1)[1] for p in report.passed_over}
    assert {"SOURCE.txt", "README.md", "docs_usage_trajectories.md"} <= passed  # notes, not transcripts
    assert all(not name.endswith((".traj", ".trace.json")) for name in passed)


def test_checks_run_on_every_format_without_errors_of_their_own(everything):
    con, _ = everything
    report = run_checks(DuckDBEngine(con), load_checks())
    assert len(report.results) == len(load_checks())
    formats = {r[0] for r in con.execute("select distinct source_format from runs").fetchall()}
    assert formats == {"claude_code", "langfuse", "swe_agent", "openhands", "otel"}


def _attributes(o: dict) -> dict | None:
    metadata = json.loads(o["metadata"]) if isinstance(o.get("metadata"), str) else o.get("metadata") or {}
    return metadata.get("attributes") if isinstance(metadata, dict) else None


def _provider_calls(observations: list[dict]) -> list[dict]:
    """The observations that are provider calls with usage of their own: not a wrapper that re-reports a call under it
    (an observation with usage above another with usage), not usage Langfuse inferred (an OTel instrumentation's
    observation whose attributes hold no token count)."""
    by_id = {o["id"]: o for o in observations}
    with_usage = [o for o in observations if o.get("usageDetails")]
    wrappers = set()
    for o in with_usage:
        parent = o.get("parentObservationId")
        while parent in by_id:
            if by_id[parent].get("usageDetails"):
                wrappers.add(parent)
            parent = by_id[parent].get("parentObservationId")
    counts = ("gen_ai.usage.", "llm.token_count.", "ai.usage.")
    return [o for o in with_usage if o["id"] not in wrappers and o.get("type") != "TOOL"
            and (_attributes(o) is None or any(k.startswith(counts) for k in _attributes(o)))]


def test_langfuse_tokens_equal_the_sums_of_usage_details(everything):
    """The known buckets add up to the usage keys of the provider calls, or to the total where Gemini's total holds
    thinking the keys leave out; a thinking Gemini whose record says nothing of its thinking has its output unknown."""
    con, _ = everything
    for path in sorted((REAL / "langfuse-framework-traces").glob("*.trace.json")):
        data = json.loads(path.read_text())
        expected = 0
        for o in _provider_calls(data["observations"]):
            if o.get("model", "").startswith("gemini-2.5") and not any(
                    k in (_attributes(o) or {}) for k in ("gen_ai.usage.details.thoughts_tokens", "llm.token_count.total")):
                expected += (o.get("usageDetails") or {}).get("input") or 0  # its output is not known
                continue
            usage = o.get("usageDetails") or {}
            keys = sum(v for k, v in usage.items() if k != "total" and "_details." not in k and v is not None)
            total = usage.get("total") or 0
            gemini = "gemini" in (o.get("model") or o.get("providedModelName") or "").lower()
            expected += total if gemini and total > keys else keys
        # all input: the context where known (an input holding its unrecorded cache reads has no split), else the buckets
        got = con.execute("""select coalesce(sum(coalesce(context_tokens, coalesce(input_uncached, 0) + coalesce(cache_read, 0)
                                                          + coalesce(cache_write_5m, 0) + coalesce(cache_write_1h, 0))
                                         + coalesce(output_tokens, 0)), 0)
                             from steps where run_id = ?""", [data["trace"]["id"]]).fetchone()[0]
        assert got == expected, path.name


def test_langfuse_buckets_costs_and_inferred_tool_calls(everything):
    con, _ = everything
    langgraph = con.execute("""select sum(input_uncached), sum(output_tokens), sum(reasoning_tokens) from steps
                               where run_id = (select run_id from runs where source_file like '%langgraph-js%')""").fetchall()
    assert langgraph == [(179 + 142, 35 + 64 + 24, 64)]  # output_reasoning is an additive bucket there
    gemini = con.execute("""select output_tokens, reasoning_tokens from steps
                            where run_id = (select run_id from runs where source_file like '%google-gemini-2025%')""").fetchall()
    assert gemini == [(2055, 1104)]  # completion_details.reasoning is a subset of output
    tool = con.execute("""select q.step_idx, q.tool_name, q.args_json, s.tool_status from tool_calls q
                          join steps s using (run_id, call_id)
                          where q.run_id = (select run_id from runs where source_file like '%openai-agents%')""").fetchall()
    assert tool == [(0, "get_weather", '{"city":"Tokyo"}', "ok")]
    cost = con.execute("select ledger_cost_micros, harness_step_cost_micros from run_view "
                       "where source_file like '%openai-agents%'").fetchall()
    assert cost == [(None, 632)]  # each step's own cost, 0.000402 + 0.00023 dollars, kept exactly; no ledger


def test_a_langfuse_trace_exported_twice_is_loaded_once(everything):
    con, report = everything
    copies = [f for f in report.files if "pydantic-ai-tools-2025-06-06" in f.path or "pydantic-ai-2025-06-06" in f.path]
    assert sorted(f.loaded for f in copies) == [0, 2] and any("already loaded from" in n for f in copies for n in f.notes)


def test_swe_agent_ledger_status_and_submission(everything):
    con, _ = everything
    run = con.execute("""select status, stop_reason, steps, tool_results, ledger_steps, ledger_input_tokens,
                                ledger_output_tokens, ledger_cost_micros, has_final_answer, input_tokens
                         from run_view where run_id like '%pydicom-1458'""").fetchall()
    assert run == [("succeeded", "submitted", 12, 11, 12, 122612, 1369, 1267190, True, None)]
    demo = con.execute("select ledger_steps, status from runs where run_id = 'demo__ctf__misc__networking_1'").fetchall()
    assert demo == [(None, "succeeded")]  # all-zero model_stats are no ledger


@pytest.mark.parametrize("exit_status,status", [("exit_cost", "budget_exceeded"), ("exit_format", "failed"),
                                                ("submitted (exit_context)", "budget_exceeded"),
                                                ("exit_command_timeout", "timed_out"),
                                                (None, "succeeded")])  # no exit status: inferred from its submit
def test_swe_agent_exit_statuses_map_to_the_taxonomy(tmp_path, con, exit_status, status):
    source = REAL / "swe-agent" / "test_data__gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1__6e44b9__sweagenttestrepo-1c2844.traj"
    data = json.loads(source.read_text())
    data["info"]["exit_status"] = exit_status
    path = tmp_path / "variant.traj"
    path.write_text(json.dumps(data))
    ingest(con, [path])
    assert con.execute("select status, stop_reason, status_inferred from runs").fetchall() == [
        (status, exit_status, exit_status is None)]


def test_openhands_usage_pairing_and_finish(everything):
    con, _ = everything
    steps = con.execute("""select idx, kind, input_uncached, cache_read, cache_write_5m, output_tokens, is_final, call_id,
                                  tool_name, tool_status from steps where run_id = 'basic' order by idx""").fetchall()
    assert steps == [(0, "model", 4, 0, 3482, 1135, False, None, None, None),
                     (1, "tool", None, None, None, None, None, "toolu_017nBp7UfiGqyrA7j77HgtFP", "str_replace_editor", "ok"),
                     (2, "model", 6, 3482, 1158, 177, True, None, None, None)]
    assert con.execute("select status, stop_reason from runs where run_id = 'basic'").fetchall() == [("succeeded", "finish")]


def test_openhands_llm_metrics_are_the_harness_s_cost(tmp_path, con):
    events = json.loads((REAL / "openhands" / "basic.json").read_text())
    for n, event in enumerate(events):  # as newer streams record it: a running total on events
        event["llm_metrics"] = {"accumulated_cost": 0.01 * (n + 1), "costs": []}
    (tmp_path / "metered.json").write_text(json.dumps(events))
    ingest(con, [tmp_path / "metered.json"])
    assert con.execute("select ledger_cost_micros from runs").fetchall() == [(round(0.01 * len(events) * 1e6),)]
    costs = con.execute("select ours_micros, harness_micros, harness_basis from run_costs").fetchall()
    assert costs[0][1:] == (round(0.01 * len(events) * 1e6), "ledger")


def test_otel_runs_usage_and_attribute_names(everything):
    con, _ = everything
    runs = dict(con.execute("select run_id, status from runs where source_format = 'otel'").fetchall())
    assert runs == {"5b8efff798038103d269b633813fc60c/a000000000000001": "succeeded",
                    "0af7651916cd43dd8448eb211c80319c": "failed",
                    "1f2e3d4c5b6a79881f2e3d4c5b6a7988/f000000000000001": "succeeded"}
    planner = con.execute("""select idx, kind, input_uncached, cache_read, output_tokens, finish_reason, tool_name, call_id,
                                    args_json, is_final from steps where run_id like '5b8efff7%' order by idx""").fetchall()
    assert planner == [(0, "model", 500, 1000, 60, "tool_calls", None, None, None, False),
                       (1, "tool", None, None, None, None, "get_weather", "call_1", '{"city":"Paris"}', None),
                       (2, "model", 120, 1500, 45, "stop", None, None, None, True)]
    old_names = con.execute("select input_uncached, cache_read, cache_write_5m, context_tokens, output_tokens, error "
                            "from steps where run_id = '0af7651916cd43dd8448eb211c80319c'").fetchall()
    # 200 cache writes counted whole, by no lifetime: the 5-minute bucket is unknown, the whole input kept
    assert old_names == [(100, 600, None, 900, 30, "overloaded")]
    labels = con.execute("select agent, labels ->> 'conversation_id' from runs where run_id like '5b8efff7%'").fetchall()
    assert labels == [("planner", "conv_42")]


def test_a_nested_agent_is_a_child_run(tmp_path, con):
    data = json.loads((FIXTURES / "otel" / "genai_agent.json").read_text())
    spans = data["resourceSpans"][0]["scopeSpans"][0]["spans"]
    child = dict(spans[0], spanId="a000000000000002", parentSpanId="a000000000000001", name="invoke_agent helper")
    child["attributes"] = [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]
    spans[4] = dict(spans[4], parentSpanId="a000000000000002")
    spans.append(child)
    path = tmp_path / "nested.json"
    path.write_text(json.dumps(data))
    ingest(con, [path])
    rows = con.execute("select run_id, parent_run_id, steps from run_view where run_id like '5b8efff7%' order by 1").fetchall()
    assert rows == [("5b8efff798038103d269b633813fc60c/a000000000000001", None, 1),
                    ("5b8efff798038103d269b633813fc60c/a000000000000002",
                     "5b8efff798038103d269b633813fc60c/a000000000000001", 1)]


def test_bad_records_are_rejected_with_their_reason(tmp_path, con):
    trace = json.loads((REAL / "langfuse-framework-traces" / "openai-agents-2025-09-30.trace.json").read_text())
    trace["observations"][2]["startTime"] = "tea time"
    trace["observations"][3]["usageDetails"] = {"input": "lots"}
    langfuse = tmp_path / "bad.trace.json"
    langfuse.write_text(json.dumps(trace))
    otel_lines = (FIXTURES / "otel" / "openinference.jsonl").read_text().splitlines()
    otel = tmp_path / "bad.jsonl"
    otel.write_text(otel_lines[0] + "\n{broken\n" + "\n".join(otel_lines[1:]) + "\n")
    report = ingest(con, [langfuse, otel])
    reasons = con.execute("select path, line, reason from rejects order by path, line").fetchall()
    assert [(p.rsplit("/", 1)[1], line, reason) for p, line, reason in reasons] == [
        ("bad.jsonl", 2, "line 2: not valid JSON (an OTLP ExportTraceServiceRequest per line expected)"),
        ("bad.trace.json", 4, 'observation ' + trace["observations"][2]["id"] + ': "startTime" is tea time'),
        ("bad.trace.json", 5, 'observation ' + trace["observations"][3]["id"] + ': a "usageDetails" value is not a number')]
    assert all(f.loaded + f.rejected + f.skipped == f.lines for f in report.files)


def test_a_truncated_document_is_one_rejected_record_not_a_crash(tmp_path, cli, db_path):
    source = (REAL / "openhands" / "basic.json").read_bytes()
    (tmp_path / "night").mkdir()
    (tmp_path / "night" / "cut.json").write_bytes(source[:2000])
    shutil.copy(REAL / "openhands" / "basic_interactions.json", tmp_path / "night")
    result = cli("ingest", tmp_path / "night", "--json", "--db", db_path)
    # issue 57: nothing of the cut file could be read: it failed (its one reject kept), never "loaded"; the other loads
    assert result.code == ExitCode.BAD_INPUT
    files = {f["path"].rsplit("/", 1)[1]: f for f in result.json()["files"]}
    assert (files["cut.json"]["status"], files["cut.json"]["rejected"]) == ("failed", 1)
    assert (files["basic_interactions.json"]["status"], files["basic_interactions.json"]["loaded"]) == ("loaded", 3)


@pytest.mark.parametrize("source,forced,expected", [
    (REAL / "openhands" / "basic.json", "langfuse", "expected a Langfuse trace export"),
    (REAL / "openhands" / "basic.json", "otel", "expected OTLP JSON"),
    (FIXTURES / "otel" / "genai_agent.json", "swe_agent", "expected a SWE-agent trajectory"),
    (FIXTURES / "otel" / "genai_agent.json", "openhands", "expected an OpenHands event stream"),
])
def test_a_wrong_shaped_file_names_the_format_expected_and_what_was_found(cli, db_path, source, forced, expected):
    result = cli("ingest", source, "--format", forced, "--db", db_path)
    assert result.code == ExitCode.BAD_INPUT and expected in result.err and "found" in result.err


def test_bad_swe_agent_and_openhands_records_are_rejected(tmp_path, con):
    traj = json.loads((REAL / "swe-agent" / "demo__ctf__misc__networking_1.traj").read_text())
    traj["trajectory"][1] = {"state": "{}"}  # neither action nor response
    swe = tmp_path / "bad.traj"
    swe.write_text(json.dumps(traj))
    events = json.loads((REAL / "openhands" / "basic.json").read_text())
    events[2]["timestamp"] = "someday"
    events[0].pop("id")
    openhands = tmp_path / "bad_events.json"
    openhands.write_text(json.dumps(events))
    report = ingest(con, [swe, openhands])
    reasons = [(p.rsplit("/", 1)[1], line, reason) for p, line, reason in
               con.execute("select path, line, reason from rejects order by path, line").fetchall()]
    assert reasons == [("bad.traj", 2, 'trajectory entry 2 has neither "action" nor "response"'),
                       ("bad_events.json", 1, 'event 1 has no integer "id"'),
                       ("bad_events.json", 3, 'event 4: "timestamp" is someday; expected an RFC 3339 time from '
                        '2000-01-01 up to 2100-01-01 UTC ([ingest] earliest and latest in reconcile.toml)')]
    assert [(f.lines, f.loaded + f.rejected + f.skipped) for f in report.files] == [(4, 4), (4, 4)]


def test_catalogue_size_is_estimated_from_recorded_tool_definitions(tmp_path, con):
    trace = json.loads((REAL / "langfuse-framework-traces" / "openai-agents-2025-09-30.trace.json").read_text())
    definitions = {"get_weather": {"description": "Weather for a city", "parameters": {
        "type": "object", "properties": {"city": {"type": "string"}}}}}
    for generation in (o for o in trace["observations"] if o["type"] == "GENERATION"):
        generation["toolDefinitions"] = definitions  # on every call: each reads them before its metadata's schemas
    path = tmp_path / "with_tools.trace.json"
    path.write_text(json.dumps(trace))
    ingest(con, [path])
    expected = -(-len(json.dumps(definitions, separators=(",", ":")).encode()) // 4)
    size = con.execute("select catalogue_tokens from runs").fetchall()[0][0]
    assert abs(size - expected) <= 2  # bytes / 4 of the definitions as stored
    assert con.execute("select sum(catalogue_tax_micros) > 0 from step_view").fetchall() == [(True,)]


def test_otel_catalogue_size_is_estimated_from_tool_definitions(tmp_path, con):
    data = json.loads((FIXTURES / "otel" / "genai_agent.json").read_text())
    definitions = '[{"type":"function","name":"get_weather","parameters":{"type":"object"}}]'
    chat = data["resourceSpans"][0]["scopeSpans"][0]["spans"][1]
    chat["attributes"].append({"key": "gen_ai.tool.definitions", "value": {"stringValue": definitions}})
    path = tmp_path / "defs.json"
    path.write_text(json.dumps(data))
    ingest(con, [path])
    sizes = dict(con.execute("select run_id, catalogue_tokens from runs").fetchall())
    assert sizes["5b8efff798038103d269b633813fc60c/a000000000000001"] == -(-len(definitions) // 4)
    assert sizes["0af7651916cd43dd8448eb211c80319c"] is None
