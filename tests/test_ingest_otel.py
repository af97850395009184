"""OpenTelemetry spans read by their meaning (issue 58): each rule on a few synthetic spans, then the spans pydantic-ai
and LangGraph (under OpenInference) wrote themselves, run by run against what the frameworks reported (truth.json).

Every rule is the OTel reader's (reconcile/formats/otel.sql); docs/formats.md gives each with the attribute it reads.
"""

from __future__ import annotations

import base64
import gzip
import json

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest.driver import ingest

FRAMEWORKS = ROOT / "tests" / "fixtures" / "frameworks"
T0 = 1_795_906_800_000_000_000  # 2026-11-28T23:00:00Z, in nanoseconds
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"


class Array(tuple):
    """An attribute written as an OTLP arrayValue of strings (gen_ai.response.finish_reasons)."""


def _value(v) -> dict:
    if isinstance(v, Array):
        return {"arrayValue": {"values": [{"stringValue": x} for x in v]}}
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, (list, dict)):  # JSON held in a string attribute, as the instrumentations write it
        return {"stringValue": json.dumps(v)}
    return {"stringValue": v}


def span(sid: str, name: str, at: tuple[int, int], parent: str | None = None, attrs: dict | None = None,
         error: str | None = None, exception: tuple[str, str] | None = None, trace: str = TRACE, ended: bool = True):
    """One span; ``at`` is (start, end) in milliseconds after T0."""
    out = {"traceId": trace, "spanId": sid, "name": name, "kind": 1, "startTimeUnixNano": str(T0 + at[0] * 10**6),
           "attributes": [{"key": k, "value": _value(v)} for k, v in (attrs or {}).items()], "status": {}}
    if ended:
        out["endTimeUnixNano"] = str(T0 + at[1] * 10**6)
    if parent:
        out["parentSpanId"] = parent
    if error is not None:
        out["status"] = {"code": 2, "message": error}
    if exception:
        out["events"] = [{"timeUnixNano": str(T0 + at[1] * 10**6), "name": "exception",
                          "attributes": [{"key": "exception.type", "value": {"stringValue": exception[0]}},
                                         {"key": "exception.message", "value": {"stringValue": exception[1]}}]}]
    return out


def request(*spans, scope: str = "test") -> dict:
    return {"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
                               "scopeSpans": [{"scope": {"name": scope}, "spans": list(spans)}]}]}


def sid(n: int) -> str:
    return f"{n:016x}"


def load(tmp_path, *requests, text: str | None = None, name: str = "spans.jsonl"):
    """Ingest one file of the requests (one a line); the store's path and the file's report."""
    path = tmp_path / name
    path.write_text(text if text is not None else "".join(json.dumps(r) + "\n" for r in requests))
    db = tmp_path / "otel.duckdb"
    with store.connect(db) as con:
        report = ingest(con, [path])
    return db, report.files[0]


def rows(db, sql: str, params=()) -> list[dict]:
    with store.connect(db) as con:
        cursor = con.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor.fetchall()]


def one(db, sql: str, params=()) -> dict:
    (row,) = rows(db, sql, params)
    return row


# Spans as the conventions write them ---------------------------------------------------------------------------

def genai_agent(*children, name="planner", error=None, exception=None, attrs=None, at=(0, 1000), span_id=None):
    return span(span_id or sid(1), f"invoke_agent {name}", at, attrs={"gen_ai.operation.name": "invoke_agent",
                                                                       "gen_ai.agent.name": name, **(attrs or {})},
                error=error, exception=exception)


def genai_chat(n, parent, at, out=None, usage=(100, 10), model="gpt-4o-mini", **attrs):
    base = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": model,
            "gen_ai.usage.input_tokens": usage[0], "gen_ai.usage.output_tokens": usage[1]}
    if out is not None:
        base["gen_ai.output.messages"] = out
    return span(sid(n), f"chat {model}", at, parent, {**base, **attrs})


def genai_tool(n, parent, at, name, call_id=None, args=None, result=None, **kw):
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name}
    if call_id:
        attrs["gen_ai.tool.call.id"] = call_id
    if args is not None:
        attrs["gen_ai.tool.call.arguments"] = args
    if result is not None:
        attrs["gen_ai.tool.call.result"] = result
    return span(sid(n), f"execute_tool {name}", at, parent, attrs, **kw)


def asks(*calls, text=None):
    """gen_ai.output.messages: one assistant message asking for (id, name, arguments) calls, and/or saying text."""
    parts = ([{"type": "text", "content": text}] if text else []) + [
        {"type": "tool_call", "id": i, "name": n, "arguments": a} for i, n, a in calls]
    return [{"role": "assistant", "parts": parts, "finish_reason": "tool_call" if calls else "stop"}]


def oi(kind, n, name, at, parent=None, node=None, **attrs):
    """An OpenInference span; ``node``: the LangGraph node it ran in (its metadata.langgraph_node)."""
    base = {"openinference.span.kind": kind}
    if node:
        base["metadata"] = {"ls_integration": "langgraph", "langgraph_node": node}
    return span(sid(n), name, at, parent, {**base, **{k.replace("__", "."): v for k, v in attrs.items()}})


def oi_llm(n, parent, at, calls=(), text=None, finish="stop", usage=(200, 20), node="agent"):
    attrs = {"llm.provider": "openai", "llm.system": "openai", "llm.model_name": "gpt-4o-mini-2024-07-18",
             "llm.token_count.prompt": usage[0], "llm.token_count.completion": usage[1],
             "llm.token_count.prompt_details.cache_read": 0, "llm.finish_reason": finish,
             "llm.output_messages.0.message.role": "assistant"}
    if text:
        attrs["llm.output_messages.0.message.content"] = text
    for k, (call_id, name, args) in enumerate(calls):
        prefix = f"llm.output_messages.0.message.tool_calls.{k}.tool_call."
        attrs[prefix + "id"] = call_id
        attrs[prefix + "function.name"] = name
        attrs[prefix + "function.arguments"] = json.dumps(args)
    return span(sid(n), "ChatOpenAI", at, parent, {"openinference.span.kind": "LLM",
                                                  "metadata": {"langgraph_node": node}, **attrs})


