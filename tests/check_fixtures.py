"""One planted and one clean journal per check, written through the real writer.

A fixture may also return provider exports to load beside the journal: ``(expected, {name: text})``.

``PLANTED[name](journal)`` writes runs violating check ``name`` and returns the exact
``(run_id, step)`` rows the check must report; ``CLEAN[name](journal)`` writes the nearest runs
that satisfy it (and every other check).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from reconcile.journal import Journal, ToolCall

CATALOGUE = [{"name": "read_file"}, {"name": "search"}, {"name": "run_tests", "allow_repeat": True},
             {"name": "write_file", "side_effect": True}]
USAGE = {"input_uncached": 100, "cache_read": 900, "output": 50}


# A run with no end record that is still going whenever the tests run: its wall-clock budget (a few decades) has
# not run out since it was last heard from. Without it, a run of these 2026 journals with no end is abandoned.
STILL_GOING = {"max_steps": 10, "max_tokens": 100_000, "max_wall_seconds": 10**9, "tool_timeout_seconds": 30,
               "result_bound_tokens": 2000}


class Run:
    """Writes one run and keeps a correct harness ledger as it goes."""

    def __init__(self, journal: Journal, run_id: str, **start):
        start.setdefault("limits", {"max_steps": 10, "max_tokens": 100_000, "max_wall_seconds": 600,
                                    "tool_timeout_seconds": 30, "result_bound_tokens": 2000})
        self.run = journal.start_run(run_id, agent="fixture", tools=start.pop("tools", CATALOGUE),
                                     model="claude-sonnet-4-5", **start)
        self.ledger = {"steps": 0, "input_tokens": 0, "output_tokens": 0, "tool_results": 0, "cost_micros": 0}

    def model(self, calls=(), final=False, usage=None, text_override=None, **fields) -> tuple[int, list[ToolCall]]:
        usage = dict(usage or USAGE)
        fields.setdefault("cost_micros", 100)
        step = self.run.model_step(usage=usage, ms=500, tool_calls=calls, final=final,
                                   text=text_override or ("the answer" if final else None), **fields)
        self.ledger["steps"] += 1
        self.ledger["input_tokens"] += sum(v for k, v in usage.items() if k not in ("output", "reasoning"))
        self.ledger["output_tokens"] += usage.get("output", 0)
        self.ledger["cost_micros"] += fields["cost_micros"]
        return step.idx, step.calls

    def wrap_up(self, reason: str, charge: bool = True, usage=None) -> int:
        """Seed 001's graceful stop: a wrap_up event, then one tool-free model turn (charged to the ledger or not)."""
        self.run.event("wrap_up", detail=f"{reason}: one tool-free turn to summarise")
        if charge:
            return self.model(usage=usage)[0]
        return self.run.model_step(usage=dict(usage or USAGE), ms=500, text="what I found", cost_micros=100,
                                   finish_reason="end_turn").idx

    def tool(self, call: ToolCall, result: str = "fine", **fields) -> int:
        self.ledger["tool_results"] += 1
        return self.run.tool_step(call, result=result, **{"ms": 20, **fields})

    def end(self, reason: str = "model_finished", status: str | None = None, ts=None, **ledger_changes) -> None:
        self.run.end(reason, status=status, final_output="the answer", ledger={**self.ledger, **ledger_changes},
                     ts=ts)


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
    """A final answer that asks for a tool nobody ran, and a ledger that counts steps its journal does not have. (A
    lost result is tool_calls_paired's one finding, not this check's: issue 57.)"""
    run = Run(j, "answered_early")
    _, calls = run.model([("read_file", {"path": "a"})])
    run.tool(calls[0])
    idx, _ = run.model([("search", {"query": "b"})], final=True)
    run.end()
    lost = Run(j, "missing")  # a lost result: no finding of this check
    _, calls = lost.model([("read_file", {"path": "a"}), ("search", {"query": "b"})])
    lost.tool(calls[0])
    lost.model(final=True)
    lost.end()
    ledger = Run(j, "ledger")
    _, calls = ledger.model([("read_file", {"path": "a"})])
    ledger.tool(calls[0])
    ledger.model(final=True)
    ledger.end(steps=5)
    return [("answered_early", idx), ("ledger", None)]


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
    total = Run(j, "total_off")  # seed 001's one-number token count, off by the wrap-up's tokens only in part
    total.model()
    total.wrap_up("token limit (1,000)")
    total.end("token limit (1,000)", status="incomplete", tokens=total.ledger["input_tokens"] + 7)
    return [("off", None), ("cost_off", None), ("total_off", None)]


