"""Drive a harness's loop through seed 000's block one, then reconcile what it journalled.

    from reconcile.testing import run_block_one
    from agent_budget import Limits, run_loop          # seed 000's code, as written

    def loop(model, registry, limits=Limits(max_wall_seconds=60)):   # the two-line adapter
        return run_loop(model, registry, "block one", limits)

    run_block_one(loop, patch_time=True)   # raises BlockOneFailure

For each of the four stubs and five probes the loop is called once with a scripted model that keeps calling
that stub (``stubs.EXPECTATIONS``) and a registry holding every stub's tool. The loop is a callable
``(model, registry) -> result``; its result carries the stop reason and, ideally, its ledger
(``recorder.outcome_of`` reads seed 000's dict, seed 001's ``Result``, a bare status string).

Who writes the journal:

- ``journals_itself=False`` (the default): the kit. The loop gets journalling stubs, the model
  journals each call, and the loop's result supplies the stop and the ledger. ``limits`` (a
  mapping or a dataclass such as seed 000's ``Limits``) and ``loop_detector`` are declared on the
  run, so the fence checks can hold the run to them;
- ``journals_itself=True``: the harness. The loop is called ``loop(model, registry, journal)``
  with a ``reconcile.journal.Journal`` stamped on the protocol's clock, and starts its own run on
  it (``model.run_id`` is a unique id it may use).

The clock (``clock=``) is a ``FakeClock`` unless the harness brings its own (any object with
``sleep``, ``monotonic`` and ``utc``); ``patch_time=True`` runs each stub inside
``clock.patched()`` for a harness that reads ``time.monotonic`` and waits through a thread pool.

Each ceiling alone. A probe stopped by another ceiling first never tests its own: a prompt ceiling held
to the last call, or a spend ceiling checked after the call, passes while the step or completion
ceiling always stops the probe before it. When the loop takes a ``limits`` keyword
(``loop(model, registry, limits=…)``), the kit hands it the run's limits (``limits=``, else the
parameter's default) on every run, and after the stubs runs each declared ceiling's probe
(``stubs.ALONE``) once more as ``"<probe>, <ceiling> alone"`` with a copy of them in which every other
ceiling is lifted out of reach (``lifted``; the loop detector, retries and tool timeouts are kept): that
ceiling must stop it, and no call may be made past it. A loop that takes no ``limits`` is run as before,
and the report notes the declared ceilings that stopped no probe.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import math
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from reconcile.journal import Journal, JournalError
from reconcile.testing.clock import FakeClock
from reconcile.testing.model import DEFAULT_CAP, FenceNeverStopped, ScriptedModel
from reconcile.testing.provider import FakeProvider
from reconcile.testing.recorder import Outcome, Recorder, outcome_of
from reconcile.testing.stubs import ALONE, EXPECTATIONS, STUBS, Expectation, stub_tools
from reconcile.testing.verdict import BlockOneReport, Driven, StubOutcome, judge

Loop = Callable[..., Any]
WINDOW_GAP = timedelta(hours=1)  # clock time between two stubs' runs: each has its own provider window

# Limits as the journal names them, and the other names seeds give them (seed 001's Budget).
JOURNAL_LIMITS = ("max_steps", "max_tokens", "max_prompt_tokens", "max_completion_tokens", "max_wall_seconds",
                  "max_cost_micros", "max_repeats", "max_retries", "tool_timeout_seconds", "result_bound_tokens")
CEILINGS = JOURNAL_LIMITS[:6]  # the budgets: what a probe alone is stopped by, and what the others lift
# name: (the journal's name, the journal's units per one of it) — seed 001's Budget, seed 003's Budgets
RENAMED = {"max_seconds": ("max_wall_seconds", 1), "max_cost_usd": ("max_cost_micros", 1_000_000),
           "maxSteps": ("max_steps", 1), "maxTokens": ("max_tokens", 1), "wallClockMs": ("max_wall_seconds", 0.001)}
LIFTED = 10**9  # a lifted ceiling, in the journal's units: past all a probe spends in the model's 200 calls


def run_block_one(loop: Loop, **options: Any) -> BlockOneReport:
    """Block one over ``loop`` (the options: ``BlockOne``); raises ``BlockOneFailure`` when it does not hold."""
    return BlockOne(loop, **options).run()


def run_block_one_many(protocols: Iterable[BlockOne], workdir: str | Path | None = None) -> list[BlockOneReport]:
    """Block one for several harnesses, reconciled in one store (one ingest, one check run): a report each,
    in order, none raised — call ``report.assert_holds()``. Their agents must differ (run ids are made of
    them); each starts on its clock after the one before ended, so no two share a provider window."""
    protocols = list(protocols)
    agents = [p.agent for p in protocols]
    if len(set(agents)) != len(agents):
        raise ValueError(f"two protocols have one agent name ({agents}); give each its own agent=")
    driven, after = [], None
    for protocol in protocols:
        driven.append(protocol.drive(after))
        after = driven[-1].ended
    folder = Path(workdir) if workdir is not None else Path(tempfile.mkdtemp(prefix="block-one-"))
    folder.mkdir(parents=True, exist_ok=True)
    return judge(driven, folder / "block-one.duckdb")


class BlockOne:
    """Seed 000's block one for one harness. ``run()`` returns the report or raises ``BlockOneFailure``."""

    def __init__(self, loop: Loop, *, journals_itself: bool = False, clock: Any = None, patch_time: bool = False,
                 limits: Any = None, loop_detector: str | Mapping[str, Any] | None = None, tool_timeouts: bool = True,
                 cap: int = DEFAULT_CAP, agent: str = "block-one", workdir: str | Path | None = None,
                 stubs: Iterable[str] = STUBS, lift: bool = True):
        self.loop, self.journals_itself = loop, journals_itself
        self.clock = clock if clock is not None else FakeClock()
        missing = [m for m in ("sleep", "monotonic", "utc") if not callable(getattr(self.clock, m, None))]
        if missing:
            raise TypeError(f"clock {self.clock!r} has no {', '.join(missing)}(): give a FakeClock, or an object "
                            "with sleep(seconds), monotonic() and utc()")
        if patch_time and not isinstance(self.clock, FakeClock):
            raise TypeError("patch_time=True patches time onto a FakeClock; a clock of your own is yours to install")
        unknown = [s for s in stubs if s not in EXPECTATIONS]
        if unknown:
            raise ValueError(f"no stub {unknown[0]!r} in block one; the stubs are {', '.join(STUBS)}")
        takes = _limits_parameter(loop)
        if journals_itself and (loop_detector is not None or (limits is not None and takes is None)):
            raise ValueError("limits= and loop_detector= declare the run the kit journals; a harness that journals "
                             "itself declares its own on journal.start_run(...) (limits= is handed to a loop that "
                             "takes a `limits` keyword)")
        if limits is None and takes is not None and takes.default is not inspect.Parameter.empty:
            limits = takes.default  # the adapter's own: loop(model, registry, limits=Limits(...))
        self.run_limits = limits  # the loop's limits object, handed to it when it takes `limits`
        self.passes_limits = takes is not None and limits is not None
        self.patch_time, self.tool_timeouts, self.cap, self.agent = patch_time, tool_timeouts, cap, agent
        self.limits = {} if journals_itself else journal_limits(limits)  # what the kit declares on its journal
        self.loop_detector, self.lift = loop_detector, lift
        self.stubs = tuple(stubs)
        self.workdir = Path(workdir) if workdir is not None else None  # None: a new temporary folder per run

    def run(self) -> BlockOneReport:
        """Drive the loop through every stub, reconcile, judge; raise ``BlockOneFailure`` unless it all held."""
        __tracebackhide__ = True  # read by pytest: the failure shows at the caller
        driven = self.drive()
        return judge([driven], driven.workdir / "block-one.duckdb")[0].assert_holds()

    def drive(self, after: datetime | None = None) -> Driven:
        """Run the loop once per stub and write the journals, without judging (``run_block_one_many`` judges
        several harnesses in one store). ``after``: start no earlier than this, on the clock."""
        if self.workdir is None:
            self.workdir = Path(tempfile.mkdtemp(prefix="block-one-"))
        journals, world = self.workdir / "journals", self.workdir / "world"
        for folder in (journals, world):
            shutil.rmtree(folder, ignore_errors=True)  # a rerun in the same folder starts clean
            folder.mkdir(parents=True)
        provider = FakeProvider()
        outcomes, files = {}, {}
        start = _minute(max(self.clock.utc(), after or self.clock.utc()), up=True)
        self.clock.sleep((start - self.clock.utc()).total_seconds())  # a window starts on a whole minute
        runs: list[tuple[str, str, Any, Expectation | None, str | None]] = [
            (stub, stub, self.run_limits, None, None) for stub in self.stubs]
        unlifted = self.unlifted()
        if unlifted is None:  # then each declared ceiling's probe once more, every other ceiling lifted
            for ceiling, names in ceilings(self.run_limits).items():
                probe = ALONE[ceiling.removeprefix("max_")]
                if probe in self.stubs:
                    runs.append((f"{probe}, {names[0]} alone", probe, lifted(self.run_limits, ceiling),
                                 EXPECTATIONS[probe].alone(ceiling.removeprefix("max_"), names[0]), names[0]))
        for name, stub, limits, row, alone in runs:
            provider.open(name, _minute(self.clock.utc(), up=False))
            file = stub if alone is None else f"{stub}.{alone}-alone"
            outcomes[name] = self._drive(stub, journals / f"{file}.jsonl", world / file, provider, name=name,
                                         limits=limits, row=row, alone=alone)
            written = (row or EXPECTATIONS[stub]).writes
            files[name] = (world / file / written).exists() if written else None
            following = _minute(self.clock.utc() + WINDOW_GAP, up=True)
            self.clock.sleep((following - self.clock.utc()).total_seconds())
            provider.close(following)
        return Driven(self.agent, self.workdir, journals, provider, outcomes, files, self.tool_timeouts,
                      self.clock.utc(), unlifted)

    def unlifted(self) -> str | None:
        """Why no probe can be run with its ceiling alone, in words for the report; None when they can."""
        if not self.lift:
            return "lift=False: pass lift=True and the kit runs each declared ceiling's probe with the others lifted"
        if _limits_parameter(self.loop) is None:
            return ("the loop takes no `limits` keyword: give it one (loop(model, registry, limits=…), passing them "
                    "to your loop) and the kit runs each declared ceiling's probe again with the others lifted")
        if self.run_limits is None:
            return ("the loop takes `limits`, but the kit has none to hand it: pass limits= (or give the parameter "
                    "a default) and the kit runs each declared ceiling's probe again with the others lifted")
        if not ceilings(self.run_limits):
            return (f"no field of the loop's limits ({type(self.run_limits).__name__}) is a ceiling the kit knows "
                    f"({', '.join(CEILINGS)}, or {', '.join(RENAMED)})")
        try:
            lifted(self.run_limits, CEILINGS[0])
        except (TypeError, ValueError, AttributeError) as exc:
            return (f"the loop's limits ({type(self.run_limits).__name__}) could not be copied with a ceiling lifted: "
                    f"{exc}")
        return None

    def _drive(self, stub: str, path: Path, world: Path, provider: FakeProvider, *, name: str, limits: Any,
               row: Expectation | None, alone: str | None) -> StubOutcome:
        """One run of ``stub``'s script, as outcome ``name``; ``row``/``alone``: a probe with its ceiling alone
        (its row, and that ceiling's name in the harness's limits), handed ``limits`` with the others lifted."""
        expectation = EXPECTATIONS[stub]
        outcome = StubOutcome(name, (row or expectation).expected, probe=stub, expectation=row,
                              alone=None if row is None else next(iter(row.limits)))
        run_id = f"{self.agent}-{stub}" if alone is None else f"{self.agent}-{stub}-{alone}-alone"
        model = ScriptedModel(expectation.script, then=expectation.then, clock=self.clock, cap=self.cap,
                              scenario=name, run_id=run_id)
        model.listeners.append(lambda turn: provider(turn, model.name))
        tools = stub_tools(self.clock, world)
        keywords = {"limits": limits} if self.passes_limits else {}
        with Journal(path, clock=self.clock.utc) as journal:
            recorder = None
            if self.journals_itself:
                journal = _Watched(journal)
                args: tuple = (model, tools, journal)
            else:
                recorder = Recorder(journal, model, self.clock, agent=self.agent, limits=journal_limits(limits),
                                    loop_detector=self.loop_detector, tools=tools)
                args = (model, recorder.registry)
            result = self._call(args, keywords, outcome)
            if recorder is not None:
                self._end(recorder, result, outcome)
                outcome.run_id = model.run_id
            elif journal.roots:
                outcome.run_id = journal.roots[0]
        return outcome

    def _call(self, args: tuple, keywords: dict[str, Any], outcome: StubOutcome) -> Any:
        """The loop's result, or None with the reason it has none in ``outcome.problems`` (a probe alone that
        reached the model's cap: ``outcome.capped``, judged once the store knows whether its ceiling came)."""
        try:
            if self.patch_time:
                with self.clock.patched():
                    return self.loop(*args, **keywords)
            return self.loop(*args, **keywords)
        except FenceNeverStopped as stop:
            if outcome.alone is not None:
                outcome.capped = stop.calls
                return None
            outcome.problems.append(f"expected {outcome.expected}; {stop}: the loop has no fence that stops "
                                    f"{outcome.stub}")
        except Exception as exc:  # noqa: BLE001 — the loop's own crash is the finding, with where it happened
            where = traceback.extract_tb(exc.__traceback__)[-1]
            outcome.problems.append(f"expected {outcome.expected}; the loop raised {type(exc).__name__}: {exc} "
                                    f"(at {Path(where.filename).name}:{where.lineno}) instead of returning a stop")
        return None

    def _end(self, recorder: Recorder, result: Any, outcome: StubOutcome) -> None:
        ended: Outcome | None = None if outcome.problems or outcome.capped is not None else outcome_of(result)
        try:
            recorder.end(ended)
        except JournalError as exc:  # a stop reason reconcile cannot map: the loop's words, not the kit's
            outcome.problems.append(f"expected {outcome.expected}; the loop's result could not be journalled: {exc}")
        outcome.problems.extend(recorder.problems)