def tool_message(content, call_id, status="success"):
    return {"type": "tool", "data": {"content": content, "type": "tool", "name": "t", "tool_call_id": call_id,
                                     "status": status}}


# ---------------------------------------------------------------------------------------------------------------
# Lines of the file, not spans
# ---------------------------------------------------------------------------------------------------------------

def test_ingest_counts_the_file_s_lines_not_its_spans(tmp_path):
    first = request(genai_agent(), genai_chat(2, sid(1), (10, 500), out=asks(text="Hi.")))
    other = "b" * 32
    second = request(span(sid(9), "invoke_agent b", (0, 100), attrs={"gen_ai.operation.name": "invoke_agent"},
                          trace=other),
                     span(sid(8), "chat", (5, 50), sid(9), {"gen_ai.operation.name": "chat"}, trace=other))
    text = json.dumps(first) + "\n\n" + json.dumps(second) + "\n"  # 3 lines: the middle one blank
    _, result = load(tmp_path, text=text)
    assert (result.lines, result.loaded, result.rejected, result.skipped) == (3, 2, 0, 1)
    assert result.skipped_by == {"blank line": 1}


def test_a_file_that_is_one_request_is_one_record(tmp_path):
    db, result = load(tmp_path, text=json.dumps(request(genai_agent(), genai_chat(2, sid(1), (1, 5))), indent=2),
                      name="one.json")
    assert (result.lines, result.loaded) == (1, 1)
    assert one(db, "select count(*) as n from runs")["n"] == 1


def test_the_langgraph_export_counts_its_19_lines_not_its_320_spans(tmp_path):
    with store.connect(tmp_path / "lg.duckdb") as con:
        report = ingest(con, [FRAMEWORKS / "langgraph" / "spans.jsonl.gz"])
    (result,) = report.files
    assert (result.lines, result.loaded, result.rejected, result.skipped) == (19, 19, 0, 0)


def test_a_line_with_an_unreadable_span_is_rejected_whole(tmp_path):
    good = request(genai_agent(), genai_chat(2, sid(1), (1, 5)))
    broken_chat = genai_chat(4, sid(3), (1, 5))
    broken_chat["startTimeUnixNano"] = "soon"
    other = "c" * 32
    bad = request(dict(genai_agent(span_id=sid(3)), traceId=other), dict(broken_chat, traceId=other))
    db, result = load(tmp_path, good, bad)
    assert (result.lines, result.loaded, result.rejected) == (2, 1, 1)
    (reject,) = rows(db, "select line, reason from rejects")
    assert reject["line"] == 2 and 'startTimeUnixNano is "soon"' in reject["reason"]
    assert "nothing of the line is loaded" in reject["reason"]
    assert [r["run_id"] for r in rows(db, "select run_id from runs")] == [f"{TRACE}/{sid(1)}"]


def test_a_line_that_is_json_but_no_request_is_rejected_not_dropped(tmp_path):
    text = json.dumps(request(genai_agent(), genai_chat(2, sid(1), (1, 5)))) + "\n" + '{"hello": 1}\n'
    db, result = load(tmp_path, text=text)
    assert (result.lines, result.loaded, result.rejected) == (2, 1, 1)
    assert "no resourceSpans array" in one(db, "select reason from rejects")["reason"]


def test_a_value_out_of_range_rejects_the_run_not_one_step_of_it(tmp_path):
    chat = genai_chat(2, sid(1), (1, 5), usage=(2**63, 1))
    db, result = load(tmp_path, request(genai_agent(), chat, genai_tool(3, sid(1), (6, 7), "search", "c1")))
    assert (result.lines, result.loaded, result.rejected) == (1, 0, 1)
    assert one(db, "select count(*) as n from runs")["n"] == 0  # no run left with its steps half gone


# ---------------------------------------------------------------------------------------------------------------
# Ids
# ---------------------------------------------------------------------------------------------------------------

def test_base64_ids_are_read_as_hex(tmp_path):
    trace_b64 = base64.b64encode(bytes.fromhex(TRACE)).decode()
    agent, chat = genai_agent(), genai_chat(2, sid(1), (1, 5))
    for s in (agent, chat):
        s["traceId"] = trace_b64
        s["spanId"] = base64.b64encode(bytes.fromhex(s["spanId"])).decode()
    chat["parentSpanId"] = agent["spanId"]
    db, _ = load(tmp_path, request(agent, chat))
    assert one(db, "select run_id, steps from run_view") == {"run_id": f"{TRACE}/{sid(1)}", "steps": 1}


def test_the_pydantic_ai_spans_in_hex_and_base64_are_the_same_runs(tmp_path):
    with store.connect(tmp_path / "pa.duckdb") as con:
        report = ingest(con, [FRAMEWORKS / "pydantic_ai" / "hex", FRAMEWORKS / "pydantic_ai" / "base64"])
        runs = {r[0] for r in con.execute("select run_id from runs").fetchall()}
    truth = json.loads((FRAMEWORKS / "pydantic_ai" / "truth.json").read_text())
    assert runs == {f"{r['trace_id']}/{r['agent_span_id']}" for r in truth["runs"]}
    hex_file = next(f for f in report.files if "/hex/" in f.path)
    assert hex_file.skipped == 1 and "already loaded from" in hex_file.notes[0]  # the tool_failed line, once


# ---------------------------------------------------------------------------------------------------------------
# One run per agent run
# ---------------------------------------------------------------------------------------------------------------

