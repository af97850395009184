"""A reference agent harness: the loop reconcile exists to audit.

It runs a scripted fake model against simulated tools (``fakes.py``) on a simulated clock, so a
whole night of runs generates in seconds, and writes native journals through
``reconcile.journal``. What it does on every turn:

1. check every budget *before* the call, as seed 001's ``Budget.exhausted`` does: charged model
   calls, tokens and spend so far, and the time since the start, each against its ceiling at ``>=``
   (a call the provider refused is not a charged step, seed 003); when one is reached, make one
   last tool-free wrap-up call instead and stop with that budget's reason. ``reconcile replay``
   walks the journal with the same rule and finds the same stop;
2. call the model; a final answer ends the run (``model_finished``); an unusable output is
   retried once with the error added to the context;
   A call the provider refuses is retried on the same context (seed 003: a transport failure or a
   rate limit needs no new information): a 529 up to ``max_retries`` times, then the run fails; a
   429 once on the same model, then on the fallback model;
3. run each requested tool under a timeout (a tool not in the catalogue gets ``unknown_tool``),
   treat an HTTP error body as an error, bound large results before they enter the context (head
   and tail kept, never head only: the error is usually at the end), and run seed 003's no-progress
   detector over the last six call hashes (tool plus canonical arguments; one call three times, or
   A B A B; tools marked allow_repeat aside), declared on the journal as ``calls_window``: when it
   fires the run stops as ``repeated_tool_calls`` (stalled);
4. compact the context when it grows too large, and say so with an event.

``Faults`` switches on the bugs real harnesses have; ``generate.py`` uses them to plant the
defects listed in ``PLANTED.md``. With no faults the harness is correct.
"""

from __future__ import annotations

import json
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from fakes import INPUT_BUCKETS, MISBEHAVING, TOOLS, FakeModel, Plan, SimClock, cost_micros, simulate_tool

from reconcile.store.canonical import sha256_text
from reconcile.journal import Journal, estimate_tokens

LOOP_DETECTOR = {"kind": "calls_window", "limit": 3, "window": 6}  # seed 003's noProgress, as declared on the journal

__all__ = ["Faults", "Limits", "Plan", "RunSpec", "run_agent"]


