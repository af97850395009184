"""Small, valid documents of every format the hostile corpus mutates: each loads cleanly.

Each builder takes ``uid``, which becomes every run id (or trace id) it writes, so many cases can
share one store without one case's runs owning another's. The shapes are the documented ones
(``docs/formats.md``); the counts each base loads are pinned in ``test_corpus.py``.
"""

from __future__ import annotations

import copy
import io
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from journals import StepClock, write_simple_run  # noqa: E402
from reconcile.journal import Journal  # noqa: E402

TS = "2026-11-28T23:00:0{}Z"


def jsonl(records: list) -> bytes:
    """JSON Lines as a harness writes them: UTF-8, not ASCII-escaped, one record a line."""
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records).encode()


def native(uid: str) -> list[dict]:
    """A native journal of one run: run_start, two model steps, two tool steps, an event, run_end (7 lines)."""
    buffer = io.StringIO()
    with Journal(buffer, clock=StepClock()) as journal:
        write_simple_run(journal, uid)
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def claude_code(uid: str) -> list[dict]:
    """A Claude Code session (the run id is the file's stem): prompt, tool use, result, answer (4 lines)."""
    def line(n, kind, message, **extra):
        return {"type": kind, "sessionId": uid, "uuid": f"{uid}-u{n}", "parentUuid": f"{uid}-u{n - 1}" if n else None,
                "timestamp": TS.format(n), "message": message, **extra}

    usage = {"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 20, "output_tokens": 5}
    return [
        line(0, "user", {"role": "user", "content": "list the files"}),
        line(1, "assistant", {"id": f"msg_{uid}_1", "role": "assistant", "model": "claude-sonnet-4-5",
                              "content": [{"type": "tool_use", "id": f"tu_{uid}", "name": "Bash",
                                           "input": {"command": "ls"}}],
                              "stop_reason": "tool_use", "usage": dict(usage)}, requestId=f"req_{uid}_1"),
        line(2, "user", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"tu_{uid}",
                                                      "content": "a.py\nb.py"}]}),
        line(3, "assistant", {"id": f"msg_{uid}_2", "role": "assistant", "model": "claude-sonnet-4-5",
                              "content": [{"type": "text", "text": "Two files."}], "stop_reason": "end_turn",
                              "usage": dict(usage)}, requestId=f"req_{uid}_2"),
    ]


def langfuse(uid: str) -> dict:
    """A Langfuse trace export: the trace and three observations, a generation, a tool, a generation (4 records)."""
    def observation(n, kind, **extra):
        return {"id": f"{uid}-o{n}", "type": kind, "name": f"{kind.lower()}-{n}", "startTime": TS.format(n),
                "endTime": TS.format(n + 1), **extra}

    usage = {"input": 100, "output": 20, "total": 120}
    return {"trace": {"id": uid, "name": "lf-agent", "timestamp": TS.format(0)},
            "observations": [
                observation(0, "GENERATION", model="gpt-4o", usageDetails=dict(usage), costDetails={"total": 0.0012},
                            output="calling a tool"),
                observation(2, "TOOL", input={"q": "x"}, output="result text"),
                observation(4, "GENERATION", model="gpt-4o", usageDetails=dict(usage), output="done"),
            ]}


def openhands(uid: str) -> list[dict]:
    """An OpenHands event stream: user message, a model's run action, its observation, finish (4 records)."""
    response = {"id": f"resp-{uid}", "model": "gpt-4o", "usage": {"prompt_tokens": 120, "completion_tokens": 12},
                "choices": [{"finish_reason": "tool_calls", "message": {"content": None}}]}
    return [
        {"id": 0, "timestamp": "2026-11-28T23:00:00", "source": "user", "action": "message",
         "args": {"content": "hello"}, "message": "hello"},
        {"id": 1, "timestamp": "2026-11-28T23:00:01", "source": "agent", "action": "run", "args": {"command": "ls"},
         "message": "Running ls", "tool_call_metadata": {"function_name": "execute_bash", "tool_call_id": f"call-{uid}",
                                                         "model_response": response},
         "llm_metrics": {"accumulated_cost": 0.01}},
        {"id": 2, "timestamp": "2026-11-28T23:00:02", "source": "agent", "observation": "run", "cause": 1,
         "content": "a.py", "extras": {}},
        {"id": 3, "timestamp": "2026-11-28T23:00:03", "source": "agent", "action": "finish", "args": {},
         "message": "All done."},
    ]


