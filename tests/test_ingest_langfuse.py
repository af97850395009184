"""Langfuse trace exports: each run's answer, tool calls, tool results, model calls, model, provider and start, held
against what the raw file records, read here in plain Python (every path spelled out, file by file)."""

from __future__ import annotations

import copy
import json
from datetime import datetime

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest.driver import ingest

TRACES = ROOT / "tests" / "fixtures" / "realdata" / "langfuse-framework-traces"


def _doc(name: str) -> dict:
    return json.loads((TRACES / name).read_text(encoding="utf-8"))


def _json(value):
    """A value Langfuse kept as JSON text, parsed; anything else as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _meta(o: dict) -> dict:
    md = _json(o.get("metadata")) or {}
    return md if isinstance(md, dict) else {}


def _attrs(o: dict) -> dict:
    return _meta(o).get("attributes") or {}


def _observations(file: str, **match) -> list[dict]:
    """The file's observations matching every key (``name``, ``type``), in start order."""
    return sorted((o for o in _doc(file)["observations"] if all(o.get(k) == v for k, v in match.items())),
                  key=lambda o: (o["startTime"], o["id"]))


def _ts(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("langfuse") / "real.duckdb")
    ingest(con, [TRACES])
    yield con
    con.close()


def _run(con, file: str) -> str:
    found = con.execute("select run_id from runs where source_file like ?", [f"%/{file}"]).fetchall()
    assert len(found) == 1, file
    return found[0][0]


def _one(con, sql: str, params=()):
    return con.execute(sql, list(params)).fetchall()


# --- the final answer: the assistant's text, read from each shape of output --------------------------------------

def _answer(file: str) -> str:
    """The last provider call's text, each shape read at its own path."""
    last = lambda **m: _observations(file, **m)[-1]  # noqa: E731
    if file.startswith(("vertex-ai", "google-gemini")):  # Gemini: candidates[0].content.parts[].text
        return _json(last(type="GENERATION")["output"])["candidates"][0]["content"]["parts"][0]["text"]
    if file.startswith("google-adk"):  # ADK: {"content": {"parts": [{"text"}]}}
        return _json(last(type="GENERATION")["output"])["content"]["parts"][0]["text"]
    if file.startswith("claude-agent"):  # Anthropic content blocks
        return _json(last(type="GENERATION")["output"])["content"][0]["text"]
    if file.startswith("pydantic-ai-2025"):  # a gen_ai.choice event
        return _json(last(type="GENERATION")["output"])["message"]["content"]
    if file.startswith(("microsoft-agent", "pydantic-ai-with-gemini")):  # OTel GenAI output messages
        return _json(last(type="GENERATION")["output"])[0]["parts"][0]["content"]
    if file.startswith(("langgraph-js", "langgraph-python")):  # a message {"role": "assistant", "content"}
        return _json(last(type="GENERATION")["output"])["content"]
    if file.startswith("koog"):  # a list of messages
        return _json(last(type="GENERATION")["output"])[0]["content"]
    if file.startswith("openai-agents"):  # an OpenAI Responses object
        return _json(last(type="GENERATION")["output"])["output"][0]["content"][0]["text"]
    if file.startswith("agno"):  # the SDK's generation under agno's wrapper: the text itself
        return last(name="chat gpt-4o-mini")["output"]
    return last(type="GENERATION")["output"]  # llamaindex, autogen, crewai: the text itself


ANSWERED = ["vertex-ai-2025-08-01.trace.json", "google-gemini-2025-08-01.trace.json", "google-adk-2025-08-28.trace.json",
            "claude-agent-2025-12-22.trace.json", "pydantic-ai-2025-06-06.trace.json",
            "microsoft-agent-2025-12-17.trace.json", "pydantic-ai-with-gemini-2025-12-24.trace.json",
            "langgraph-js-2025-10-30.trace.json", "langgraph-python-2025-08-22.trace.json", "koog-2025-08-26.trace.json",
            "openai-agents-2025-09-30.trace.json", "agno-2025-06-11.trace.json", "llamaindex-2025-06-05.trace.json",
            "autogen-2025-06-06.trace.json", "crewai-2025-07-11.trace.json"]


