"""One planted and one clean journal per check, written through the real writer.

A fixture may also return provider exports to load beside the journal: ``(expected, {name: text})``.

``PLANTED[name](journal)`` writes runs violating check ``name`` and returns the exact
``(run_id, step)`` rows the check must report; ``CLEAN[name](journal)`` writes the nearest runs
that satisfy it (and every other check).
"""

from __future__ import annotations

import json

from reconcile.journal import Journal, ToolCall

CATALOGUE = [{"name": "read_file"}, {"name": "search"}, {"name": "run_tests", "allow_repeat": True},
             {"name": "write_file", "side_effect": True}]
USAGE = {"input_uncached": 100, "cache_read": 900, "output": 50}


class Run:
    """Writes one run and keeps a correct harness ledger as it goes."""

    def __init__(self, journal: Journal, run_id: str, **start):
        start.setdefault("limits", {"max_steps": 10, "max_tokens": 100_000, "max_wall_seconds": 600,
                                    "tool_timeout_seconds": 30, "result_bound_tokens": 2000, "max_repeats": 3})
        self.run = journal.start_run(run_id, agent="fixture", tools=start.pop("tools", CATALOGUE),
                                     model="claude-sonnet-4-5", **start)
        self.ledger = {"steps": 0, "input_tokens": 0, "output_tokens": 0, "tool_results": 0, "cost_micros": 0}

    def model(self, calls=(), final=False, usage=None, **fields) -> tuple[int, list[ToolCall]]:
        usage = dict(usage or USAGE)
        fields.setdefault("cost_micros", 100)
        step = self.run.model_step(usage=usage, ms=500, tool_calls=calls, final=final,
                                   text="the answer" if final else None, **fields)
        self.ledger["steps"] += 1
        self.ledger["input_tokens"] += sum(v for k, v in usage.items() if k not in ("output", "reasoning"))
        self.ledger["output_tokens"] += usage.get("output", 0)
        self.ledger["cost_micros"] += fields["cost_micros"]
        return step.idx, step.calls

    def tool(self, call: ToolCall, result: str = "fine", **fields) -> int:
        self.ledger["tool_results"] += 1
        return self.run.tool_step(call, result=result, ms=20, **fields)

    def end(self, reason: str = "model_finished", **ledger_changes) -> None:
        self.run.end(reason, final_output="the answer", ledger={**self.ledger, **ledger_changes})


def answered(journal: Journal, run_id: str, **start) -> Run:
    """A plain good run: one read, then a final answer."""
    run = Run(journal, run_id, **start)
    _, calls = run.model([("read_file", {"path": "a.py"})])
    run.tool(calls[0])
    run.model(final=True)
    run.end()
    return run


def stray_call(name: str, args: dict, call_id: str = "stray") -> ToolCall:
    """A call no model step asked for: no hash, no idempotency key."""
    return ToolCall(call_id, name, args, None, None)  # type: ignore[arg-type]


# --- planted -------------------------------------------------------------------------------

def planted_steps_equal_tool_results(j):
    run = Run(j, "missing")
    idx, calls = run.model([("read_file", {"path": "a"}), ("search", {"query": "b"})])
    run.tool(calls[0])
    run.model(final=True)
    run.end()
    ledger = Run(j, "ledger")
    _, calls = ledger.model([("read_file", {"path": "a"})])
    ledger.tool(calls[0])
    ledger.model(final=True)
    ledger.end(steps=5)
    return [("missing", idx), ("ledger", None)]


def planted_ledger_matches_transcript(j):
    run = Run(j, "off")
    _, calls = run.model([("read_file", {"path": "a"})])
    run.tool(calls[0])
    run.model(final=True)
    run.end(output_tokens=run.ledger["output_tokens"] + 10, cost_micros=1)
    cost = Run(j, "cost_off")  # two priced steps: rounding moves a sum by at most 1.5 micro-dollars; 2 is a real gap
    _, calls = cost.model([("read_file", {"path": "a"})])
    cost.tool(calls[0])
    cost.model(final=True)
    cost.end(cost_micros=cost.ledger["cost_micros"] + 2)
    return [("off", None), ("cost_off", None)]


def clean_ledger(j):
    """A ledger kept in dollars: its cost, rounded once, is 1 micro-dollar off the steps' rounded costs."""
    clean_default(j)
    rounded = Run(j, "rounded")
    _, calls = rounded.model([("read_file", {"path": "a"})])
    rounded.tool(calls[0])
    rounded.model(final=True)
    rounded.end(cost_micros=rounded.ledger["cost_micros"] + 1)


def planted_final_answer_not_overwritten(j):
    run = Run(j, "kept_going")
    _, calls = run.model([("read_file", {"path": "a"})])
    run.tool(calls[0])
    answer, _ = run.model(final=True)
    _, calls = run.model([("search", {"query": "more"})])
    run.tool(calls[0])
    run.end("max_steps")
    return [("kept_going", answer)]


