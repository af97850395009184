"""Seed 000's harness as a client: every designed stop reconciles clean, every planted defect is found.

All runs are written by ``harness_seed000.run_loop`` (the seed's fence, transcribed) into one folder,
ingested once, checked once. Expectations come from the seed: its stop strings map to the
canonical statuses (seed 003's table), a stop the fence made as designed is not an error, and the
planted defects are found by the check that names them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from conformance_support import assert_replay_finds_each_stop
from conformance_support import (Audit, NIGHT, SimClock, assert_answer_misread, assert_answer_overwritten, assert_late_detector,
                                 assert_loaded_whole, assert_lost_result, audit, journal_steps, key_named,
                                 only_errors, show, tool_outcomes)
from harness_seed000 import Faults, Limits, ScriptedModel, run_loop, stub_tools
from reconcile.journal import Journal


def read(path: str, **extra) -> dict:
    return {"tool": "read_file", "args": {"path": path}, **extra}


def answer(text: str = "The flaky test is test_retry; it sleeps on a real clock.") -> dict:
    return {"final": True, "text": text}


@dataclass(frozen=True)
class Scenario:
    script: list[dict]
    stop: str                 # the seed's stop string the fence should return
    status: str               # the canonical status it maps to (seed 003's table)
    limits: Limits = field(default_factory=Limits)
    faults: Faults = field(default_factory=Faults)
    then: dict | None = None  # what the model keeps doing once its script runs out


DISTINCT_READS = [read(f"src/module_{i}.py") for i in range(30)]

SCENARIOS = {
    # ---- designed stops: each the stop reason the seed's table predicts
    "model_finished": Scenario([read("README.md"), read("tests/test_retry.py"), answer()],
                               "model_finished", "succeeded"),
    "max_steps": Scenario(DISTINCT_READS, "max_steps", "budget_exceeded"),
    # big_output: one log dump in the transcript makes the next prompt ~83k tokens (the fence is 60k)
    "max_prompt_tokens": Scenario([{"tool": "big_output"}, read("README.md")], "max_prompt_tokens",
                                  "budget_exceeded", then=read("setup.cfg")),
    "max_completion_tokens": Scenario([dict(r, completion=3000) for r in DISTINCT_READS], "max_completion_tokens",
                                      "budget_exceeded"),
    # sleep(300) against a 30 s tool timeout: 1 s model + 30 s per step; the 90 s fence fires after three
    # (checked before the repeat fingerprint, which would also have fired on the third timeout string)
    "max_wall_seconds": Scenario([], "max_wall_seconds", "timed_out", limits=Limits(max_wall_seconds=90.0),
                                 then={"tool": "sleep", "args": {"seconds": 300}}),
    # ok_forever with max_repeats=2: three identical results in a row is the designed stop
    "identical_tool_results": Scenario([], "identical_tool_results", "stalled", then={"tool": "ok_forever"}),
    # the seed fingerprints results, not calls: three different calls that all answer "ok" stop the run
    "varied_calls_same_result": Scenario([{"tool": "ok_forever", "args": {"query": q}} for q in
                                          ("open tickets", "tickets opened today", "tickets by owner")],
                                         "identical_tool_results", "stalled", then=read("README.md")),
    # a side effect that fails after it wrote; the model then finishes
    "raise_after_write": Scenario([{"tool": "raise_after_write", "args": {"path": "payout.csv"}},
                                   answer("The payout file could not be confirmed; it may exist.")],
                                  "model_finished", "succeeded"),
    # ---- planted defects
    "fault_ignore_final": Scenario([read("README.md"), read("tests/test_retry.py"), answer()] + DISTINCT_READS,
                                   "max_steps", "budget_exceeded", faults=Faults(ignore_final=True)),
    "fault_misread_final": Scenario([read("README.md"), read("tests/test_retry.py"), answer()] + DISTINCT_READS,
                                    "max_steps", "budget_exceeded", faults=Faults(misread_final=True)),
    "fault_ledger_drift": Scenario([read("README.md"), read("tests/test_retry.py"), answer()],
                                   "model_finished", "succeeded", faults=Faults(ledger_drift=True)),
    "fault_lost_result": Scenario([read("README.md"), read("tests/test_retry.py"), read("setup.cfg"), answer()],
                                  "model_finished", "succeeded", faults=Faults(lose_result_at=2)),
    "fault_late_detector": Scenario([], "identical_tool_results", "stalled", faults=Faults(late_detector=True),
                                    then={"tool": "ok_forever"}),
}
DESIGNED = [name for name in SCENARIOS if not name.startswith("fault_")]


def run_id(name: str) -> str:
    return f"s000-{name}"


@dataclass(repr=False)
class Night:
    audit: Audit
    outcomes: dict[str, dict]
    journals: Path
    workdir: Path

    def journal(self, name: str) -> Path:
        return self.journals / f"{name}.jsonl"


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Night:
    root = tmp_path_factory.mktemp("seed000")
    journals, workdir = root / "journals", root / "world"
    journals.mkdir()
    workdir.mkdir()
    outcomes = {}
    for position, (name, scenario) in enumerate(SCENARIOS.items()):
        clock = SimClock(NIGHT + timedelta(minutes=15 * position))
        model = ScriptedModel(scenario.script, clock, then=scenario.then)
        with Journal(journals / f"{name}.jsonl", clock=clock) as journal:
            outcomes[name] = run_loop(model, stub_tools(clock, workdir), "Find out why CI is flaky.",
                                      scenario.limits, journal=journal, run_id=run_id(name), clock=clock,
                                      faults=scenario.faults)
    return Night(audit(journals, root), outcomes, journals, workdir)


# ---- the harness itself (independent of reconcile): the transcription stops where the seed says


@pytest.mark.parametrize("name", SCENARIOS)
def test_harness_stops_as_the_seed_says(night, name):
    assert night.outcomes[name]["stop"] == SCENARIOS[name].stop


def test_repeat_fence_stops_on_the_third_identical_result(night):
    results = tool_outcomes(night.journal("identical_tool_results"), run_id("identical_tool_results"))
    assert [r["result_preview"] for r in results] == ["ok", "ok", "ok"]
    late = tool_outcomes(night.journal("fault_late_detector"), run_id("fault_late_detector"))
    assert len(late) == 4  # the planted late detector let a fourth through


def test_raise_after_write_left_its_file(night):
    assert (night.workdir / "payout.csv").exists()  # "model_finished or any budget stop — but the file exists"


def test_every_line_loaded(night):
    assert_loaded_whole(night.audit)


# ---- reconcile: statuses and raw stop reasons


@pytest.mark.parametrize("name", SCENARIOS)
def test_status_and_raw_stop_reason(night, name):
    row = night.audit.run(run_id(name))
    assert (row["status"], row["stop_reason"]) == (SCENARIOS[name].status, SCENARIOS[name].stop)


# ---- reconcile: designed stops are not errors


@pytest.mark.parametrize("name", DESIGNED)
def test_designed_stop_has_no_error_finding(night, name):
    errors = night.audit.errors(run_id(name))
    assert not errors, f"{name}: the fence stopped as designed, yet:\n{show(errors)}"


def test_failed_side_effect_listed_as_warning(night):
    rid = run_id("raise_after_write")
    started = [s for s in journal_steps(night.journal("raise_after_write"), rid) if s.get("status") == "started"]
    assert len(started) == 1
    key, idx = started[0]["idempotency_key"], started[0]["idx"]
    warned = [f for f in night.audit.findings(rid, "warn") if f["check"] == "no_failed_side_effects"]
    assert warned, f"no no_failed_side_effects warning; findings:\n{show(night.audit.findings(rid))}"
    assert warned[0]["step"] == idx, show(warned)
    assert key_named(key, warned[0]["detail"]), show(warned)


# ---- reconcile: planted defects are found, by the check that names them, and nothing else errs


def test_final_answer_overwritten_by_budget_stop(night):
    assert_answer_overwritten(night.audit, run_id("fault_ignore_final"), night.journal("fault_ignore_final"))


def test_answer_misread_then_budget_stop(night):
    assert_answer_misread(night.audit, run_id("fault_misread_final"), night.journal("fault_misread_final"))


def test_ledger_drift(night):
    only_errors(night.audit, run_id("fault_ledger_drift"), {"ledger_matches_transcript"})


def test_lost_tool_result(night):
    assert_lost_result(night.audit, run_id("fault_lost_result"), night.journal("fault_lost_result"))


def test_late_loop_detector(night):
    assert_late_detector(night.audit, run_id("fault_late_detector"), night.journal("fault_late_detector"), 3)


def test_replaying_its_own_limits_finds_each_designed_stop(night):
    """reconcile replay --as-run walks each run as this fence does: the stops it designs are found where they
    happened, and the detector that fired late is stopped where it should have fired."""
    assert_replay_finds_each_stop(night.audit, [run_id(name) for name in DESIGNED], [run_id("fault_late_detector")])
