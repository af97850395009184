"""A reference agent harness: the loop reconcile exists to audit.

It runs a scripted fake model against simulated tools on a simulated clock, so a whole night of
runs generates in seconds, and writes native journals through ``reconcile.journal``. What it
does on every turn:

1. check every budget *before* the call (steps, tokens, wall clock, spend); when one would run
   out, make one last tool-free wrap-up call instead and stop with that budget's reason;
2. call the model; a final answer ends the run (``model_finished``);
3. run each requested tool under a timeout, bound large results before they enter the context,
   and fingerprint (tool, args, result): the same fingerprint ``max_repeats`` times in a row
   stops the run as ``identical_tool_results``.

``Faults`` switches on the bugs real harnesses have; ``generate.py`` uses them to plant the
defects listed in ``PLANTED.md``. With no faults the harness is correct.
"""

from __future__ import annotations

import random
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

from reconcile.canonical import sha256_text
from reconcile.journal import Journal, estimate_tokens

# The harness's own price table for its ledger, in dollars per million tokens (= µ$ per token).
PRICES = {
    "claude-sonnet-4-5": {"input_uncached": 3, "cache_read": "0.30", "cache_write_5m": "3.75", "cache_write_1h": 6, "output": 15},
    "claude-haiku-4-5": {"input_uncached": 1, "cache_read": "0.10", "cache_write_5m": "1.25", "cache_write_1h": 2, "output": 5},
    "gpt-5-mini": {"input_uncached": "0.25", "cache_read": "0.025", "cache_write_5m": 0, "cache_write_1h": 0, "output": 2},
}
INPUT_BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h")

TOOLS = {  # name: (side effect, allow repeat, schema tokens)
    "read_file": (False, False, 180), "search": (False, False, 240), "run_tests": (False, True, 210),
    "write_file": (True, False, 260), "ok_forever": (False, False, 90), "big_output": (False, False, 120),
    "sleep": (False, False, 80), "raise_after_write": (True, False, 150),
}


@dataclass
class Limits:
    max_steps: int
    max_tokens: int
    max_wall_seconds: float
    max_cost_micros: int
    max_repeats: int = 3
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


@dataclass
class Plan:
    """What the scripted model will do: the fake model's whole 'intelligence'."""

    answer_at: int | None  # answer on this model turn (0-based); None: never
    tools: list[str]
    pattern: list[tuple[str, dict]] | None = None  # repeat these calls from pattern_from on
    pattern_from: int = 0
    crash_at: int | None = None  # the process dies before this model turn (no run_end)
    cancel_at: int | None = None  # an operator cancels before this model turn
    fatal_tool_at: int | None = None  # on this turn, call raise_after_write and give up on its error
    tool_latency_scale: float = 1.0


class SimClock:
    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += timedelta(milliseconds=ms)


def cost_micros(model: str, usage: dict) -> int:
    price = PRICES[model]
    total = sum(Decimal(str(price[b])) * usage.get(b, 0) for b in (*INPUT_BUCKETS, "output"))
    return int(total.quantize(Decimal(1)))


class FakeModel:
    """Deterministic model: follows a Plan, with usage that grows like a real conversation."""

    def __init__(self, name: str, rng: random.Random, prefix_tokens: int):
        self.name, self.rng, self.prefix = name, rng, prefix_tokens
        self.cached = 0  # tokens of the previous call's input, still in the provider cache

    def call(self, turn: int, context: int, plan: Plan, wrap_up: bool) -> dict:
        rng = self.rng
        new_tokens = max(context - self.cached, 0)
        usage = {"cache_read": self.cached, "input_uncached": min(new_tokens, 40 + rng.randint(0, 60))}
        usage["cache_write_5m"] = new_tokens - usage["input_uncached"]
        self.cached = context
        calls: list[tuple[str, dict]] = []
        final = wrap_up or (plan.answer_at is not None and turn >= plan.answer_at)
        if not final:
            if plan.fatal_tool_at == turn:
                calls = [("raise_after_write", {"path": f"out/{rng.randint(1, 9)}.txt"})]
            elif plan.pattern and turn >= plan.pattern_from:
                calls = [plan.pattern[(turn - plan.pattern_from) % len(plan.pattern)]]
            else:
                calls = [self._pick(plan.tools) for _ in range(1 if rng.random() < 0.85 else 2)]
        usage["output"] = rng.randint(300, 900) if final else rng.randint(60, 320)
        if self.name == "gpt-5-mini":
            usage["reasoning"] = usage["output"] // 3
            usage["input_uncached"] += usage.pop("cache_write_5m")  # OpenAI has no cache writes
        ms = rng.lognormvariate(7.3, 0.45) * (4 if rng.random() < 0.08 else 1)  # bimodal: some slow calls
        text = ("Here is what I found and changed: " + "details " * rng.randint(5, 40)) if final else None
        return {"usage": usage, "calls": calls, "final": final and not wrap_up, "text": text, "ms": ms,
                "finish_reason": "end_turn" if final else "tool_use"}

    def _pick(self, tools: list[str]) -> tuple[str, dict]:
        rng = self.rng
        name = rng.choice(tools)
        args = {"read_file": {"path": f"src/mod{rng.randint(1, 40)}.py"},
                "search": {"query": f"symbol_{rng.randint(1, 500)}", "limit": 10},
                "run_tests": {"target": f"tests/test_{rng.randint(1, 12)}.py"},
                "write_file": {"path": f"src/mod{rng.randint(1, 40)}.py", "content_tokens": rng.randint(50, 400)},
                "big_output": {"query": f"logs since {rng.randint(1, 23)}h"},
                "ok_forever": {}, "sleep": {"seconds": 120}}.get(name, {})
        return name, args


