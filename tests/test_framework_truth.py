"""Spans written by agent frameworks, run by run, against what the frameworks themselves reported (issue 58).

The oracle is independent of reconcile: every expected fact is computed here, in plain Python, from the fixtures'
``truth.json`` (built by each fixture's script from the framework's own Python objects, never from the exported
spans) and, where truth.json is silent, from the fixture's README. Nothing here reads reconcile's SQL, views or
helpers; reconcile is only asked, through its CLI, what it says of each run:

- ``tests/fixtures/frameworks/pydantic_ai``: pydantic-ai 2.78's own OpenTelemetry GenAI spans, 17 agent runs in 15
  traces (two runs delegated from a tool of ``delegation``); ``hex/spans.jsonl`` and ``base64/spans.jsonl`` (the
  ``tool_failed`` trace again, its ids in protobuf-JSON base64). Both files go into one store and must make the same
  17 runs, ids in lowercase hex; the base64 file alone must make its run, with the same id and facts.
- ``tests/fixtures/frameworks/langgraph``: LangGraph 1.2 under openinference-instrumentation-langchain 0.1.80, one
  agent run per trace (19).

Per run it compares ``show RUN --json`` (and ``show RUN --step N --json`` for each step), ``runs --no-fold-subagents
--json``, ``cost --by run --json`` and ``check --json``: model calls, the tool calls the model asked for (name, id,
arguments), the tool results (name and status, the call each answers, and -- LangGraph, where truth.json has the
ToolMessage content -- their size), the five token buckets, status, final answer, start, wall time, model, provider
and (pydantic-ai) the parent run; and every error-severity finding of ``check`` on these stores must be one the
truth justifies.

The oracle's rules (each from the framework's own objects; the judgement calls say why):

- **Runs.** One run per agent run. pydantic-ai: one per ``invoke_agent`` span, ``<traceId>/<agent span id>``; a
  delegated run is its own run whose parent is the run whose tool started it. LangGraph: one per trace (truth.json's
  runs, "two models in one run" for ``delegation``): the graph's ``agent`` node spans, once a turn, are steps of the
  graph's run, and the ``research_agent`` graph a supervisor's tool ran is counted in the supervisor's run as truth
  does (``LANGGRAPH_SUBAGENT_RUNS`` switches to the other reading: a child run, as pydantic-ai's delegated runs).
  Its id is the root span's ``<traceId>/<spanId>`` or the bare ``<traceId>``; either is accepted.
- **Model calls.** Every provider call the framework made: pydantic-ai's ``calls``, LangChain's chat-model calls
  (a call that raised included: ``retry_rate_limit``'s 429, ``model_error``'s timeout).
- **Tool calls.** What the model asked for: pydantic-ai's function-tool calls (an *output* tool, ``final_result``,
  is the structured answer, not a tool call -- the same reading as test_run_truth's JUDGED note on the Langfuse
  pydantic-ai trace), a call the run never got to run included; LangChain's ``AIMessage.tool_calls`` of every
  call (``remaining_steps``'s third request included: the LLM span records it, though create_react_agent then
  replaced the message).
- **Tool results.** Every tool that ran (pydantic-ai: an ``execute_tool`` span; LangChain: ``on_tool_start``), ``ok``
  or ``error`` (pydantic-ai ``ToolFailed`` and ``ModelRetry``, LangChain's raised or error ToolMessage), paired with
  the call id it answers. A call a limit stopped the run before is answered by a ``not_run`` tool step (the journal
  format's convention), counted in ``run_view.tool_results`` beside the results.
  Size (LangGraph): the UTF-8 bytes of the ToolMessage's content, for the results that succeeded.
- **Buckets.** As the provider bills: pydantic-ai's ``input_tokens`` and LangChain's ``usage_metadata.input_tokens``
  hold the cache reads and writes (both providers' shapes, per truth.json's notes), so input_uncached = input -
  cache read - cache write. Cache writes are Anthropic's default 5-minute writes: neither script asks for a 1-hour
  TTL (their wire usage carries no 1-hour breakdown; the LangGraph script's cache lasts 300 s), and pydantic-ai's own
  price of every call (``ModelResponse.cost()`` = the span's ``operation.cost``) is the 5-minute rate ($3.75/MTok
  on sonnet); so cache_write_1h is 0. OpenAI bills no writes. A call that failed with no usage reported counts 0:
  Anthropic bills no rate-limited (429) request; for ``model_error``'s client-side timeout, whose bill no record
  says, an unknown (None) is accepted beside 0 (JUDGED).
- **Status.** completed -> succeeded (a tool that raised while the agent went on to answer included); a framework's
  limit stop -> budget_exceeded: pydantic-ai ``UsageLimitExceeded``, LangGraph ``GraphRecursionError``, and
  create_react_agent's recursion-limit stop ("Sorry, need more steps to process this request.", ``remaining_steps``:
  no exception, but the step limit ended the loop); any other exception -> failed (a tool's ``QueryCanceled`` and a
  model call's ``APITimeoutError`` are errors, not the run's own time limit).
- **Final answer.** The framework's answer: pydantic-ai's run output (a structured output compared as the JSON
  object), LangChain's last AIMessage text; none (``final_output`` null, ``has_final_answer`` false) where the run
  raised before answering.
- **Start and wall time.** The agent span's (pydantic-ai) or the root span's (LangGraph) start and end unix nanos,
  to the millisecond.
- **Model and provider.** The response model (dated) of the run's answered calls and their provider; where a run
  used two (LangGraph ``delegation``) reconcile's ``model`` must be one of them and ``models`` must hold both.
- **Error findings.** Each must be justified by the truth: ``tool_calls_paired`` on a run whose model asked for a
  tool the run never ran (it stopped first). Nothing else in the truth violates an error-severity invariant. So that
  this does not hold by judging nothing, the checks that need what the spans record (call ids for pairing,
  pydantic-ai's own counters as the ledger, ``gen_ai.conversation.id`` as the thread: issue 58, item 2) must judge
  every run.
"""

