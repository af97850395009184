"""Which runs a window holds, said the same way by every command.

A window (``--since``/``--until``) holds the runs that *started* in it. Three things make counts
differ between commands without anyone saying why, and this module says them:

* a window with no runs: judging commands (``check``, ``budgets``, ``replay``, the reports)
  stop with exit 2 — nothing judged is not a pass — and listing commands (``runs``, ``cost``)
  print the same one line and exit 0 ("no runs between X and Y; the store spans A..B");
* runs without a start time: they are in every all-time view and in no bounded window, so a
  bounded window counts and names them;
* Claude Code subagents folded into their sessions (``runs``), and runs counted once in each
  group they belong to (``cost --by model`` when a run used several models).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from zoneinfo import ZoneInfo


from reconcile.errors import NoRuns
from reconcile.when import Window
from reconcile.engine import Engine

# A note names this many runs; more are counted ("and 12 more").
NAMED = 5


@dataclass(frozen=True)
class Coverage:
    """What a window holds of a store's runs."""

    where: str  # the store, or the dataset, as the user named it
    window: Window
    total: int  # every run in the store
    within: int  # the runs that started in the window (every run, when the window is open)
    first: datetime | None  # the earliest and latest start in the store
    last: datetime | None
    undated: int  # runs with no start time: in no bounded window
    undated_ids: tuple[str, ...]  # the first NAMED of them
    folded: int = 0  # Claude Code sub-agent runs in the window, which `reconcile runs` folds into their sessions

    @property
    def bounded(self) -> bool:
        return self.window.since is not None or self.window.until is not None

    def empty_line(self) -> str:
        """The one line every command prints for a window with no runs."""
        if not self.total:
            return (f"no runs: {self.where} holds no runs. Load the night's journals or transcripts first: "
                    "reconcile ingest PATH (it lists what it passed over).")
        span = (f"the store spans {_moment(self.first, self.window.zone)} .. {_moment(self.last, self.window.zone)}"
                if self.first else "no run in the store has a start time")
        return f"no runs {self.window_words()}; {span} ({self.total:,} run(s){self._undated_words()})."

    def window_words(self) -> str:
        """``between X and Y (zone)``, ``since X (zone)``, ``before Y (zone)``, or ``at all``."""
        since, until, zone = self.window.since, self.window.until, self.window.zone
        if since and until:
            return f"between {_moment(since, zone)} and {_moment(until, zone)} ({zone})"
        if since:
            return f"since {_moment(since, zone)} ({zone})"
        return f"before {_moment(until, zone)} ({zone})" if until else "at all"

    def undated_line(self) -> str | None:
        """Runs a bounded window cannot hold because nobody recorded when they started, named."""
        if not (self.bounded and self.undated):
            return None
        more = f" and {self.undated - len(self.undated_ids):,} more" if self.undated > len(self.undated_ids) else ""
        return (f"{self.undated:,} run(s) have no start time and are in no --since/--until window: "
                f"{', '.join(self.undated_ids)}{more} (without a window they are listed).")

    def _undated_words(self) -> str:
        return f", {self.undated:,} without a start time" if self.undated else ""


def coverage(engine: Engine, window: Window | None, where: str = "the store") -> Coverage:
    """How many runs ``window`` holds, the store's span, and the runs without a start time."""
    window = window or Window()
    total, within, first, last, undated, folded = engine.rows(
        f"select count(*), count(*) filter (where {_IN_WINDOW}), min(started_at), max(started_at), "
        "count(*) filter (where started_at is null), count(*) filter (where source_format = 'claude_code' "
        f"and parent_run_id is not null and {_IN_WINDOW}) from runs",
        {"since": window.since, "until": window.until})[0]
    ids = tuple(r[0] for r in engine.rows(
        f"select run_id from runs where started_at is null order by run_id limit {NAMED}")) if undated else ()
    return Coverage(where, window, total, within, first, last, undated, ids, folded)


# Started in the window; a run without a start time is in the open window (all time) only.
_IN_WINDOW = ("($since is null or started_at >= $since) and ($until is null or started_at < $until) "
              "and (started_at is not null or ($since is null and $until is null))")


def require_runs(engine: Engine, window: Window | None, where: str = "the store") -> Coverage:
    """The window's coverage; a window (or store) with no runs is an error (exit 2) for a judging command."""
    found = coverage(engine, window, where)
    if not found.within:
        raise NoRuns(found.empty_line())
    return found


def _moment(moment: datetime | None, zone: str) -> str:
    return moment.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M") if moment else "unknown"
