"""Seed 001's harness as a client: four ceilings with their wrap-up turns, the loop detector, one budget
for an agent tree — each reconciles clean — and the planted defects, each found.

Every run is written by ``harness_seed001.run`` (the seed's ``Budget``, ``run``, ``wrap_up`` and
``LoopDetector``, transcribed) into one folder, ingested once, checked once. The seed's own words
are journalled: status ``complete`` (→ succeeded) or ``incomplete`` (→ by its stop reason), and
stop strings such as ``step limit (20)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from conformance_support import assert_replay_finds_each_stop
from conformance_support import (Audit, NIGHT, SimClock, assert_answer_misread, assert_answer_overwritten, assert_late_detector,
                                 assert_loaded_whole, assert_lost_result, audit, journal_steps, model_steps,
                                 only_errors, show)
from harness_seed001 import (Budget, DriftingBudget, Faults, Harness, LateLoopDetector, LoopDetector, ScriptedModel,
                             run_sync, world_tools)
from reconcile.journal import Journal

LOOP = "repeated the same tool calls 3 times without progress"
ANSWER = "The retry loop in src/retry.py has no backoff cap; test_retry races it."


def search(q: str = "why is test_retry flaky"):
    return [("search", {"q": q})]


def read(path: str):
    return [("read_file", {"path": path})]


DISTINCT_READS = [read(f"src/module_{i}.py") for i in range(40)]


@dataclass(frozen=True)
class Scenario:
    script: list
    stopped_by: str | None      # Result.stopped_by (None: complete)
    result_status: str          # Result.status: complete / incomplete
    status: str                 # the canonical status
    sub_script: list | None = None
    then: object = None
    budget: type = Budget
    detector: type = LoopDetector
    faults: Faults = field(default_factory=Faults)


SCENARIOS = {
    "complete": Scenario([search(), read("src/retry.py"), ANSWER], None, "complete", "succeeded"),
    # ---- the four ceilings, each followed by the tool-free wrap-up turn
    "step_limit": Scenario(DISTINCT_READS, "step limit (20)", "incomplete", "budget_exceeded"),
    # one ~100k-token document re-sent on every later turn: the third call passes 200,000
    "token_limit": Scenario([[("fetch_document", {"url": "https://wiki/design-history"})], read("src/retry.py"),
                             read("src/backoff.py")], "token limit (200,000)", "incomplete", "budget_exceeded"),
    # a 99 s query per step: after three steps 303 s of the 300 s
    "time_limit": Scenario([[("slow_query", {"sql": f"select count(*) from runs where day = {d}"})] for d in range(9)],
                           "time limit (300s)", "incomplete", "timed_out"),
    # output-heavy turns (30k tokens of generated code each): $2.00 spent before 200,000 tokens
    "cost_limit": Scenario([{"calls": [("write_file", {"path": f"gen/mod_{i}.py", "text": f"# generated {i}"})],
                             "output": 30_000} for i in range(9)], "cost limit ($2.00)", "incomplete",
                           "budget_exceeded"),
    # ---- the loop detector: the same step three times, in a row or anywhere in the run
    "loop": Scenario([search(), search(), search(), ANSWER], LOOP, "incomplete", "stalled"),
    "loop_anywhere": Scenario([search(), read("a.py"), search(), read("b.py"), search(), ANSWER], LOOP,
                              "incomplete", "stalled"),
    # ---- one budget for the tree: a sub-agent charges its parent's Budget
    "tree_complete": Scenario([search(), [("delegate", {"task": "read the retry module and report"})], ANSWER],
                              None, "complete", "succeeded",
                              sub_script=[read("src/retry.py"), read("src/backoff.py"), "No backoff cap."]),
    # the sub-agent runs the shared budget out (2 parent steps + 18 of its own = 20): both wrap up
    "tree_exhausted": Scenario([search(), [("delegate", {"task": "read every module"})], ANSWER],
                               "step limit (20)", "incomplete", "budget_exceeded", sub_script=DISTINCT_READS),
    # ---- planted defects
    "fault_ignore_final": Scenario([search(), read("src/retry.py"), ANSWER] + DISTINCT_READS, "step limit (20)",
                                   "incomplete", "budget_exceeded", faults=Faults(ignore_final=True)),
    "fault_misread_final": Scenario([search(), read("src/retry.py"), ANSWER] + DISTINCT_READS, "step limit (20)",
                                    "incomplete", "budget_exceeded", faults=Faults(misread_final=True)),
    "fault_ledger_drift": Scenario([search(), read("src/retry.py"), ANSWER], None, "complete", "succeeded",
                                   budget=DriftingBudget),
    "fault_lost_result": Scenario([search() + read("src/retry.py"), read("src/backoff.py"), ANSWER], None,
                                  "complete", "succeeded", faults=Faults(lose_batch_result=True)),
    "fault_late_detector": Scenario([search()] * 5 + [ANSWER], LOOP, "incomplete", "stalled",
                                    detector=LateLoopDetector),
}
DESIGNED = [name for name in SCENARIOS if not name.startswith("fault_")]
SUB_AGENTS = {"tree_complete": ("succeeded", None), "tree_exhausted": ("budget_exceeded", "step limit (20)")}


def run_id(name: str) -> str:
    return f"s001-{name}"


@dataclass(repr=False)
class Night:
    audit: Audit
    results: dict
    journals: Path

    def journal(self, name: str) -> Path:
        return self.journals / f"{name}.jsonl"


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Night:
    root = tmp_path_factory.mktemp("seed001")
    journals = root / "journals"
    journals.mkdir()
    results = {}
    for position, (name, s) in enumerate(SCENARIOS.items()):
        clock = SimClock(NIGHT + timedelta(minutes=15 * position))
        models = {"main": ScriptedModel(s.script, clock, then=s.then)}
        if s.sub_script is not None:
            models["sub"] = ScriptedModel(s.sub_script, clock)
        with Journal(journals / f"{name}.jsonl", clock=clock) as journal:
            h = Harness(journal, clock, world_tools(clock), models, faults=s.faults, new_detector=s.detector)
            results[name] = run_sync("Find out why test_retry is flaky.", s.budget(clock=clock.monotonic), h,
                                     run_id(name))
    return Night(audit(journals, root), results, journals)


# ---- the harness itself: the transcription ends where the seed says


@pytest.mark.parametrize("name", SCENARIOS)
def test_harness_result_as_the_seed_says(night, name):
    result = night.results[name]
    assert (result.status, result.stopped_by) == (SCENARIOS[name].result_status, SCENARIOS[name].stopped_by)


@pytest.mark.parametrize("name", [n for n in SCENARIOS if SCENARIOS[n].result_status == "incomplete"])
def test_wrap_up_is_one_tool_free_turn(night, name):
    steps = journal_steps(night.journal(name), run_id(name))
    events = [i for i, s in enumerate(steps) if s["kind"] == "event" and s["event"] == "wrap_up"]
    assert len(events) == 1
    after = steps[events[0] + 1]
    assert after["kind"] == "model" and not after.get("tool_calls") and after["final"] is False
    assert after is steps[-1]


def test_tree_shares_one_budget(night):
    budget = night.results["tree_exhausted"].budget
    assert budget.steps == 20
    parent = model_steps(night.journal("tree_exhausted"), run_id("tree_exhausted"))
    sub = model_steps(night.journal("tree_exhausted"), run_id("tree_exhausted") + "-sub1")
    assert (len(parent), len(sub)) == (3, 19)  # 2 + 18 charged, each with its wrap-up turn


def test_every_line_loaded(night):
    assert_loaded_whole(night.audit)


# ---- reconcile: statuses and raw stop reasons


@pytest.mark.parametrize("name", SCENARIOS)
def test_status_and_raw_stop_reason(night, name):
    row = night.audit.run(run_id(name))
    expected = SCENARIOS[name].stopped_by
    assert row["status"] == SCENARIOS[name].status, row
    # "complete" comes with no stop reason (the seed gives none); reconcile may show the harness's word
    assert row["stop_reason"] == expected or (expected is None and row["stop_reason"] in (None, "complete")), row


@pytest.mark.parametrize("name", SUB_AGENTS)
def test_sub_agent_status(night, name):
    row = night.audit.run(run_id(name) + "-sub1")
    status, reason = SUB_AGENTS[name]
    assert row["status"] == status and (row["stop_reason"] == reason or
                                        (reason is None and row["stop_reason"] in (None, "complete"))), row


# ---- reconcile: designed stops are not errors


@pytest.mark.parametrize("name", DESIGNED)
def test_designed_stop_has_no_error_finding(night, name):
    ids = [run_id(name)] + ([run_id(name) + "-sub1"] if name in SUB_AGENTS else [])
    errors = [f for rid in ids for f in night.audit.errors(rid)]
    assert not errors, f"{name}: the fence stopped as designed, yet:\n{show(errors)}"


# ---- reconcile: planted defects


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
    # the sub-agents too: each checks the tree's shared budget (the root's limits, the tree's spend so far)
    designed = [run_id(name) for name in DESIGNED] + [run_id(name) + "-sub1" for name in SUB_AGENTS]
    assert_replay_finds_each_stop(night.audit, designed, [run_id("fault_late_detector")])
