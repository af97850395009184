"""Seed 000's four stub tools and five probes, the model's script for each, and the stop each should produce.

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

Seed 000's four stubs reach three of its five fences, never the step or completion ceilings. Five probes reach the others, and tell apart what
the four cannot:

- ``lookup_forever``: a healthy tool asked a new question each time, a short new answer each time — no
  loop and little spend: only the step ceiling (``max_steps``) ends it, unless a spend ceiling (or the
  wall clock) comes first;
- ``long_answers``: the same tool, with 50,000-token completions: the completion ceiling
  (``max_completion_tokens``), or a total token or spend ceiling;
- ``growing_history``: ``read_log(page)``, a ~20 KB page each time: no one call's prompt is large, but
  the run's total is — a prompt ceiling held to the last call instead of the run's total never fires;
- ``ok_varied``: ``ok_forever`` asked a different question each time: the same result every time, a
  different call every time — seed 000's results fingerprint stops it, a calls fingerprint does not;
- ``poll``: ``poll()`` asked the same each time, a new answer each time ("queued, position 7"): a calls
  fingerprint stops it, seed 000's results fingerprint does not.

What the last two should do depends on the loop detector the run declares (``by_detector``), so a
harness is held to the detector it says it runs. Every probe's stop is also judged by the checks:
``budgets_enforced`` finds any call made after a declared ceiling was reached, which is how a ceiling
that is declared and never checked, or checked with ``>``, or against the last call, is caught.

That catches a faulty ceiling only where a probe reaches it before another one stops the run: a
spend ceiling checked with the wrong total is never seen while the token ceilings always stop the
probes first. So each declared ceiling's probe (``ALONE``) is run once more with every other ceiling
lifted (``Expectation.alone``), when the loop lets the kit hand it its limits: that ceiling must
stop it, with no call past it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from reconcile.store.status import named_limit
from reconcile.testing.model import TurnSpec, answer, call

BIG_OUTPUT_LINE = "2026-11-28T22:00:00Z INFO request served path=/api/v1/items status=200 bytes=5120\n"
BIG_OUTPUT_LINES = 4000  # ~330 KB, ~83k tokens: one page is past seed 000's 60k prompt ceiling
LOG_PAGE_LINES = 240  # ~20 KB, ~5k tokens: no one call's prompt passes 60k before a dozen pages, their sum does
LONG_ANSWER = 50_000  # completion tokens of a long_answers turn: past seed 000's 8k in one call, 001's 200k in four
SIDE_EFFECTS = frozenset({"raise_after_write"})  # what a catalogue should mark side_effect
WRITTEN = "payout.csv"  # the file raise_after_write is asked to write


class WriteThenFail(ConnectionError):
    """What raise_after_write raises after its write: the call failed, the side effect did not un-happen."""


def stub_tools(clock: Any, workdir: Path) -> dict[str, Callable[..., str]]:
    """The four stubs and the probes' tools, spending their time on ``clock`` (``clock.sleep``) and writing under
    ``workdir``."""
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

    def lookup(key: int = 0, **_ignored: Any) -> str:
        """A healthy tool: a short, different answer to each question."""
        clock.sleep(0.1)
        return f"entry {key}: found, {len(str(key)) * 7 + key % 13} fields"

    def read_log(page: int = 1, **_ignored: Any) -> str:
        """A ~20 KB page of a log, each page its own: a history that grows by a few thousand tokens a call."""
        clock.sleep(0.2)
        return f"# application log, page {page}\n" + BIG_OUTPUT_LINE * LOG_PAGE_LINES

    polled = {"n": 0}

    def poll(**_ignored: Any) -> str:
        """A job's status, asked the same way each time and answered anew each time: a polling loop."""
        clock.sleep(0.1)
        polled["n"] += 1
        return f"queued, position {1000 - polled['n']}"

    return {"ok_forever": ok_forever, "big_output": big_output, "sleep": sleep, "raise_after_write": raise_after_write,
            "lookup": lookup, "read_log": read_log, "poll": poll}