def clean_ledger(j):
    """A ledger kept in dollars: its cost, rounded once, is 1 micro-dollar off the steps' rounded costs; a ledger
    that leaves the wrap-up turn out (seed 001 charges in the loop only); a ledger of one token total."""
    clean_default(j)
    wrapped = Run(j, "wrapped")
    wrapped.model()
    wrapped.wrap_up("step limit (1)", charge=False)
    wrapped.end("step limit (1)", status="incomplete", tokens=wrapped.ledger["input_tokens"] + wrapped.ledger["output_tokens"])
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
    # the answer the loop misread: the model ended its turn with text and no tool call, journalled final=false
    # as the harness saw it, then three more calls to the step ceiling (seed 000: only the transcript can tell)
    misread = Run(j, "misread", limits={"max_steps": 4})
    said, _ = misread.model(finish_reason="end_turn", text_override="The flaky test is test_retry.")
    for n in range(3):
        _, calls = misread.model([("read_file", {"path": f"more_{n}"})], finish_reason="tool_use")
        misread.tool(calls[0])
    misread.end("max_steps")
    return [("kept_going", answer), ("misread", said)]


def planted_tool_calls_paired(j):
    run = Run(j, "unpaired")
    asked, calls = run.model([("read_file", {"path": "a"}), ("search", {"query": "b"})])
    run.tool(calls[0])
    twice = run.tool(calls[0])
    orphan = run.tool(stray_call("search", {"query": "c"}))
    run.model(final=True)
    run.end()
    waiting = Run(j, "in-flight", limits=STILL_GOING)  # still running, on its last call: calls_in_flight's, not lost
    waiting.model([("read_file", {"path": "a"})])
    return [("unpaired", asked), ("unpaired", twice), ("unpaired", orphan)]


def planted_calls_in_flight(j):
    waiting = Run(j, "waiting", limits=STILL_GOING)  # still running: its last model step's call has no result yet
    _, calls = waiting.model([("read_file", {"path": "a"})])
    waiting.tool(calls[0])
    asked, _ = waiting.model([("search", {"query": "b"})])
    lost_earlier = Run(j, "went-on")  # running, but a call of an earlier step is lost, not in flight
    lost_earlier.model([("read_file", {"path": "a"})])
    lost_earlier.model()  # went on thinking: the read is lost
    ended = Run(j, "ended")  # ended without its result: lost (tool_calls_paired), not in flight
    ended.model([("read_file", {"path": "a"})])
    ended.end()
    return [("waiting", asked)]


def clean_in_flight(j):
    """Running runs whose calls all have their results, and one still thinking after them."""
    answered(j, "done")
    running = Run(j, "thinking")
    _, calls = running.model([("read_file", {"path": "a"})])
    running.tool(calls[0])


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


def _looped(j, run_id: str, detector, calls: list[tuple[str, dict]], results=None, end: str = "max_steps", **start):
    """A run that makes ``calls`` one a step (results all "ok", or ``results``); returns the step indexes."""
    run = Run(j, run_id, loop_detector=detector, **start)
    steps = []
    for n, call in enumerate(calls):
        idx, asked = run.model([call])
        run.tool(asked[0], result=results[n] if results else "ok")
        steps.append(idx)
    run.end(end)
    return steps


A, B, C = ("search", {"query": "a"}), ("read_file", {"path": "b"}), ("search", {"query": "c"})


