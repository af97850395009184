"""reconcile.testing: block one of seed 000's protocol as a kit a harness author runs in their own suite.

The harnesses under test: the three seed harnesses of ``tests/conformance`` (each journals itself),
the project's reference harness (``sample_runs/harness.py``, journals itself), and seed 000's code
exactly as the article prints it (``run_loop`` with its thread pool and ``time.monotonic``; it
journals nothing, so the kit journals for it) — every one holds, each declared ceiling also run alone
(every adapter takes `limits`). Deliberate breakages of that last one fail, each with the message that
names what broke — two of them (issue 57) only on a probe run with its ceiling alone. They all share one store
(``run_block_one_many``: one ingest, one check run), so the file stays fast.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT / "tests" / "conformance", ROOT / "sample_runs"):  # as pytest puts them for those tests
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

import harness as reference  # noqa: E402  (sample_runs/harness.py)
import harness_seed000 as seed000  # noqa: E402
import harness_seed001 as seed001  # noqa: E402
import harness_seed003 as seed003  # noqa: E402
from conformance_support import NIGHT, SimClock  # noqa: E402

from reconcile.testing import (BlockOne, BlockOneFailure, FakeClock, FenceNeverStopped, ScriptedModel,  # noqa: E402
                               ToolTimeout, WriteThenFail, answer, call, outcome_of, run_block_one_many, stub_tools)

pytest_plugins = ["reconcile.testing.plugin"]


# ---------------------------------------------------------------------------------------------
# Seed 000's fence as the article prints it (agent_budget.py), with three switches that break it.


class BudgetExceeded(RuntimeError):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Limits:
    max_steps: int = 12
    max_prompt_tokens: int = 60_000
    max_completion_tokens: int = 8_000
    max_wall_seconds: float = 900.0
    max_repeats: int = 2


@dataclass
class LimitsWithSpend(Limits):
    max_cost_usd: float = 0.01  # a spend ceiling beside seed 000's four (seed 001's fourth dimension)


@dataclass(frozen=True)
class Flaws:
    answer_overwritten: bool = False  # a final answer is taken for a progress note; the loop runs on
    late_fingerprint: bool = False  # the repeat check is off by one: a fourth identical result gets through
    no_wall_clock: bool = False  # Ledger.check has no wall-clock line
    no_step_check: bool = False  # Ledger.check has no max_steps line
    fingerprint_calls: bool = False  # the repeat fence fingerprints the call (tool and arguments), not its result
    last_call_prompt: bool = False  # max_prompt_tokens is compared with the last call's prompt, not the run's total
    # "first": a spend ceiling checked before every other line; "unchecked": declared only; "after": checked after
    # the model call instead of before it, against the spend before that call was charged (a stale check: the call
    # made once the ceiling is reached gets through, and the loop stops only after it)
    spend: str | None = None


PRICES = {"prompt": 3.0, "completion": 15.0}  # claude-sonnet-4-5, dollars per million tokens: the harness's price


@dataclass
class Ledger:
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    last_fingerprint: str = ""
    repeat_run: int = 0
    started: float = field(default_factory=time.monotonic)
    flaws: Flaws = field(default_factory=Flaws, repr=False)
    last_prompt: int = 0
    spent_usd: float = 0.0  # for the spend flaws only: not a counter seed 000's Ledger keeps

    @property
    def wall_seconds(self) -> float:
        return time.monotonic() - self.started

    def record_tool_result(self, payload: str) -> None:
        fp = hashlib.sha256(payload.encode()).hexdigest()[:16]
        self.repeat_run = self.repeat_run + 1 if fp == self.last_fingerprint else 1
        self.last_fingerprint = fp

    def check(self, limits: Limits) -> None:
        if self.flaws.spend == "first" and self.spent_usd >= limits.max_cost_usd:
            raise BudgetExceeded("max_cost_usd")
        if self.steps >= limits.max_steps and not self.flaws.no_step_check:
            raise BudgetExceeded("max_steps")
        if (self.last_prompt if self.flaws.last_call_prompt else self.prompt_tokens) >= limits.max_prompt_tokens:
            raise BudgetExceeded("max_prompt_tokens")
        if self.completion_tokens >= limits.max_completion_tokens:
            raise BudgetExceeded("max_completion_tokens")
        if self.wall_seconds >= limits.max_wall_seconds and not self.flaws.no_wall_clock:
            raise BudgetExceeded("max_wall_seconds")
        if self.repeat_run > limits.max_repeats + self.flaws.late_fingerprint:
            raise BudgetExceeded("identical_tool_results")


_POOL = concurrent.futures.ThreadPoolExecutor(max_workers=4)


def run_tool(fn, args, timeout_s):
    future = _POOL.submit(fn, **args)
    try:
        return future.result(timeout=timeout_s)
    except concurrent.futures.TimeoutError:
        return f"error: tool timed out after {timeout_s}s"
    except Exception as exc:  # a raising tool is data, not a crash
        return f"error: {type(exc).__name__}: {exc}"


def run_loop(model, registry, task, limits=Limits(), flaws=Flaws()):
    led, transcript = Ledger(flaws=flaws), [{"role": "user", "content": task}]
    while True:
        try:
            led.check(limits)
        except BudgetExceeded as stop:
            return {"stop": stop.reason, "ledger": led, "transcript": transcript}

        call = model(transcript)
        led.steps += 1
        led.prompt_tokens += call["usage"]["prompt"]
        led.completion_tokens += call["usage"]["completion"]
        led.last_prompt = call["usage"]["prompt"]
        if flaws.spend == "after" and led.spent_usd >= limits.max_cost_usd:  # before this call is charged
            return {"stop": "max_cost_usd", "ledger": led, "transcript": transcript}
        led.spent_usd += sum(call["usage"][k] * PRICES[k] for k in PRICES) / 1e6

        if call.get("final"):
            if not flaws.answer_overwritten:
                return {"stop": "model_finished", "ledger": led, "transcript": transcript}
            transcript.append({"role": "assistant", "content": call["text"]})
            continue

        name, args = call["tool"], call.get("args", {})
        fn = registry.get(name)
        result = (f"error: unknown tool {name!r}" if fn is None
                  else run_tool(fn, args, timeout_s=min(30.0, limits.max_wall_seconds)))
        led.record_tool_result(f"{name}{sorted(args.items())}" if flaws.fingerprint_calls else result)
        transcript.append({"role": "tool", "name": name, "content": result})


# Block one's wall clock: shorter than three 31 s tool timeouts, so the wall clock (not the repeat fence on
# the third identical timeout string) is what stops the hung tool — see docs/testing-your-harness.md.
BLOCK_ONE = Limits(max_wall_seconds=60)
# A spend ceiling above what seed 000's step and prompt ceilings let a probe spend ($0.16 by growing_history's last
# call before its prompt total passes 60,000): the step, prompt and completion ceilings stop every probe first.
SPEND_ABOVE = LimitsWithSpend(max_wall_seconds=60, max_cost_usd=0.50)


def as_written(flaws: Flaws = Flaws(), limits: Limits | None = None, lifted: bool = True) -> BlockOne:
    """Seed 000's code through block one, the kit journalling for it. The adapter takes ``limits``, so the kit can
    run each ceiling's probe with the others lifted; ``lifted=False``: an adapter that closes over them instead."""
    limits = limits or (LimitsWithSpend(max_wall_seconds=60) if flaws.spend else BLOCK_ONE)

    def loop(model, registry, limits=limits):  # the two-line adapter
        return run_loop(model, registry, "block one", limits, flaws)

    def closed(model, registry):  # the adapter without a `limits` parameter: the kit cannot lift its ceilings
        return run_loop(model, registry, "block one", limits, flaws)
    name = "-".join(k if v is True else f"{k}_{v}" for k, v in vars(flaws).items() if v) or "as-written"
    return BlockOne(loop if lifted else closed, limits=limits, patch_time=True,
                    agent=f"seed000-{name}" + ("" if lifted else "-unlifted"))


