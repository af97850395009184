"""Drive a harness's loop through seed 000's block one, then reconcile what it journalled.

    from reconcile.testing import run_block_one
    from agent_budget import Limits, run_loop          # seed 000's code, as written

    def loop(model, registry):                         # the two-line adapter
        return run_loop(model, registry, "block one", Limits(max_wall_seconds=60))

    run_block_one(loop, limits=Limits(max_wall_seconds=60), patch_time=True)   # raises BlockOneFailure

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
"""

from __future__ import annotations

import dataclasses
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
from reconcile.testing.stubs import EXPECTATIONS, STUBS, stub_tools
from reconcile.testing.verdict import BlockOneReport, Driven, StubOutcome, judge

Loop = Callable[..., Any]
WINDOW_GAP = timedelta(hours=1)  # clock time between two stubs' runs: each has its own provider window

# Limits as the journal names them, and the other names seeds give them (seed 001's Budget).
JOURNAL_LIMITS = ("max_steps", "max_tokens", "max_prompt_tokens", "max_completion_tokens", "max_wall_seconds",
                  "max_cost_micros", "max_repeats", "max_retries", "tool_timeout_seconds", "result_bound_tokens")
RENAMED = {"max_seconds": ("max_wall_seconds", 1), "max_cost_usd": ("max_cost_micros", 1_000_000)}


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
                 stubs: Iterable[str] = STUBS):
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
        if journals_itself and (limits is not None or loop_detector is not None):
            raise ValueError("limits= and loop_detector= declare the run the kit journals; a harness that journals "
                             "itself declares its own on journal.start_run(...)")
        self.patch_time, self.tool_timeouts, self.cap, self.agent = patch_time, tool_timeouts, cap, agent
        self.limits, self.loop_detector = journal_limits(limits), loop_detector
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
        for stub in self.stubs:
            provider.open(stub, _minute(self.clock.utc(), up=False))
            outcomes[stub] = self._drive(stub, journals / f"{stub}.jsonl", world / stub, provider)
            written = EXPECTATIONS[stub].writes
            files[stub] = (world / stub / written).exists() if written else None
            following = _minute(self.clock.utc() + WINDOW_GAP, up=True)
            self.clock.sleep((following - self.clock.utc()).total_seconds())
            provider.close(following)
        return Driven(self.agent, self.workdir, journals, provider, outcomes, files, self.tool_timeouts,
                      self.clock.utc())

    def _drive(self, stub: str, path: Path, world: Path, provider: FakeProvider) -> StubOutcome:
        expectation = EXPECTATIONS[stub]
        outcome = StubOutcome(stub, expectation.expected)
        model = ScriptedModel(expectation.script, then=expectation.then, clock=self.clock, cap=self.cap,
                              scenario=stub, run_id=f"{self.agent}-{stub}")
        model.listeners.append(lambda turn: provider(turn, model.name))
        tools = stub_tools(self.clock, world)
        with Journal(path, clock=self.clock.utc) as journal:
            recorder = None
            if self.journals_itself:
                journal = _Watched(journal)
                args: tuple = (model, tools, journal)
            else:
                recorder = Recorder(journal, model, self.clock, agent=self.agent, limits=self.limits,
                                    loop_detector=self.loop_detector, tools=tools)
                args = (model, recorder.registry)
            result = self._call(args, outcome)
            if recorder is not None:
                self._end(recorder, result, outcome)
                outcome.run_id = model.run_id
            elif journal.roots:
                outcome.run_id = journal.roots[0]
        return outcome

    def _call(self, args: tuple, outcome: StubOutcome) -> Any:
        """The loop's result, or None with the reason it has none in ``outcome.problems``."""
        try:
            if self.patch_time:
                with self.clock.patched():
                    return self.loop(*args)
            return self.loop(*args)
        except FenceNeverStopped as stop:
            outcome.problems.append(f"expected {outcome.expected}; {stop}: the loop has no fence that stops "
                                    f"{outcome.stub}")
        except Exception as exc:  # noqa: BLE001 — the loop's own crash is the finding, with where it happened
            where = traceback.extract_tb(exc.__traceback__)[-1]
            outcome.problems.append(f"expected {outcome.expected}; the loop raised {type(exc).__name__}: {exc} "
                                    f"(at {Path(where.filename).name}:{where.lineno}) instead of returning a stop")
        return None

    def _end(self, recorder: Recorder, result: Any, outcome: StubOutcome) -> None:
        ended: Outcome | None = None if outcome.problems else outcome_of(result)
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
    if limits is None:
        return {}
    if dataclasses.is_dataclass(limits) and not isinstance(limits, type):
        limits = dataclasses.asdict(limits)
    elif not isinstance(limits, Mapping):
        limits = vars(limits)
    out = {key: limits[key] for key in JOURNAL_LIMITS if isinstance(limits.get(key), (int, float))}
    for name, (key, scale) in RENAMED.items():
        if isinstance(limits.get(name), (int, float)) and key not in out:
            out[key] = round(limits[name] * scale) if scale != 1 else limits[name]
    return out


def _minute(moment: datetime, up: bool) -> datetime:
    """``moment`` on a whole minute, down or up: where a provider window starts."""
    moment = moment.astimezone(timezone.utc)
    floor = moment.replace(second=0, microsecond=0)
    if not up or floor == moment:
        return floor
    return floor + timedelta(minutes=math.ceil((moment - floor).total_seconds() / 60))