def _langgraph_turns(root_kind="AGENT", root_name="orders_agent"):
    """A graph run: its root, two `agent` node turns (each marked AGENT, with an LLM call), a tool between."""
    root = oi(root_kind, 1, root_name, (0, 1000), metadata={"ls_integration": "langgraph"})
    return [root,
            oi("AGENT", 2, "agent", (10, 300), sid(1), node="agent"),
            oi_llm(3, sid(2), (20, 290), calls=[("call_w0", "get_weather", {"city": "Paris"})], finish="tool_calls"),
            oi("CHAIN", 4, "tools", (310, 400), sid(1), node="tools"),
            oi("TOOL", 5, "get_weather", (320, 390), sid(4), node="tools", tool__name="get_weather",
               input__value="Paris", output__value=json.dumps(tool_message("18C and sunny", "call_w0"))),
            oi("AGENT", 6, "agent", (410, 990), sid(1), node="agent"),
            oi_llm(7, sid(6), (420, 980), text="Paris: 18C and sunny.")]


def test_a_langgraph_agent_node_is_a_step_of_its_graph_s_run(tmp_path):
    db, _ = load(tmp_path, request(*_langgraph_turns()))
    run = one(db, "select run_id, agent, status, steps, tool_results, final_output from run_view")
    assert run == {"run_id": f"{TRACE}/{sid(1)}", "agent": "orders_agent", "status": "succeeded", "steps": 2,
                   "tool_results": 1, "final_output": "Paris: 18C and sunny."}


def test_a_graph_with_no_agent_root_is_its_trace_s_run(tmp_path):
    db, _ = load(tmp_path, request(*_langgraph_turns(root_kind="CHAIN", root_name="LangGraph")))
    assert one(db, "select run_id, steps, status from run_view") == {"run_id": TRACE, "steps": 2, "status": "succeeded"}


