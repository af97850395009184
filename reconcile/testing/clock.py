"""A controllable clock for block one: time passes only when something spends it.

The stubs spend time on it (``sleep(300)`` moves it five minutes on, at once), the scripted model
spends its latency on it, and the harness's fence reads it. Nothing really waits, so driving a loop
through every stub takes well under a second of real time. A harness gets the clock one of
three ways:

* **as an object**: ``clock.monotonic`` where the harness takes a monotonic function, ``clock.utc``
  (or the clock itself: it is callable) where it stamps wall-clock times, as ``Journal(path,
  clock=clock)`` does;
* **``clock.deadline(seconds)``** around a tool call: the simulated ``future.result(timeout=…)``.
  A ``sleep`` that would pass the deadline moves the clock to it and raises ``ToolTimeout``
  instead (the same contract as ``tests/conformance``'s ``SimClock``);
* **``with clock.patched():``** for a harness that calls ``time.monotonic()`` itself and waits for
  its tools through ``concurrent.futures`` — seed 000's ``Ledger`` and ``run_tool`` as written.
  ``time.monotonic`` reads the clock; ``time.sleep`` in the patching thread spends it; and
  ``Future.result(timeout=…)`` honours the timeout on the clock: a stub that sleeps in a worker
  thread parks there until the waiting harness either lets it finish (its sleep fits the timeout)
  or gives up on it, which moves the clock by the timeout and raises ``TimeoutError`` — exactly
  what a hung dependency does to a real pool. The parked worker stays parked (the timeout stops
  the waiting, not the thread, as seed 000 warns) until the patch ends; a call queued behind
  workers that are all hung never starts, its wait runs out, and it is cancelled.

While patched, ``time.monotonic()`` reads the real monotonic time at the patch's start plus the
clock time spent since, rather than the clock's own count: seed 000's ``Ledger`` takes ``started``
from ``field(default_factory=time.monotonic)``, a reference to the real function taken when the
class was defined that no patch reaches, and its ``wall_seconds`` subtracts that reading from a
patched one. On this scale the two agree to the real milliseconds the patch has been in place.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

NIGHT = datetime(2026, 11, 28, 22, 0, tzinfo=timezone.utc)  # a night every price list covers: runs are priced

# How long (real seconds) a stub parked in a worker thread waits for someone to wait on its future
# before it gives up and simply spends its time: only a harness that waits some other way
# (``concurrent.futures.wait``, an asyncio executor) ever reaches it.
PARK_SAFETY_SECONDS = 5.0

# How long (real seconds) a waited-on future may stay queued, its pool's workers all busy, before the wait
# counts as one that runs out: workers take a queued call in microseconds unless they are hung.
QUEUED_GRACE_SECONDS = 0.25

_real_monotonic = time.monotonic
_real_sleep = time.sleep
_original_result = concurrent.futures.Future.result
_activity = threading.local()  # per thread: who to tell when a parked tool call is given up on


class ToolTimeout(TimeoutError):
    """A tool still running when its caller's deadline passed (a ``sleep`` inside ``deadline``)."""


@dataclass
class _Parked:
    """A stub's sleep in a worker thread, waiting for the harness's ``Future.result`` to decide."""

    remaining: float
    released: threading.Event = field(default_factory=threading.Event)
    fresh: bool = True  # no waiter has looked at it yet
    abandoned: bool = False
    on_timeout: Callable[[float], None] | None = None