@pytest.mark.parametrize("file", ANSWERED)
def test_the_final_answer_is_the_assistant_s_text_in_each_output_shape(real, file):
    answer = _answer(file)
    assert isinstance(answer, str) and answer.strip()
    # a step's text is kept to its first 4,000 characters
    assert _one(real, "select final_output from runs where run_id = ?", [_run(real, file)]) == [(answer[:4000],)]


def test_an_output_of_no_known_shape_is_kept_as_written(tmp_path, con):
    trace = _doc("autogen-2025-06-06.trace.json")
    trace["trace"]["id"] = "unknown-shape"
    generation = next(o for o in trace["observations"] if o["type"] == "GENERATION")
    generation["output"] = json.dumps({"verdict": "pass", "score": 3})
    (tmp_path / "t.json").write_text(json.dumps(trace))
    ingest(con, [tmp_path / "t.json"])
    assert _one(con, "select final_output from runs") == [(generation["output"],)]


def test_a_pydantic_ai_output_tool_is_the_answer_not_a_tool_call(real):
    """final_result is declared in model_request_parameters.output_tools and no TOOL observation runs it: the
    evaluator's structured answer (its arguments), not a call. The C# agent's final_result is a function tool its
    framework runs (a TOOL observation, gen_ai.tool.call.id final_result): a call."""
    file = "pydantic-ai-tools-2025-12-04.trace.json"
    last = _observations(file, type="GENERATION")[-1]
    assert "final_result" in [t["name"] for t in _attrs(last)["model_request_parameters"]["output_tools"]]
    assert not _observations(file, name="running tool: final_result")
    part = _json(last["output"])[0]["parts"][0]
    assert part["name"] == "final_result"
    (answer,) = _one(real, "select final_output from runs where run_id = ?", [_run(real, file)])[0]
    assert json.loads(answer) == part["arguments"]
    called = _one(real, "select tool_name from tool_calls where run_id = ?", [_run(real, file)])
    assert ("final_result",) not in called and len(called) == 3
    csharp = "csharp-agent-with-gemini-2026-03-09.trace.json"
    assert _observations(csharp, type="TOOL", name="final_result")
    assert _one(real, "select count(*) from tool_calls where run_id = ? and tool_name = 'final_result'",
                [_run(real, csharp)]) == [(1,)]
    assert _one(real, "select final_output from runs where run_id = ?", [_run(real, csharp)]) == [(None,)]


# --- tool calls: every call an output records, with its id and arguments -------------------------------------