def planted_tool_calls_paired(j):
    run = Run(j, "unpaired")
    asked, calls = run.model([("read_file", {"path": "a"}), ("search", {"query": "b"})])
    run.tool(calls[0])
    twice = run.tool(calls[0])
    orphan = run.tool(stray_call("search", {"query": "c"}))
    run.model(final=True)
    run.end()
    return [("unpaired", asked), ("unpaired", twice), ("unpaired", orphan)]


def planted_known_tools_only(j):
    run = Run(j, "invented")
    asked, calls = run.model([("rm_rf", {"path": "/"})])
    run.tool(calls[0], status="unknown_tool", result="unknown tool")
    run.model(final=True)
    run.end()
    return [("invented", asked)]


def planted_side_effects_once(j):
    run = Run(j, "keyed")
    _, calls = run.model([("write_file", {"path": "a", "text": "x"})])
    run.tool(calls[0], status="error", error="boom after write")
    again = run.tool(calls[0])
    run.model(final=True)
    run.end()
    unkeyed = Run(j, "unkeyed")
    unkeyed.model()
    unkeyed.tool(stray_call("write_file", {"text": "x", "path": "b"}), args={"path": "b", "text": "x"})
    second = unkeyed.tool(stray_call("write_file", {"path": "b", "text": "x"}, "stray2"), args={"text": "x", "path": "b"})
    unkeyed.model(final=True)
    unkeyed.end()
    return [("keyed", again), ("unkeyed", second)]


def planted_no_stuck_side_effects(j):
    run = Run(j, "stuck")
    asked, _ = run.model([("write_file", {"path": "a", "text": "x"})])
    in_flight = Run(j, "in_flight")
    _, calls = in_flight.model([("write_file", {"path": "b", "text": "x"})])
    started = in_flight.run.tool_started(calls[0])  # keyed, persisted; then the process died
    return [("stuck", asked), ("in_flight", started)]  # no result, no run_end


def planted_loop_stopped_at_limit(j):
    run = Run(j, "kept_looping")  # max_repeats 3
    steps = []
    for _ in range(5):
        idx, calls = run.model([("search", {"query": "same"})])
        run.tool(calls[0], result=f"results at {idx}")  # results change, the call does not
        steps.append(idx)
    run.end("max_steps")
    return [("kept_looping", steps[3])]  # the 4th identical call is one past the limit


def planted_stalled_runs_detected(j):
    looping = Run(j, "looping")
    for _ in range(4):
        _, calls = looping.model([("search", {"query": "same"})])
        looping.tool(calls[0])
    looping.end("max_steps")
    alternating = Run(j, "alternating")
    for turn in range(4):
        _, calls = alternating.model([("search", {"query": "a"}) if turn % 2 else ("read_file", {"path": "b"})])
        alternating.tool(calls[0])
    alternating.end("max_wall_seconds")
    calm = Run(j, "calm_but_stalled")
    for turn in range(4):
        _, calls = calm.model([("read_file", {"path": f"f{turn}"})])
        calm.tool(calls[0])
    calm.end("identical_tool_results")
    return [("looping", None), ("alternating", None), ("calm_but_stalled", None)]


def planted_budgets_enforced(j):
    steps = Run(j, "too_many_steps", limits={"max_steps": 2})
    for _ in range(3):
        steps.model()
    steps.end("max_steps")
    slow = Run(j, "too_slow", limits={"max_wall_seconds": 2, "tool_timeout_seconds": 1})
    slow.model()
    slow.model()
    slow.model(final=True)
    slow.end()  # the test clock moves a second per line: 4 s against 2 s + one 1 s timeout
    tokens = Run(j, "too_many_tokens", limits={"max_tokens": 1000})
    for final in (False, False, True):  # 2,850 tokens: over 1,000 by more than the last step's 950
        tokens.model(usage={"input_uncached": 900, "output": 50}, final=final)
    tokens.end()
    spend = Run(j, "too_costly", limits={"max_cost_micros": 100})
    spend.model(cost_micros=500)
    spend.model(cost_micros=50, final=True)
    spend.end()
    return [("too_many_steps", None), ("too_slow", None), ("too_many_tokens", None), ("too_costly", None)]


def planted_stop_reason_as_expected(j):
    answered(j, "surprise", predicted_stop_reason="max_steps")
    return [("surprise", None)]


def planted_retries_mutate_context(j):
    run = Run(j, "same_again")
    run.model(input_hash="h1", error="invalid output: bad JSON")
    again, _ = run.model(input_hash="h1", final=True)
    run.end()
    return [("same_again", again)]