def planted_loop_stopped_at_limit(j):
    # seed 000, max_repeats 2: the third identical result in a row is the stop; a fourth model call is one too many
    results = _looped(j, "results_late", "results_in_a_row", [A, B, C, A], limits={"max_repeats": 2})
    # seed 001, repeat_limit 3: the same calls a third time anywhere in the run (not in a row)
    anywhere = _looped(j, "anywhere_late", {"kind": "calls_anywhere", "limit": 3}, [A, B, A, C, A, B],
                       results=["1", "2", "3", "4", "5", "6"])
    # seed 003: one call three times in the last six (results differ: only the call counts) ...
    window = _looped(j, "window_late", "calls_window", [B, A, A, A, C], results=["1", "2", "3", "4", "5"])
    # ... or A B A B
    oscillating = _looped(j, "oscillating_late", "calls_window", [A, B, A, B, C], results=["1", "2", "3", "4", "5"])
    return [("results_late", results[2] + 1), ("anywhere_late", anywhere[4]), ("window_late", window[3]),
            ("oscillating_late", oscillating[3])]


def planted_stalled_runs_detected(j):
    # ended stalled one result short of seed 000's limit (max_repeats 2: two identical results do not stop it)
    _looped(j, "one_short", "results_in_a_row", [A, B], limits={"max_repeats": 2}, end="identical_tool_results")
    # calls_window declared, but the calls all differ: the harness fingerprinted something else
    _looped(j, "calm_but_stalled", "calls_window", [A, B, C, ("read_file", {"path": "d"})],
            end="repeated_tool_calls")
    # seed 001's detector needs the same calls three times; it saw them twice
    _looped(j, "twice_only", "calls_anywhere", [A, B, A], results=["1", "2", "3"],
            end="repeated the same tool calls 3 times without progress")
    return [("one_short", None), ("calm_but_stalled", None), ("twice_only", None)]