def _calls(file: str) -> set[tuple[str, str | None, str]]:
    """(name, id, arguments as canonical JSON) of every call the file's outputs record, each at its own path."""
    def canon(args) -> str:
        return json.dumps(_json(args), sort_keys=True)

    found = []
    gens = _observations(file, type="GENERATION")
    if file.startswith("agno"):  # only agno's wrapper records the response: choices[0].message.tool_calls
        for o in _observations(file, name="OpenAIChat.invoke"):
            for c in _json(o["output"])["choices"][0]["message"].get("tool_calls") or []:
                found.append((c["function"]["name"], c["id"], canon(c["function"]["arguments"])))
    elif file.startswith("claude-agent"):  # Anthropic tool_use blocks
        for o in gens:
            for b in _json(o["output"])["content"]:
                if b["type"] == "tool_use":
                    found.append((b["name"], b["id"], canon(b["input"])))
    elif file.startswith("langgraph-js"):  # message.tool_calls
        for o in gens:
            for c in _json(o["output"]).get("tool_calls") or []:
                found.append((c["function"]["name"], c["id"], canon(c["function"]["arguments"])))
    elif file.startswith("langgraph-python"):  # message.additional_kwargs.tool_calls
        for o in gens:
            for c in _json(o["output"])["additional_kwargs"].get("tool_calls") or []:
                found.append((c["function"]["name"], c["id"], canon(c["function"]["arguments"])))
    elif file.startswith("koog"):  # the calls as JSON text in the content of a message that finished on tool_calls
        for o in gens:
            for m in _json(o["output"]):
                if m.get("finish_reason") == "tool_calls":
                    for c in json.loads(m["content"]):
                        found.append((c["function"]["name"], c["id"], canon(c["function"]["arguments"])))
    elif file.startswith(("pydantic-ai-tools-2025-12", "microsoft-agent", "csharp")):  # OTel GenAI tool_call parts
        for o in gens:
            tools = _attrs(o).get("model_request_parameters") or {}
            outputs = [t["name"] for t in _json(tools).get("output_tools", [])] if tools else []
            for m in _json(o["output"]):
                for p in m["parts"]:
                    if p["type"] == "tool_call" and p["name"] not in outputs:
                        found.append((p["name"], p["id"], canon(p["arguments"])))
    elif file.startswith("openai-agents"):  # Responses function_call items: the call id is call_id
        for o in gens:
            for item in _json(o["output"])["output"]:
                if item["type"] == "function_call":
                    found.append((item["name"], item["call_id"], canon(item["arguments"])))
    elif file.startswith("vercel"):  # the AI SDK's {toolCallId, toolName, input}
        for c in _json(_observations(file, name="ai.generateText.doGenerate")[0]["output"]):
            found.append((c["toolName"], c["toolCallId"], canon(c["input"])))
    elif file.startswith("google-adk"):  # a Gemini function_call part, no id: the run's gen_ai.tool.call.id names it
        run = _observations(file, type="TOOL")[0]
        for o in gens:
            for p in _json(o["output"])["content"]["parts"]:
                if "function_call" in p:
                    found.append((p["function_call"]["name"], _attrs(run)["gen_ai.tool.call.id"],
                                  canon(p["function_call"]["args"])))
    elif file.startswith("beeai"):  # ReAct: the agent.react spans naming a tool and its parameters, once per iteration
        seen = {}
        for o in _observations(file):
            a = _attrs(o)
            if a.get("tool.name") and a.get("tool.parameters") not in (None, "null"):
                seen.setdefault((o["parentObservationId"], a["tool.name"], a["tool.parameters"]), o["id"])
        found = [(name, first, canon(params)) for (_, name, params), first in seen.items()]
    return set(found)


CALLING = ["agno-2025-06-11.trace.json", "claude-agent-2025-12-22.trace.json", "langgraph-js-2025-10-30.trace.json",
           "langgraph-python-2025-08-22.trace.json", "koog-2025-08-26.trace.json",
           "pydantic-ai-tools-2025-12-04.trace.json", "microsoft-agent-2025-12-17.trace.json",
           "csharp-agent-with-gemini-2026-03-09.trace.json", "openai-agents-2025-09-30.trace.json",
           "vercel-aisdk-2025-11-17.trace.json", "google-adk-2025-08-28.trace.json", "beeai-2025-08-01.trace.json"]


@pytest.mark.parametrize("file", CALLING)
def test_each_tool_call_an_output_records_is_a_call_with_its_name_id_and_arguments(real, file):
    expected = _calls(file)
    assert expected
    got = _one(real, "select tool_name, call_id, args_json from tool_calls where run_id = ?", [_run(real, file)])
    assert {(name, call_id, json.dumps(json.loads(args), sort_keys=True)) for name, call_id, args in got} == expected


# --- tool results: each tool run a tool step, with its status --------------------------------------------------

def _runs(file: str) -> list[tuple[str, str]]:
    """(tool name, status) of each tool run the file records, in start order."""
    if file.startswith("agno"):  # an OpenInference span of kind TOOL
        return [(_attrs(o)["tool.name"], "ok") for o in _observations(file)
                if _attrs(o).get("openinference.span.kind") == "TOOL"]
    if file.startswith("koog"):  # spans with gen_ai.tool.name
        return [(_attrs(o)["gen_ai.tool.name"], "ok") for o in _observations(file) if "gen_ai.tool.name" in _attrs(o)]
    if file.startswith(("langgraph-js", "langgraph-python")):  # a span whose output is the ToolMessage returned
        out = []
        for o in _observations(file, type="SPAN"):
            v = _json(o["output"])
            message = v.get("kwargs") if isinstance(v, dict) and isinstance(v.get("kwargs"), dict) else v
            if isinstance(message, dict) and message.get("tool_call_id") and (
                    v.get("type") == "tool" or "ToolMessage" in (v.get("id") or [])):
                out.append((message["name"], "error" if message["status"] == "error" else "ok"))
        return out
    if file.startswith("beeai"):
        return [(name, "ok") for name, _, _ in sorted(_calls(file))]
    return [(_attrs(o).get("gen_ai.tool.name") or _attrs(o).get("tool.name") or _attrs(o).get("ai.toolCall.name")
             or o["name"], "error" if o["level"] == "ERROR" else "ok") for o in _observations(file, type="TOOL")]


