"""``reconcile watch``: follow the journals during the night and alert on the rate, not the morning after.

Each round (every ``interval`` seconds) opens the store, loads what changed under the paths (an unchanged
file costs a ``stat``; a file whose writer is mid-line waits for the rest), judges the runs that ended since
(the verdicts are kept, so no run is judged twice), reads every signal over the sliding window (the last hour
against that hour of the seven nights before, ``signals.sliding_readings``), finds the runs gone silent for
longer than their wall-clock budget (or ``stuck_after``), and closes the store again, so that other commands
can use it between rounds.

An **alert** is raised once: a signal that crossed its threshold for a key, a run gone silent. It is written to
``watch_alerts`` before it is printed (and handed to ``--on-alert``), and marked delivered after: a restart
resumes from the store and says nothing twice, and an alert a stop cut off before it was printed is printed
by the next round. When the crossing clears (or the run speaks, or ends) the alert clears; a crossing that
comes back later is a new alert.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from reconcile import store
from reconcile.checks import load_checks, run_checks
from reconcile.checks.signal_files import load_signals
from reconcile.checks.signals import shown, sliding_readings
from reconcile.engine import DuckDBEngine
from reconcile.errors import StoreBusy
from reconcile.ingest.driver import ingest
from reconcile.store.status import ABANDONED_AFTER_SECONDS

Emit = Callable[[dict[str, Any]], None]
DEFAULT_STUCK_AFTER = 3600.0  # seconds of silence that make a run with no wall-clock budget stuck
STUCK_HORIZON = timedelta(hours=24)  # a run silent longer than this is abandoned, not stuck: no page for it
HOLD_UNFINISHED = 30.0  # seconds a file's unfinished last line is waited for (a writer that died is not)
ON_ALERT_TIMEOUT = 30.0


@dataclass
class Watch:
    """What ``reconcile watch`` follows and how; ``round`` does one pass and returns what it said."""

    db: Path
    paths: list[str]
    emit: Emit
    config: Any = None
    window: timedelta = timedelta(hours=1)
    stuck_after: float = DEFAULT_STUCK_AFTER
    on_alert: str | None = None
    lock_wait: float = 1.0  # how long a round waits for a store another command holds, before trying next round
    clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
    notes: Callable[[str], None] = lambda text: None  # what is not an alert (loaded, judged, busy, a hook failed)
    checks_dir: list[Path] | None = None
    busy: bool = field(default=False, init=False)

    def __post_init__(self) -> None:
        self.signals = load_signals(config=self.config)
        # the checks that judge one run: what feeds the per-run signals; those that judge the store (a bill against the
        # journals, a week against the weeks before) are the morning's, and would read the whole store every round
        self.checks = [c for c in load_checks(self.checks_dir) if c.judges == "each run"]
        argv = shlex.split(self.on_alert) if self.on_alert else []
        self.hook = argv  # parsed once: a bad --on-alert is an error at start, not at 03:00

    def round(self) -> list[dict[str, Any]]:
        """One pass: load, judge, read the signals, raise and clear alerts. Returns the events emitted."""
        try:
            con = store.connect(self.db, wait=self.lock_wait)
        except StoreBusy:
            if not self.busy:
                self.notes(f"the store {self.db} is in use by another command; trying again next round")
            self.busy = True
            return []
        self.busy = False
        try:
            report = ingest(con, self.paths, window=self.config.window if self.config is not None else None,
                            abandoned_after=self.config.abandoned_after if self.config is not None else ABANDONED_AFTER_SECONDS,
                            now=self.clock(),
                            hold_unfinished=HOLD_UNFINISHED,
                            keep_totals=False)  # kept below, the runs it landed priced once for the whole round
            changed = [f for f in report.files if f.status != "unchanged"]
            if changed:
                self.notes(f"loaded {len(changed)} changed file(s): {sum(f.loaded for f in changed):,} line(s)")
            engine = DuckDBEngine(con)
            with store.kept_current(engine):  # the checks and the signals read the round's runs from there
                self._judge_ended(engine)
                now = self.clock()
                raised = {**self._signal_alerts(engine, now), **self._stuck_alerts(engine, now)}
            return self._settle(con, raised, now)
        finally:
            con.close()

    def _judge_ended(self, engine: DuckDBEngine) -> None:
        """Judge the runs that ended and no check has judged yet; their verdicts are kept (the per-run rates)."""
        waiting = engine.rows("""select count(*) from runs r where r.status <> 'running'
                                 and not exists (select 1 from kept_judgements j where j.run_id = r.run_id)""")[0][0]
        if waiting:
            found = run_checks(engine, self.checks, config=self.config, record=False, keep=True)
            with_findings = len({f.run_id for f in found.findings if f.run_id and f.severity == "error"})
            self.notes(f"judged {waiting} run(s) that ended; runs with an error finding: {with_findings}")

    def _signal_alerts(self, engine: DuckDBEngine, now: datetime) -> dict[tuple[str, str, str], dict[str, Any]]:
        found = {}
        for signal, reading in sliding_readings(engine, self.signals, now, self.window):
            if reading.crossed:
                row = reading.as_row(signal)
                text = (f"{signal.name} {reading.key}: {row['shown']} over {reading.window}"
                        + (f" against {row['baseline_shown']}" if row["baseline_shown"] else "") + f" ({reading.why})")
                found[("signal", signal.name, reading.key)] = {**row, "text": text}
        return found

    def _stuck_alerts(self, engine: DuckDBEngine, now: datetime) -> dict[tuple[str, str, str], dict[str, Any]]:
        """Runs with no end whose last line is older than their wall-clock budget (else ``stuck_after``), and
        younger than a day (nobody is paged for last month's crash). The ingest has just called such a run
        ``abandoned`` (silent past its budget): this is where that is said while it still matters."""
        rows = engine.records(
            """with last as (select r.run_id, r.agent, r.max_wall_seconds, r.source_file,
                                    greatest(max(r.started_at), max(s.started_at)) as last_line
                             -- a line older than the horizon makes no alert: the steps before it are not read
                             from runs r left join steps s on s.run_id = r.run_id and s.started_at > $now - $horizon
                             where r.status in ('running', 'abandoned') group by all)
               select *, coalesce(max_wall_seconds, $after) as limit_seconds,
                      date_diff('millisecond', last_line, $now) / 1000.0 as silent_seconds
               from last
               where last_line is not null and last_line > $now - $horizon
                 and date_diff('millisecond', last_line, $now) / 1000.0 > coalesce(max_wall_seconds, $after)""",
            {"now": now, "after": self.stuck_after, "horizon": STUCK_HORIZON})
        return {("stuck", "stuck_run", row["run_id"]): {
            "run_id": row["run_id"], "agent": row["agent"], "file": row["source_file"],
            "last_line": row["last_line"].isoformat(), "silent_seconds": row["silent_seconds"],
            "limit_seconds": row["limit_seconds"],
            "text": (f"run {row['run_id']} ({row['agent'] or 'no agent'}) silent for {shown(row['silent_seconds'], 'seconds')}"
                     f", past its {'wall-clock budget' if row['max_wall_seconds'] is not None else 'stuck-after time'} "
                     f"of {shown(row['limit_seconds'], 'seconds')}, with no end")} for row in rows}

    def _settle(self, con, raised: dict[tuple[str, str, str], dict[str, Any]], now: datetime) -> list[dict[str, Any]]:
        """Raise what is new, clear what no longer holds; print (and hand on) each once."""
        held = {(k, n, key): (delivered, alert) for k, n, key, delivered, alert in con.execute(
            "select kind, name, key, delivered, alert from watch_alerts where cleared_at is null").fetchall()}
        new = [key for key in raised if key not in held]
        gone = [key for key in held if key not in raised]
        undelivered = [key for key, (delivered, _) in held.items() if not delivered and key in raised]
        events = []
        con.execute("begin")
        for kind, name, key in new:
            event = {"type": "alert" if kind == "signal" else "stuck", "at": now.isoformat(), "name": name, "key": key,
                     **raised[(kind, name, key)]}
            con.execute("insert into watch_alerts values (?, ?, ?, ?, null, false, ?)",
                        [kind, name, key, now, json.dumps(event, default=str)])
            events.append(((kind, name, key), event))
        for kind, name, key in gone:
            con.execute("update watch_alerts set cleared_at = ? where kind = ? and name = ? and key = ? "
                        "and cleared_at is null", [now, kind, name, key])
            events.append((None, {"type": "cleared", "at": now.isoformat(), "name": name, "key": key,
                                  "was": json.loads(held[(kind, name, key)][1])["type"]}))
        con.execute("commit")
        for key in undelivered:  # raised before a stop cut the round short: said now
            events.insert(0, (key, json.loads(held[key][1])))
        for key, event in events:
            self.emit(event)
            self._hand_on(event)
            if key is not None:
                con.execute("update watch_alerts set delivered = true where kind = ? and name = ? and key = ? "
                            "and cleared_at is null", list(key))
        return [event for _, event in events]

    def _hand_on(self, event: dict[str, Any]) -> None:
        """``--on-alert CMD``: CMD runs with the event as JSON on its standard input (no shell)."""
        if not self.hook:
            return
        try:
            done = subprocess.run(self.hook, input=json.dumps(event, default=str) + "\n", text=True,
                                  capture_output=True, timeout=ON_ALERT_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            self.notes(f"--on-alert {self.hook[0]} failed: {exc}")
            return
        if done.returncode:
            self.notes(f"--on-alert {self.hook[0]} exited {done.returncode}: {done.stderr.strip()[:200]}")