class _Watched:
    """The harness's journal: a ``Journal`` that remembers the runs started on it without a parent."""

    def __init__(self, journal: Journal):
        self._journal, self.roots = journal, []

    def start_run(self, run_id: str | None = None, **fields: Any):
        run = self._journal.start_run(run_id, **fields)
        if fields.get("parent_run_id") is None:
            self.roots.append(run.run_id)
        return run

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in ("_journal", "roots"):
            object.__setattr__(self, name, value)
        else:  # a harness that sets journal.clock sets the real journal's clock
            setattr(self._journal, name, value)


def journal_limits(limits: Any) -> dict[str, Any]:
    """``limits`` (a mapping, or a dataclass such as seed 000's ``Limits``) as the journal's ``limits``."""
    fields = _fields(limits)
    out = {key: fields[key] for key in JOURNAL_LIMITS if _number(fields.get(key))}
    for name, (key, scale) in RENAMED.items():
        if _number(fields.get(name)) and key not in out:
            value = fields[name] * scale
            out[key] = round(value) if scale > 1 or value == round(value) else value
    return out


def ceilings(limits: Any) -> dict[str, list[str]]:
    """The ceilings ``limits`` declares, by the journal's name (``max_cost_micros``), each with the names of the
    fields that hold it (``["max_cost_usd"]``), in the journal's order."""
    found: dict[str, list[str]] = {}
    for name, value in _fields(limits).items():
        key = name if name in CEILINGS else RENAMED.get(name, ("",))[0]
        if key in CEILINGS and _number(value):
            found.setdefault(key, []).append(name)
    return {key: found[key] for key in CEILINGS if key in found}


