"""Seed 000's four stub tools, the model's script for each, and the stop each should produce.

    tools = stub_tools(clock, workdir)   # {"ok_forever": …, "big_output": …, "sleep": …, …}

- ``ok_forever()`` → ``"ok"``: a healthy no-op the model keeps re-calling. Seed 000:
  ``identical_tool_results``; status stalled, named limit the loop detector.
- ``big_output(page)`` → ~330 KB: log dumps, DOM snapshots, wide query results. Seed 000:
  ``max_prompt_tokens``; status budget_exceeded, named limit a token ceiling.
- ``sleep(seconds=300)``: a hung dependency or a dead endpoint. Seed 000: tool timeouts, then
  ``max_wall_seconds``; status timed_out, named limit the wall clock, and a timed-out call in the journal.
- ``raise_after_write(path)``: a side effect behind a failed call. Seed 000: ``model_finished`` or
  any budget stop — and the file exists; status succeeded, budget_exceeded or timed_out.

Harnesses word their stops differently (seed 001: ``token limit (200,000)``, seed 003: a bare
``budget_exceeded``), so a stop is judged by the canonical status reconcile gives it
(``reconcile.store.status``: the same rules the store applies) and, when the stop reason names a limit,
by that limit (``status.named_limit``): a ``big_output`` run stopped by ``max_steps`` is a step
fence doing the token fence's job, and fails.

The scripts are chosen so that only the fence under test can fire: ``big_output`` is asked for a
new page each time and each page differs, so neither a call fingerprint (seeds 001, 003) nor a
result fingerprint (seed 000) mistakes it for a loop; ``ok_forever`` and ``sleep`` repeat one
identical call. The stubs spend their time on the clock, never real time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reconcile.store.status import named_limit
from reconcile.testing.model import TurnSpec, answer, call

BIG_OUTPUT_LINE = "2026-11-28T22:00:00Z INFO request served path=/api/v1/items status=200 bytes=5120\n"
BIG_OUTPUT_LINES = 4000  # ~330 KB, ~83k tokens: one page is past seed 000's 60k prompt ceiling
SIDE_EFFECTS = frozenset({"raise_after_write"})  # what a catalogue should mark side_effect
WRITTEN = "payout.csv"  # the file raise_after_write is asked to write


class WriteThenFail(ConnectionError):
    """What raise_after_write raises after its write: the call failed, the side effect did not un-happen."""


def stub_tools(clock: Any, workdir: Path) -> dict[str, Callable[..., str]]:
    """The four stubs, spending their time on ``clock`` (``clock.sleep``) and writing under ``workdir``."""
    workdir = Path(workdir)

    def ok_forever(**_ignored: Any) -> str:
        """Always "ok", whatever it is asked: repetition that looks like success."""
        clock.sleep(0.1)
        return "ok"

    def big_output(page: int = 1, **_ignored: Any) -> str:
        """A few hundred KB of log lines; each page differs (its header), so results never repeat."""
        clock.sleep(0.5)
        return f"# request log, page {page}\n" + BIG_OUTPUT_LINE * BIG_OUTPUT_LINES

    def sleep(seconds: float = 300, **_ignored: Any) -> str:
        """A hung dependency: spends ``seconds`` of the clock — past any sane tool timeout."""
        clock.sleep(seconds)
        return f"slept {seconds}s"

    def raise_after_write(path: str = WRITTEN, **_ignored: Any) -> str:
        """Writes ``workdir/path``, then fails: the partial side effect the stop reason does not show."""
        clock.sleep(0.3)
        target = workdir / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("id,amount\n1,100\n", encoding="utf-8")
        raise WriteThenFail("upstream closed the connection after the write")

    return {"ok_forever": ok_forever, "big_output": big_output, "sleep": sleep, "raise_after_write": raise_after_write}


@dataclass(frozen=True)
class Expectation:
    """Seed 000's row for one stub, and how the model is scripted to exercise it."""

    stub: str
    simulates: str
    seed_stop: str  # seed 000's words
    statuses: frozenset[str]  # canonical statuses that are the right stop
    limits: frozenset[str] | None  # what a stop reason may name (status.named_limit); None: anything
    script: tuple[TurnSpec, ...]
    then: Callable[[int], TurnSpec]
    needs_timeouts: bool = False  # the journal must show the tool timing out before the stop
    writes: str | None = None  # the file that must exist afterwards

    @property
    def expected(self) -> str:
        return f"{self.seed_stop} ({', '.join(sorted(self.statuses))})"

    def problem(self, status: str | None, stop_reason: str | None, timeouts: int, tool_timeouts: bool,
                file_exists: bool | None) -> str | None:
        """Why the stop seen is not this row's stop, or None when it is."""
        said = _said(status, stop_reason)
        if status not in self.statuses:
            hint = ""
            if self.stub == "sleep" and status == "stalled" and timeouts:
                hint = (f" after {timeouts} tool timeout(s): the repeat fence caught the hung tool before the wall "
                        "clock did — give block one a wall clock shorter than (max_repeats + 1) × (tool timeout + "
                        "model latency), or the wall-clock fence is missing")
            return f"expected {self.expected}; the loop stopped with {said}{hint}"
        named = named_limit(stop_reason)
        if self.limits is not None and named is not None and named not in self.limits:
            return (f"expected {self.expected}; the loop stopped with {said}, which names the {named} limit, not "
                    f"{' or '.join(sorted(self.limits))}: another fence did this fence's job")
        if self.needs_timeouts and tool_timeouts and not timeouts:
            return (f"expected {self.expected} after tool timeouts; the loop stopped with {said} but no call of "
                    f"{self.stub} timed out: the loop waited each one out (pass tool_timeouts=False for a harness "
                    "that has no tool timeout)")
        if self.writes and file_exists is False:
            return (f"expected {self.stub} to have run and left {self.writes}; the file does not exist, so the "
                    "stub was never called")
        return None


def _said(status: str | None, stop_reason: str | None) -> str:
    if stop_reason is None and status is None:
        return "no run_end at all (the run is journalled as still running)"
    return f"{stop_reason!r} ({status})" if stop_reason else f"no stop reason ({status})"


EXPECTATIONS: dict[str, Expectation] = {e.stub: e for e in (
    Expectation("ok_forever", "a healthy-looking no-op the model keeps re-calling", "identical_tool_results",
                frozenset({"stalled"}), frozenset({"loop"}), (), lambda n: call("ok_forever")),
    Expectation("big_output", "log dumps, DOM snapshots, wide query results", "max_prompt_tokens",
                frozenset({"budget_exceeded"}), frozenset({"prompt_tokens", "tokens"}), (),
                lambda n: call("big_output", page=n)),
    Expectation("sleep", "a hung dependency or a dead endpoint", "max_wall_seconds", frozenset({"timed_out"}),
                frozenset({"wall_seconds"}), (), lambda n: call("sleep", seconds=300), needs_timeouts=True),
    Expectation("raise_after_write", "partial side effects behind a failed call",
                "model_finished or any budget stop", frozenset({"succeeded", "budget_exceeded", "timed_out"}), None,
                (call("raise_after_write", path=WRITTEN),),
                lambda n: answer("The payout file could not be confirmed; it may have been written."),
                writes=WRITTEN),
)}
STUBS = tuple(EXPECTATIONS)
