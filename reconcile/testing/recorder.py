"""Journalling for a harness that keeps no journal: the kit writes one from what it sees.

A harness written as seed 000 writes it (``run_loop(model, registry, task, limits)``) journals
nothing. The kit stands on both sides of it: it is the model (every call the loop makes is a model
step, with the usage the provider reported) and it hands the loop the registry (every stub the
loop runs is a tool step, with the result the stub returned or the error it raised). What only the
loop knows — why it stopped, and its own counters — comes from what the loop returns
(``outcome_of``). The journal is written through ``reconcile.journal``, as a harness would.

A call the model asked for that the loop never ran is journalled ``not_run`` at the end; a stub the
loop ran that the model never asked for cannot be paired, and is reported as a problem.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from reconcile.journal import Journal, RunJournal, ToolCall
from reconcile.testing.clock import ToolTimeout, reporting_timeouts
from reconcile.testing.model import ScriptedModel, Turn
from reconcile.testing.stubs import SIDE_EFFECTS

# The journal's ledger counters, and the names harnesses keep them under (seed 000's Ledger, 001's Budget, …).
LEDGER_NAMES = {"steps": ("steps",), "input_tokens": ("input_tokens", "prompt_tokens"),
                "output_tokens": ("output_tokens", "completion_tokens"), "tokens": ("tokens",),
                "tool_results": ("tool_results",), "cost_micros": ("cost_micros",)}


@dataclass
class Outcome:
    """What a loop returned, in the journal's terms."""

    stop_reason: str | None = None
    status: str | None = None
    final_output: str | None = None
    ledger: dict[str, int] = field(default_factory=dict)


def outcome_of(result: Any) -> Outcome:
    """Read a loop's result: a dict (seed 000: ``{"stop", "ledger", …}``), an object (seed 001's ``Result``:
    ``status``, ``stopped_by``, ``output``, ``budget``) or a bare string (a stop reason or status)."""
    if isinstance(result, str):
        return Outcome(stop_reason=result)
    get = (lambda k: result.get(k)) if isinstance(result, Mapping) else (lambda k: getattr(result, k, None))
    first = lambda *keys: next((get(k) for k in keys if get(k) is not None), None)  # noqa: E731
    stop = first("stop_reason", "stop", "stopped_by", "reason")
    status = first("status")
    output = first("final_output", "output", "answer", "text")
    ledger = first("ledger", "budget")
    return Outcome(None if stop is None else str(stop), None if status is None else str(status),
                   output if isinstance(output, str) else None, _ledger(ledger))


def _ledger(source: Any) -> dict[str, int]:
    if source is None:
        return {}
    if dataclasses.is_dataclass(source) and not isinstance(source, type):
        source = {f.name: getattr(source, f.name) for f in dataclasses.fields(source)}
    elif not isinstance(source, Mapping):
        source = {name: getattr(source, name) for names in LEDGER_NAMES.values() for name in names
                  if hasattr(source, name)}
    ledger = {key: source[name] for key, names in LEDGER_NAMES.items() for name in names
              if isinstance(source.get(name), int) and not isinstance(source.get(name), bool)}
    for name in ("cost_usd",):  # spend in dollars (seed 001): the journal counts micro-dollars
        if isinstance(source.get(name), float) and "cost_micros" not in ledger:
            ledger["cost_micros"] = round(source[name] * 1_000_000)
    return ledger