@pytest.mark.parametrize("file", CALLING)
def test_each_tool_run_is_a_tool_step_answering_its_call(real, file):
    run_id = _run(real, file)
    steps = _one(real, "select tool_name, tool_status from steps where run_id = ? and kind = 'tool' order by idx",
                 [run_id])
    assert sorted(steps) == sorted(_runs(file))
    # every tool step answers a call of the same tool, asked before it
    unpaired = _one(real, """select s.idx from steps s left join tool_calls c on c.run_id = s.run_id and c.call_id = s.call_id
                             where s.run_id = ? and s.kind = 'tool'
                               and (c.call_id is null or c.tool_name <> s.tool_name or c.step_idx >= s.idx)""", [run_id])
    assert unpaired == []


def test_a_langchain_tool_span_s_result_is_its_tool_message_s_content(real):
    file = "langgraph-python-2025-08-22.trace.json"
    span = _observations(file, name="Web-Search")[0]
    message = _json(span["output"])
    assert _one(real, "select call_id, result_preview from steps where run_id = ? and kind = 'tool'",
                [_run(real, file)]) == [(message["tool_call_id"], message["content"])]


def test_a_tool_run_of_beeai_is_its_agent_react_spans_and_its_result_their_first_output(real):
    file = "beeai-2025-08-01.trace.json"
    spans = [o for o in _observations(file) if _attrs(o).get("tool.name") == "OpenMeteoTool"
             and _attrs(o).get("tool.parameters") not in (None, "null")]
    first_output = next(o for o in spans if o["output"] not in (None, "null"))
    got = _one(real, "select started_at, ms, result_preview from steps where run_id = ? and tool_name = 'OpenMeteoTool'",
               [_run(real, file)])
    started, ms, preview = got[0]
    assert started == _ts(spans[0]["startTime"])
    assert ms == (_ts(first_output["startTime"]) - _ts(spans[0]["startTime"])).total_seconds() * 1000
    assert preview == first_output["output"][:1000]


# --- model calls: content blocks of one response are one call, a wrapper is none --------------------------------

def test_the_claude_agent_sdk_s_content_blocks_before_a_tool_ran_are_one_call(real):
    """Three claude.assistant.turn observations (a text block, then two tool_use blocks) start before the first tool
    runs: one response (the second tool_use was asked without the first's result). The last, after the tools: another."""
    file = "claude-agent-2025-12-22.trace.json"
    turns = _observations(file, name="claude.assistant.turn")
    first_tool = min(o["startTime"] for o in _observations(file, type="TOOL"))
    before = [o for o in turns if o["startTime"] < first_tool]
    assert len(turns) == 4 and len(before) == 3
    run_id = _run(real, file)
    steps = _one(real, """select idx, started_at, ms, output_text, harness_cost_micros from steps
                          where run_id = ? and kind = 'model' order by idx""", [run_id])
    assert len(steps) == 2
    idx, started, ms, text, cost = steps[0]
    assert started == _ts(before[0]["startTime"])
    assert ms == (_ts(before[-1]["startTime"]) - _ts(before[0]["startTime"])).total_seconds() * 1000
    assert text == _json(before[0]["output"])["content"][0]["text"]
    assert cost == round(sum(o["costDetails"]["total"] for o in before) * 1_000_000)
    asked = _one(real, "select call_id from tool_calls where run_id = ? and step_idx = ? order by call_position",
                 [run_id, idx])
    assert asked == [(_json(o["output"])["content"][0]["id"],) for o in before[1:]]