def test_a_sub_agent_delegated_inside_a_tool_is_its_own_run_with_its_parent(tmp_path):
    planner = genai_agent(name="planner")
    chat = genai_chat(2, sid(1), (1, 10), out=asks(("toolu_1", "summarize", {"doc": "a"})))
    tool = genai_tool(3, sid(1), (11, 90), "summarize", "toolu_1", {"doc": "a"}, "short")
    helper = span(sid(4), "invoke_agent helper", (12, 80), sid(3),
                  {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper", "final_result": "short"})
    helper_chat = genai_chat(5, sid(4), (13, 70), out=asks(text="short"))
    answer = genai_chat(6, sid(1), (91, 99), out=asks(text="Done."))
    db, _ = load(tmp_path, request(planner, chat, tool, helper, helper_chat, answer))
    runs = rows(db, "select run_id, agent, parent_run_id, steps, tool_results, final_output from run_view order by 1")
    assert runs == [
        {"run_id": f"{TRACE}/{sid(1)}", "agent": "planner", "parent_run_id": None, "steps": 2, "tool_results": 1,
         "final_output": "Done."},
        {"run_id": f"{TRACE}/{sid(4)}", "agent": "helper", "parent_run_id": f"{TRACE}/{sid(1)}", "steps": 1,
         "tool_results": 0, "final_output": "short"}]


# ---------------------------------------------------------------------------------------------------------------
# Status: the root span and its error
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("error", "exception", "status", "stop_reason"), [
    ("UsageLimitExceeded: The next request would exceed the request_limit of 3.",
     ("pydantic_ai.exceptions.UsageLimitExceeded", "The next request would exceed the request_limit of 3."),
     "budget_exceeded", "UsageLimitExceeded: The next request would exceed the request_limit of 3."),
    ("UsageLimitExceeded: Exceeded the total_tokens_limit of 30000", None,  # no exception event: the message says
     "budget_exceeded", "UsageLimitExceeded: Exceeded the total_tokens_limit of 30000"),
    ("GraphRecursionError('Recursion limit of 6 reached')Traceback (most recent call last): ...",
     ("langgraph.errors.GraphRecursionError", "Recursion limit of 6 reached"),
     "budget_exceeded", "GraphRecursionError: Recursion limit of 6 reached"),
    ("QueryCanceled('canceling statement')Traceback ...", ("psycopg.errors.QueryCanceled", "canceling statement"),
     "failed", "QueryCanceled: canceling statement"),
    ("overloaded", None, "failed", "overloaded"),
], ids=["usage-limit", "usage-limit-message-only", "recursion-limit", "other-error", "no-event"])
def test_the_root_s_error_decides_the_status(tmp_path, error, exception, status, stop_reason):
    db, _ = load(tmp_path, request(genai_agent(error=error, exception=exception),
                                   genai_chat(2, sid(1), (1, 5), out=asks(("c1", "fetch", {"u": 1})))))
    run = one(db, "select status, stop_reason, final_output, has_final_answer, status_inferred from run_view")
    assert run == {"status": status, "stop_reason": stop_reason, "final_output": None, "has_final_answer": False,
                   "status_inferred": False}


def test_a_tool_that_raised_while_the_agent_went_on_to_answer_leaves_the_run_succeeded(tmp_path):
    db, _ = load(tmp_path, request(
        genai_agent(attrs={"final_result": "billing-api is unknown."}),
        genai_chat(2, sid(1), (1, 5), out=asks(("c1", "status", {"s": "billing"}))),
        genai_tool(3, sid(1), (6, 9), "status", "c1", {"s": "billing"}, "timed out", error="",
                   exception=("pydantic_ai.exceptions.ToolFailedError", "timed out")),
        genai_chat(4, sid(1), (10, 20), out=asks(text="billing-api is unknown."))))
    assert one(db, "select status, stop_reason, final_output from run_view") == {
        "status": "succeeded", "stop_reason": None, "final_output": "billing-api is unknown."}
    assert one(db, "select tool_status, error from steps where kind = 'tool'") == {
        "tool_status": "error", "error": "ToolFailedError: timed out"}


def test_a_retried_model_call_in_a_langgraph_run_that_answered_leaves_it_succeeded(tmp_path):
    spans = _langgraph_turns()
    spans.insert(2, dict(oi_llm(8, sid(2), (12, 18)), status={"code": 2, "message": "RateLimitError('429')"}))
    db, _ = load(tmp_path, request(*spans))
    assert one(db, "select status, steps from run_view") == {"status": "succeeded", "steps": 3}


def test_a_run_whose_root_has_not_ended_or_is_missing_is_running_inferred(tmp_path):
    unfinished = request(genai_agent(), genai_chat(2, sid(1), (1, 5)))
    del unfinished["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["endTimeUnixNano"]
    orphan = request(span(sid(7), "chat", (1, 5), sid(6), {"gen_ai.operation.name": "chat"}, trace="d" * 32))
    db, _ = load(tmp_path, unfinished, orphan)
    runs = rows(db, "select run_id, status, status_inferred, ended_at from runs order by 1")
    assert [(r["run_id"], r["status_inferred"], r["ended_at"]) for r in runs] == [
        (f"{TRACE}/{sid(1)}", True, None), ("d" * 32, True, None)]
    # running, as staged; abandoned once silent past a day (reconcile.store.status: these spans are from 2026-11-28)
    assert {r["status"] for r in runs} <= {"running", "abandoned"}


def test_a_framework_s_limit_reply_is_a_budget_stop_and_its_unrun_calls_are_not_run(tmp_path):
    spans = _langgraph_turns()
    spans[-1] = oi_llm(7, sid(6), (420, 980), calls=[("call_w1", "get_weather", {"city": "Rome"})],
                       finish="tool_calls")
    reply = "Sorry, need more steps to process this request."
    spans[0]["attributes"].append({"key": "output.value", "value": {"stringValue": json.dumps(
        {"messages": [{"type": "human", "data": {"content": "Weather?"}}, {"type": "ai", "data": {"content": reply}}]})}})
    db, _ = load(tmp_path, request(*spans))
    assert one(db, "select status, stop_reason, final_output, has_final_answer from run_view") == {
        "status": "budget_exceeded", "stop_reason": f"remaining_steps: {reply}", "final_output": reply,
        "has_final_answer": False}
    assert one(db, "select idx, tool_name, call_id, tool_status, error from steps where tool_status = 'not_run'") == {
        "idx": 3, "tool_name": "get_weather", "call_id": "call_w1", "tool_status": "not_run",
        "error": "not run: remaining_steps stopped the run after the call that asked for it"}


# ---------------------------------------------------------------------------------------------------------------
# Model calls, tool calls, results
# ---------------------------------------------------------------------------------------------------------------

def test_a_model_call_is_the_provider_call_not_the_wrapper_that_re_reports_it(tmp_path):
    wrapper = oi_llm(2, sid(1), (1, 50), text="Hi.", usage=(300, 30))
    inner = oi_llm(3, sid(2), (2, 49), text="Hi.", usage=(300, 30))
    db, _ = load(tmp_path, request(oi("AGENT", 1, "a_agent", (0, 60)), wrapper, inner))
    assert one(db, "select steps, input_tokens, output_tokens from run_view") == {
        "steps": 1, "input_tokens": 300, "output_tokens": 30}


def test_tool_calls_ids_and_arguments_come_from_the_model_call_s_output_messages(tmp_path):
    db, _ = load(tmp_path, request(*_langgraph_turns()))
    assert rows(db, "select step_idx, call_id, tool_name, args_json from tool_calls") == [
        {"step_idx": 0, "call_id": "call_w0", "tool_name": "get_weather", "args_json": '{"city":"Paris"}'}]
    tool = one(db, "select call_id, args_json, result_bytes, result_preview, tool_status from steps where kind = 'tool'")
    # not the tool span's bare "Paris" and its span id; the result is the ToolMessage's content, not the message
    assert tool == {"call_id": "call_w0", "args_json": '{"city":"Paris"}', "result_bytes": len("18C and sunny"),
                    "result_preview": "18C and sunny", "tool_status": "ok"}


def test_a_tool_span_that_records_no_call_id_runs_the_calls_of_its_name_in_order(tmp_path):
    calls = [("call_a", "lookup", {"id": "1"}), ("call_b", "lookup", {"id": "2"})]
    spans = [oi("AGENT", 1, "orders_agent", (0, 1000)), oi_llm(2, sid(1), (1, 50), calls=calls, finish="tool_calls"),
             span(sid(3), "lookup", (60, 70), sid(1), {"openinference.span.kind": "TOOL", "tool.name": "lookup",
                                                       "input.value": "1"},
                  error="ValueError('no')", exception=("ValueError", "no")),  # raised: no output, no call id
             oi("TOOL", 4, "lookup", (61, 80), sid(1), tool__name="lookup", input__value="2",
                output__value=json.dumps(tool_message("found", "call_b"))),
             oi_llm(5, sid(1), (90, 99), text="Order 2 found.")]
    db, _ = load(tmp_path, request(*spans))
    got = rows(db, "select call_id, tool_status, args_json from steps where kind = 'tool' order by idx")
    assert got == [{"call_id": "call_a", "tool_status": "error", "args_json": '{"id":"1"}'},
                   {"call_id": "call_b", "tool_status": "ok", "args_json": '{"id":"2"}'}]
    assert one(db, "select status from run_view")["status"] == "succeeded"


def test_parallel_tool_spans_are_paired_by_their_own_call_ids(tmp_path):
    chat = genai_chat(2, sid(1), (1, 10), out=asks(("c1", "status", {"s": "a"}), ("c2", "status", {"s": "b"})))
    db, _ = load(tmp_path, request(genai_agent(), chat,
                                   genai_tool(3, sid(1), (11, 30), "status", "c2", {"s": "b"}, "b ok"),
                                   genai_tool(4, sid(1), (12, 20), "status", "c1", {"s": "a"}, "a ok"),
                                   genai_chat(5, sid(1), (31, 40), out=asks(text="Both ok."))))
    got = rows(db, "select call_id, args_json, result_preview from steps where kind = 'tool' order by idx")
    assert got == [{"call_id": "c2", "args_json": '{"s":"b"}', "result_preview": "b ok"},
                   {"call_id": "c1", "args_json": '{"s":"a"}', "result_preview": "a ok"}]
    assert [r["call_id"] for r in rows(db, "select call_id from tool_calls order by call_position")] == ["c1", "c2"]


def test_a_tool_span_answering_no_asked_call_is_a_call_of_its_own(tmp_path):
    # the model span records no output messages (opt-in): the tool span's own id and arguments are the call
    db, _ = load(tmp_path, request(genai_agent(), genai_chat(2, sid(1), (1, 5)),
                                   genai_tool(3, sid(1), (6, 9), "search", "call_1", {"q": "x"}, "3 hits")))
    assert rows(db, "select step_idx, call_id, tool_name, args_json from tool_calls") == [
        {"step_idx": 0, "call_id": "call_1", "tool_name": "search", "args_json": '{"q":"x"}'}]


def test_a_call_the_model_gave_no_id_is_named_by_the_tool_span_that_ran_it(tmp_path):
    # Gemini's function calls carry no id: the tool span that ran one names it, else its model span and position
    chat = genai_chat(2, sid(1), (1, 5), out=asks((None, "search", {"q": 1}), (None, "lookup", {"k": 2})))
    db, _ = load(tmp_path, request(genai_agent(), chat, genai_tool(3, sid(1), (6, 9), "search", None, None, "hits"),
                                   genai_chat(4, sid(1), (10, 12), out=asks(text="Found."))))
    assert rows(db, "select call_id, tool_name, args_json from tool_calls order by call_position") == [
        {"call_id": sid(3), "tool_name": "search", "args_json": '{"q":1}'},
        {"call_id": f"{sid(2)}#2", "tool_name": "lookup", "args_json": '{"k":2}'}]
    assert one(db, "select call_id, result_preview from steps where kind = 'tool'") == {
        "call_id": sid(3), "result_preview": "hits"}


def test_openllmetry_s_flattened_completion_is_read_too(tmp_path):
    chat = span(sid(2), "openai.chat", (1, 5), sid(1), {
        "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.response.model": "gpt-4.1",
        "gen_ai.usage.input_tokens": 50, "gen_ai.usage.output_tokens": 5,
        "gen_ai.completion.0.content": "Looking.", "gen_ai.completion.0.tool_calls.0.id": "call_9",
        "gen_ai.completion.0.tool_calls.0.name": "search", "gen_ai.completion.0.tool_calls.0.arguments": '{"q": "y"}'})
    db, _ = load(tmp_path, request(genai_agent(), chat))
    assert rows(db, "select call_id, tool_name, args_json from tool_calls") == [
        {"call_id": "call_9", "tool_name": "search", "args_json": '{"q":"y"}'}]
    assert one(db, "select output_text, provider from steps where kind = 'model'") == {
        "output_text": "Looking.", "provider": "openai"}


def test_a_pydantic_ai_output_tool_call_is_the_answer_not_a_call(tmp_path):
    answer = {"category": "deploy", "priority": 1}
    chat = genai_chat(2, sid(1), (1, 5), out=asks(("call_o", "final_result", answer)))
    db, _ = load(tmp_path, request(genai_agent(attrs={"final_result": json.dumps(answer)}), chat, scope="pydantic-ai"))
    assert rows(db, "select * from tool_calls") == []
    step = one(db, "select is_final, output_text from steps")
    assert step["is_final"] and json.loads(step["output_text"]) == answer
    assert json.loads(one(db, "select final_output from run_view")["final_output"]) == answer


def test_the_output_tools_a_span_names_are_the_ones_it_has(tmp_path):
    # model_request_parameters names the output tools: then final_result is a tool like another, `answer` the answer
    params = {"function_tools": [{"name": "final_result"}], "output_tools": [{"name": "answer"}]}
    chat = genai_chat(2, sid(1), (1, 5), out=asks(("c1", "final_result", {}), ("c2", "answer", {"x": 1})),
                      model_request_parameters=params)
    db, _ = load(tmp_path, request(genai_agent(), chat, scope="pydantic-ai"))
    assert [r["tool_name"] for r in rows(db, "select tool_name from tool_calls")] == ["final_result"]


def test_a_run_stopped_before_its_last_requested_tool_ran_has_no_tool_call_as_its_answer(tmp_path):
    db, _ = load(tmp_path, request(
        genai_agent(error="UsageLimitExceeded: Exceeded the total_tokens_limit of 30000",
                    exception=("pydantic_ai.exceptions.UsageLimitExceeded", "Exceeded the total_tokens_limit of 30000")),
        genai_chat(2, sid(1), (1, 5), out=asks(("c1", "read_logs", {"s": "a"}))),
        genai_tool(3, sid(1), (6, 9), "read_logs", "c1", {"s": "a"}, "lines"),
        genai_chat(4, sid(1), (10, 20), out=asks(("c2", "read_logs", {"s": "b"}), text="One more."))))
    run = one(db, "select status, final_output, has_final_answer, tool_results from run_view")
    assert run == {"status": "budget_exceeded", "final_output": None, "has_final_answer": False, "tool_results": 2}
    unrun = one(db, "select idx, call_id, tool_status, result_bytes from steps where tool_status = 'not_run'")
    assert unrun == {"idx": 3, "call_id": "c2", "tool_status": "not_run", "result_bytes": None}


def test_a_tool_result_the_span_does_not_record_is_unknown(tmp_path):
    db, _ = load(tmp_path, request(genai_agent(), genai_chat(2, sid(1), (1, 5), out=asks(("c1", "t", {}))),
                                   genai_tool(3, sid(1), (6, 9), "t", "c1")))
    assert one(db, "select result_bytes, result_tokens, tool_status from steps where kind = 'tool'") == {
        "result_bytes": None, "result_tokens": None, "tool_status": "ok"}


# ---------------------------------------------------------------------------------------------------------------
# The answer, finish reasons, provider, times
# ---------------------------------------------------------------------------------------------------------------

def test_the_answer_is_the_last_assistant_message_s_text_never_the_serialized_state(tmp_path):
    spans = _langgraph_turns()
    state = {"messages": [{"type": "human", "data": {"content": "Weather?"}},
                          {"type": "ai", "data": {"content": [{"type": "text", "text": "Paris: "},
                                                              {"type": "text", "text": "18C."}]}}]}
    spans[0]["attributes"].append({"key": "output.value", "value": {"stringValue": json.dumps(state)}})
    db, _ = load(tmp_path, request(*spans))
    assert one(db, "select final_output, final_answer_step from run_view") == {
        "final_output": "Paris: 18C.", "final_answer_step": 2}


def test_a_plain_text_output_value_is_the_answer(tmp_path):
    root = oi("AGENT", 1, "crew_agent", (0, 100), output__value="42.")
    db, _ = load(tmp_path, request(root, oi_llm(2, sid(1), (1, 50))))
    assert one(db, "select final_output from run_view")["final_output"] == "42."


def test_a_run_without_output_messages_has_a_final_step_but_no_known_text(tmp_path):
    db, _ = load(tmp_path, request(genai_agent(), genai_chat(2, sid(1), (1, 5))))
    assert one(db, "select final_output, has_final_answer from run_view") == {"final_output": None,
                                                                               "has_final_answer": True}
    assert one(db, "select output_text from steps")["output_text"] is None


def test_finish_reasons_from_either_convention(tmp_path):
    genai = genai_chat(2, sid(1), (1, 5), **{"gen_ai.response.finish_reasons": Array(["length"])})
    db, _ = load(tmp_path, request(genai_agent(), genai),
                 request(*[dict(s, traceId="e" * 32) for s in _langgraph_turns()]))
    got = rows(db, "select run_id[:4] as run, finish_reason from steps where kind = 'model' order by run_id, idx")
    assert [(r["run"], r["finish_reason"]) for r in got] == [(TRACE[:4], "length"), ("eeee", "tool_calls"),
                                                             ("eeee", "stop")]


def test_the_provider_is_read_from_the_spans(tmp_path):
    chat = span(sid(2), "LLM", (1, 5), sid(1), {"openinference.span.kind": "LLM", "llm.system": "anthropic",
                                                 "llm.model_name": "claude-sonnet-4-5", "llm.token_count.prompt": 9,
                                                 "llm.token_count.completion": 1})
    db, _ = load(tmp_path, request(oi("AGENT", 1, "x_agent", (0, 10)), chat))
    assert one(db, "select provider, model from run_view") == {"provider": "anthropic", "model": "claude-sonnet-4-5"}


def test_a_run_starts_at_its_root_and_lasts_until_the_root_ends(tmp_path):
    # the root starts before its first model call, which starts before the first tool span
    db, _ = load(tmp_path, request(*_langgraph_turns()))
    run = one(db, "select epoch_ms(started_at) as start, wall_seconds from run_view")
    assert run == {"start": T0 // 10**6, "wall_seconds": 1.0}


# ---------------------------------------------------------------------------------------------------------------
# What the checks need: call ids, the ledger, threads, the catalogue
# ---------------------------------------------------------------------------------------------------------------

def _check(cli, db, name):
    result = cli("check", "--only", name, "--json", "--exit-zero", "--db", db)
    assert result.code == 0, result.err
    report = result.json()
    (check,) = [c for c in report["checks"] if c["name"] == name]
    return check, [f for f in report["findings"] if f["check"] == name]


def test_a_call_to_a_tool_no_span_offered_fails_known_tools_only(tmp_path, cli):
    offered = [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}}]
    chat = genai_chat(2, sid(1), (1, 5), out=asks(("c1", "book_flight", {"to": "Rome"})),
                      **{"gen_ai.tool.definitions": offered})
    db, _ = load(tmp_path, request(genai_agent(), chat, genai_tool(3, sid(1), (6, 9), "book_flight", "c1", {}, "no")))
    check, findings = _check(cli, db, "known_tools_only")
    assert check["not_judged"] == 0 and check["failures"] >= 1
    assert "call to book_flight" in findings[0]["detail"]


def test_call_ids_pair_the_results_and_a_lost_result_is_found(tmp_path, cli):
    chat = genai_chat(2, sid(1), (1, 5), out=asks(("c1", "t", {}), ("c2", "t", {})))
    db, _ = load(tmp_path, request(genai_agent(), chat, genai_tool(3, sid(1), (6, 9), "t", "c1", {}, "ok"),
                                   genai_chat(4, sid(1), (10, 20), out=asks(text="Done."))))
    check, findings = _check(cli, db, "tool_calls_paired")
    assert check["not_judged"] == 0
    assert [f["detail"].split(" asked")[0] for f in findings] == ["call c2 to t"]


def test_the_framework_s_counters_are_its_ledger_and_conversations_its_threads(tmp_path):
    agent = genai_agent(attrs={"gen_ai.aggregated_usage.input_tokens": 300, "gen_ai.aggregated_usage.output_tokens": 30,
                               "gen_ai.conversation.id": "conv-1"})
    first = genai_chat(2, sid(1), (1, 5), usage=(200, 20), out=asks(text="a"),
                       **{"gen_ai.conversation.id": "conv-1"})
    second = genai_chat(3, sid(1), (6, 9), usage=(100, 10), out=asks(text="b"),
                        **{"gen_ai.conversation.id": "conv-2"})
    db, _ = load(tmp_path, request(agent, first, second))
    run = one(db, "select ledger_input_tokens, ledger_output_tokens, labels ->> 'conversation_id' as conversation "
                  "from runs")
    assert run == {"ledger_input_tokens": 300, "ledger_output_tokens": 30, "conversation": "conv-1"}
    assert [r["agent_label"] for r in rows(db, "select agent_label from steps order by idx")] == ["conv-1", "conv-2"]
    facts = one(db, "select ledger, call_ids, thread, run_status from run_facts")
    assert facts == {"ledger": True, "call_ids": True, "thread": True, "run_status": True}


def test_one_conversation_labels_no_step(tmp_path):
    chats = [genai_chat(n, sid(1), (n, n + 1), **{"gen_ai.conversation.id": "conv-1"}) for n in (2, 3)]
    db, _ = load(tmp_path, request(genai_agent(), *chats))
    assert [r["agent_label"] for r in rows(db, "select agent_label from steps")] == [None, None]


# ---------------------------------------------------------------------------------------------------------------
# The frameworks' own spans, run by run against what they reported
# ---------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def framework_stores(tmp_path_factory):
    folder = tmp_path_factory.mktemp("frameworks")
    dbs = {"pydantic_ai": folder / "pa.duckdb", "langgraph": folder / "lg.duckdb"}
    with store.connect(dbs["pydantic_ai"]) as con:
        ingest(con, [FRAMEWORKS / "pydantic_ai" / "hex", FRAMEWORKS / "pydantic_ai" / "base64"])
    with store.connect(dbs["langgraph"]) as con:
        ingest(con, [FRAMEWORKS / "langgraph" / "spans.jsonl.gz"])
    return dbs


def _facts(db, run_id) -> dict:
    run = one(db, "select * from run_view where run_id = ?", [run_id])
    steps = rows(db, "select * from steps where run_id = ? order by idx", [run_id])
    calls = rows(db, "select tool_name, call_id, args_json from tool_calls where run_id = ?", [run_id])
    ran = [s for s in steps if s["kind"] == "tool" and s["tool_status"] != "not_run"]
    return {
        "model_calls": sum(s["kind"] == "model" for s in steps),
        "asked": sorted((c["tool_name"], c["call_id"], json.loads(c["args_json"])) for c in calls),
        "results": sorted((s["tool_name"], s["call_id"], s["tool_status"]) for s in ran),
        "buckets": tuple(run[b] for b in ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h",
                                          "output_tokens")),
        "status": run["status"], "final": run["final_output"], "start_us": run["started_at"].timestamp() * 1e6,
        "wall": run["wall_seconds"], "model": run["model"], "provider": run["provider"],
        "parent": run["parent_run_id"], "steps": steps,
    }