from __future__ import annotations

import gzip
import json
from datetime import datetime, timedelta, timezone

import pytest

from conftest import ROOT

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

FRAMEWORKS = ROOT / "tests" / "fixtures" / "frameworks"
PYDANTIC_AI = FRAMEWORKS / "pydantic_ai"
LANGGRAPH = FRAMEWORKS / "langgraph"
BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")
# create_react_agent's answer when its remaining steps run out (langgraph.prebuilt.chat_agent_executor)
REMAINING_STEPS_ANSWER = "Sorry, need more steps to process this request."


# ---------------------------------------------------------------------------------------------------------------
# The truth, in plain Python
# ---------------------------------------------------------------------------------------------------------------

def _pydantic_ai_truth(only_traces: set[str] | None = None) -> dict[str, dict]:
    truth = json.loads((PYDANTIC_AI / "truth.json").read_text())
    ids = {run["key"]: f"{run['trace_id']}/{run['agent_span_id']}" for run in truth["runs"]}
    out = {}
    for run in truth["runs"]:
        if only_traces is not None and run["trace_id"] not in only_traces:
            continue
        buckets = dict.fromkeys(BUCKETS, 0)
        for call in run["calls"]:  # the run's own calls (a delegated run's are its own)
            usage = call["usage"]  # RequestUsage: input_tokens holds the cache reads and writes
            read, write = usage["cache_read_tokens"], usage["cache_write_tokens"]
            buckets["input_uncached"] += usage["input_tokens"] - read - write
            buckets["cache_read"] += read
            buckets["cache_write_5m"] += write
            buckets["output_tokens"] += usage["output_tokens"]
        asked = [t for t in run["tool_calls"] if t["kind"] == "function"]  # output tools are the answer
        ran = [t for t in asked if t["tool_span_id"]]
        status = {"completed": "succeeded", "UsageLimitExceeded": "budget_exceeded"}.get(run["status"], "failed")
        out[run["key"]] = {
            "run_ids": [ids[run["key"]]],
            "trace_id": run["trace_id"],
            "model_calls": len(run["calls"]),
            "tool_calls": sorted((t["name"], t["call_id"], t["args"]) for t in asked),
            "tool_results": sorted((t["name"], "ok" if t["outcome"] == "success" else "error") for t in ran),
            "tool_result_call_ids": sorted((t["name"], t["call_id"]) for t in ran),
            "unanswered": sorted(t["call_id"] for t in asked if not t["tool_span_id"]),
            **buckets,
            "status": status,
            "final_answer": run["output"],
            "start_ns": int(run["start_time_unix_nano"]),
            "end_ns": int(run["end_time_unix_nano"]),
            "models": {call["model_name"] for call in run["calls"]},
            "providers": {call["provider"] for call in run["calls"]},
            "parent": ids[run["parent"]["key"]] if run["parent"] else None,
        }
    return out