def planted_budgets_enforced(j):
    steps = Run(j, "too_many_steps", limits={"max_steps": 2})
    for _ in range(3):
        steps.model()
    steps.end("max_steps")
    wrapped = Run(j, "wrap_up_too_late", limits={"max_steps": 2})  # three charged calls, then the wrap-up
    for _ in range(3):
        wrapped.model()
    wrapped.wrap_up("step limit (2)", charge=False)
    wrapped.end("step limit (2)", status="incomplete")
    slow = Run(j, "too_slow", limits={"max_wall_seconds": 2, "tool_timeout_seconds": 1})
    slow.model()
    slow.model()
    late, _ = slow.model(final=True)  # the test clock moves a second per line: this call starts 3 s in, past 2 s
    slow.end()
    tokens = Run(j, "too_many_tokens", limits={"max_tokens": 1000})
    for final in (False, False, True):  # 2,850 tokens: over 1,000 by more than the last step's 950
        tokens.model(usage={"input_uncached": 900, "output": 50}, final=final)
    tokens.end()
    prompt = Run(j, "too_much_prompt", limits={"max_prompt_tokens": 1000})  # seed 000's separate ceilings
    for final in (False, False, True):
        prompt.model(usage={"input_uncached": 900, "output": 50}, final=final)
    prompt.end()
    completion = Run(j, "too_much_completion", limits={"max_completion_tokens": 100})
    for final in (False, False, True):
        completion.model(usage={"input_uncached": 100, "output": 60}, final=final)
    completion.end()
    spend = Run(j, "too_costly", limits={"max_cost_micros": 100})
    spend.model(cost_micros=500)
    spend.model(cost_micros=50, final=True)
    spend.end()
    # one budget for the agent tree (seed 001): each run is within 3 steps, the tree's 5 are past it
    root = Run(j, "tree_root", limits={"max_steps": 3, "scope": "tree"})
    root.model()
    for name in ("tree_child_a", "tree_child_b"):
        child = Run(j, name, parent_run_id="tree_root", limits={"max_steps": 3, "scope": "tree"})
        child.model()
        child.model(final=True)
        child.end()
    root.model(final=True)
    root.end()
    # exactly at the limit, a fence checked with > where the seeds check >= makes one more call
    prompt_at = Run(j, "prompt_at_limit", limits={"max_prompt_tokens": 3000}, fence="seed000")
    for final in (False, False, False, True):  # the 4th call starts with exactly 3,000 of 3,000 spent
        fourth, _ = prompt_at.model(usage={"input_uncached": 1000, "output": 10}, final=final)
    prompt_at.end()
    spend_at = Run(j, "spend_at_limit", limits={"max_cost_micros": 10_000}, fence="seed001")
    for final in (False, False, False, False, True):  # the 5th call starts with exactly $0.01 of $0.01 spent
        fifth, _ = spend_at.model(cost_micros=2_500, final=final)
    spend_at.end()
    t0 = datetime(2026, 11, 29, 1, 0, tzinfo=timezone.utc)
    wall_at = Run(j, "wall_at_limit", limits={"max_wall_seconds": 10}, fence="seed000", ts=t0)
    wall_at.model(ts=t0 + timedelta(seconds=1))
    at_deadline, _ = wall_at.model(final=True, ts=t0 + timedelta(seconds=10))  # exactly 10.000 s of 10 s
    wall_at.end(ts=t0 + timedelta(seconds=11))
    # the wall clock fired 560 s late: nothing journalled from 40 s to the stop at 900 s, the deadline at 300 s
    t1 = t0 + timedelta(hours=1)
    late = Run(j, "stopped_late", limits={"max_wall_seconds": 300}, ts=t1)
    _, calls = late.model([("read_file", {"path": "a"})], ts=t1 + timedelta(seconds=1))
    late.tool(calls[0], ts=t1 + timedelta(seconds=2), ms=38_000)
    late.end("max_wall_seconds", ts=t1 + timedelta(seconds=900))
    # one budget for a tree whose sub-agents ran one after another: the second's call saw the first's charge
    t2 = t0 + timedelta(hours=2)
    _shared_tree(j, "seq", t2, second_starts=t2 + timedelta(seconds=7))
    return [("too_many_steps", 2), ("wrap_up_too_late", 2), ("too_slow", 1), ("too_many_tokens", 2),
            ("too_much_prompt", 2), ("too_much_completion", 2), ("too_costly", 1), ("tree_child_b", 0),
            ("tree_root", 1), ("prompt_at_limit", fourth), ("spend_at_limit", fifth), ("wall_at_limit", at_deadline),
            ("stopped_late", None), ("seq_b", 0)]


def _shared_tree(j, name: str, t: datetime, second_starts: datetime) -> None:
    """A root with one budget of 2 steps for its tree (seed 001), one call of its own, then two sub-agents of one
    call each: sub-agent a calls 3 s in, for 2 s; b calls at ``second_starts``. The root stops at its step limit."""
    root = Run(j, name, limits={"max_steps": 2, "scope": "tree"}, fence="seed001", ts=t)
    root.model(ts=t + timedelta(seconds=1))  # returns 1.5 s in
    for child, at in (("a", t + timedelta(seconds=3)), ("b", second_starts)):
        sub = Run(j, f"{name}_{child}", parent_run_id=name, limits={}, ts=at - timedelta(seconds=1))
        sub.run.model_step(usage=USAGE, ms=2000, final=True, text="found it", cost_micros=100, ts=at)
        sub.run.end("model_finished", final_output="found it", ts=at + timedelta(seconds=2, milliseconds=100))
    root.wrap_up("step limit (2)", charge=False)
    root.end("step limit (2)", status="incomplete", ts=second_starts + timedelta(seconds=4),  # the tree's ledger
             steps=3, input_tokens=3000, output_tokens=150, cost_micros=300)


def planted_stop_reason_as_expected(j):
    answered(j, "surprise", predicted_stop_reason="max_steps")
    return [("surprise", None)]