# ---------------------------------------------------------------------------------------------
# The conformance seeds and the reference harness: each journals itself; an adapter per interface.


def conformance_seed000() -> BlockOne:
    clock = SimClock(NIGHT)  # its run_tool catches the SimClock's own timeout

    def loop(model, registry, journal, limits=seed000.Limits(max_wall_seconds=60)):
        return seed000.run_loop(model, registry, "block one", limits, journal=journal, run_id=model.run_id,
                                clock=clock)
    return BlockOne(loop, journals_itself=True, clock=clock, agent="conformance-seed000")


SEED001_BUDGET = {"max_steps": 20, "max_tokens": 200_000, "max_seconds": 300, "max_cost_usd": 2.00}  # its defaults


def conformance_seed001() -> BlockOne:
    clock = SimClock(NIGHT)

    def loop(model, registry, journal, limits=SEED001_BUDGET):  # its Budget is its ledger too: a new one a run
        async def ask(messages, tools):  # the seed's `await model(messages, tools=…)`
            turn = model.next_turn(messages, tools=bool(tools))
            calls = [seed001.ToolCallRequest(f"toolu_{turn.number}", turn.tool, dict(turn.args))] if turn.tool else []
            note = turn.text or "; ".join(f"{c.name}({seed001.canonical(c.arguments)})" for c in calls)
            return seed001.Response(seed001.Message("assistant", note, calls or None), calls, turn.text or "",
                                    seed001.Usage(turn.prompt_tokens, turn.completion_tokens))

        def tool(fn):
            async def run(**args):
                return fn(**args)
            return run
        h = seed001.Harness(journal, clock, {n: tool(fn) for n, fn in registry.items()}, {"main": ask})
        return seed001.run_sync("block one", seed001.Budget(**limits, clock=clock.monotonic), h, model.run_id)
    return BlockOne(loop, journals_itself=True, clock=clock, tool_timeouts=False, agent="conformance-seed001")