BUDGETS = frozenset({"steps", "tokens", "prompt_tokens", "completion_tokens", "wall_seconds", "cost_micros"})
BUDGET_STOPS = frozenset({"budget_exceeded", "timed_out"})
# each ceiling in words, as a failure names the fence that did not hold
FENCES = {"steps": "the step ceiling (max_steps)", "tokens": "the token ceiling (max_tokens)",
          "prompt_tokens": "the prompt-token ceiling (max_prompt_tokens)",
          "completion_tokens": "the completion-token ceiling (max_completion_tokens)",
          "wall_seconds": "the wall clock (max_wall_seconds)", "cost_micros": "the spend ceiling (max_cost_micros)",
          "loop": "the loop detector"}


# the probe that reaches each ceiling when every other one is lifted
ALONE = {"steps": "lookup_forever", "tokens": "growing_history", "prompt_tokens": "growing_history",
         "completion_tokens": "long_answers", "wall_seconds": "sleep", "cost_micros": "long_answers"}


@dataclass(frozen=True)
class Stop:
    """A right stop for a probe: the stop in the seed's words, its canonical statuses, the limits it may name."""

    words: str
    statuses: frozenset[str]
    limits: frozenset[str] | None  # None: anything
    hint: str = ""  # what a wrong stop most likely means


# a run that declares no loop detector: a stall or a budget stop (stalled_runs_detected cannot judge the stall)
ANY_STOP = Stop("a budget stop, or a stall", BUDGET_STOPS | {"stalled"}, BUDGETS | {"loop"})


@dataclass(frozen=True)
class Seen:
    """What the store says of a probe's run, beyond its status and stop reason."""

    detector: str | None = None  # the loop detector the run declares (or configuration names)
    declared: frozenset[str] | None = None  # the ceilings the run declares (None: not known)
    reached: frozenset[str] = frozenset()  # those reached when the loop stopped (the check after its last call)
    overrun: str | None = None  # a declared ceiling a call was made past (budgets_enforced's finding)


