"""What the three seed harnesses share in this suite: a simulated clock, and the morning-after audit.

Nothing here is a harness. ``SimClock`` stands in for ``time.monotonic`` / ``Date.now`` so every
run is deterministic and nothing sleeps; ``audit`` loads one folder of journals into a fresh store
through reconcile's own command line (``ingest`` once, then ``check --json`` and ``runs --json``),
the way a user's cron job would; the helpers read a journal file back so a test can name the step
a finding should point at without asking reconcile.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

NIGHT = datetime(2026, 11, 28, 22, 0, tzinfo=timezone.utc)  # every scenario runs on this (priced) night


class SimTimeout(Exception):
    """A tool that would still be running when its caller's timeout ran out."""


class SimClock:
    """A monotonic clock in seconds that only moves when something spends time.

    ``sleep`` advances it; inside ``deadline(seconds)`` a sleep that would pass the deadline advances
    it to the deadline and raises ``SimTimeout`` instead: the simulated ``future.result(timeout=…)``.
    ``utc()`` is the wall-clock time the journal stamps (the night's start plus the elapsed time).
    """

    def __init__(self, start: datetime = NIGHT):
        self.start = start
        self.now = 0.0
        self._deadlines: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def millis(self) -> float:  # Date.now() for the TypeScript seed
        return self.now * 1000.0

    def utc(self) -> datetime:
        return self.start + timedelta(seconds=self.now)

    __call__ = utc  # Journal(clock=…) calls it

    def sleep(self, seconds: float) -> None:
        if self._deadlines and self.now + seconds > self._deadlines[-1]:
            self.now = self._deadlines[-1]
            raise SimTimeout()
        self.now += seconds

    @contextlib.contextmanager
    def deadline(self, seconds: float):
        self._deadlines.append(self.now + seconds)
        try:
            yield
        finally:
            self._deadlines.pop()


# ---------------------------------------------------------------------------------------------
# The audit: reconcile's command line, in-process


@dataclass(repr=False)
class Audit:
    """What reconcile said about one folder of journals."""

    ingest: dict[str, Any]
    check: dict[str, Any] | None
    check_error: str | None
    runs: list[dict[str, Any]] | None
    runs_error: str | None
    findings_by_run: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    replayed: dict[str, dict[str, Any]] = field(default_factory=dict)  # reconcile replay --as-run, by run

    def __repr__(self) -> str:  # short, so a failing assertion shows its message, not the whole store
        return f"<Audit of {len(self.runs or [])} runs, {len((self.check or {}).get('findings', []))} findings>"

    def run(self, run_id: str) -> dict[str, Any]:
        assert self.runs is not None, f"reconcile runs --json failed: {self.runs_error}"
        rows = [r for r in self.runs if r["run_id"] == run_id]
        assert rows, f"run {run_id!r} is not in `reconcile runs` (rows: {[r['run_id'] for r in self.runs]})"
        return rows[0]

    def findings(self, run_id: str, severity: str | None = None) -> list[dict[str, Any]]:
        assert self.check is not None, f"reconcile check --json failed: {self.check_error}"
        return [f for f in self.findings_by_run.get(run_id, []) if severity is None or f["severity"] == severity]

    def errors(self, run_id: str) -> list[dict[str, Any]]:
        return self.findings(run_id, "error")


def _cli(args: list[str], cwd: Path) -> tuple[int, str, str]:
    """``reconcile ARGS`` through the real entry point, in this process (no interpreter start-up)."""
    from reconcile.cli import main

    out, err = io.StringIO(), io.StringIO()
    previous = Path.cwd()
    saved = {k: os.environ.pop(k) for k in ("RECONCILE_DB", "RECONCILE_DEBUG", "RECONCILE_TZ") if k in os.environ}
    os.chdir(cwd)  # no reconcile.toml / pyproject.toml of the project is read as configuration
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(args)
    finally:
        os.chdir(previous)
        os.environ.update(saved)
    return code, out.getvalue(), err.getvalue()


def audit(journals: Path, workdir: Path) -> Audit:
    """Ingest the folder once into a fresh store, then run every check and list the runs."""
    db = workdir / "conformance.duckdb"
    code, out, err = _cli(["ingest", str(journals), "--db", str(db), "--json"], workdir)
    assert code == 0, f"reconcile ingest exited {code}: {err}{out[-2000:]}"
    ingest = json.loads(out)
    code, out, err = _cli(["check", "--json", "--exit-zero", "--db", str(db)], workdir)
    check, check_error = (json.loads(out), None) if code == 0 else (None, f"exit {code}: {err.strip()}")
    code, out, err = _cli(["runs", "--json", "--no-fold-subagents", "--db", str(db)], workdir)
    runs, runs_error = (json.loads(out), None) if code == 0 else (None, f"exit {code}: {err.strip()}")
    result = Audit(ingest, check, check_error, runs, runs_error)
    code, out, err = _cli(["replay", "--as-run", "--runs", "--json", "--db", str(db)], workdir)
    assert code == 0, f"reconcile replay exited {code}: {err}"
    result.replayed = {row["run_id"]: row for row in json.loads(out)["candidates"][0]["runs"]}
    for finding in (check or {}).get("findings", []):
        result.findings_by_run.setdefault(finding["run_id"], []).append(finding)
    return result


def assert_loaded_whole(result: Audit) -> None:
    """Every line every harness wrote was loaded: the writer refused nothing it let through."""
    totals = result.ingest["totals"]
    assert totals["rejected"] == 0, [(f["path"], f["notes"]) for f in result.ingest["files"] if f["rejected"]]
    # the one documented skip: a side effect's ``started`` record, completed by its outcome
    for entry in result.ingest["files"]:
        if entry["skipped"]:
            assert entry["notes"] and all(n.startswith("in-flight record of a tool step") for n in entry["notes"]), \
                (entry["path"], entry["notes"])