def conformance_seed003() -> BlockOne:
    clock = SimClock(NIGHT)

    class Model:  # the seed's ctx.model.call(messages, tools)
        def __init__(self, kit):
            self.kit, self.id, self.latency = kit, kit.name, 1.0

        def call(self, messages, tools):
            turn = self.kit.next_turn(prompt_tokens=seed003.context_tokens(messages))
            tool = {"name": turn.tool, "args": dict(turn.args)} if turn.tool else None
            return seed003.ModelResponse("tool_use" if tool else "end_turn", turn.text or "", tool,
                                         {"inputTokens": turn.prompt_tokens, "outputTokens": turn.completion_tokens},
                                         self.id, turn.seconds * 1000)

    def loop(model, registry, journal, limits=seed003.Budgets()):
        tools = {n: seed003.ToolDef(n, {"required": []}, lambda args, fn=fn: fn(**args),
                                    side_effect=n == "raise_after_write") for n, fn in registry.items()}
        fake = Model(model)
        return seed003.runAgent(seed003.RunCtx(runId=model.run_id, budgets=limits, model=fake,
                                               fallbackModel=fake, toolSubset=tools, clock=clock, journal=journal))
    return BlockOne(loop, journals_itself=True, clock=clock, tool_timeouts=False, agent="conformance-seed003")


# Its wall clock below four 31 s timeouts (its no-progress detector fires on the fourth identical call).
# Twelve steps: a dozen short lookups stay under its 60,000 tokens, so the step ceiling is the one they reach.
# $2: above what the token ceiling lets the probes spend, and reached by long_answers alone in three calls.
REFERENCE_LIMITS = reference.Limits(max_steps=12, max_tokens=60_000, max_wall_seconds=60, max_cost_micros=2_000_000)


def reference_harness() -> BlockOne:
    clock = FakeClock(NIGHT)

    def loop(model, registry, journal, limits=REFERENCE_LIMITS):
        class Model:  # fakes.FakeModel's interface, answered by the kit's scripted model
            def __init__(self, name, rng):
                self.name, self.cached = name, 0

            def call(self, turn, context, plan, wrap_up):
                t = model.next_turn(prompt_tokens=context, tools=not wrap_up)
                return {"usage": {"input_uncached": t.prompt_tokens, "output": t.completion_tokens},
                        "calls": [(t.tool, dict(t.args))] if t.tool else [], "final": t.final, "text": t.text,
                        "ms": t.seconds * 1000, "finish_reason": "tool_use" if t.tool else "end_turn", "error": None}

        def simulate_tool(name, args, rng, scale, workspace, outage):  # the registry's stub, timed on the clock
            began = clock.monotonic()
            result = registry[name](**args)
            return {"status": "ok", "result": result, "ms": (clock.monotonic() - began) * 1000, "error": None}

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(reference, "FakeModel", Model)
            patch.setattr(reference, "simulate_tool", simulate_tool)
            # its catalogue: the kit's every tool (the probes' lookup, read_log and poll besides the four stubs)
            patch.setattr(reference, "MISBEHAVING", tuple(registry))
            patch.setattr(reference, "TOOLS", {**reference.TOOLS, **{n: (n == "raise_after_write", False, 100)
                                                                    for n in registry if n not in reference.TOOLS}})
            reference.run_agent(journal, reference.RunSpec(
                model.run_id, "reference", "block_one", model.name, "anthropic", limits,
                reference.Plan(answer_at=None, tools=[]), clock.utc(), seed=7))
    return BlockOne(loop, journals_itself=True, clock=clock, agent="reference")


def no_fence() -> BlockOne:
    def loop(model, registry):
        while True:  # no budget at all: only the model's cap ends it
            turn = model([])
            registry[turn["tool"]](**turn["args"])
    return BlockOne(loop, cap=20, stubs=("ok_forever",), agent="no-fence")


HARNESSES = {"seed000-as-written": as_written, "conformance-seed000": conformance_seed000,
             "conformance-seed001": conformance_seed001, "conformance-seed003": conformance_seed003,
             "reference": reference_harness,
             "answer_overwritten": lambda: as_written(Flaws(answer_overwritten=True)),
             "late_fingerprint": lambda: as_written(Flaws(late_fingerprint=True)),
             "no_wall_clock": lambda: as_written(Flaws(no_wall_clock=True)), "no_fence": no_fence,
             # issue 47: four broken fences the four stubs let through, and a correct one that checks spend first
             "no_step_check": lambda: as_written(Flaws(no_step_check=True)),
             "fingerprint_calls": lambda: as_written(Flaws(fingerprint_calls=True)),
             "last_call_prompt": lambda: as_written(Flaws(last_call_prompt=True)),
             "spend_unchecked": lambda: as_written(Flaws(spend="unchecked")),
             "spend_first": lambda: as_written(Flaws(spend="first")),
             # issue 57: two fences the probes above never reach first, with seed 000's limits and a spend ceiling
             "last_call_prompt_spend": lambda: as_written(Flaws(last_call_prompt=True, spend="first")),
             "spend_after": lambda: as_written(Flaws(spend="after"), SPEND_ABOVE),
             "spend_after_unlifted": lambda: as_written(Flaws(spend="after"), SPEND_ABOVE, lifted=False),
             "spend_beyond_reach": lambda: beyond_reach()}