def lifted(limits: Any, keep: str) -> Any:
    """A copy of ``limits`` with every ceiling but ``keep`` (the journal's name) lifted out of a probe's reach
    (``LIFTED``, in each field's units and type); every other field as it was. A dataclass is copied with
    ``dataclasses.replace``, a mapping as a dict, any other object with ``copy.copy``."""
    changes = {}
    for key, names in ceilings(limits).items():
        for name in names if key != keep else ():
            high = LIFTED / (RENAMED[name][1] if name in RENAMED else 1)
            changes[name] = int(high) if isinstance(_fields(limits)[name], int) else float(high)
    if dataclasses.is_dataclass(limits) and not isinstance(limits, type):
        return dataclasses.replace(limits, **changes)
    if isinstance(limits, Mapping):
        return {**limits, **changes}
    copied = copy.copy(limits)
    for name, value in changes.items():
        setattr(copied, name, value)
    return copied


def _fields(limits: Any) -> dict[str, Any]:
    if limits is None:
        return {}
    if dataclasses.is_dataclass(limits) and not isinstance(limits, type):
        return {f.name: getattr(limits, f.name) for f in dataclasses.fields(limits)}
    if isinstance(limits, Mapping):
        return dict(limits)
    try:
        return dict(vars(limits))
    except TypeError:  # an object without a __dict__: nothing the kit can read
        return {}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _limits_parameter(loop: Loop) -> inspect.Parameter | None:
    """The loop's ``limits`` parameter, when it can be passed by keyword."""
    try:
        parameter = inspect.signature(loop).parameters.get("limits")
    except (TypeError, ValueError):  # a callable without a signature
        return None
    if parameter is None or parameter.kind not in (parameter.POSITIONAL_OR_KEYWORD, parameter.KEYWORD_ONLY):
        return None
    return parameter


def _minute(moment: datetime, up: bool) -> datetime:
    """``moment`` on a whole minute, down or up: where a provider window starts."""
    moment = moment.astimezone(timezone.utc)
    floor = moment.replace(second=0, microsecond=0)
    if not up or floor == moment:
        return floor
    return floor + timedelta(minutes=math.ceil((moment - floor).total_seconds() / 60))