def planted_retries_mutate_context(j):
    run = Run(j, "same_again")
    run.model(input_hash="h1", error="invalid output: bad JSON")
    again, _ = run.model(input_hash="h1", final=True)
    run.end()
    # seed 003's recipe: the invalid output journalled by its class alone, no error text
    classed = Run(j, "same_again_classed")
    classed.model(input_hash="h1", error_class="invalid_output")
    repeat, _ = classed.model(input_hash="h1", final=True)
    classed.end()
    return [("same_again", again), ("same_again_classed", repeat)]


def planted_no_failed_side_effects(j):
    run = Run(j, "wrote_then_failed")  # seed 000's raise_after_write
    _, calls = run.model([("write_file", {"path": "a", "text": "x"})])
    started = run.run.tool_started(calls[0])
    failed = run.tool(calls[0], started=started, status="error", result="error: OSError: disk full after write",
                      error="OSError: disk full after write")
    run.model(final=True)
    run.end()
    return [("wrote_then_failed", failed)]


def planted_retries_within_limit(j):
    run = Run(j, "kept_retrying", limits={"max_retries": 2})
    for attempt in range(1, 5):  # three retries of a call that failed in transport; the limit is two
        idx, _ = run.model(usage={"input_uncached": 0, "output": 0}, input_hash="h1", attempt=attempt,
                           error="529 overloaded_error", error_class="transport")
    last, _ = run.model(input_hash="h1", attempt=5, final=True)
    run.end()
    return [("kept_retrying", idx), ("kept_retrying", last)]  # retries 3 and 4 are past the limit


def planted_rate_limits_fall_back(j):
    run = Run(j, "waited", fallback_model="claude-haiku-4-5")
    run.model(usage={"input_uncached": 0, "output": 0}, input_hash="h1", error="429 rate_limit_error")
    run.model(usage={"input_uncached": 0, "output": 0}, input_hash="h1", error="429 rate_limit_error")
    again, _ = run.model(input_hash="h1", final=True)  # a second retry, still on the rate-limited model
    run.end()
    # seed 003's matrix, provider 529 mid-run: three 529s on the primary — the third should have gone to the fallback
    overloaded = Run(j, "overloaded_thrice", fallback_model="claude-haiku-4-5")
    for attempt in (1, 2, 3):
        third, _ = overloaded.model(usage={"input_uncached": 0, "output": 0}, input_hash="h1", attempt=attempt,
                                    error="529 overloaded_error", error_class="transport")
    overloaded.model(input_hash="h1", attempt=4, final=True)
    overloaded.end()
    return [("waited", again), ("overloaded_thrice", third), ("overloaded_thrice", third + 1)]


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


def planted_harness_cost_not_below_floor(j):
    """Issue 56: a run whose second call has no price has no exact cost, but a floor (its first call, exactly priced:
    claude-sonnet-4-5, 100 uncached, 900 read, 50 out = $0.00132). Its harness recorded $0.0002 for both: below it.
    A run whose harness recorded more than the floor is not reported (its figure may be the cost)."""
    low = Run(j, "underpriced")
    low.model()
    low.model(model="mystery-model-9", final=True)
    low.end()
    fair = Run(j, "recorded_above_floor")
    fair.model(cost_micros=5000)
    fair.model(model="mystery-model-9", final=True, cost_micros=5000)
    fair.end()
    return [("underpriced", None)]


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


def clean_answers(j):
    """Tool-free text turns that are no final answer: seed 001's wrap-up turn after a budget stop, a turn that
    failed validation, and a text turn in a run that went on to succeed."""
    clean_default(j)
    wrapped = Run(j, "wrapped_up", limits={"max_steps": 1})
    _, calls = wrapped.model([("read_file", {"path": "a"})], finish_reason="tool_use")
    wrapped.tool(calls[0])
    wrapped.wrap_up("step limit (1)", charge=False)
    wrapped.end("step limit (1)", status="incomplete")
    invalid = Run(j, "invalid_then_stopped", limits={"max_steps": 2})
    invalid.model(finish_reason="end_turn", text_override="{not json", error_class="invalid_output", input_hash="h1")
    _, calls = invalid.model([("read_file", {"path": "a"})], finish_reason="tool_use", input_hash="h2")
    invalid.tool(calls[0])
    invalid.end("max_steps")
    chatty = Run(j, "thought_aloud")
    chatty.model(finish_reason="end_turn", text_override="Let me look at the tests first.")
    _, calls = chatty.model([("read_file", {"path": "t.py"})], finish_reason="tool_use")
    chatty.tool(calls[0])
    chatty.model(final=True, finish_reason="end_turn")
    chatty.end()