def swe_agent(uid: str) -> dict:
    """A SWE-agent trajectory: two actions and a submit, with the harness's model stats (3 records)."""
    return {"trajectory": [
                {"action": "ls", "response": "Let me look.", "thought": "look", "observation": "a.py",
                 "execution_time": 0.5},
                {"action": "cat a.py", "response": "Read it.", "thought": "read", "observation": "x = 1",
                 "execution_time": 0.25},
                {"action": "submit", "response": "Done.", "thought": "done", "observation": "", "execution_time": 0.1},
            ],
            "info": {"exit_status": "submitted", "submission": "diff", "model_stats": {
                "instance_cost": 0.25, "tokens_sent": 1000, "tokens_received": 50, "api_calls": 3}}}


def _attr(key: str, value) -> dict:
    kind = "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}


def otel(uid: str) -> dict:
    """One OTLP request: an agent span, a chat span with usage, a tool span (1 record: OTel counts lines, issue 58).
    ``uid`` is the trace id."""
    start = 1_795_906_800_000_000_000  # 2026-11-28T23:00:00Z
    def span(n, span_id, parent, name, attrs):
        return {"traceId": uid, "spanId": span_id, "parentSpanId": parent, "name": name,
                "startTimeUnixNano": str(start + n * 1_000_000_000),
                "endTimeUnixNano": str(start + (n + 1) * 1_000_000_000), "attributes": attrs, "status": {}}

    spans = [
        span(0, "a1", "", "invoke_agent", [_attr("gen_ai.operation.name", "invoke_agent"),
                                           _attr("gen_ai.agent.name", "otel-agent")]),
        span(1, "m1", "a1", "chat", [_attr("gen_ai.operation.name", "chat"), _attr("gen_ai.request.model", "gpt-4o"),
                                     _attr("gen_ai.usage.input_tokens", 50), _attr("gen_ai.usage.output_tokens", 7)]),
        span(2, "t1", "a1", "execute_tool", [_attr("gen_ai.operation.name", "execute_tool"),
                                             _attr("gen_ai.tool.name", "search"), _attr("gen_ai.tool.call.id", "c1")]),
    ]
    return {"resourceSpans": [{"resource": {"attributes": [_attr("service.name", "svc")]},
                               "scopeSpans": [{"scope": {"name": "test"}, "spans": spans}]}]}


def anthropic_usage_csv(uid: str) -> bytes:
    """An Anthropic usage export as CSV: two hourly buckets of one workspace (2 records)."""
    header = "starting_at,ending_at,model,workspace_id,uncached_input_tokens,cache_read_input_tokens,output_tokens\n"
    rows = [f"2026-11-28T2{h}:00:00Z,2026-11-28T2{h + 1}:00:00Z,claude-sonnet-4-5,{uid},100,10,5\n" for h in (2, 3)]
    return (header + "".join(rows)).encode()


def anthropic_usage_json(uid: str) -> dict:
    """An Anthropic usage report page: one bucket with two results (2 records)."""
    results = [{"model": "claude-sonnet-4-5", "workspace_id": uid, "api_key_id": key, "uncached_input_tokens": 100,
                "cache_read_input_tokens": 0, "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                                                 "ephemeral_1h_input_tokens": 0},
                "output_tokens": 5} for key in ("k1", "k2")]
    return {"data": [{"starting_at": "2026-11-28T22:00:00Z", "ending_at": "2026-11-28T23:00:00Z",
                      "results": results}], "has_more": False}