def _buckets(calls, anthropic_writes) -> tuple:
    """The five buckets from (input, read, write, output) per call; Anthropic writes of unknown lifetime: unknown."""
    if any(c is None for c in calls):
        return (None,) * 5
    inp, read, write, out = (sum(c[i] for c in calls) for i in range(4))
    writes = (None, None) if anthropic_writes and write else (0, 0)
    return (inp - read - write, read, *writes, out)


def _assert_run(got, want, key):
    start_us = want.pop("start_ns") / 1000
    wall = want.pop("wall")
    for fact, value in want.items():
        assert got[fact] == value, (key, fact, got[fact], value)
    assert abs(got["start_us"] - start_us) <= 1, key  # microseconds, as the store keeps them
    assert abs(got["wall"] - wall) <= 0.001, key


PYDANTIC_AI_RUNS = json.loads((FRAMEWORKS / "pydantic_ai" / "truth.json").read_text())["runs"]


@pytest.mark.parametrize("run", PYDANTIC_AI_RUNS, ids=lambda r: r["key"])
def test_each_pydantic_ai_run_is_what_pydantic_ai_reported(framework_stores, run):
    run_id = f"{run['trace_id']}/{run['agent_span_id']}"
    got = _facts(framework_stores["pydantic_ai"], run_id)
    calls = [(c["usage"]["input_tokens"], c["usage"]["cache_read_tokens"], c["usage"]["cache_write_tokens"],
              c["usage"]["output_tokens"]) for c in run["calls"]]
    asked = [t for t in run["tool_calls"] if t["kind"] == "function"]  # an output tool's call is the answer
    output = run["output"]
    want = {
        "model_calls": len(run["calls"]),
        "asked": sorted((t["name"], t["call_id"], t["args"]) for t in asked),
        "results": sorted((t["name"], t["call_id"], "ok" if t["outcome"] == "success" else "error")
                          for t in asked if t["tool_span_id"]),
        "buckets": _buckets(calls, any(c["provider"] == "anthropic" for c in run["calls"])),
        "status": {"completed": "succeeded", "UsageLimitExceeded": "budget_exceeded"}[run["status"]],
        "final": json.dumps(output, separators=(",", ":")) if isinstance(output, dict) else output,
        "model": run["calls"][-1]["model_name"], "provider": run["calls"][-1]["provider"],
        "parent": f"{run['trace_id']}/{run['parent']['agent_span_id']}" if run["parent"] else None,
        "start_ns": int(run["start_time_unix_nano"]),
        "wall": (int(run["end_time_unix_nano"]) - int(run["start_time_unix_nano"])) / 1e9,
    }
    _assert_run(got, want, run["key"])
    # a call the run never ran (the limit stopped it first) is a not_run step, never a lost result
    unrun = sorted(t["call_id"] for t in asked if not t["tool_span_id"])
    assert sorted(s["call_id"] for s in got["steps"] if s["tool_status"] == "not_run") == unrun


