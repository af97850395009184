"""Seed 000 ("48 Hours to Prove Your Agent Loop Terminates"), transcribed, journalled with reconcile.journal.

The fence is the seed's code: ``BudgetExceeded``, ``Limits``, ``Ledger`` (same fields, same check
order, ``>=`` on the four ceilings and ``>`` on ``max_repeats``: with ``max_repeats=2`` the third
identical result in a row is the stop), ``run_tool`` (a raising tool is data, a timeout is a
string) and ``run_loop`` (the budget is checked *before* each call; the stop reason is returned,
not raised). What this file adds, marked ``# journal:``, is what the seed's author would write to
keep a run journal: one ``model_step`` per model call, one ``tool_step`` per tool result (a
side-effecting call gets ``tool_started`` first), and ``end`` with the seed's own stop strings
(``model_finished``, ``max_steps``, ``identical_tool_results`` …) and its ``Ledger``.

Made deterministic: the model is a scripted fake, ``time.monotonic`` is a simulated clock injected
into the ``Ledger``, and the thread pool's ``future.result(timeout=…)`` is the clock's deadline
(a hung tool advances the clock to the timeout instead of blocking). ``Faults`` holds the switches
that plant the defects the reconciliation should find; all off, this is the seed's harness.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance_support import SimClock, SimTimeout
from reconcile.journal import Journal, estimate_tokens

MODEL = "claude-sonnet-4-5"  # what the fake model says it is (a priced model, so cost checks can judge)


class BudgetExceeded(RuntimeError):
    """Raised *before* a call is made, never after."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass
class Limits:
    max_steps: int = 12
    max_prompt_tokens: int = 60_000
    max_completion_tokens: int = 8_000
    max_wall_seconds: float = 900.0
    max_repeats: int = 2          # identical tool results in a row


@dataclass
class Faults:
    """Planted defects. All False: the seed's harness as written."""

    ignore_final: bool = False       # the loop misses the model's final answer and runs on to a budget stop
    ledger_drift: bool = False       # completion tokens are added below the final-answer return
    lose_result_at: int = 0          # this tool result (1-based) is never journalled
    late_detector: bool = False      # the repeat check lets one more identical result through
    misread_final: bool = False      # the answer is missed, and journalled as the loop saw it: final=False


@dataclass
class Ledger:
    steps: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    last_fingerprint: str = ""
    repeat_run: int = 0
    # The seed has ``started: float = field(default_factory=time.monotonic)`` and calls
    # ``time.monotonic()`` in ``wall_seconds``; the clock is injected instead (the only change).
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    started: float | None = None
    faults: Faults = field(default_factory=Faults, repr=False)

    def __post_init__(self) -> None:
        if self.started is None:
            self.started = self.clock()

    @property
    def wall_seconds(self) -> float:
        return self.clock() - self.started

    def record_tool_result(self, payload: str) -> None:
        fp = hashlib.sha256(payload.encode()).hexdigest()[:16]
        self.repeat_run = self.repeat_run + 1 if fp == self.last_fingerprint else 1
        self.last_fingerprint = fp

    def check(self, limits: Limits) -> None:
        if self.steps >= limits.max_steps:
            raise BudgetExceeded("max_steps")
        if self.prompt_tokens >= limits.max_prompt_tokens:
            raise BudgetExceeded("max_prompt_tokens")
        if self.completion_tokens >= limits.max_completion_tokens:
            raise BudgetExceeded("max_completion_tokens")
        if self.wall_seconds >= limits.max_wall_seconds:
            raise BudgetExceeded("max_wall_seconds")
        max_repeats = limits.max_repeats + 1 if self.faults.late_detector else limits.max_repeats  # FAULT switch
        if self.repeat_run > max_repeats:
            raise BudgetExceeded("identical_tool_results")


def run_tool(fn, args, timeout_s, clock: SimClock):
    # The seed: future = _POOL.submit(fn, **args); future.result(timeout=timeout_s). Simulated: the
    # tool runs on the clock, and a sleep past the deadline comes back as the timeout.
    try:
        with clock.deadline(timeout_s):
            return fn(**args)
    except SimTimeout:
        return f"error: tool timed out after {timeout_s}s"
    except Exception as exc:  # a raising tool is data, not a crash
        return f"error: {type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------------------------
# The four stub tools of the seed's table, plus one healthy tool so a run has work to do.

SIDE_EFFECTS = {"raise_after_write"}  # journal: the catalogue says which tools change the world


def stub_tools(clock: SimClock, workdir: Path) -> dict[str, Callable[..., str]]:
    def ok_forever(**_ignored: Any) -> str:
        # "always returns ok" — whatever it is asked (so varied calls return the same result)
        clock.sleep(0.1)
        return "ok"

    def big_output() -> str:
        clock.sleep(0.5)
        line = "2026-11-28T22:00:00Z INFO request served path=/api/v1/items status=200 bytes=5120\n"
        return line * 4000  # ~330 KB: a log dump

    def sleep(seconds: float = 300) -> str:
        clock.sleep(seconds)  # a hung dependency: past the tool timeout this never returns
        return f"slept {seconds}s"

    def raise_after_write(path: str = "partial.csv") -> str:
        clock.sleep(0.3)
        (workdir / path).write_text("id,amount\n1,100\n", encoding="utf-8")  # the side effect happens ...
        raise ConnectionError("upstream closed the connection after the write")  # ... then the call fails

    def read_file(path: str) -> str:
        clock.sleep(0.2)
        return f"# {path}\n" + "".join(f"line {i} of {path}\n" for i in range(20))

    return {"ok_forever": ok_forever, "big_output": big_output, "sleep": sleep,
            "raise_after_write": raise_after_write, "read_file": read_file}