def run_tool(name: str, args: dict, rng: random.Random, limits: Limits, faults: Faults, scale: float,
             workspace: Path) -> dict:
    """Run one tool under the harness's timeout. Returns status, result text, ms and error."""
    try:
        outcome = _simulate_tool(name, args, rng, scale, workspace)
    except Exception as exc:  # a tool that raises: the harness records the error as the result
        error = f"{type(exc).__name__}: {exc}"
        return {"status": "error", "result": error, "ms": rng.uniform(5, 40), "error": error}
    timeout_ms = limits.tool_timeout_seconds * 1000
    if outcome["ms"] > timeout_ms and not faults.timeout_not_enforced:
        return {"status": "timeout", "result": None, "ms": timeout_ms,
                "error": f"{name} killed after {limits.tool_timeout_seconds:g}s"}
    return outcome


def _simulate_tool(name: str, args: dict, rng: random.Random, scale: float, workspace: Path) -> dict:
    if name == "sleep":  # hangs for as long as it is let
        return {"status": "ok", "result": "slept", "ms": args.get("seconds", 120) * 1000, "error": None}
    if name == "raise_after_write":  # the side effect happens, then the tool fails
        _write(workspace, args["path"], "partial output\n")
        raise RuntimeError("disk quota exceeded after write")
    if name == "ok_forever":
        return {"status": "ok", "result": "ok", "ms": rng.uniform(2, 10), "error": None}
    if name == "big_output":
        return {"status": "ok", "result": "log line with details\n" * rng.randint(12000, 20000), "ms": rng.uniform(200, 900), "error": None}
    if name == "run_tests":
        passed = rng.random() < 0.6
        text = f"{rng.randint(3, 40)} passed" if passed else "FAILED test_x - AssertionError: expected 3, got 4\n" * rng.randint(1, 6)
        return {"status": "ok", "result": text, "ms": rng.lognormvariate(9.2, 0.6) * scale, "error": None}
    if name == "write_file":
        _write(workspace, args["path"], "x" * (args.get("content_tokens", 100) * 4))
        return {"status": "ok", "result": f"wrote {args.get('content_tokens', 100) * 4} bytes", "ms": rng.uniform(5, 30), "error": None}
    size = rng.randint(150, 3000) if name == "read_file" else rng.randint(800, 4000)
    return {"status": "ok", "result": ("def f():\n    return 1\n" if name == "read_file" else "match: x.py:12\n") * (size // 20), "ms": rng.uniform(5, 60) if name == "read_file" else rng.uniform(300, 1500), "error": None}


def _write(workspace: Path, relative: str, text: str) -> None:
    target = workspace / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a") as handle:
        handle.write(text)


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


def run_agent(journal: Journal, spec: RunSpec) -> list[tuple[str, int]]:
    """Run one agent loop to its end, writing every step to ``journal``.

    Returns the incidents: (fault, step index) for each fault that fired.
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
                 for t in sorted(set(plan.tools) | {"ok_forever", "big_output", "sleep", "raise_after_write"})]
    catalogue_tokens = sum(t["schema_tokens"] for t in catalogue)
    run = journal.start_run(spec.run_id, agent=spec.agent, task_class=spec.task_class, model=spec.model,
                            provider=spec.provider, limits=limits.as_journal(), tools=catalogue,
                            catalogue_tokens=catalogue_tokens, api_key_id=f"key_{spec.agent}",
                            workspace_id="wrkspc_nightly", project_id="proj_agents",
                            predicted_stop_reason=spec.predicted_stop_reason)
    model = FakeModel(spec.model, rng, catalogue_tokens + 1200)
    context = catalogue_tokens + 1200 + rng.randint(200, 700)  # system prompt, catalogue, task
    ledger = {"steps": 0, "input_tokens": 0, "output_tokens": 0, "cost_micros": 0, "tool_results": 0}
    tokens_used = 0
    last_fingerprint, repeats = None, 0
    turn = 0
    while True:
        elapsed = (clock.now - spec.start).total_seconds()
        if plan.crash_at == turn:
            return  # the process died: no run_end line
        if plan.cancel_at == turn:
            run.event("cancel", detail="operator cancelled the run")
            return run.end("cancelled", ledger=ledger)
        out_of = _budget_out(limits, turn, tokens_used + context, ledger["cost_micros"], elapsed)
        reply = model.call(turn, context, plan, wrap_up=out_of is not None)
        if out_of:
            run.event("wrap_up", detail=f"{out_of}: one tool-free turn to summarise")
        step = run.model_step(model=spec.model, usage=reply["usage"], ms=reply["ms"], text=reply["text"],
                              final=reply["final"], finish_reason=reply["finish_reason"], tool_calls=reply["calls"],
                              context_tokens=context, input_hash=sha256_text(f"{spec.run_id}/{turn}/{context}"),
                              attempt=1, request_id=f"req_{spec.run_id}_{turn}", response_id=f"msg_{spec.run_id}_{turn}",
                              cost_micros=cost_micros(spec.model, reply["usage"]))
        clock.advance(reply["ms"])
        usage = reply["usage"]
        step_input = sum(usage.get(b, 0) for b in INPUT_BUCKETS)
        ledger["steps"] += 1
        ledger["input_tokens"] += step_input - (usage.get("cache_read", 0) if faults.ledger_skips_cache_reads else 0)
        ledger["output_tokens"] += usage["output"]
        ledger["cost_micros"] += cost_micros(spec.model, usage)
        tokens_used += step_input + usage["output"]
        context += usage["output"]
        turn += 1
        if out_of:
            return run.end(out_of, final_output=reply["text"], ledger=ledger)
        if reply["final"] and not faults.ignore_final_answer:
            return run.end("model_finished", final_output=reply["text"], ledger=ledger)
        if reply["final"]:  # the bug: the answer is taken for a progress note and the loop goes on
            incidents.append(("ignore_final_answer", step.idx))
            plan.answer_at = None
        for position, call in enumerate(step.calls):
            result = run_tool(call.name, call.args, rng, limits, faults, plan.tool_latency_scale, workspace)
            text = result["result"]
            tokens = estimate_tokens(text) if text else 0
            bounded = tokens > limits.result_bound_tokens
            if bounded:
                text, tokens = text[: limits.result_bound_tokens * 4], limits.result_bound_tokens
            clock.advance(result["ms"])
            if faults.drop_tool_result and position == len(step.calls) - 1 and turn == 2:
                faults.drop_tool_result = False  # the write was lost once, in this run
                incidents.append(("drop_tool_result", step.idx))
            else:
                run.tool_step(call, status=result["status"], result=text, ms=result["ms"], bounded=bounded,
                              result_tokens=tokens if text else None, error=result["error"])
                ledger["tool_results"] += 1
            context += tokens + 30
            if result["status"] == "error" and faults.retry_side_effects and TOOLS[call.name][0]:
                faults.retry_side_effects = False  # the harness retries the write with the same key
                retry = run_tool(call.name, call.args, rng, limits, faults, plan.tool_latency_scale, workspace)
                clock.advance(retry["ms"])
                incidents.append(("retry_side_effects", run.next_idx))
                run.tool_step(call, status="ok", result="wrote 1 file", ms=retry["ms"], result_tokens=4)
                ledger["tool_results"] += 1
                continue
            if result["status"] == "error" and plan.fatal_tool_at is not None:
                return run.end("tool_error", final_output=f"gave up: {call.name} failed: {result['error']}", ledger=ledger)
            fingerprint = (call.name, call.args_hash, sha256_text(text or ""))
            repeats = repeats + 1 if fingerprint == last_fingerprint else 1
            last_fingerprint = fingerprint
            if repeats >= limits.max_repeats and not TOOLS[call.name][1]:
                return run.end("identical_tool_results", ledger=ledger)
        if context > spec.compact_above:
            after = catalogue_tokens + 1200 + rng.randint(2000, 6000)
            run.event("compaction", tokens_before=context, tokens_after=after, detail="summarised older turns")
            context, model.cached = after, 0


def _budget_out(limits: Limits, turn: int, projected_tokens: int, cost: int, elapsed: float) -> str | None:
    """The stop reason of the first budget the next call would exhaust, checked before the call."""
    if turn + 1 >= limits.max_steps:
        return "max_steps"
    if projected_tokens >= limits.max_tokens:
        return "max_prompt_tokens"
    if cost >= limits.max_cost_micros:
        return f"cost limit (${limits.max_cost_micros / 1e6:g})"
    if elapsed >= limits.max_wall_seconds:
        return "max_wall_seconds"
    return None