def planted_tool_errors_flagged(j):
    run = Run(j, "fooled")
    _, calls = run.model([("search", {"query": "a"}), ("read_file", {"path": "b"}), ("search", {"query": "c"}),
                          ("read_file", {"path": "d"})])
    http = run.tool(calls[0], result='{"status": 503, "error": "unavailable"}')
    trace = run.tool(calls[1], result="Traceback (most recent call last):\n  File x")
    prefixed = run.tool(calls[2], result="  ValueError: query must not be empty")
    exited = run.tool(calls[3], result="Exit code 1\nmake: *** [test] Error 2")
    run.model(final=True)
    run.end()
    return [("fooled", http), ("fooled", trace), ("fooled", prefixed), ("fooled", exited)]


def planted_tool_results_bounded(j):
    run = Run(j, "flooded")
    _, calls = run.model([("read_file", {"path": "huge"})])
    flood = run.tool(calls[0], result="x" * 40, result_tokens=5000)
    run.model(final=True)
    run.end()
    return [("flooded", flood)]


def planted_no_silent_truncation(j):
    run = Run(j, "trimmed")
    _, calls = run.model([("read_file", {"path": "a"})], context_tokens=5000)
    run.tool(calls[0])
    shrunk, _ = run.model(final=True, context_tokens=3000)
    run.end()
    return [("trimmed", shrunk)]


def planted_status_consistent(j):
    silent = Run(j, "no_answer")
    silent.model()
    silent.end("model_finished")
    vague = Run(j, "vague_failure")
    _, calls = vague.model([("read_file", {"path": "a"})])
    vague.tool(calls[0])
    vague.end("error")
    return [("no_answer", None), ("vague_failure", None)]


def planted_models_priced(j):
    run = Run(j, "mystery")
    first, _ = run.model(model="mystery-model-9")
    run.model(model="mystery-model-9", final=True)
    run.end()
    zero = Run(j, "synthetic_zero")  # a model without a price but no tokens costs nothing: not reported
    zero.model(model="<synthetic>", usage={"output": 0}, final=True)
    zero.end()
    return [("mystery", first)]


def _weeks(j, second_week_usage):
    """The same agent and task a week apart (journal clock: two starts seven days apart)."""
    import datetime as dt
    for week, usage in ((0, USAGE), (1, second_week_usage)):
        j.clock.now = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc) + dt.timedelta(days=7 * week)
        run = Run(j, f"week{week}", task_class="triage")
        run.model(usage=usage)
        run.model(usage=usage, final=True)
        run.end()


def clean_cost_weeks(j):
    """+9 % week over week, then — six weeks on, with nothing between — a dearer week: not week over week."""
    import datetime as dt
    _weeks(j, {"input_uncached": 110, "cache_read": 900, "output": 55})
    j.clock.now = dt.datetime(2026, 11, 2, tzinfo=dt.timezone.utc) + dt.timedelta(days=7 * 7)
    later = Run(j, "week7", task_class="triage")
    later.model(usage={"input_uncached": 300, "cache_read": 900, "output": 150})
    later.model(usage={"input_uncached": 300, "cache_read": 900, "output": 150}, final=True)
    later.end()


def planted_cost_per_request_stable(j):
    _weeks(j, {"input_uncached": 130, "cache_read": 900, "output": 70})  # +28 % a request
    return [(None, None)]


def _billed_run(j):
    """Two claude-sonnet-4-5 calls on 2026-11-28: 2,100 tokens, 2,640 µ$ at list prices."""
    run = Run(j, "billed", provider="anthropic", api_key_id="key_1")
    run.model(request_id="req_1")
    run.model(final=True, request_id="req_2")
    run.end()


def _anthropic_usage(output: int) -> str:
    return json.dumps({"data": [{"starting_at": "2026-11-28T00:00:00Z", "ending_at": "2026-11-29T00:00:00Z", "results": [
        {"uncached_input_tokens": 200, "cache_read_input_tokens": 1800,
         "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}, "output_tokens": output,
         "model": "claude-sonnet-4-5", "api_key_id": "key_1"}]}], "has_more": False, "next_page": None})


def _anthropic_costs(cents: str) -> str:
    return json.dumps({"data": [{"starting_at": "2026-11-28T00:00:00Z", "ending_at": "2026-11-29T00:00:00Z", "results": [
        {"amount": cents, "currency": "USD", "cost_type": "tokens", "model": "claude-sonnet-4-5",
         "description": "Claude Sonnet 4.5", "token_type": None}]}], "has_more": False, "next_page": None})


def planted_tokens_match_provider(j):
    _billed_run(j)
    return [(None, None)], {"usage.json": _anthropic_usage(90)}  # the journals carry 10 output tokens more


def planted_costs_match_provider(j):
    _billed_run(j)
    return [(None, None)], {"costs.json": _anthropic_costs("0.5")}  # billed $0.005, priced $0.00264