LANGGRAPH_RUNS = json.loads((FRAMEWORKS / "langgraph" / "truth.json").read_text())["runs"]


@pytest.mark.parametrize("trace", list(LANGGRAPH_RUNS), ids=lambda t: LANGGRAPH_RUNS[t]["scenario"])
def test_each_langgraph_run_is_what_langchain_reported(framework_stores, trace):
    run = LANGGRAPH_RUNS[trace]
    db = framework_stores["langgraph"]
    root = run["root_span_name"]
    run_id = trace if root == "LangGraph" else f"{trace}/{run['root_span_id']}"
    # a graph a tool of this one ran (delegation's research_agent) is a sub-agent's run of its own
    own = [c for c in run["model_calls"] if c["agent"] == root or root == "LangGraph"]
    ran = [t for t in run["tool_executions"] if t["agent"] == root or root == "LangGraph"]
    got = _facts(db, run_id)

    def usage(c):
        u = c["usage_metadata"]
        if u is None:
            return None
        d = u.get("input_token_details") or {}
        return u["input_tokens"], d.get("cache_read", 0), d.get("cache_creation", 0), u["output_tokens"]

    answered = [c for c in own if c["status"] == "ok"]
    limit_reply = run["final_answer"] == "Sorry, need more steps to process this request."
    want = {
        "model_calls": len(own),
        "asked": sorted((tc["name"], tc["id"], tc["args"]) for c in own for tc in c["tool_calls"]),
        "results": sorted((t["name"], t["tool_call_id"], "ok" if t["status"] == "success" else "error") for t in ran),
        # a failed call reports no usage: the run's totals are unknown
        "buckets": _buckets([usage(c) for c in own], any(c["provider"] == "anthropic" for c in own)),
        "status": ("budget_exceeded" if limit_reply else "succeeded") if run["status"] == "completed"
                  else "budget_exceeded" if run["status"] == "GraphRecursionError" else "failed",
        "final": run["final_answer"],
        "model": answered[-1]["response_model"], "provider": answered[-1]["provider"],
        "parent": None,
        "start_ns": int(run["start_time_unix_nano"]),
        "wall": (int(run["end_time_unix_nano"]) - int(run["start_time_unix_nano"])) / 1e9,
    }
    _assert_run(got, want, run["scenario"])
    sizes = sorted((s["call_id"], s["result_bytes"]) for s in got["steps"] if s["tool_status"] == "ok")
    assert sizes == sorted((t["tool_call_id"], len(t["content"].encode())) for t in ran if t["status"] == "success")
    finish = [s["finish_reason"] for s in got["steps"] if s["kind"] == "model"]
    assert finish == [c.get("finish_reason") for c in own]