# Judgement call: a LangGraph graph a tool runs (``delegation``: the supervisor's ``research`` tool invokes the
# ``research_agent`` graph, in the same trace) is a sub-agent's run, a child of its caller, as pydantic-ai's delegated
# runs are: issue 58 says a sub-agent's run starts where another agent starts. truth.json counts the trace as one run
# ("two models in one run"); the expected facts of both runs come from its per-call ``agent`` and, for the
# sub-agent's own span id and times, from its AGENT span in the raw file (False: the trace's reading, one run).
LANGGRAPH_SUBAGENT_RUNS = True


def _langgraph_spans(line: int) -> list[dict]:
    with gzip.open(LANGGRAPH / "spans.jsonl.gz", "rt") as handle:
        request = json.loads(handle.read().splitlines()[line])
    return [span for rs in request["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]]


def _langgraph_run(calls: list[dict], ran: list[dict]) -> dict:
    buckets = dict.fromkeys(BUCKETS, 0)
    for call in calls:
        usage = call.get("usage_metadata")
        if not usage:  # the call raised: no usage reported (see JUDGED for model_error)
            continue
        details = usage.get("input_token_details") or {}
        read, write = details.get("cache_read") or 0, details.get("cache_creation") or 0
        # input_tokens holds cache reads (OpenAI) and reads and writes (Anthropic)
        buckets["input_uncached"] += usage["input_tokens"] - read - write
        buckets["cache_read"] += read
        buckets["cache_write_5m"] += write
        buckets["output_tokens"] += usage["output_tokens"]
    asked = [(tc["name"], tc["id"], tc["args"]) for call in calls for tc in call["tool_calls"]]
    ran_ids = {t["tool_call_id"] for t in ran}
    return {
        "model_calls": len(calls),
        "tool_calls": sorted(asked),
        "tool_results": sorted((t["name"], "ok" if t["status"] == "success" else "error") for t in ran),
        "tool_result_call_ids": sorted((t["name"], t["tool_call_id"]) for t in ran),
        "tool_result_bytes": sorted((t["tool_call_id"], len(t["content"].encode("utf-8")))
                                    for t in ran if t["status"] == "success"),
        "unanswered": sorted(call_id for _, call_id, _ in asked if call_id not in ran_ids),
        **buckets,
        "models": {c["response_model"] for c in calls if c["status"] == "ok"},
        "providers": {c["provider"] for c in calls},
    }


def _langgraph_truth(subagent_runs: bool = LANGGRAPH_SUBAGENT_RUNS) -> dict[str, dict]:
    truth = json.loads((LANGGRAPH / "truth.json").read_text())
    out = {}
    for trace_id, run in truth["runs"].items():
        root, calls, ran = run["root_span_name"], run["model_calls"], run["tool_executions"]
        subagents = sorted({c["agent"] for c in calls} - {root}) if subagent_runs else []
        if run["status"] == "completed":
            status = "budget_exceeded" if run["final_answer"] == REMAINING_STEPS_ANSWER else "succeeded"
        else:
            status = "budget_exceeded" if run["status"] == "GraphRecursionError" else "failed"
        run_id = f"{trace_id}/{run['root_span_id']}"
        out[run["scenario"]] = {
            "run_ids": [run_id, trace_id],
            "trace_id": trace_id,
            **_langgraph_run([c for c in calls if c["agent"] not in subagents],
                             [t for t in ran if t["agent"] not in subagents]),
            "status": status,
            "final_answer": run["final_answer"],
            "start_ns": int(run["start_time_unix_nano"]),
            "end_ns": int(run["end_time_unix_nano"]),
            "parent": None,
        }
        for agent in subagents:
            (span,) = [s for s in _langgraph_spans(run["line"]) if s["name"] == agent]
            own = [c for c in calls if c["agent"] == agent]
            answer = own[-1] if own and own[-1]["status"] == "ok" and not own[-1]["tool_calls"] else None
            out[f"{run['scenario']}.{agent}"] = {
                "run_ids": [f"{trace_id}/{span['spanId']}"],
                "trace_id": trace_id,
                **_langgraph_run(own, [t for t in ran if t["agent"] == agent]),
                "status": "succeeded" if answer and span.get("status", {}).get("code") != 2 else "failed",
                "final_answer": answer["text"] if answer else None,
                "start_ns": int(span["startTimeUnixNano"]),
                "end_ns": int(span["endTimeUnixNano"]),
                "parent": run_id,
            }
    return out


_BASE64_TRACES = set(json.loads((PYDANTIC_AI / "truth.json").read_text())["base64_traces"])
TRUTH = {
    "pydantic_ai": _pydantic_ai_truth(),
    "pydantic_ai_base64": _pydantic_ai_truth(_BASE64_TRACES),
    "langgraph": _langgraph_truth(),
}

_TIMEOUT = ("the second model call raised openai.APITimeoutError after 60 s with no usage: the client gave up, and "
            "whether the provider billed the request is recorded nowhere (the span has no token count), so the run's "
            "token totals may be unknown; 0, LangChain's reading (no usage reported), is accepted too")
# (fixture, run, bucket) -> (another value that is right too, why); token buckets only
_LIFETIME = ("the spans give a cache write's tokens but not its lifetime (5 minutes or 1 hour, billed at different "
             "prices); the scripts used the 5-minute default, which no span says: reconcile keeps both lifetimes' "
             "buckets unknown and prices the writes as a range (issue 56), never a guess")
_REFUSED = ("the 429 call's span records no usage: that Anthropic bills no rate-limited request is its policy, not a fact "
            "the trace records, so the run's token totals are unknown (a known part is no total)")
JUDGED: dict[tuple[str, str, str], tuple[object, str]] = {
    **{("langgraph", "model_error", bucket): (None, _TIMEOUT) for bucket in BUCKETS},
    **{("langgraph", "retry_rate_limit", bucket): (None, _REFUSED) for bucket in BUCKETS},
    **{(fixture, key, bucket): (None, _LIFETIME) for fixture, runs in TRUTH.items() for key, exp in runs.items()
       if exp.get("cache_write_5m") for bucket in ("cache_write_5m", "cache_write_1h")},
}


# ---------------------------------------------------------------------------------------------------------------
# The stores, and what reconcile says (each CLI answer asked once)
# ---------------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    """One store a fixture: the pydantic-ai hex and base64 files together, the base64 file alone, the LangGraph file."""
    from reconcile import store
    from reconcile.ingest.driver import ingest

    folder = tmp_path_factory.mktemp("framework-truth")
    paths = {"pydantic_ai": [PYDANTIC_AI / "hex", PYDANTIC_AI / "base64"],
             "pydantic_ai_base64": [PYDANTIC_AI / "base64"],
             "langgraph": [LANGGRAPH / "spans.jsonl.gz"]}
    dbs = {}
    for name, sources in paths.items():
        dbs[name] = folder / f"{name}.duckdb"
        with store.connect(dbs[name]) as con:
            ingest(con, sources)
    return dbs


_ANSWERS: dict[tuple, object] = {}


def _ask(cli, *args):
    """``reconcile ARGS --json``, parsed; asked once a module."""
    key = tuple(str(a) for a in args)
    if key not in _ANSWERS:
        result = cli(*args, "--json")
        assert result.code == 0, f"reconcile {' '.join(key)} exited {result.code}: {result.err}"
        _ANSWERS[key] = result.json()
    return _ANSWERS[key]


def _runs(cli, db) -> dict[str, dict]:
    return {row["run_id"]: row for row in _ask(cli, "runs", "--no-fold-subagents", "--db", db)}


def _findings(cli, db) -> list[dict]:
    return _ask(cli, "check", "--exit-zero", "--db", db)["findings"]


def _run_id(cli, db, exp) -> str | None:
    listed = _runs(cli, db)
    return next((run_id for run_id in exp["run_ids"] if run_id in listed), None)


def _view(cli, db, exp) -> dict:
    run_id = _run_id(cli, db, exp)
    if run_id is None:
        in_trace = sorted(r for r in _runs(cli, db) if r.split("/")[0] == exp["trace_id"])
        pytest.fail(f"no run {' or '.join(exp['run_ids'])}; reconcile's runs of trace {exp['trace_id']}: {in_trace}")
    shown = _ask(cli, "show", run_id, "--db", db)
    steps = [_ask(cli, "show", run_id, "--step", row["idx"], "--db", db) for row in shown["steps"]]
    cost = {g["key"]: g for g in _ask(cli, "cost", "--by", "run", "--db", db)["groups"]}
    return {"run_id": run_id, "run": shown["run"], "steps": steps, "runs": _runs(cli, db)[run_id],
            "cost": cost.get(run_id)}


# ---------------------------------------------------------------------------------------------------------------
# Fact by fact: each returns the differences, "where: expected ..., got ..."
# ---------------------------------------------------------------------------------------------------------------

def _differ(where: str, expected, got) -> str:
    return f"{where}: expected {expected!r}, got {got!r}"


def _model_calls(exp, view):
    got = {"show run.steps": view["run"]["steps"],
           "show steps of kind model": sum(1 for s in view["steps"] if s["kind"] == "model"),
           "runs .steps": view["runs"]["steps"],
           "cost --by run .model_calls": (view["cost"] or {}).get("model_calls")}
    return [_differ(where, exp["model_calls"], value) for where, value in got.items() if value != exp["model_calls"]]


def _args(text):
    try:
        return json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return text


def _tool_calls(exp, view):
    got = sorted(((c["tool_name"], c["call_id"], _args(c.get("args_json"))) for s in view["steps"]
                  if s["kind"] == "model" for c in s.get("tool_calls") or []), key=lambda c: (str(c[0]), str(c[1])))
    expected = sorted(exp["tool_calls"], key=lambda c: (c[0], c[1]))
    return [] if got == expected else [_differ("show --step (model steps' tool_calls: name, call id, arguments)",
                                               expected, got)]


def _results(view):
    return [s for s in view["steps"] if s["kind"] == "tool" and s.get("tool_status") != "not_run"]


def _not_run(exp) -> list[str]:
    """The calls a limit stopped the run before: the journal format's ``not_run`` (asked for, never run, a budget
    stopped the run first), each a tool step of its own that answers its call -- counted in ``run_view.tool_results``
    as the journal's answer to the call, so that no check calls it lost."""
    return exp["unanswered"] if exp["status"] == "budget_exceeded" else []


def _tool_results(exp, view):
    got = sorted((s.get("tool_name"), s.get("tool_status")) for s in _results(view))
    problems = [] if got == exp["tool_results"] else [
        _differ("show --step (tool steps: name, tool_status)", exp["tool_results"], got)]
    not_run = sorted(s.get("call_id") for s in view["steps"] if s["kind"] == "tool" and s.get("tool_status") == "not_run")
    if not_run != _not_run(exp):
        problems.append(_differ("show --step (not_run tool steps: call_id)", _not_run(exp), not_run))
    if view["run"]["tool_results"] != len(exp["tool_results"]) + len(_not_run(exp)):
        problems.append(_differ("show run.tool_results (results and not_run answers)",
                                len(exp["tool_results"]) + len(_not_run(exp)), view["run"]["tool_results"]))
    return problems


def _tool_result_call_ids(exp, view):
    got = sorted((s.get("tool_name"), s.get("call_id")) for s in _results(view))
    return [] if got == exp["tool_result_call_ids"] else [
        _differ("show --step (tool steps: name, call_id)", exp["tool_result_call_ids"], got)]


def _tool_result_bytes(exp, view):
    got = sorted((s.get("call_id"), s.get("result_bytes")) for s in _results(view) if s.get("tool_status") == "ok")
    return [] if got == exp["tool_result_bytes"] else [
        _differ("show --step (ok tool steps: call_id, result_bytes)", exp["tool_result_bytes"], got)]


def _bucket(name):
    def check(exp, view, allowed=()):
        got = {"show run": view["run"].get(name), "cost --by run": (view["cost"] or {}).get(name)}
        return [_differ(f"{where} .{name}", exp[name], value) for where, value in got.items()
                if value != exp[name] and value not in allowed]
    return check


def _status(exp, view):
    got = {"show run.status": view["run"]["status"], "runs .status": view["runs"]["status"]}
    return [_differ(where, exp["status"], value) + f" (stop_reason {view['run'].get('stop_reason')!r})"
            for where, value in got.items() if value != exp["status"]]


def _final_answer(exp, view):
    expected, got = exp["final_answer"], view["run"]["final_output"]
    has = view["run"]["has_final_answer"]
    if expected is None:
        problems = [] if got is None else [_differ("show run.final_output", None, got)]
        return problems + ([] if not has else [_differ("show run.has_final_answer", False, has)])
    same = _args(got) == expected if isinstance(expected, dict) else got == expected
    problems = [] if same else [_differ("show run.final_output", expected, got)]
    # a limit's stop message (LangGraph's "Sorry, need more steps ...", which create_react_agent writes in place of the
    # model's last message) is the run's output but no model call's answer: final_output holds it, no step is final
    framework_reply = exp["status"] == "budget_exceeded"
    return problems + ([] if has or framework_reply else [_differ("show run.has_final_answer", True, has)])


def _micros(stamp: str | None) -> int | None:
    if stamp is None:
        return None
    moment = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return (moment - datetime(1970, 1, 1, tzinfo=timezone.utc)) // timedelta(microseconds=1)


def _started_at(exp, view):
    expected = datetime.fromtimestamp(exp["start_ns"] // 1000 / 1e6, timezone.utc).isoformat()
    got = {"show run.started_at": view["run"]["started_at"], "runs .started_at": view["runs"]["started_at"]}
    return [_differ(where, expected, value) for where, value in got.items()
            if value is None or abs(_micros(value) - exp["start_ns"] / 1000) >= 1000]


def _wall_seconds(exp, view):
    expected = (exp["end_ns"] - exp["start_ns"]) / 1e9
    got = {"show run.wall_seconds": view["run"]["wall_seconds"], "runs .wall_seconds": view["runs"]["wall_seconds"]}
    return [_differ(where, round(expected, 6), value) for where, value in got.items()
            if value is None or abs(value - expected) > 0.001]


def _model(exp, view):
    models, run = exp["models"], view["run"]
    if len(models) == 1:
        (model,) = models
        got = {"show run.model": run["model"], "runs .model": view["runs"]["model"]}
        return [_differ(where, model, value) for where, value in got.items() if value != model]
    problems = [] if run["model"] in models else [_differ("show run.model (one of)", sorted(models), run["model"])]
    if not models <= set(run.get("models") or []):
        problems.append(_differ("show run.models (holding)", sorted(models), run.get("models")))
    return problems


def _provider(exp, view):
    providers, got = exp["providers"], view["run"]["provider"]
    if len(providers) == 1:
        return [] if got == next(iter(providers)) else [_differ("show run.provider", next(iter(providers)), got)]
    return [] if got in providers else [_differ("show run.provider (one of)", sorted(providers), got)]


def _parent(exp, view):
    got = view["run"]["parent_run_id"]
    return [] if got == exp["parent"] else [_differ("show run.parent_run_id", exp["parent"], got)]


FACTS = {
    "model_calls": _model_calls,
    "tool_calls": _tool_calls,
    "tool_results": _tool_results,
    "tool_result_call_ids": _tool_result_call_ids,
    "tool_result_bytes": _tool_result_bytes,
    **{bucket: _bucket(bucket) for bucket in BUCKETS},
    "status": _status,
    "final_answer": _final_answer,
    "started_at": _started_at,
    "wall_seconds": _wall_seconds,
    "model": _model,
    "provider": _provider,
    "parent": _parent,
}

CASES = [pytest.param(fixture, key, fact, id=f"{fixture}-{key}-{fact}")
         for fixture, runs in TRUTH.items() for key, exp in runs.items() for fact in FACTS
         if fact in exp or fact in ("model", "provider", "started_at", "wall_seconds")]


@pytest.mark.parametrize(("fixture", "key", "fact"), CASES)
def test_each_run_s_fact_is_the_framework_s(stores, cli, fixture, key, fact):
    exp = TRUTH[fixture][key]
    view = _view(cli, stores[fixture], exp)
    judged = JUDGED.get((fixture, key, fact))
    check = FACTS[fact]
    problems = check(exp, view, allowed=(judged[0],)) if judged else check(exp, view)
    assert not problems, f"{fixture} run {key} ({view['run_id']}), {fact}:\n  " + "\n  ".join(problems)


# ---------------------------------------------------------------------------------------------------------------
# One run per agent run; ids in hex whatever the JSON encoding
# ---------------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("fixture", list(TRUTH))
def test_one_run_per_agent_run(stores, cli, fixture):
    listed = set(_runs(cli, stores[fixture]))
    runs = TRUTH[fixture]
    problems = []
    for key, exp in sorted(runs.items()):
        in_trace = sorted(r for r in listed if r.split("/")[0] == exp["trace_id"])
        mine = [r for r in in_trace if r in exp["run_ids"]]
        if not mine:
            problems.append(f"{key}: expected a run {' or '.join(exp['run_ids'])}, got none (trace's runs: {in_trace})")
    expected_traces = {exp["trace_id"] for exp in runs.values()}
    for trace_id in sorted(expected_traces):
        in_trace = sorted(r for r in listed if r.split("/")[0] == trace_id)
        agent_runs = sum(1 for exp in runs.values() if exp["trace_id"] == trace_id)
        if len(in_trace) != agent_runs:
            problems.append(f"trace {trace_id}: expected {agent_runs} run(s), got {len(in_trace)}: {in_trace}")
    strangers = sorted(r for r in listed if r.split("/")[0] not in expected_traces)
    if strangers:
        problems.append(f"runs of no trace in the file (ids not lowercase hex?): {strangers}")
    if len(listed) != len(runs):
        problems.append(f"expected {len(runs)} runs, got {len(listed)}")
    assert not problems, f"{fixture}:\n  " + "\n  ".join(problems)


def test_the_langgraph_file_is_what_truth_describes():
    """The oracle's own footing: one trace a line, the traces truth.json keys its runs by."""
    with gzip.open(LANGGRAPH / "spans.jsonl.gz", "rt") as handle:
        traces = [{span["traceId"] for rs in json.loads(line)["resourceSpans"] for ss in rs["scopeSpans"]
                   for span in ss["spans"]} for line in handle if line.strip()]
    assert all(len(t) == 1 for t in traces)
    assert sorted(t.pop() for t in traces) == sorted(json.loads((LANGGRAPH / "truth.json").read_text())["runs"])


# ---------------------------------------------------------------------------------------------------------------
# Every error finding on these runs is true
# ---------------------------------------------------------------------------------------------------------------

def _justified(exp) -> dict[str, str]:
    """check -> why the truth says the run violates its invariant."""
    why = {}
    if exp["unanswered"]:
        why["tool_calls_paired"] = (f"the model asked for {exp['unanswered']} and the run stopped before running it: "
                                    "a tool call without a result")
    return why


ERROR_CASES = [pytest.param(fixture, key, id=f"{fixture}-{key}") for fixture, runs in TRUTH.items() for key in runs]


@pytest.mark.parametrize(("fixture", "key"), ERROR_CASES)
def test_every_error_finding_on_the_run_is_true(stores, cli, fixture, key):
    exp = TRUTH[fixture][key]
    run_id = _run_id(cli, stores[fixture], exp)
    found = [f for f in _findings(cli, stores[fixture]) if f["severity"] == "error"
             and f["run_id"] in ((run_id,) if run_id else exp["run_ids"])]
    justified = _justified(exp)
    false = [f"{f['check']} step {f['step']}: {f['detail']}" for f in found if f["check"] not in justified]
    assert not false, (f"{fixture} run {key} ({run_id}): error findings the truth does not justify (expected only "
                       f"{sorted(justified) or 'none'}):\n  " + "\n  ".join(false))


# What the spans record, by the checks that need it (issue 58, item 2): without these judged, "every error finding is
# true" would hold by judging nothing. pydantic-ai records tool-call ids (gen_ai.tool.call.id, and in the chat span's
# output messages), its own counters (gen_ai.aggregated_usage.* on the agent span: the ledger) and
# gen_ai.conversation.id (the thread); OpenInference records the call ids on the LLM span's output messages.
# (ledger_matches_transcript is left out: six pydantic-ai runs write Anthropic cache entries whose lifetime the spans do
# not say, so their cache-write buckets are unknown and the framework's counters cannot be matched bucket by bucket --
# the check says so, run by run)
MUST_JUDGE = {
    "pydantic_ai": ("tool_calls_paired", "no_silent_truncation"),
    "pydantic_ai_base64": ("tool_calls_paired", "no_silent_truncation"),
    "langgraph": ("tool_calls_paired",),
}


@pytest.mark.parametrize("fixture", list(TRUTH))
def test_the_checks_that_need_what_the_spans_record_judge_every_run(stores, cli, fixture):
    checks = {c["name"]: c for c in _ask(cli, "check", "--exit-zero", "--db", stores[fixture])["checks"]}
    unjudged = [f"{name}: not judged for {checks[name]['not_judged']} run(s): "
                + "; ".join(w["reason"] for w in checks[name]["not_judged_why"])
                for name in MUST_JUDGE[fixture] if checks[name]["not_judged"]]
    assert not unjudged, f"{fixture}: expected every run judged, got:\n  " + "\n  ".join(unjudged)


@pytest.mark.parametrize("fixture", list(TRUTH))
def test_no_error_finding_on_a_run_that_is_not_an_agent_run(stores, cli, fixture):
    known = {run_id for exp in TRUTH[fixture].values() for run_id in exp["run_ids"]}
    found = [f"{f['check']} on {f['run_id']} step {f['step']}: {f['detail']}" for f in _findings(cli, stores[fixture])
             if f["severity"] == "error" and f["run_id"] not in known]
    assert not found, f"{fixture}: error findings on runs that are no agent run:\n  " + "\n  ".join(found)