def clean_provider(j):
    _billed_run(j)
    return None, {"usage.json": _anthropic_usage(100), "costs.json": _anthropic_costs("0.264")}


# --- clean ---------------------------------------------------------------------------------

def clean_default(j):
    answered(j, "good")


def clean_budgets(j):
    run = Run(j, "within", limits={"max_steps": 3, "max_tokens": 2000, "max_cost_micros": 150,
                                    "max_wall_seconds": 60, "tool_timeout_seconds": 30})
    run.model(usage={"input_uncached": 900, "output": 50})
    run.model(usage={"input_uncached": 900, "output": 50}, final=True)  # 1,900 tokens, within 2,000
    run.end()


def clean_stalls(j):
    stalled = Run(j, "stalled_properly")
    for _ in range(3):
        _, calls = stalled.model([("search", {"query": "same"})])
        stalled.tool(calls[0])
    stalled.end("identical_tool_results")
    polling = Run(j, "polling_tests")  # run_tests may repeat: allow_repeat
    for _ in range(4):
        _, calls = polling.model([("run_tests", {"target": "all"})])
        polling.tool(calls[0])
    polling.end("max_steps")


def clean_side_effects(j):
    run = Run(j, "written_once")
    _, calls = run.model([("write_file", {"path": "a", "text": "x"}), ("write_file", {"path": "b", "text": "x"})])
    run.tool(calls[0])
    started = run.run.tool_started(calls[1])  # the protocol: started, then completed with its outcome
    run.tool(calls[1], started=started)
    run.model(final=True)
    run.end()


def clean_loops(j):
    stopped = Run(j, "stopped_at_limit")  # three identical calls, then the detector stops the run
    for _ in range(3):
        _, calls = stopped.model([("search", {"query": "same"})])
        stopped.tool(calls[0])
    stopped.end("identical_tool_results")
    polling = Run(j, "polling")  # a tool meant to repeat
    for _ in range(5):
        _, calls = polling.model([("run_tests", {})])
        polling.tool(calls[0])
    polling.model(final=True)
    polling.end()


def clean_retry(j):
    run = Run(j, "told_the_model")
    run.model(input_hash="h1", error="invalid output: bad JSON")
    run.model(input_hash="h2", final=True)
    run.end()


def clean_tool_results(j):
    """Results that mention errors without being one: source code, a log, a summary, an error the harness flagged."""
    run = Run(j, "mentions_errors")
    _, calls = run.model([("read_file", {"path": "lib/a.ex"}), ("search", {"query": "log"}),
                          ("read_file", {"path": "b"}), ("search", {"query": "x"})])
    run.tool(calls[0], result="def open(p) do\n  {:error, :enoent}\nend")
    run.tool(calls[1], result="12fe57f feat: error spans and exception tracing")
    run.tool(calls[2], result="## Summary\nFixed the error handling in the parser.")
    run.tool(calls[3], status="error", result="Error: index unavailable", error="index unavailable")
    run.model(final=True)
    run.end()


def clean_context(j):
    run = Run(j, "compacted")
    _, calls = run.model([("read_file", {"path": "a"})], context_tokens=5000)
    run.tool(calls[0], result="x" * 40, result_tokens=5000, bounded=True)
    run.run.event("compaction", tokens_before=5200, tokens_after=1500)
    run.model(final=True, context_tokens=1600)
    run.end()


def clean_statuses(j):
    answered(j, "predicted", predicted_stop_reason="model_finished")
    failed = Run(j, "failed_loudly")
    _, calls = failed.model([("read_file", {"path": "a"})])
    failed.tool(calls[0], status="error", result="no such file", error="FileNotFoundError: a")
    failed.end("tool_error")
    crashed = Run(j, "crashed_between_steps")
    _, calls = crashed.model([("read_file", {"path": "a"})])
    crashed.tool(calls[0])


PLANTED = {name.removeprefix("planted_"): fn for name, fn in globals().items() if name.startswith("planted_")}
CLEAN = {name: clean_default for name in PLANTED} | {
    "budgets_enforced": clean_budgets, "stalled_runs_detected": clean_stalls, "side_effects_once": clean_side_effects,
    "no_stuck_side_effects": clean_side_effects, "retries_mutate_context": clean_retry, "loop_stopped_at_limit": clean_loops,
    "no_silent_truncation": clean_context, "tool_results_bounded": clean_context, "status_consistent": clean_statuses,
    "tool_errors_flagged": clean_tool_results, "ledger_matches_transcript": clean_ledger,
    "stop_reason_as_expected": clean_statuses,
    "cost_per_request_stable": clean_cost_weeks,
    "tokens_match_provider": clean_provider, "costs_match_provider": clean_provider,
}