def test_the_langgraph_delegation_is_the_supervisor_s_run_and_its_research_agent_s(framework_stores):
    (trace,) = [t for t, r in LANGGRAPH_RUNS.items() if r["scenario"] == "delegation"]
    run = LANGGRAPH_RUNS[trace]
    runs = rows(framework_stores["langgraph"], "select run_id, agent, parent_run_id, steps, final_output from run_view "
                                               "where run_id like ? || '%' order by started_at", [trace])
    research = [c for c in run["model_calls"] if c["agent"] == "research_agent"]
    result = next(t["content"] for t in run["tool_executions"] if t["name"] == "research")
    assert [(r["agent"], r["parent_run_id"], r["steps"]) for r in runs] == [
        ("supervisor_agent", None, 2), ("research_agent", f"{trace}/{run['root_span_id']}", len(research))]
    assert runs[1]["final_output"] == result == research[-1]["text"]


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_the_frameworks_runs_have_no_error_finding_and_the_checks_judge_them(framework_stores, cli):
    for name, db in framework_stores.items():
        report = cli("check", "--json", "--exit-zero", "--db", db).json()
        assert [f for f in report["findings"] if f["severity"] == "error"] == [], name
        checks = {c["name"]: c for c in report["checks"]}
        for check in ("tool_calls_paired", "known_tools_only", "no_silent_truncation", "status_consistent"):
            assert checks[check]["not_judged"] == 0, (name, check)
    # the ledger is judged where every bucket is known (Anthropic cache writes have no known lifetime)
    ledger = {c["name"]: c for c in cli("check", "--json", "--exit-zero", "--db",
                                         framework_stores["pydantic_ai"]).json()["checks"]}["ledger_matches_transcript"]
    assert ledger["not_judged"] < len(PYDANTIC_AI_RUNS)


def test_the_old_fixtures_keep_loading(tmp_path):
    with store.connect(tmp_path / "old.duckdb") as con:
        report = ingest(con, [ROOT / "tests" / "fixtures" / "otel"])
        runs = dict(con.execute("select run_id, status from runs").fetchall())
    assert {(f.path.rsplit("/", 1)[1], f.lines, f.loaded) for f in report.files} == {
        ("genai_agent.json", 1, 1), ("openinference.jsonl", 4, 4)}
    assert runs == {"5b8efff798038103d269b633813fc60c/a000000000000001": "succeeded",
                    "0af7651916cd43dd8448eb211c80319c": "failed",
                    "1f2e3d4c5b6a79881f2e3d4c5b6a7988/f000000000000001": "succeeded"}


def test_the_langgraph_file_holds_a_trace_a_line():
    with gzip.open(FRAMEWORKS / "langgraph" / "spans.jsonl.gz", "rt") as handle:
        lines = [line for line in handle.read().split("\n") if line]
    assert len(lines) == len(LANGGRAPH_RUNS) == 19