def clean_budgets(j):
    run = Run(j, "within", limits={"max_steps": 3, "max_tokens": 2000, "max_cost_micros": 150,
                                    "max_prompt_tokens": 1800, "max_completion_tokens": 100,
                                    "max_wall_seconds": 60, "tool_timeout_seconds": 30})
    run.model(usage={"input_uncached": 900, "output": 50})
    run.model(usage={"input_uncached": 900, "output": 50}, final=True)  # 1,900 tokens, within 2,000
    run.end()
    # seed 001: the ceilings are checked before each call, so the last call may cross them; then one
    # tool-free wrap-up turn, not charged (its ledger leaves it out)
    wrapped = Run(j, "wrapped_up", limits={"max_steps": 2, "max_tokens": 1500, "max_cost_micros": 150})
    wrapped.model(usage={"input_uncached": 900, "output": 50})
    wrapped.model(usage={"input_uncached": 900, "output": 50})
    wrapped.wrap_up("step limit (2)", charge=False)
    wrapped.end("step limit (2)", status="incomplete")
    charged = Run(j, "wrap_up_charged", limits={"max_steps": 2})  # a ledger that charges the wrap-up: also fine
    charged.model()
    charged.model()
    charged.wrap_up("max_steps")
    charged.end("max_steps")
    root = Run(j, "tree_root", limits={"max_steps": 4, "scope": "tree"})  # one budget for the agent tree ...
    root.model()
    child = Run(j, "tree_child", parent_run_id="tree_root", limits={})  # ... which the sub-agent spends too
    child.model()
    child.model(final=True)
    child.run.end("model_finished", final_output="the answer")  # the shared ledger is the root's
    root.model(final=True)
    root.end(**{k: root.ledger[k] + child.ledger[k] for k in root.ledger})
    # exactly at the limit, within it: 2,000 of 3,000 prompt tokens before the third call
    prompt = Run(j, "prompt_below_limit", limits={"max_prompt_tokens": 3000}, fence="seed000")
    for final in (False, False, True):
        prompt.model(usage={"input_uncached": 1000, "output": 10}, final=final)
    prompt.end()
    # seed 003 checks Date.now() > deadline: a call that starts exactly at the deadline is allowed
    t0 = datetime(2026, 11, 29, 1, 0, tzinfo=timezone.utc)
    at_deadline = Run(j, "seed003_at_deadline", limits={"max_wall_seconds": 10}, fence="seed003", ts=t0)
    at_deadline.model(ts=t0 + timedelta(seconds=1))
    at_deadline.model(final=True, ts=t0 + timedelta(seconds=10))
    at_deadline.end("succeeded", status="succeeded", ts=t0 + timedelta(seconds=11))
    # a tree's sub-agents called side by side: b's call began while a's was in flight, so a's was not charged yet
    _shared_tree(j, "side_by_side", t0 + timedelta(hours=1), second_starts=t0 + timedelta(hours=1, seconds=4))


def clean_stalls(j):
    # seed 000, max_repeats 2: three identical results in a row is the designed stop, whatever the calls
    _looped(j, "results_stop", "results_in_a_row", [A, B, C], limits={"max_repeats": 2}, end="identical_tool_results")
    # seed 001: the same calls a third time anywhere, then the graceful wrap-up turn
    anywhere = Run(j, "anywhere_stop", loop_detector="calls_anywhere")
    for call, result in ((A, "1"), (B, "2"), (A, "3"), (C, "4"), (A, "5")):
        _, asked = anywhere.model([call])
        anywhere.tool(asked[0], result=result)
    anywhere.wrap_up("repeated the same tool calls 3 times without progress", charge=False)
    anywhere.end("repeated the same tool calls 3 times without progress", status="incomplete")
    # seed 003: one call three times among the last six, and A B A B
    _looped(j, "window_stop", "calls_window", [B, A, A, A], results=["1", "2", "3", "4"], end="stalled")
    _looped(j, "oscillation_stop", "calls_window", [A, B, A, B], results=["1", "2", "3", "4"], end="stalled")
    # a polling tool marked allow_repeat is not a stall
    _looped(j, "polling_tests", "calls_window", [("run_tests", {"target": "all"})] * 4, end="max_steps")