@dataclass
class Limits:
    max_steps: int
    max_tokens: int
    max_wall_seconds: float
    max_cost_micros: int
    max_retries: int = 3
    tool_timeout_seconds: float = 30.0
    result_bound_tokens: int = 2000

    def as_journal(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Faults:
    """Bugs a harness can have. Each one plants a defect a check should find."""

    ignore_final_answer: bool = False  # keeps looping after the model answered
    ledger_skips_cache_reads: bool = False  # ledger input tokens leave out cache reads
    drop_tool_result: bool = False  # the journal never gets one tool result
    retry_side_effects: bool = False  # re-runs a failed side-effecting call with the same key
    timeout_not_enforced: bool = False  # a hung tool runs to the end, past its timeout
    retry_same_input: bool = False  # retries an unusable output without telling the model what was wrong
    trust_tool_status: bool = False  # takes a tool's HTTP error body for a success
    no_result_bound: bool = False  # lets a huge tool result into the context whole
    silent_truncation: bool = False  # trims the context without recording a compaction
    empty_answer_is_success: bool = False  # ends 'model_finished' when the model said nothing
    fingerprint_results: bool = False  # loop detection hashes the result too: a repeated call whose result changes slips by
    no_oscillation_check: bool = False  # loop detection counts repeats but misses A B A B
    stall_on_same_results: bool = False  # stops as stalled on three identical results in a row, though the calls differ
    journal_final_twice: bool = False  # writes the final answer's step twice (a retried write); billed once
    retry_past_limit: bool = False  # keeps retrying a call the provider refuses in transport past max_retries
    no_fallback: bool = False  # keeps waiting on a rate-limited model instead of taking the fallback route


@dataclass
class RunSpec:
    run_id: str
    agent: str
    task_class: str
    model: str
    provider: str
    limits: Limits
    plan: Plan
    start: datetime
    seed: int
    faults: Faults = field(default_factory=Faults)
    compact_above: int = 60000  # compact the context above this many tokens
    predicted_stop_reason: str | None = None  # scripted scenarios know how they should end
    fallback_model: str | None = None  # where a rate-limited call goes after one retry (seed 003's policy table)
    on_call: Callable[[datetime, str, str, dict], None] | None = None  # the provider's side: every call it answered


def run_agent(journal: Journal, spec: RunSpec) -> list[tuple[str, int]]:
    """Run one agent loop to its end, writing every step to ``journal``.

    Returns the incidents — (what happened, step index) — for each fault that fired and each
    model misbehaviour the harness met.
    """
    incidents: list[tuple[str, int]] = []
    with tempfile.TemporaryDirectory(prefix=f"run-{spec.run_id}-") as workspace:  # where tools write
        _loop(journal, spec, incidents, Path(workspace))
    return incidents


def _loop(journal: Journal, spec: RunSpec, incidents: list[tuple[str, int]], workspace: Path) -> None:
    rng = random.Random(spec.seed)
    clock = SimClock(spec.start)
    journal.clock = clock
    limits, plan, faults = spec.limits, spec.plan, spec.faults
    catalogue = [{"name": t, "side_effect": TOOLS[t][0], "allow_repeat": TOOLS[t][1], "schema_tokens": TOOLS[t][2]}
                 for t in sorted(set(plan.tools) | set(MISBEHAVING))]
    catalogue_tokens = sum(t["schema_tokens"] for t in catalogue)
    known = {t["name"] for t in catalogue}
    run = journal.start_run(spec.run_id, agent=spec.agent, task_class=spec.task_class, model=spec.model,
                            provider=spec.provider, limits=limits.as_journal(), tools=catalogue,
                            catalogue_tokens=catalogue_tokens, api_key_id=f"key_{spec.agent}", loop_detector=LOOP_DETECTOR,
                            fallback_model=spec.fallback_model,
                            workspace_id="wrkspc_nightly", project_id="proj_agents",
                            predicted_stop_reason=spec.predicted_stop_reason)
    model = FakeModel(spec.model, rng)
    context = catalogue_tokens + 1200 + rng.randint(200, 700)  # system prompt, catalogue, task
    ledger = {"steps": 0, "input_tokens": 0, "output_tokens": 0, "cost_micros": 0, "tool_results": 0}
    tokens_used = 0
    calls_seen: list[tuple] = []  # seed 003's callHashes: (tool, canonical arguments) of every call run
    allowed: set[tuple] = set()  # the hashes of calls to allow_repeat tools
    with_results: list[tuple] = []  # what a faulty detector hashes: the call and its result
    last_results: list[str] = []  # the last results, in a row
    turn, retries, current = 0, 0, spec.model  # current: the model calls go to (the fallback after a rate limit)
    while True:
        elapsed = (clock.now - spec.start).total_seconds()
        if plan.crash_at == turn:
            return  # the process died: no run_end line
        if plan.cancel_at == turn:
            run.event("cancel", detail="operator cancelled the run")
            return run.end("cancelled", ledger=ledger)
        if plan.truncate_at == turn and faults.silent_truncation:
            incidents.append(("silent_truncation", run.next_idx))  # the next model call sees less
            context, model.cached = context // 2, 0
        out_of = _budget_out(limits, turn, tokens_used, ledger["cost_micros"], elapsed)
        refusals = plan.refusals.get(turn, []) if out_of is None else []
        failed_before = refusals[retries - 1] if 0 < retries <= len(refusals) else None  # how the last try failed
        if failed_before == "transport" and retries > limits.max_retries:  # seed 003: give up at maxRetries
            if not faults.retry_past_limit:
                return run.end("provider_error", ledger=ledger)  # the run failed
            incidents.append(("retry_past_limit", run.next_idx))
        if failed_before == "transport" and retries >= 2 and spec.fallback_model and current != spec.fallback_model:
            # it retries a 529 on the same route up to max_retries, as seed 003's code does; seed 003's failure
            # matrix (provider 529 mid-run) falls back after one retry
            incidents.append(("overload_no_fallback", run.next_idx))
        if failed_before == "rate_limit" and retries >= 2 and spec.fallback_model and current != spec.fallback_model:
            if faults.no_fallback:  # the bug: it waits on the rate-limited model again
                incidents.append(("no_fallback", run.next_idx))
            else:  # fall back fast, not slow: after one retry
                run.event("fallback", detail=f"rate limited twice: routed to {spec.fallback_model}")
                current = spec.fallback_model
        if retries < len(refusals):  # the provider refuses this try
            kind = refusals[retries]
            text = "529 overloaded_error: the provider is overloaded" if kind == "transport" else "429 rate_limit_error"
            run.model_step(model=current, usage={"input_uncached": 0, "output": 0}, ms=1_500.0, attempt=retries + 1,
                           context_tokens=context, input_hash=sha256_text(f"{spec.run_id}/{context}"), error=text,
                           error_class=kind, finish_reason="error", cost_micros=0,
                           request_id=f"req_{spec.run_id}_{turn}_{retries}")
            clock.advance(1_500 + 2_000 * 2 ** retries)  # the refused call, then an exponential back-off
            ledger["steps"] += 1
            retries += 1
            continue  # the same context again: a transport failure or a rate limit needs no new information
        reply = model.call(turn, context, plan, wrap_up=out_of is not None)
        if out_of:
            run.event("wrap_up", detail=f"{out_of}: one tool-free turn to summarise")
        unknown = [name for name, _ in reply["calls"] if name not in known]
        step = run.model_step(model=current, usage=reply["usage"], ms=reply["ms"], text=reply["text"],
                              final=reply["final"], finish_reason=reply["finish_reason"], tool_calls=reply["calls"],
                              context_tokens=context, input_hash=sha256_text(f"{spec.run_id}/{context}"),
                              attempt=retries + 1, request_id=f"req_{spec.run_id}_{turn}",
                              response_id=f"msg_{spec.run_id}_{turn}", cost_micros=cost_micros(current, reply["usage"]),
                              error=reply["error"], error_class="invalid_output" if reply["error"] else None)
        retries = 0
        if unknown:
            incidents.append(("unknown_tool_call", step.idx))
        clock.advance(reply["ms"])
        if spec.on_call:
            spec.on_call(clock.now, current, spec.provider, reply["usage"])
        if reply["final"] and faults.journal_final_twice:  # the same call journalled again, under a new index
            incidents.append(("journal_final_twice", run.next_idx))
            run.model_step(model=current, usage=reply["usage"], ms=reply["ms"], text=reply["text"], final=True,
                           finish_reason=reply["finish_reason"], context_tokens=context,
                           input_hash=sha256_text(f"{spec.run_id}/{context}"), attempt=1,
                           request_id=f"req_{spec.run_id}_{turn}", response_id=f"msg_{spec.run_id}_{turn}",
                           cost_micros=cost_micros(current, reply["usage"]), ts=clock.now)
        usage = reply["usage"]
        step_input = sum(usage.get(b, 0) for b in INPUT_BUCKETS)
        ledger["steps"] += 1
        ledger["input_tokens"] += step_input - (usage.get("cache_read", 0) if faults.ledger_skips_cache_reads else 0)
        ledger["output_tokens"] += usage["output"]
        ledger["cost_micros"] += cost_micros(current, usage)
        tokens_used += step_input + usage["output"]
        asked_turn, turn = turn, turn + 1
        if out_of:
            return run.end(out_of, final_output=reply["text"], ledger=ledger)
        if reply["error"]:  # an unusable output: retry, telling the model what was wrong (unless faulty)
            run.event("retry", detail=reply["error"])
            if faults.retry_same_input:
                incidents.append(("retry_same_input", run.next_idx))
                model.cached = 0
            else:
                context += 60
            continue
        context += usage["output"]
        if not reply["calls"] and not reply["final"] and faults.empty_answer_is_success:
            return run.end("model_finished", ledger=ledger)  # the bug: silence taken for an answer
        if reply["final"] and not faults.ignore_final_answer:
            return run.end("model_finished", final_output=reply["text"], ledger=ledger)
        if reply["final"]:  # the bug: the answer is taken for a progress note and the loop goes on
            incidents.append(("ignore_final_answer", step.idx))
            plan.answer_at = None
        stalled = False
        for position, call in enumerate(step.calls):
            # A call that changes the world is journalled before it runs (keyed), and completed after.
            started = run.tool_started(call) if call.name in known and TOOLS[call.name][0] else None
            if plan.crash_in_tool_at == asked_turn:
                incidents.append(("crash_in_side_effect", step.idx))
                if started is not None:
                    incidents.append(("stuck_in_flight", started))
                return  # the process died while the tool ran: no outcome, no run_end
            result = _run_tool(call, rng, limits, faults, plan, workspace, known, outage=plan.outage_at == asked_turn)
            text = result["result"]
            tokens = estimate_tokens(text) if text else 0
            bounded = tokens > limits.result_bound_tokens and not faults.no_result_bound
            if bounded:
                text, tokens = _head_and_tail(text, limits.result_bound_tokens), limits.result_bound_tokens
            elif tokens > limits.result_bound_tokens:
                incidents.append(("no_result_bound", run.next_idx))
            if result.get("trusted_error_body"):
                incidents.append(("trust_tool_status", run.next_idx))
            began = clock.now  # a step's ts is when it started (docs/journal-format.md)
            clock.advance(result["ms"])
            if faults.drop_tool_result and position == len(step.calls) - 1 and asked_turn == 1:
                faults.drop_tool_result = False  # the write was lost once, in this run
                incidents.append(("drop_tool_result", step.idx))
            else:
                done = run.tool_step(call, status=result["status"], result=text, ms=result["ms"], bounded=bounded,
                                     result_tokens=tokens if text else None, error=result["error"], started=started,
                                     ts=began)
                ledger["tool_results"] += 1
                if result["ms"] > limits.tool_timeout_seconds * 1000:
                    incidents.append(("timeout_not_enforced", done))  # it ran on past its timeout
                if started is not None and result["status"] in ("error", "timeout"):
                    incidents.append(("failed_side_effect", done))  # it ran, and may have written before it failed
            context += tokens + 30
            if result["status"] == "error" and faults.retry_side_effects and TOOLS[call.name][0]:
                faults.retry_side_effects = False  # the harness retries the write with the same key
                again = run.tool_started(call)
                retry = _run_tool(call, rng, limits, faults, plan, workspace, known, outage=False)
                began = clock.now
                clock.advance(retry["ms"])
                incidents.append(("retry_side_effects", again))
                run.tool_step(call, status="ok", result="wrote 1 file", ms=retry["ms"], result_tokens=4, started=again,
                              ts=began)
                ledger["tool_results"] += 1
                continue
            if result["status"] == "error" and plan.fatal_tool_at is not None:
                return run.end("tool_error", final_output=f"gave up: {call.name} failed: {result['error']}",
                               ledger=ledger)
            # seed 003's no-progress detector over the calls (tool + canonical arguments), as declared
            calls_seen.append((call.name, call.args_hash))
            with_results.append((call.name, call.args_hash, sha256_text(text or "")))
            if TOOLS.get(call.name, (False, False))[1]:
                allowed.add((call.name, call.args_hash))
            last_results = (last_results + [text or ""])[-3:]
            fires = _no_progress(calls_seen, allowed)
            if faults.fingerprint_results:  # the bug: the result is hashed too, so a repeated call whose result changes slips by
                faulty = _no_progress(with_results, {h for h in with_results if h[:2] in allowed})
                misses, fires = fires and not faulty, faulty
                if misses and not any(i[0] == "fingerprint_results" for i in incidents):
                    incidents.append(("fingerprint_results", step.idx))  # the declared detector fires at this step
            elif faults.no_oscillation_check:  # the bug: repeats are counted, A B A B is not
                faulty = _no_progress(calls_seen, allowed, oscillation=False)
                misses, fires = fires and not faulty, faulty
                if misses and not any(i[0] == "oscillation" for i in incidents):
                    incidents.append(("oscillation", step.idx))
            stalled = stalled or fires  # the batch the model asked for is finished first: a step is all its calls
            if faults.stall_on_same_results and len(last_results) == 3 and len(set(last_results)) == 1 and not stalled:
                incidents.append(("stall_on_same_results", -1))
                stalled = True  # the bug: the results repeated, not the calls
        if stalled:
            return run.end("repeated_tool_calls", ledger=ledger)
        if context > spec.compact_above:
            after = catalogue_tokens + 1200 + rng.randint(2000, 6000)
            run.event("compaction", tokens_before=context, tokens_after=after, detail="summarised older turns")
            context, model.cached = after, 0


def _no_progress(hashes: list[tuple], allow_repeat: set[tuple], oscillation: bool = True) -> bool:
    """Seed 003's noProgress, as written: the last six hashes, allow-repeat ones dropped; one hash three
    times, or the last four alternating A B A B, once at least four count."""
    recent = [h for h in hashes[-LOOP_DETECTOR["window"]:] if h not in allow_repeat]
    if len(recent) < 4:
        return False
    if max(recent.count(h) for h in recent) >= LOOP_DETECTOR["limit"]:
        return True
    last4 = recent[-4:]
    return oscillation and last4[0] == last4[2] and last4[1] == last4[3] and last4[0] != last4[1]


def _head_and_tail(text: str, bound_tokens: int) -> str:
    """The result as it enters the context: its head and its tail within the bound (the error is usually at
    the end), with a marker for what was cut; the full body stays in the journal."""
    keep = bound_tokens * 4 - 80  # about four characters a token, less the marker
    cut = len(text) - keep
    return text[: keep // 2] + f"\n… [{cut:,} characters cut; the full result is in the journal] …\n" + text[-(keep - keep // 2):]


def _run_tool(call, rng: random.Random, limits: Limits, faults: Faults, plan: Plan, workspace: Path,
              known: set[str], outage: bool) -> dict:
    """Run one tool call under the harness's rules. Returns status, result text, ms and error."""
    if call.name not in known:
        return {"status": "unknown_tool", "result": f"unknown tool {call.name}", "ms": 1, "error": "unknown tool"}
    try:
        outcome = simulate_tool(call.name, call.args, rng, plan.tool_latency_scale, workspace, outage)
    except Exception as exc:  # a tool that raises: the harness records the error as the result
        error = f"{type(exc).__name__}: {exc}"
        return {"status": "error", "result": error, "ms": rng.uniform(5, 40), "error": error}
    timeout_ms = limits.tool_timeout_seconds * 1000
    if outcome["ms"] > timeout_ms and not faults.timeout_not_enforced:
        return {"status": "timeout", "result": None, "ms": timeout_ms,
                "error": f"{call.name} killed after {limits.tool_timeout_seconds:g}s"}
    status = _http_status(outcome["result"])
    if status and status >= 400:
        if faults.trust_tool_status:
            return {**outcome, "trusted_error_body": True}
        return {**outcome, "status": "error", "error": f"{call.name} answered HTTP {status}"}
    return outcome


def _http_status(text: str | None) -> int | None:
    if not text or not text.startswith("{"):
        return None
    try:
        status = json.loads(text).get("status")
    except (ValueError, AttributeError):
        return None
    return status if isinstance(status, int) else None


def _budget_out(limits: Limits, charged: int, tokens: int, cost: int, elapsed: float) -> str | None:
    """The stop reason of the first budget already used up, checked before the call (seed 001's order)."""
    if charged >= limits.max_steps:
        return "max_steps"
    if tokens >= limits.max_tokens:
        return "max_tokens"
    if elapsed >= limits.max_wall_seconds:
        return "max_wall_seconds"
    if cost >= limits.max_cost_micros:
        return f"cost limit (${limits.max_cost_micros / 1e6:g})"
    return None