class ScriptedModel:
    """The fake model: returns the next call of its script, ``{"tool", "args"}`` or ``{"final", "text"}``.

    Usage is what a provider would report: the prompt is the transcript sent (4 bytes a token plus
    a fixed system prompt), the completion the script's (default 60 tokens); each call takes
    ``latency`` seconds of the simulated clock. When the script runs out, ``then`` repeats.
    """

    SYSTEM_TOKENS = 400

    def __init__(self, script: list[dict], clock: SimClock, then: dict | None = None, latency: float = 1.0):
        self.script, self.clock, self.then, self.latency = list(script), clock, then, latency
        self.name = MODEL

    def __call__(self, transcript: list[dict]) -> dict:
        item = dict(self.script.pop(0) if self.script else self.then)
        prompt = self.SYSTEM_TOKENS + sum(estimate_tokens(m["content"]) for m in transcript)
        self.clock.sleep(item.pop("latency", self.latency))
        item["usage"] = {"prompt": prompt, "completion": item.pop("completion", 60)}
        return item


# --------------------------------------------------------------------------------------------
# The loop. Lines marked "journal:" are the run journal the seed's author would add.


def run_loop(model, registry, task, limits=Limits(), *, journal: Journal, run_id: str, clock: SimClock,
             faults: Faults = Faults()):
    led, transcript = Ledger(clock=clock.monotonic, faults=faults), [{"role": "user", "content": task}]
    timeout_s = min(30.0, limits.max_wall_seconds)
    # journal: the run's fence, its catalogue, and its loop detector (identical results in a row)
    run = journal.start_run(
        run_id, agent="seed000", model=model.name, provider="anthropic", task_class="fence_test",
        limits={"max_steps": limits.max_steps, "max_prompt_tokens": limits.max_prompt_tokens,
                "max_completion_tokens": limits.max_completion_tokens,
                "max_wall_seconds": limits.max_wall_seconds, "max_repeats": limits.max_repeats,
                "tool_timeout_seconds": timeout_s},
        tools=[{"name": name, "side_effect": name in SIDE_EFFECTS} for name in registry],
        loop_detector={"kind": "results_in_a_row", "limit": limits.max_repeats}, fence="seed000")
    results_journalled = 0
    while True:
        try:
            led.check(limits)
        except BudgetExceeded as stop:
            run.end(stop.reason, ledger=_ledger(led))  # journal: the seed's stop string, raw
            return {"stop": stop.reason, "ledger": led, "transcript": transcript, "run": run}

        sent, t0, m0 = list(transcript), clock.utc(), clock.monotonic()
        call = model(transcript)      # {"tool": ..., "args": {...}, "usage": {...}}
        led.steps += 1
        led.prompt_tokens += call["usage"]["prompt"]
        if not faults.ledger_drift:
            led.completion_tokens += call["usage"]["completion"]
        # journal: the model call as the provider reported it; a final answer asks for no tool
        step = run.model_step(
            usage={"input_uncached": call["usage"]["prompt"], "output": call["usage"]["completion"]},
            ms=(clock.monotonic() - m0) * 1000, ts=t0, model=model.name, input_messages=sent,
            tool_calls=[] if call.get("final") else [(call["tool"], call.get("args", {}))],
            text=call.get("text"), final=bool(call.get("final")) and not faults.misread_final,
            finish_reason="end_turn" if call.get("final") else "tool_use")

        if call.get("final") and not (faults.ignore_final or faults.misread_final):
            run.end("model_finished", final_output=call.get("text"), ledger=_ledger(led))  # journal
            return {"stop": "model_finished", "ledger": led, "transcript": transcript, "run": run}
        if faults.ledger_drift:  # FAULT: the completion increment sits below the final-answer return
            led.completion_tokens += call["usage"]["completion"]
        if call.get("final"):  # FAULT (ignore_final): the answer is taken for a progress note
            transcript.append({"role": "assistant", "content": call.get("text", "")})
            continue

        name, args = call["tool"], call.get("args", {})
        fn = registry.get(name)
        tool_call = step.calls[0]
        t1, m1 = clock.utc(), clock.monotonic()
        # journal: a call that changes the world is keyed and recorded before it runs
        started = run.tool_started(tool_call, ts=t1) if fn is not None and name in SIDE_EFFECTS else None
        result = (f"error: unknown tool {name!r}" if fn is None
                  else run_tool(fn, args, timeout_s=timeout_s, clock=clock))
        led.record_tool_result(result)
        transcript.append({"role": "tool", "name": name, "content": result})
        results_journalled += 1
        if results_journalled != faults.lose_result_at:  # FAULT switch: this result never reaches the journal
            status = _status(fn, result)
            run.tool_step(tool_call, started=started, status=status, result=result, ts=t1,
                          ms=(clock.monotonic() - m1) * 1000, error=result if status != "ok" else None)


def _status(fn, result: str) -> str:
    """journal: the tool outcome. The seed's ``run_tool`` folds every failure into a string that starts
    ``error:`` (a timeout: ``error: tool timed out after …``), so the outcome is read back from it."""
    if fn is None:
        return "unknown_tool"
    if result.startswith("error: tool timed out after"):
        return "timeout"
    return "error" if result.startswith("error: ") else "ok"


def _ledger(led: Ledger) -> dict[str, int]:
    """journal: the seed's Ledger as the run's ledger — the counters it keeps, nothing else (it keeps
    no count of tool results and no money)."""
    return {"steps": led.steps, "input_tokens": led.prompt_tokens, "output_tokens": led.completion_tokens}