def beyond_reach() -> BlockOne:
    """A correct spend ceiling of $1,000: long_answers alone does not reach it in the model's ten calls."""
    protocol = as_written(Flaws(spend="first"), LimitsWithSpend(max_wall_seconds=60, max_cost_usd=1000.0))
    protocol.stubs, protocol.cap, protocol.agent = ("long_answers",), 10, "seed000-spend-beyond-reach"
    return protocol


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Every harness through block one, reconciled in one store."""
    root = tmp_path_factory.mktemp("block-one")
    protocols = []
    for name, make in HARNESSES.items():
        protocol = make()
        protocol.workdir = root / name
        protocols.append(protocol)
    return dict(zip(HARNESSES, run_block_one_many(protocols, root)))


def failure(reports, name: str) -> str:
    with pytest.raises(BlockOneFailure) as caught:
        reports[name].assert_holds()
    return str(caught.value)


# ---- the harnesses that hold, and the stop each seed's style gives for each stub

SEED000 = {"ok_forever": "identical_tool_results", "big_output": "max_prompt_tokens", "sleep": "max_wall_seconds",
           "raise_after_write": "model_finished", "lookup_forever": "max_steps", "long_answers": "max_completion_tokens",
           "growing_history": "max_prompt_tokens", "ok_varied": "identical_tool_results", "poll": "max_steps"}
LOOP = "repeated the same tool calls 3 times without progress"
STOPS = {
    "seed000-as-written": SEED000,
    "conformance-seed000": SEED000,
    "conformance-seed001": {"ok_forever": LOOP, "big_output": "token limit (200,000)", "sleep": "time limit (300s)",
                            "raise_after_write": None,  # complete: the seed gives no reason
                            "lookup_forever": "step limit (20)", "long_answers": "cost limit ($2.00)",
                            "growing_history": "token limit (200,000)", "ok_varied": "step limit (20)", "poll": LOOP},
    "conformance-seed003": {"ok_forever": "stalled", "big_output": "budget_exceeded", "sleep": "timed_out",
                            "raise_after_write": "succeeded", "lookup_forever": "budget_exceeded",
                            "long_answers": "budget_exceeded", "growing_history": "budget_exceeded",
                            "ok_varied": "budget_exceeded", "poll": "stalled"},
    "reference": None,  # sample_runs/harness.py words its stops as it likes; held to the statuses only
}
# seed 000 fingerprints results: the varied calls that all answer "ok" stall it, the poll does not; seeds 001 and
# 003 (and the reference harness) fingerprint calls: the other way round
RESULTS, CALLS = ("stalled", "budget_exceeded"), ("budget_exceeded", "stalled")
# each declared ceiling's probe again, the other ceilings lifted (every adapter takes `limits`): the stop it gives
SEED000_ALONE = {"lookup_forever, max_steps alone": "max_steps",
                 "growing_history, max_prompt_tokens alone": "max_prompt_tokens",
                 "long_answers, max_completion_tokens alone": "max_completion_tokens",
                 "sleep, max_wall_seconds alone": "max_wall_seconds"}
ALONE = {
    "seed000-as-written": SEED000_ALONE,
    "conformance-seed000": SEED000_ALONE,
    "conformance-seed001": {"lookup_forever, max_steps alone": "step limit (20)",  # its Budget's own field names
                            "growing_history, max_tokens alone": "token limit (200,000)",
                            "sleep, max_seconds alone": "time limit (300s)",
                            "long_answers, max_cost_usd alone": "cost limit ($2.00)"},
    "conformance-seed003": {"lookup_forever, maxSteps alone": "budget_exceeded",
                            "growing_history, maxTokens alone": "budget_exceeded",
                            "sleep, wallClockMs alone": "timed_out"},
    "reference": {"lookup_forever, max_steps alone": "max_steps", "growing_history, max_tokens alone": "max_tokens",
                  "sleep, max_wall_seconds alone": "max_wall_seconds",
                  "long_answers, max_cost_micros alone": "cost limit ($2)"},
}


@pytest.mark.parametrize("name", STOPS)
def test_seed_and_reference_harnesses_hold(reports, name):
    report = reports[name].assert_holds()
    stubs = [s for s in report.stubs.values() if s.alone is None]
    assert STOPS[name] is None or {s.stub: s.stop_reason for s in stubs} == STOPS[name]
    varied = RESULTS if "seed000" in name else CALLS
    assert [s.status for s in stubs] == ["stalled", "budget_exceeded", "timed_out", "succeeded", "budget_exceeded",
                                         "budget_exceeded", "budget_exceeded", *varied]
    alone = {s.stub: s.stop_reason for s in report.stubs.values() if s.alone is not None}
    assert alone == ALONE[name]
    assert [s.status for s in report.stubs.values() if s.alone is not None] == [
        "timed_out" if "sleep" in stub else "budget_exceeded" for stub in alone]
    assert not any(s.findings for s in report.stubs.values())
    assert not report.notes or all("tool_timeouts=False" in n for n in report.notes)  # every fence exercised


def test_raise_after_write_is_a_warning_not_a_failure(reports):
    warned = reports["conformance-seed000"].stubs["raise_after_write"].warnings
    assert warned and warned[0].startswith("no_failed_side_effects")


def test_seed000_as_written_times_out_in_its_thread_pool(reports):
    """The article's run_loop, unchanged, with a two-line adapter: a real thread pool, time.monotonic patched."""
    sleep = reports["seed000-as-written"].stubs["sleep"]
    assert (sleep.stop_reason, sleep.timeouts) == ("max_wall_seconds", 2)  # two 30 s pool timeouts, then 60 s