class FakeClock:
    """A clock that moves only when ``sleep`` or ``advance`` is called. ``start``: its UTC time at 0 s."""

    def __init__(self, start: datetime = NIGHT):
        if start.tzinfo is None:
            raise ValueError("FakeClock(start=…) must be timezone-aware (UTC), as journal timestamps are")
        self.start = start
        self.elapsed = 0.0  # seconds spent since start
        self._base = _real_monotonic()
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._deadlines: list[float] = []
        self._parked: list[_Parked] = []
        self._owner: int | None = None  # the thread that patched time (None: not patched)
        self.unwaited_sleeps = 0  # worker-thread sleeps nobody waited on (PARK_SAFETY_SECONDS ran out)

    # ---- reading it

    def monotonic(self) -> float:
        """Seconds on a monotonic scale (only differences mean anything, as with ``time.monotonic``)."""
        return self._base + self.elapsed

    def millis(self) -> float:
        """``Date.now()``: epoch milliseconds of ``utc()`` (seed 003's deadline arithmetic)."""
        return self.utc().timestamp() * 1000.0

    def utc(self) -> datetime:
        return self.start + timedelta(seconds=self.elapsed)

    __call__ = utc  # Journal(clock=…) calls it

    # ---- spending it

    def advance(self, seconds: float) -> None:
        """Move the clock on by ``seconds`` (what a harness's own back-off or the protocol's gaps use)."""
        if seconds < 0:
            raise ValueError(f"a clock does not go back ({seconds} s)")
        with self._changed:
            self.elapsed += seconds
            self._changed.notify_all()

    def sleep(self, seconds: float) -> None:
        """Spend ``seconds``. Inside ``deadline`` a sleep past it stops there and raises ``ToolTimeout``;
        in a worker thread while ``patched`` it parks until the waiting harness decides (see the module)."""
        if seconds < 0:
            raise ValueError(f"sleep length must be non-negative, not {seconds}")
        with self._changed:
            if self._deadlines and self.elapsed + seconds > self._deadlines[-1]:
                self.elapsed = self._deadlines[-1]
                self._changed.notify_all()
                raise ToolTimeout(f"still running when its {self._deadlines[-1]:g} s deadline passed")
            if self._owner is None or threading.get_ident() == self._owner:
                self.elapsed += seconds
                self._changed.notify_all()
                return
            parked = _Parked(seconds, on_timeout=getattr(_activity, "on_timeout", None))
            self._parked.append(parked)
            self._changed.notify_all()
        if not parked.released.wait(PARK_SAFETY_SECONDS):
            with self._changed:  # nobody waits through Future.result: spend the time, as without the patch
                if parked.fresh and parked in self._parked:
                    self._parked.remove(parked)
                    self.elapsed += parked.remaining
                    self.unwaited_sleeps += 1
                    self._changed.notify_all()
                    return
            parked.released.wait()  # given up on: hung until the patch ends, like a real hung worker
        if parked.abandoned:
            raise ToolTimeout("given up on by its caller's timeout; released when the clock's patch ended")

    @contextlib.contextmanager
    def deadline(self, seconds: float) -> Iterator[None]:
        """The simulated ``future.result(timeout=seconds)`` around a tool call run in this thread."""
        with self._lock:
            self._deadlines.append(self.elapsed + seconds)
        try:
            yield
        finally:
            with self._lock:
                self._deadlines.pop()

    # ---- patching time for a harness that reads it itself

    @contextlib.contextmanager
    def patched(self) -> Iterator[FakeClock]:
        """``time.monotonic``, ``time.sleep`` (in this thread) and ``Future.result(timeout=…)`` on this clock."""
        if self._owner is not None:
            raise RuntimeError("this clock is already patched in")
        clock = self
        owner = threading.get_ident()

        def sleep(seconds: float) -> None:
            if threading.get_ident() == owner:
                clock.sleep(seconds)
            else:  # another thread's sleep (a library's poller) is none of the protocol's business
                _real_sleep(seconds)

        def result(future: concurrent.futures.Future, timeout: float | None = None):
            if threading.get_ident() != owner:
                return _original_result(future, timeout)
            return clock._wait_for(future, timeout)

        real_start, spent_before = _real_monotonic(), self.elapsed

        def monotonic() -> float:  # on the real scale at the patch's start (see the module docstring)
            return real_start + (clock.elapsed - spent_before)

        saved = (time.monotonic, time.sleep, concurrent.futures.Future.result)
        self._owner = owner
        time.monotonic, time.sleep = monotonic, sleep
        concurrent.futures.Future.result = result
        try:
            yield self
        finally:
            time.monotonic, time.sleep, concurrent.futures.Future.result = saved
            self._owner = None
            with self._changed:  # the hung workers a real pool would keep: let them go now
                for parked in self._parked:
                    parked.abandoned = True
                    parked.released.set()
                self._parked.clear()

    def _wait_for(self, future: concurrent.futures.Future, timeout: float | None):
        """``future.result(timeout)`` with the timeout on this clock (called in the patching thread)."""
        future.add_done_callback(lambda _: self._notify())
        budget = timeout
        while True:
            with self._changed:
                queued_until = _real_monotonic() + QUEUED_GRACE_SECONDS
                while not future.done() and not any(p.fresh for p in self._parked):
                    if not future.running() and _real_monotonic() >= queued_until:
                        break  # still queued: every worker is hung on an earlier tool (a full pool)
                    self._changed.wait(0.05)
                if future.done():
                    break
                if not any(p.fresh for p in self._parked):  # the call never starts: the whole wait passes
                    if budget is None:
                        raise RuntimeError("a tool call waits without a timeout behind workers hung on earlier "
                                           "tools: the loop would hang here for ever")
                    self.elapsed += budget
                    waited, parked = budget, None
                    future.cancel()  # given up on before it started: it must not run after the loop ended
                else:
                    parked = next(p for p in self._parked if p.fresh)  # one tool at a time: the oldest is ours
                    parked.fresh = False
                    if budget is None or parked.remaining <= budget:
                        self.elapsed += parked.remaining  # the tool's sleep fits the wait: it finishes
                        budget = None if budget is None else budget - parked.remaining
                        self._parked.remove(parked)
                        parked.released.set()
                        continue
                    self.elapsed += budget  # the wait runs out first: the tool stays hung in its thread
                    parked.remaining -= budget
                    waited = budget
            if parked is not None and parked.on_timeout is not None:
                parked.on_timeout(waited)
            raise concurrent.futures.TimeoutError()
        return _original_result(future, 0)

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()


@contextlib.contextmanager
def reporting_timeouts(on_timeout: Callable[[float], None]) -> Iterator[None]:
    """While a tool runs in this thread: who to tell (with the seconds waited) if a patched wait gives up on it."""
    previous = getattr(_activity, "on_timeout", None)
    _activity.on_timeout = on_timeout
    try:
        yield
    finally:
        _activity.on_timeout = previous