def clean_side_effects(j):
    run = Run(j, "written_once")
    _, calls = run.model([("write_file", {"path": "a", "text": "x"}), ("write_file", {"path": "b", "text": "x"})])
    run.tool(calls[0])
    started = run.run.tool_started(calls[1])  # the protocol: started, then completed with its outcome
    run.tool(calls[1], started=started)
    run.model(final=True)
    run.end()


def clean_loops(j):
    clean_stalls(j)
    polling = Run(j, "polling", loop_detector="calls_window")  # a tool meant to repeat
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
    # seed 003: a transport failure is retried on the same context, up to max_retries; a rate limit falls back
    overloaded = Run(j, "overloaded", limits={"max_retries": 2}, fallback_model="claude-haiku-4-5")
    overloaded.model(usage={"input_uncached": 0, "output": 0}, input_hash="h1", error="529 overloaded_error")
    overloaded.model(usage={"input_uncached": 0, "output": 0}, input_hash="h1", error="HTTP 503",
                     error_class="transport")
    overloaded.model(input_hash="h1", final=True)
    overloaded.end()
    limited = Run(j, "rate_limited", limits={"max_retries": 3}, fallback_model="claude-haiku-4-5")
    limited.model(usage={"input_uncached": 0, "output": 0}, input_hash="h1", error="rate limited",
                  error_class="rate_limit")
    limited.model(usage={"input_uncached": 0, "output": 0}, input_hash="h1", error="429 Too Many Requests")
    limited.run.event("fallback", detail="claude-haiku-4-5")
    limited.model(input_hash="h1", model="claude-haiku-4-5", final=True)
    limited.end()
    # a 529, its one retry overloaded too, then the fallback route (seed 003's matrix)
    routed = Run(j, "overloaded_then_routed", limits={"max_retries": 3}, fallback_model="claude-haiku-4-5")
    for attempt in (1, 2):
        routed.model(usage={"input_uncached": 0, "output": 0}, input_hash="h1", attempt=attempt,
                     error="529 overloaded_error", error_class="transport")
    routed.run.event("fallback", detail="claude-haiku-4-5")
    routed.model(input_hash="h1", model="claude-haiku-4-5", attempt=3, final=True)
    routed.end()
    # an invalid output, fed back (seed 003): the next call's input differs
    fed_back = Run(j, "fed_back")
    fed_back.model(input_hash="h1", error_class="invalid_output")
    fed_back.model(input_hash="h2", final=True)
    fed_back.end()


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
CLEAN = {name: clean_default for name in PLANTED} | {"final_answer_not_overwritten": clean_answers,
    "budgets_enforced": clean_budgets, "stalled_runs_detected": clean_stalls, "side_effects_once": clean_side_effects,
    "no_stuck_side_effects": clean_side_effects, "no_failed_side_effects": clean_side_effects,
    "retries_mutate_context": clean_retry, "retries_within_limit": clean_retry, "rate_limits_fall_back": clean_retry,
    "loop_stopped_at_limit": clean_loops,
    "no_silent_truncation": clean_context, "tool_results_bounded": clean_context, "status_consistent": clean_statuses,
    "tool_errors_flagged": clean_tool_results, "ledger_matches_transcript": clean_ledger,
    "stop_reason_as_expected": clean_statuses, "calls_in_flight": clean_in_flight,
    "cost_per_request_stable": clean_cost_weeks,
    "tokens_match_provider": clean_provider, "costs_match_provider": clean_provider,
}