def test_the_pytest_plugin_runs_block_one_in_the_tests_folder(fence_protocol, tmp_path, monkeypatch):
    # the protocol itself is what the shared fixture runs; here, the fixture's wiring (no second store)
    from reconcile.testing import plugin

    made = []

    class Protocol:
        def __init__(self, loop, **options):
            made.append(options)

        def run(self):
            if len(made) == 2:
                raise BlockOneFailure(reports_failed())
            return "the report"

    def reports_failed():
        from reconcile.testing import BlockOneReport, StubOutcome
        return BlockOneReport({"sleep": StubOutcome("sleep", "max_wall_seconds (timed_out)",
                                                    problems=["the fence never stopped the loop after 200 calls"])},
                              tmp_path, tmp_path / "store.duckdb")

    monkeypatch.setattr(plugin, "BlockOne", Protocol)
    assert fence_protocol(run_loop, limits=BLOCK_ONE, patch_time=True) == "the report"
    assert made[0] == {"workdir": tmp_path / "block-one-1", "limits": BLOCK_ONE, "patch_time": True}
    with pytest.raises(AssertionError, match="- sleep: the fence never stopped the loop after 200 calls"):
        fence_protocol(run_loop)
    assert made[1]["workdir"] == tmp_path / "block-one-2"


# ---- deliberately broken harnesses fail, with the message that names the breakage


def test_answer_overwritten_fails(reports):
    message = failure(reports, "answer_overwritten")
    assert "block one failed for 1 of 13 stub(s)" in message  # the nine, and four probes with their ceiling alone
    assert "- raise_after_write: stopped with 'max_steps' (budget_exceeded) as expected, but block four does not hold" \
        in message
    assert "final_answer_not_overwritten, step 2: final answer at step 2, then 10 more model step(s)" in message
    assert "remedy: the harness must end the loop on the model's final answer" in message


def test_late_fingerprint_fails(reports):
    message = failure(reports, "late_fingerprint")
    assert "block one failed for 2 of 13 stub(s)" in message  # ok_forever, and ok_varied: both loop on "ok"
    assert "- ok_forever: stopped with 'identical_tool_results' (stalled) as expected, but" in message
    assert "loop_stopped_at_limit, step 5: its results_in_a_row loop detector (limit 2) fired here" in message
    assert "but the run made 1 more model call(s)" in message


def test_no_wall_clock_fails(reports):
    message = failure(reports, "no_wall_clock")
    assert "block one failed for 2 of 13 stub(s)" in message  # sleep, and sleep with the wall clock alone
    assert ("- sleep: expected max_wall_seconds (timed_out); the loop stopped with 'identical_tool_results' (stalled) "
            "only after calls past the wall clock (max_wall_seconds): that fence let them through") in message
    assert ("budgets_enforced, step 4: the fence should have stopped the run before this model call: it started "
            "62.000 s in, with a wall clock of 60 s") in message
    assert "stalled_runs_detected" not in message  # the three timeouts are identical results: the stall was real


def test_no_step_check_fails_naming_the_step_ceiling(reports):
    message = failure(reports, "no_step_check")
    assert "block one failed for 3 of 13 stub(s)" in message  # the endless lookups and poll, and the lookups alone
    assert ("- lookup_forever: expected max_steps (budget_exceeded, timed_out); the loop stopped with "
            "'max_wall_seconds' (timed_out) only after calls past the step ceiling (max_steps)") in message
    assert "12 charged call(s) already made, with max_steps 12" in message
    assert ("- lookup_forever, max_steps alone: expected max_steps alone (budget_exceeded); the fence never stopped "
            "the loop after 200 calls, though the step ceiling (max_steps) was reached: that fence never fired") \
        in message