@pytest.mark.parametrize("file,calls", [("microsoft-agent-2025-12-17.trace.json", 2), ("vercel-aisdk-2025-11-17.trace.json", 1),
                                        ("agno-2025-06-11.trace.json", 2), ("beeai-2025-08-01.trace.json", 3),
                                        ("pydantic-ai-tools-2025-12-04.trace.json", 4)])
def test_a_wrapper_is_no_call_and_separate_generations_each_are(real, file, calls):
    """microsoft: an invoke_agent span re-reporting its two chats; vercel: ai.generateText around doGenerate; agno:
    OpenAIChat.invoke around each SDK generation; BeeAI: three start generations (its finish/success markers are
    events); pydantic-ai: four chats, each its own gen_ai.response.id."""
    assert _one(real, "select count(*) from steps where run_id = ? and kind = 'model'", [_run(real, file)]) == [(calls,)]


# --- model and provider: as the call records them ------------------------------------------------------------------

def test_the_model_is_the_one_that_answered_and_a_vertex_path_its_name(real):
    vercel = _observations("vercel-aisdk-2025-11-17.trace.json", name="ai.generateText.doGenerate")[0]
    pydantic = _observations("pydantic-ai-2025-06-06.trace.json", type="GENERATION")[0]
    vertex = _observations("vertex-ai-2025-08-01.trace.json", type="GENERATION")[0]
    assert vertex["model"].startswith("projects/") and "/publishers/google/models/" in vertex["model"]
    # asked for gpt-5 and gpt-4o; the responses name the dated models that answered
    assert (vercel["model"], pydantic["model"]) == ("gpt-5", "gpt-4o")
    for file, model in (("vercel-aisdk-2025-11-17.trace.json", _attrs(vercel)["gen_ai.response.model"]),
                        ("pydantic-ai-2025-06-06.trace.json", _attrs(pydantic)["gen_ai.response.model"]),
                        ("vertex-ai-2025-08-01.trace.json", vertex["model"].rsplit("/models/", 1)[1])):
        assert _one(real, "select model from runs where run_id = ?", [_run(real, file)]) == [(model,)], file
    assert _one(real, "select model from runs where run_id = ?", [_run(real, "vercel-aisdk-2025-11-17.trace.json")]) \
        == [("gpt-5-2025-08-07",)]