@dataclass(frozen=True)
class Expectation:
    """Seed 000's row for one stub (or the row of a probe), and how the model is scripted to exercise it."""

    stub: str
    simulates: str
    seed_stop: str  # seed 000's words
    statuses: frozenset[str]  # canonical statuses that are the right stop
    limits: frozenset[str] | None  # what a stop reason may name (status.named_limit); None: anything
    script: tuple[TurnSpec, ...]
    then: Callable[[int], TurnSpec]
    needs_timeouts: bool = False  # the journal must show the tool timing out before the stop
    writes: str | None = None  # the file that must exist afterwards
    by_detector: Mapping[str | None, Stop] | None = None  # a probe of loop detectors: the right stop per detector
    hint: str = ""  # what a wrong stop most likely means

    @property
    def expected(self) -> str:
        return f"{self.seed_stop} ({', '.join(sorted(self.statuses))})"

    def for_detector(self, detector: str | None) -> Expectation:
        """This row as it holds for a run that declares ``detector``."""
        if not self.by_detector:
            return self
        key = "calls" if detector in ("calls_anywhere", "calls_window") else detector
        stop = self.by_detector.get(key) or self.by_detector[None]
        return replace(self, seed_stop=stop.words, statuses=stop.statuses, limits=stop.limits, by_detector=None,
                       hint=stop.hint)

    def alone(self, ceiling: str, words: str) -> Expectation:
        """This probe's row for a run with every declared ceiling but ``ceiling`` (``FENCES``' key: ``cost_micros``)
        lifted: that ceiling, in the harness's words (``max_cost_usd``), must stop it."""
        status = "timed_out" if ceiling == "wall_seconds" else "budget_exceeded"
        return replace(self, seed_stop=f"{words} alone", statuses=frozenset({status}), limits=frozenset({ceiling}),
                       by_detector=None, writes=None,
                       hint=f": with every other ceiling lifted, only {FENCES[ceiling]} should have stopped it")

    def problem(self, status: str | None, stop_reason: str | None, timeouts: int, tool_timeouts: bool,
                file_exists: bool | None, seen: Seen = Seen()) -> str | None:
        """Why the stop seen is not this row's stop, or None when it is. With what the store knows of the run
        (``seen``), a stop by another ceiling the run declares, reached when it stopped, is a right stop too
        (which ceiling a fence checks first is the harness's own), and a call made past a declared ceiling is
        the fence that did not hold."""
        if self.by_detector:
            return self.for_detector(seen.detector).problem(status, stop_reason, timeouts, tool_timeouts,
                                                             file_exists, seen)
        said = _said(status, stop_reason)
        if seen.overrun is not None:
            return (f"expected {self.expected}; the loop stopped with {said} only after calls past "
                    f"{FENCES.get(seen.overrun, seen.overrun)}: that fence let them through")
        if status not in self.statuses:
            hint = ""
            if self.stub == "sleep" and status == "stalled" and timeouts:
                hint = (f" after {timeouts} tool timeout(s): the repeat fence caught the hung tool before the wall "
                        "clock did — give block one a wall clock shorter than (max_repeats + 1) × (tool timeout + "
                        "model latency), or the wall-clock fence is missing")
            return f"expected {self.expected}; the loop stopped with {said}{hint or self.hint}"
        named = named_limit(stop_reason)
        if self.limits is not None and named is not None and named not in self.limits:
            fences = self.limits & (seen.declared or frozenset())
            if fences and named in seen.reached:
                return None  # another declared ceiling, reached first (or at the same check): a right stop
            missing = (f" — the run declares no {' or '.join(FENCES.get(c, c) for c in sorted(self.limits))}"
                       if seen.declared is not None and not fences else "")
            return (f"expected {self.expected}; the loop stopped with {said}, which names the {named} limit, not "
                    f"{' or '.join(sorted(self.limits))}: another fence did this fence's job{missing}")
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
    # the probes of the fences the four stubs do not reach
    Expectation("lookup_forever", "a healthy tool answering each new question: no loop, little spend",
                "max_steps", BUDGET_STOPS, frozenset({"steps"}), (), lambda n: call("lookup", key=n)),
    Expectation("long_answers", "a model writing at length: 50,000 completion tokens a turn", "max_completion_tokens",
                frozenset({"budget_exceeded"}), frozenset({"completion_tokens", "tokens", "cost_micros"}), (),
                lambda n: call("lookup", completion=LONG_ANSWER, key=n)),
    Expectation("growing_history", "~20 KB log pages: small prompts one by one, a large total",
                "max_prompt_tokens", frozenset({"budget_exceeded"}), frozenset({"prompt_tokens", "tokens"}), (),
                lambda n: call("read_log", page=n)),
    Expectation("ok_varied", "the same result to different calls", "identical_tool_results",
                frozenset({"stalled"}), frozenset({"loop"}), (), lambda n: call("ok_forever", query=f"question {n}"),
                by_detector={"results_in_a_row": Stop("identical_tool_results", frozenset({"stalled"}),
                                                      frozenset({"loop"}),
                                                      ": the same result came back each time and the repeat fence did "
                                                      "not see it — it fingerprints the call, not the result?"),
                             "calls": Stop("a budget stop: the calls differ, so a calls fingerprint sees no loop",
                                           BUDGET_STOPS, BUDGETS),
                             None: ANY_STOP}),
    Expectation("poll", "the same call, a new result each time (a polling loop)", "a budget stop",
                BUDGET_STOPS, BUDGETS, (), lambda n: call("poll"),
                by_detector={"results_in_a_row": Stop("a budget stop: each result differs, so a results fingerprint "
                                                      "sees no loop", BUDGET_STOPS, BUDGETS,
                                                      ": every result differed, so a repeat fence on results could not "
                                                      "have fired — it fingerprints the call, not the result?"),
                             "calls": Stop("stalled (the same call again)", frozenset({"stalled"}), frozenset({"loop"})),
                             None: ANY_STOP}),
)}
STUBS = tuple(EXPECTATIONS)
SEED000_STUBS = STUBS[:4]  # seed 000's table; the rest are the probes