def test_a_repeat_fence_on_calls_instead_of_results_fails_naming_the_detector(reports):
    message = failure(reports, "fingerprint_calls")
    assert "block one failed for 2 of 13 stub(s)" in message
    assert ("- ok_varied: expected identical_tool_results (stalled); the loop stopped with 'max_steps' "
            "(budget_exceeded): the same result came back each time and the repeat fence did not see it") in message
    assert "loop_stopped_at_limit, step 5: its results_in_a_row loop detector (limit 2) fired here" in message
    assert ("- poll: expected a budget stop: each result differs, so a results fingerprint sees no loop "
            "(budget_exceeded, timed_out); the loop stopped with 'identical_tool_results' (stalled)") in message
    assert "stalled_runs_detected: ended stalled (identical_tool_results), but its results_in_a_row" in message


def test_a_prompt_ceiling_held_to_the_last_call_fails_naming_it(reports):
    message = failure(reports, "last_call_prompt")
    assert "block one failed for 2 of 13 stub(s)" in message  # growing_history, and it with its ceiling alone
    assert ("- growing_history: expected max_prompt_tokens (budget_exceeded); the loop stopped with 'max_steps' "
            "(budget_exceeded) only after calls past the prompt-token ceiling (max_prompt_tokens)") in message
    assert "prompt tokens already spent, with max_prompt_tokens 60,000" in message


def test_a_declared_spend_ceiling_never_checked_fails_naming_it(reports):
    message = failure(reports, "spend_unchecked")
    assert ("- lookup_forever: expected max_steps (budget_exceeded, timed_out); the loop stopped with 'max_steps' "
            "(budget_exceeded) only after calls past the spend ceiling (max_cost_micros)") in message
    assert "already spent, with a spend ceiling of $0.0100" in message


def test_a_spend_ceiling_checked_before_the_token_ceilings_holds(reports):
    """Seed 000's table names the ceiling each stub should reach; when several are reached at one check, which the
    fence names is its own order (seed 001 checks tokens before cost, seed 003 the deadline first): any ceiling the
    run declares and had reached is a right stop. A probe whose own ceiling was never reached is noted."""
    report = reports["spend_first"].assert_holds()
    assert report.stubs["big_output"].stop_reason == "max_cost_usd"  # both reached: spend is checked first
    assert any(n.startswith("lookup_forever was stopped by the spend ceiling (max_cost_micros) before the step "
                            "ceiling (max_steps) was reached: that fence was not exercised") for n in report.notes)
    # and each ceiling the spend ceiling pre-empted was run alone, with the others lifted: every one of them held
    assert ("growing_history was stopped by the spend ceiling (max_cost_micros) before the prompt-token ceiling "
            "(max_prompt_tokens) was reached: that fence was not exercised there; 'growing_history, max_prompt_tokens "
            "alone' exercised it with the other ceilings lifted") in report.notes
    assert {s.stub: s.stop_reason for s in report.stubs.values() if s.alone} == {
        **SEED000_ALONE, "long_answers, max_cost_usd alone": "max_cost_usd"}


# ---- issue 57: a ceiling no probe reaches first is run alone, with every other ceiling lifted


def test_a_prompt_ceiling_held_to_the_last_call_fails_though_the_spend_ceiling_stops_its_probe_first(reports):
    """Seed 000's limits and a spend ceiling: the spend ceiling stops growing_history two calls in, long before the
    prompt total passes 60,000, so the probe alone (spend, steps, completions, wall clock lifted) is what fails."""
    message = failure(reports, "last_call_prompt_spend")
    assert "block one failed for 1 of 14 stub(s)" in message
    assert ("- growing_history, max_prompt_tokens alone: expected max_prompt_tokens alone (budget_exceeded); the loop "
            "stopped with 'max_prompt_tokens' (budget_exceeded) only after calls past the prompt-token ceiling "
            "(max_prompt_tokens): that fence let them through") in message
    assert ("budgets_enforced, step 12: the fence should have stopped the run before this model call: 76,374 prompt "
            "tokens already spent, with max_prompt_tokens 60,000") in message
    report = reports["last_call_prompt_spend"]
    assert report.stubs["growing_history"].passed  # the probe itself: stopped by the spend ceiling, which held
    assert report.stubs["growing_history, max_prompt_tokens alone"].probe == "growing_history"