def key_named(key: str, detail: str) -> bool:
    """The detail names the idempotency key: whole, or by a prefix of at least 12 hex digits (enough to
    find the step; the full key is on the step in the store)."""
    import re
    return any(len(word) >= 12 and key.startswith(word) for word in re.findall(r"[0-9a-f]+", detail))


def show(findings: list[dict[str, Any]]) -> str:
    return "\n".join(f"  {f['severity']} {f['check']} step={f['step']}: {f['detail']}" for f in findings) or "  (none)"


# ---------------------------------------------------------------------------------------------
# Reading a journal back (what the harness wrote, independent of reconcile)


def journal_steps(path: Path, run_id: str) -> list[dict[str, Any]]:
    """The run's step lines in the order written (a started record and its outcome both appear)."""
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [rec for rec in lines if rec.get("run_id") == run_id and rec.get("type") == "step"]


def model_steps(path: Path, run_id: str) -> list[dict[str, Any]]:
    return [s for s in journal_steps(path, run_id) if s["kind"] == "model"]


def tool_outcomes(path: Path, run_id: str) -> list[dict[str, Any]]:
    return [s for s in journal_steps(path, run_id) if s["kind"] == "tool" and s.get("status") != "started"]


# ---- the planted defects every seed's suite plants, and what finding each must get

def only_errors(audit: Audit, run: str, expected: set[str]) -> list[dict[str, Any]]:
    """The run's error findings: at least one of ``expected``'s checks, and no other check."""
    errors = audit.errors(run)
    found = {f["check"] for f in errors}
    assert found & expected, f"{run}: expected {sorted(expected)}, found:\n{show(errors)}"
    assert found <= expected, f"{run}: other checks erred too:\n{show(errors)}"
    return errors


def assert_answer_overwritten(audit: Audit, run: str, journal: Path, also: frozenset = frozenset()) -> None:
    """A budget stop after a final answer: found by final_answer_not_overwritten at the answer's step."""
    errors = only_errors(audit, run, {"final_answer_not_overwritten", *also})
    final = [s["idx"] for s in model_steps(journal, run) if s.get("final")]
    assert [f["step"] for f in errors if f["check"] == "final_answer_not_overwritten"] == final[:1], show(errors)


def assert_answer_misread(audit: Audit, run: str, journal: Path, also: frozenset = frozenset()) -> None:
    """An answer the loop misread — the model ended its turn with text and no tool call, journalled final=false as the
    loop saw it — then a budget stop: found by final_answer_not_overwritten at that turn (issue 47, item 5)."""
    errors = only_errors(audit, run, {"final_answer_not_overwritten", *also})
    steps = model_steps(journal, run)
    assert not any(s.get("final") for s in steps)  # the harness never marked it: only the transcript tells
    answer = [s["idx"] for s in steps if s.get("finish_reason") in ("end_turn", "stop") and not s.get("tool_calls")
              and s.get("text")]
    found = [f for f in errors if f["check"] == "final_answer_not_overwritten"]
    assert [f["step"] for f in found] == answer[:1] and "did not take it as final" in found[0]["detail"], show(errors)


def assert_lost_result(audit: Audit, run: str, journal: Path, also: frozenset = frozenset()) -> None:
    """A tool result never journalled: found by tool_calls_paired at the model step that asked for it."""
    errors = only_errors(audit, run, {"tool_calls_paired", "steps_equal_tool_results", *also})
    answered = {r["call_id"] for r in tool_outcomes(journal, run)}
    lost = [s["idx"] for s in model_steps(journal, run)
            if any(c["call_id"] not in answered for c in s.get("tool_calls", []))]
    paired = [f for f in errors if f["check"] == "tool_calls_paired"]
    assert paired and [f["step"] for f in paired] == lost, show(errors)


def assert_late_detector(audit: Audit, run: str, journal: Path, fires_by_call: int) -> None:
    """A loop detector that fired late: found by loop_stopped_at_limit at the ``fires_by_call``-th model call
    (1-based: where the declared detector fires, its result, or later)."""
    errors = only_errors(audit, run, {"loop_stopped_at_limit"})
    fired = [s["idx"] for s in model_steps(journal, run)][fires_by_call - 1]
    assert all(f["step"] is None or f["step"] >= fired for f in errors), show(errors)


FENCE_STOPS = ("budget_exceeded", "timed_out", "stalled")


def assert_replay_finds_each_stop(result: Audit, designed: list[str], fence_defects: list[str]) -> None:
    """``reconcile replay --as-run`` walks each run with its own limits and detector, as its fence should have:
    every stop a designed run's fence made is found where it happened, by the ceiling its stop reason names, and
    a run that ended otherwise is left as it was; each planted fence defect is a run the replay stops elsewhere."""
    from reconcile.store.status import named_limit

    for run_id in designed:
        row = result.replayed[run_id]
        if row["status"] in FENCE_STOPS:
            assert (row["outcome"], row["new_status"]) == ("same_stop", row["status"]), row
            limit = named_limit(row["stop_reason"])  # seed 003 writes only its status: no limit named
            assert limit is None or row["ceiling"] == limit, row
        else:
            assert row["outcome"] == "unchanged", row
    for run_id in fence_defects:
        assert result.replayed[run_id]["outcome"] in ("cut", "runs_on"), result.replayed[run_id]