def codex(uid: str) -> list[dict]:
    """A Codex rollout: meta, the model, one call and its output between two counts (the second repeated)."""
    def count(inp, cached, out):
        usage = {"input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out,
                 "reasoning_output_tokens": 0, "total_tokens": inp + out}
        return {"type": "token_count", "info": {"total_token_usage": usage, "last_token_usage": usage}}
    return [{"timestamp": TS.format(0), "type": "session_meta", "payload": {"id": uid, "cli_version": "0.104.0"}},
            {"timestamp": TS.format(1), "type": "turn_context", "payload": {"model": "gpt-5.3-codex"}},
            {"timestamp": TS.format(2), "type": "response_item",
             "payload": {"type": "function_call", "name": "shell", "arguments": "{\"cmd\": \"ls\"}", "call_id": "c1"}},
            {"timestamp": TS.format(3), "type": "event_msg", "payload": count(100, 20, 10)},
            {"timestamp": TS.format(4), "type": "response_item",
             "payload": {"type": "function_call_output", "call_id": "c1", "output": "a.py"}},
            {"timestamp": TS.format(5), "type": "event_msg", "payload": count(100, 20, 10)},
            {"timestamp": TS.format(6), "type": "response_item",
             "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}},
            {"timestamp": TS.format(7), "type": "event_msg", "payload": count(250, 120, 30)}]


def gemini_jsonl(uid: str) -> list[dict]:
    message = {"id": "g1", "timestamp": TS.format(2), "type": "gemini", "content": "done", "model": "gemini-2.5-pro",
               "tokens": {"input": 100, "output": 10, "cached": 20, "thoughts": 5, "tool": 0, "total": 115}}
    return [{"sessionId": uid, "projectHash": "h", "startTime": TS.format(0), "lastUpdated": TS.format(0)},
            {"id": "u1", "timestamp": TS.format(1), "type": "user", "content": "hi"},
            message, {"$set": {"lastUpdated": TS.format(3)}}]


def gemini_chat(uid: str) -> dict:
    first, user, message, _ = gemini_jsonl(uid)
    return {**first, "messages": [user, message]}


def inspect_log(uid: str) -> dict:
    usage = {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110, "input_tokens_cache_read": 20}
    event = {"event": "model", "timestamp": TS.format(1), "completed": TS.format(2), "model": "openai/gpt-4o-mini",
             "output": {"model": "gpt-4o-mini", "usage": usage,
                        "choices": [{"message": {"role": "assistant", "content": "done"}, "stop_reason": "stop"}]}}
    return {"version": 2, "status": "success",
            "eval": {"eval_id": uid, "task": "t", "model": "openai/gpt-4o-mini", "packages": {"inspect_ai": "0.3.95"}},
            "samples": [{"id": 1, "epoch": 1, "events": [event], "model_usage": {"openai/gpt-4o-mini": usage}}]}


def mini_swe_agent(uid: str) -> dict:
    usage = {"prompt_tokens": 100, "completion_tokens": 10, "prompt_tokens_details": {"cached_tokens": 20}}
    return {"info": {"exit_status": "Submitted", "submission": "diff", "model_stats": {"instance_cost": 0.001, "api_calls": 1}},
            "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": "task"},
                         {"role": "assistant", "content": "THOUGHT: done\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```",
                          "extra": {"response": {"id": "r1", "model": "gpt-4o-mini", "created": 1764370800,
                                                 "usage": {**usage, "cost": 0.001}}}},
                         {"role": "user", "content": "diff"}],
            "trajectory_format": "mini-swe-agent-1", "instance_id": uid}


def mutated(document, change):
    """A deep copy of ``document`` after ``change(copy)``."""
    copied = copy.deepcopy(document)
    change(copied)
    return copied