class Recorder:
    """The kit's journal of one run: a model listener plus a registry of journalling stubs."""

    def __init__(self, journal: Journal, model: ScriptedModel, clock: Any, *, agent: str,
                 limits: Mapping[str, Any] | None, loop_detector: Any, tools: Mapping[str, Callable[..., Any]]):
        self.model, self.clock = model, clock
        self.lock = threading.RLock()  # a pool's worker journals its tool's outcome
        self.pending: list[ToolCall] = []  # asked for, not yet run
        self.done: set[str] = set()  # call ids with an outcome journalled
        self.problems: list[str] = []
        self.run: RunJournal = journal.start_run(
            model.run_id, agent=agent, model=model.name, provider=model.provider, limits=dict(limits or {}),
            tools=[{"name": n, "side_effect": n in SIDE_EFFECTS} for n in tools], loop_detector=loop_detector,
            task_class="block_one", ts=clock.utc())
        self.registry = {name: self._journalled(name, fn) for name, fn in tools.items()}
        model.listeners.append(self.on_turn)

    def on_turn(self, turn: Turn) -> None:
        with self.lock:
            if turn.wrap_up:
                self.run.event("wrap_up", detail="the loop asked for a tool-free last turn", ts=turn.started_at)
            step = self.run.model_step(
                usage={"input_uncached": turn.prompt_tokens, "output": turn.completion_tokens}, ms=turn.seconds * 1000,
                ts=turn.started_at, model=self.model.name, provider=self.model.provider, request_id=turn.request_id,
                tool_calls=[(turn.tool, dict(turn.args))] if turn.tool else [], text=turn.text, final=turn.final,
                finish_reason="tool_use" if turn.tool else "end_turn")
            self.pending.extend(step.calls)

    def _journalled(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def tool(*args: Any, **kwargs: Any) -> Any:
            with self.lock:
                match = next((c for c in self.pending if c.name == name), None)
                if match is None:
                    self.problems.append(f"the loop ran {name} without the model asking for it")
                    return fn(*args, **kwargs)
                self.pending.remove(match)
                started = self.run.tool_started(match, ts=self.clock.utc()) if name in SIDE_EFFECTS else None
            began, t0 = self.clock.utc(), self.clock.monotonic()
            on_timeout = lambda waited: self._outcome(match, started, began, waited * 1000, "timeout",  # noqa: E731
                                                      error=f"{name} timed out after {waited:g} s")
            try:
                with reporting_timeouts(on_timeout):
                    result = fn(*args, **kwargs)
            except ToolTimeout:
                ms = (self.clock.monotonic() - t0) * 1000
                self._outcome(match, started, began, ms, "timeout", error=f"{name} timed out after {ms / 1000:g} s")
                raise
            except Exception as exc:  # the stub's failure is data for the journal; the loop decides what it is
                self._outcome(match, started, began, (self.clock.monotonic() - t0) * 1000, "error",
                              error=f"{type(exc).__name__}: {exc}")
                raise
            self._outcome(match, started, began, (self.clock.monotonic() - t0) * 1000, "ok",
                          result=result if isinstance(result, str) else repr(result))
            return result
        tool.__name__ = tool.__qualname__ = name
        tool.__doc__ = fn.__doc__
        return tool

    def _outcome(self, call: ToolCall, started: int | None, began: Any, ms: float, status: str, *,
                 result: str | None = None, error: str | None = None) -> None:
        with self.lock:
            if call.call_id in self.done:  # a parked worker released after its timeout was journalled
                return
            self.done.add(call.call_id)
            # What the loop made of a failure is its own string; the kit records the failure itself as the
            # result, so two identical timeouts fingerprint alike, as they do for a result-fingerprinting fence.
            self.run.tool_step(call, started=started, status=status, result=result if result is not None else error,
                               error=error, ts=began, ms=ms)

    def end(self, outcome: Outcome | None) -> None:
        """Journal the calls never run, then the run's end (none when the loop never returned)."""
        with self.lock:
            for call in self.pending:
                self.run.tool_step(call, status="not_run", error="asked for, but the loop stopped without running it",
                                   ts=self.clock.utc(), ms=0)
            self.pending.clear()
            if outcome is None:
                return
            if outcome.stop_reason is None and outcome.status is None:
                self.problems.append("the loop's result carries no stop reason or status (return {'stop': …})")
                return
            self.run.end(outcome.stop_reason, status=outcome.status, final_output=outcome.final_output,
                         ledger=outcome.ledger or None, ts=self.clock.utc())