def test_a_spend_ceiling_checked_after_the_call_fails_alone(reports):
    """Seed 000's limits and a $0.50 spend ceiling, checked after each model call against the spend before that call
    was charged: the step, prompt and completion ceilings stop every probe first; long_answers alone (its first
    call spends $0.75) is let one call past it."""
    message = failure(reports, "spend_after")
    assert "block one failed for 1 of 14 stub(s)" in message
    assert ("- long_answers, max_cost_usd alone: expected max_cost_usd alone (budget_exceeded); the loop stopped with "
            "'max_cost_usd' (budget_exceeded) only after calls past the spend ceiling (max_cost_micros): that fence "
            "let them through") in message
    assert ("budgets_enforced, step 2: the fence should have stopped the run before this model call: $0.7512 already "
            "spent, with a spend ceiling of $0.5000") in message
    assert all(s.passed for s in reports["spend_after"].stubs.values() if s.alone is None)  # the nine hold


def test_a_loop_without_a_limits_parameter_is_not_lifted_and_the_report_says_how(reports):
    report = reports["spend_after_unlifted"].assert_holds()  # the same fault, its adapter closing over its limits
    assert len(report.stubs) == 9
    assert ("the spend ceiling (max_cost_micros) stopped no probe: block one did not exercise it on its own — the "
            "loop takes no `limits` keyword: give it one (loop(model, registry, limits=…), passing them to your loop) "
            "and the kit runs each declared ceiling's probe again with the others lifted") in report.notes


def test_a_ceiling_beyond_the_probes_reach_is_noted_not_failed(reports):
    report = reports["spend_beyond_reach"].assert_holds()
    assert report.stubs["long_answers, max_cost_usd alone"].stop == "never stopped (10 calls)"
    assert ("long_answers, max_cost_usd alone: 10 calls did not reach the spend ceiling (max_cost_micros), so it was "
            "not exercised — lower it for block one, or raise cap=") in report.notes


def test_the_limits_are_the_adapters_default_unless_given():
    def loop(model, registry, limits=BLOCK_ONE):
        return run_loop(model, registry, "block one", limits)
    protocol = BlockOne(loop)
    assert (protocol.run_limits, protocol.passes_limits, protocol.unlifted()) == (BLOCK_ONE, True, None)
    assert protocol.limits == {"max_steps": 12, "max_prompt_tokens": 60_000, "max_completion_tokens": 8_000,
                               "max_wall_seconds": 60, "max_repeats": 2}  # declared on the kit's journal
    assert BlockOne(loop, limits=SPEND_ABOVE).limits["max_cost_micros"] == 500_000
    assert BlockOne(loop, journals_itself=True, limits=SPEND_ABOVE).limits == {}  # handed over, not declared
    assert "takes no `limits` keyword" in BlockOne(lambda model, registry: None, limits=BLOCK_ONE).unlifted()
    with pytest.raises(ValueError, match="handed to a loop that takes a `limits` keyword"):
        BlockOne(lambda model, registry, journal: None, journals_itself=True, limits=BLOCK_ONE)


def test_lift_keeps_one_ceiling_and_the_rest_of_the_limits():
    from reconcile.testing.protocol import LIFTED, ceilings, journal_limits, lifted as lift
    assert ceilings(SPEND_ABOVE) == {"max_steps": ["max_steps"], "max_prompt_tokens": ["max_prompt_tokens"],
                                     "max_completion_tokens": ["max_completion_tokens"],
                                     "max_wall_seconds": ["max_wall_seconds"], "max_cost_micros": ["max_cost_usd"]}
    alone = lift(SPEND_ABOVE, "max_prompt_tokens")
    assert type(alone) is LimitsWithSpend and SPEND_ABOVE.max_steps == 12  # a copy: the original is untouched
    assert (alone.max_prompt_tokens, alone.max_repeats) == (60_000, 2)  # its ceiling, and the loop detector, kept
    assert (alone.max_steps, alone.max_wall_seconds, alone.max_cost_usd) == (LIFTED, LIFTED, LIFTED / 1e6)
    assert journal_limits(alone)["max_cost_micros"] == LIFTED
    assert lift(SEED001_BUDGET, "max_wall_seconds") == {"max_steps": LIFTED, "max_tokens": LIFTED, "max_seconds": 300,
                                                        "max_cost_usd": LIFTED / 1e6}
    budgets = seed003.Budgets()  # seed 003's names: the wall clock in milliseconds
    assert journal_limits(budgets) == {"max_steps": 25, "max_tokens": 400_000, "max_wall_seconds": 600}
    assert lift(budgets, "max_steps").wallClockMs == LIFTED * 1000 and lift(budgets, "max_steps").maxRetries == 3


def test_a_loop_without_a_fence_ends_with_a_clear_failure(reports):
    message = failure(reports, "no_fence")
    assert "- ok_forever: expected identical_tool_results (stalled); the fence never stopped the loop after 20 calls" \
        in message


# ---- the pieces: stubs, clock, scripted model, results