@pytest.mark.parametrize("file,provider,where", [
    ("claude-agent-2025-12-22.trace.json", "anthropic", "gen_ai.system anthropic"),
    ("csharp-agent-with-gemini-2026-03-09.trace.json", "google", "gen_ai.provider.name gcp.vertex_ai"),
    ("pydantic-ai-with-gemini-2025-12-24.trace.json", "google", "gen_ai.system google-gla"),
    ("vercel-aisdk-2025-11-17.trace.json", "openai", "gen_ai.system openai.responses"),
    ("llamaindex-2025-06-05.trace.json", "openai", "llm.provider openai"),
    ("langgraph-js-2025-10-30.trace.json", "openai", "metadata ls_provider openai"),
    ("agno-2025-06-11.trace.json", "openai", "llm.provider OpenAI on the OpenAIChat.invoke generation around the call"),
    ("microsoft-agent-2025-12-17.trace.json", "openai", "gen_ai.provider.name openai (the agent span's is the framework)"),
    ("vertex-ai-2025-08-01.trace.json", None, "nothing: a model's name is no record of its provider"),
    ("autogen-2025-06-06.trace.json", None, "nothing"),
    ("crewai-2025-07-11.trace.json", None, "nothing"),
])
def test_the_provider_is_read_where_recorded_and_unknown_elsewhere(real, file, provider, where):
    recorded = set()
    for o in _doc(file)["observations"]:
        a, md = _attrs(o), _meta(o)
        recorded |= {str(v) for k, v in {**a, **md}.items()
                     if k in ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system", "ls_provider")}
    assert bool(recorded) == (provider is not None), where
    assert _one(real, "select provider from runs where run_id = ?", [_run(real, file)]) == [(provider,)], where
    assert _one(real, "select count(*) from steps where run_id = ? and kind = 'model' and provider is distinct from ?",
                [_run(real, file), provider]) == [(0,)]


# --- the run's start -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("file", sorted(p.name for p in TRACES.glob("*.json")))
def test_a_run_starts_at_the_earlier_of_the_trace_s_timestamp_and_its_first_observation(real, file):
    """pydantic-ai-tools-2025-12-04: the trace's timestamp is 14:51:22.053 (its first chat's start), the root span
    run_joke_generator starts 14:51:22.049, and the trace's own latency (7.424 s) is counted from it."""
    doc = _doc(file)
    start = min([_ts(doc["trace"]["timestamp"])] + [_ts(o["startTime"]) for o in doc["observations"]])
    run_id = _run(real, file) if file != "pydantic-ai-tools-2025-06-06.trace.json" else doc["trace"]["id"]
    started, wall = _one(real, "select started_at, wall_seconds from run_view where run_id = ?", [run_id])[0]
    assert started == start
    if file == "pydantic-ai-tools-2025-12-04.trace.json":
        assert start < _ts(doc["trace"]["timestamp"]) and float(wall) == float(doc["trace"]["latency"])


def test_a_run_with_no_trace_timestamp_starts_with_its_first_observation(tmp_path, con):
    trace = copy.deepcopy(_doc("pydantic-ai-tools-2025-12-04.trace.json"))
    del trace["trace"]["timestamp"]
    (tmp_path / "t.json").write_text(json.dumps(trace))
    ingest(con, [tmp_path / "t.json"])
    first = min(_ts(o["startTime"]) for o in trace["observations"])
    assert _one(con, "select started_at from runs") == [(first,)]


# --- a tool run recorded twice, a tool run without an end ----------------------------------------------------------

def test_a_tool_observation_under_another_of_its_call_id_is_a_record_of_that_run(tmp_path, con):
    trace = _doc("microsoft-agent-2025-12-17.trace.json")
    tool = next(o for o in trace["observations"] if o["type"] == "TOOL")
    trace["observations"].append(dict(tool, id="a-second-record", parentObservationId=tool["id"]))
    (tmp_path / "t.json").write_text(json.dumps(trace))
    ingest(con, [tmp_path / "t.json"])
    assert _one(con, "select call_id, tool_status from steps where kind = 'tool'") == [
        (_attrs(tool)["gen_ai.tool.call.id"], "ok")]


def test_calls_sharing_an_id_are_each_a_call_answered_by_its_own_run(tmp_path, con):
    """Microsoft.Extensions.AI gives a Gemini call its function's name as its id (the C# agent's get_custom_report):
    the same id on two calls, each answered by its own run, in order."""
    file = "microsoft-agent-2025-12-17.trace.json"
    call_id = _attrs(_observations(file, type="TOOL")[0])["gen_ai.tool.call.id"]
    trace = json.loads((TRACES / file).read_text(encoding="utf-8").replace(call_id, "get_weather"))
    chats = [o for o in trace["observations"] if o["type"] == "GENERATION"]
    tool = next(o for o in trace["observations"] if o["type"] == "TOOL")
    again = dict(chats[0], id="second-chat", startTime="2025-12-17T09:37:40.552Z", endTime="2025-12-17T09:37:40.553Z")
    rerun = dict(tool, id="second-run", startTime="2025-12-17T09:37:40.553Z", endTime="2025-12-17T09:37:40.554Z")
    trace["observations"] += [again, rerun]
    (tmp_path / "t.json").write_text(json.dumps(trace))
    ingest(con, [tmp_path / "t.json"])
    assert _one(con, "select step_idx, call_id from tool_calls order by step_idx") == [(0, "get_weather"), (2, "get_weather")]
    assert _one(con, "select idx, call_id from steps where kind = 'tool' order by idx") == [(1, "get_weather"),
                                                                                          (3, "get_weather")]


def test_a_tool_observation_without_an_end_has_no_result_yet(tmp_path, con):
    trace = _doc("microsoft-agent-2025-12-17.trace.json")
    tool = next(o for o in trace["observations"] if o["type"] == "TOOL")
    tool["endTime"] = None
    (tmp_path / "t.json").write_text(json.dumps(trace))
    ingest(con, [tmp_path / "t.json"])
    assert _one(con, "select tool_status, result_preview from steps where kind = 'tool'") == [("started", None)]
    assert _one(con, "select tool_results from run_view") == [(0,)]