@pytest.mark.parametrize("stub, status, stop, timeouts, file, message", [
    ("big_output", "budget_exceeded", "max_steps", 0, None,
     "names the steps limit, not prompt_tokens or tokens: another fence did this fence's job"),
    ("sleep", "timed_out", "time limit (300s)", 0, None,
     "but no call of sleep timed out: the loop waited each one out"),
    ("raise_after_write", "succeeded", "model_finished", 0, False,
     "the file does not exist, so the stub was never called"),
    ("ok_forever", "budget_exceeded", "max_steps", 0, None,
     "expected identical_tool_results (stalled); the loop stopped with 'max_steps' (budget_exceeded)"),
])
def test_each_wrong_stop_says_what_it_is(stub, status, stop, timeouts, file, message):
    from reconcile.testing import EXPECTATIONS
    assert message in EXPECTATIONS[stub].problem(status, stop, timeouts, True, file)


def test_each_seed_style_stop_is_the_right_one():  # judged through reconcile.store.status, in each seed's words
    from reconcile.store.status import map_stop_reason
    from reconcile.testing import EXPECTATIONS
    for stub, stops in {"ok_forever": ("repeated the same tool calls 3 times without progress", "stalled"),
                        "big_output": ("token limit (200,000)", "budget_exceeded", "max_tokens"),
                        "sleep": ("time limit (300s)", "timed_out", "max_wall_seconds")}.items():
        for stop in stops:
            assert EXPECTATIONS[stub].problem(map_stop_reason(stop), stop, 1, True, None) is None, (stub, stop)



def test_raise_after_write_leaves_its_file(tmp_path):
    tools = stub_tools(FakeClock(), tmp_path)
    with pytest.raises(WriteThenFail):
        tools["raise_after_write"](path="out/payout.csv")
    assert (tmp_path / "out" / "payout.csv").read_text() == "id,amount\n1,100\n"


def test_sleep_spends_the_clock_not_real_time(tmp_path):
    clock = FakeClock()
    before, real = clock.utc(), time.monotonic()
    assert stub_tools(clock, tmp_path)["sleep"](seconds=300) == "slept 300s"
    assert (clock.utc() - before).total_seconds() == 300
    assert time.monotonic() - real < 1
    with clock.deadline(30), pytest.raises(ToolTimeout):  # the simulated future.result(timeout=30)
        stub_tools(clock, tmp_path)["sleep"]()
    assert (clock.utc() - before).total_seconds() == 330


def test_patched_pool_times_out_on_the_clock(tmp_path):
    clock = FakeClock()
    sleep = stub_tools(clock, tmp_path)["sleep"]
    real = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(2) as pool, clock.patched():
        started = time.monotonic()
        with pytest.raises(concurrent.futures.TimeoutError):
            pool.submit(sleep, seconds=300).result(timeout=30)
        assert time.monotonic() - started == pytest.approx(30)  # the wait, on the clock
        assert pool.submit(sleep, seconds=5).result(timeout=30) == "slept 5s"  # fits the wait: it finishes
        with pytest.raises(concurrent.futures.TimeoutError):
            pool.submit(sleep, seconds=300).result(timeout=30)
        queued = pool.submit(sleep, seconds=1)
        with pytest.raises(concurrent.futures.TimeoutError):  # both workers hung: the call never starts
            queued.result(timeout=30)
        assert queued.cancelled()
    assert clock.elapsed == pytest.approx(95)  # the hung workers were let go when the patch ended, unspent
    assert time.monotonic() - real < 2


def test_scripted_model_reports_usage_and_stops_at_its_cap():
    clock = FakeClock()
    model = ScriptedModel([call("read_file", path="a.py"), answer("done")], clock=clock, cap=3,
                          then=call("ok_forever"))
    first = model([{"content": "x" * 400}])  # 100 tokens of transcript, 400 of system prompt
    assert first == {"tool": "read_file", "args": {"path": "a.py"}, "usage": {"prompt": 500, "completion": 60},
                     "request_id": "req_block-one-scripted_1"}
    assert model([])["final"] is True
    assert clock.elapsed == 2.0
    model([])
    with pytest.raises(FenceNeverStopped, match="never stopped the loop after 3 calls"):
        try:
            model([])
        except Exception:  # a harness's "a raising tool is data" cannot swallow it
            pytest.fail("FenceNeverStopped was caught by except Exception")


def test_outcome_of_reads_each_seeds_result():
    led = Ledger(steps=3, prompt_tokens=900, completion_tokens=120)
    assert outcome_of({"stop": "max_steps", "ledger": led}).ledger == {"steps": 3, "input_tokens": 900,
                                                                         "output_tokens": 120}
    budget = seed001.Budget(steps=2, tokens=500, cost_usd=0.0125)
    result = outcome_of(seed001.Result("incomplete", "summary", budget, stopped_by="step limit (20)"))
    assert (result.status, result.stop_reason, result.ledger) == ("incomplete", "step limit (20)",
                                                                   {"steps": 2, "tokens": 500, "cost_micros": 12500})
    assert outcome_of("timed_out").stop_reason == "timed_out"


def test_core_modules_do_not_import_pytest():
    code = "import sys, reconcile.testing; assert 'pytest' not in sys.modules, 'reconcile.testing imported pytest'"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
