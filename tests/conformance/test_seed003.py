"""Seed 003's harness as a client: its six statuses, the no-progress rule, the retry policy — each reconciles
clean — and the planted defects, each found.

Every run is written by ``harness_seed003.runAgent`` (the seed's TypeScript, translated) into one
folder, ingested once, checked once. The seed's vocabulary is its status, journalled as both the
stop reason and the harness's status.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import pytest

from conformance_support import assert_replay_finds_each_stop
from conformance_support import (Audit, NIGHT, SimClock, assert_answer_misread, assert_answer_overwritten, assert_late_detector,
                                 assert_loaded_whole, assert_lost_result, audit, journal_steps, model_steps,
                                 only_errors, show, tool_outcomes)
from harness_seed003 import FALLBACK, PRIMARY, Budgets, Faults, Script, new_ctx, runAgent
from reconcile.journal import Journal


def search(q: str = "529 retry double send"):
    return ("tool", "search_docs", {"q": q})


def fetch(url: str = "https://docs.internal/retry"):
    return ("tool", "fetch_page", {"url": url})


ANSWER = ("answer", "The 529 retry re-sends because send_email had no idempotency key; fixed and on-call told.")
EMAIL = ("tool", "send_email", {"to": "oncall@example.com", "body": "529 retries double-send: key added."})
DISTINCT_SEARCHES = [search(f"retry topic {i}") for i in range(40)]


@dataclass(frozen=True)
class Scenario:
    items: list
    status: str
    budgets: Budgets = field(default_factory=Budgets)
    then: tuple | None = None
    cancelAt: int | None = None
    faults: Faults = field(default_factory=Faults)
    error_text: bool = True  # False: an invalid output journalled by its class alone, as the recipe writes it
    overload_fallback: bool = False  # the failure matrix's 529 policy: fall back after one retry


SCENARIOS = {
    "succeeded": Scenario([search(), fetch(), EMAIL, ANSWER], "succeeded"),
    "step_budget": Scenario(DISTINCT_SEARCHES, "budget_exceeded", budgets=Budgets(maxSteps=8)),
    # a retried call is charged to tokens, not steps: eight steps, nine model calls
    "step_budget_with_retry": Scenario(DISTINCT_SEARCHES[:3] + [("fail", 529)] + DISTINCT_SEARCHES[3:],
                                       "budget_exceeded", budgets=Budgets(maxSteps=8)),
    # 40k-token exports, each bounded to 2,000 tokens head+tail; the re-sent history passes 400,000 tokens
    "token_budget": Scenario([("tool", "fetch_long", {"url": f"https://exports/{i}.csv"}) for i in range(40)],
                             "budget_exceeded"),
    # a 200 s dependency: after three steps 606 s, past the 600 s wall clock
    "wall_clock": Scenario([("tool", "slow_fetch", {"url": f"https://slow/{i}"}) for i in range(10)], "timed_out"),
    # no progress: one call three times in the last six (nothing is judged under four calls)
    "stalled_repeats": Scenario([search(), fetch(), fetch(), fetch(), ANSWER], "stalled"),
    "stalled_from_start": Scenario([fetch(), fetch(), fetch(), fetch(), ANSWER], "stalled"),
    "stalled_oscillation": Scenario([search(), fetch(), search(), fetch(), ANSWER], "stalled"),
    # a polling tool flagged allowRepeat: six identical polls are not a stall
    "polling_allowed": Scenario([("tool", "poll_job", {"job_id": 7})] * 6 + [ANSWER], "succeeded"),
    # retries: a 529 retried on the same context (correct, per the seed)
    "transport_retry": Scenario([search(), ("fail", 529), fetch(), ANSWER], "succeeded"),
    # invalid output: fed back with the error, the schema and the field — the next call differs
    "invalid_output": Scenario([("tool", "fetch_page", {"link": "https://docs.internal/retry"}), fetch(), ANSWER],
                               "succeeded"),
    # rate limited twice: one retry on the primary, then the fallback route
    "rate_limit_fallback": Scenario([search(), ("fail", 429), ("fail", 429), fetch(), ANSWER], "succeeded"),
    # transport retries spent (maxRetries 3): the error is rethrown and the run fails
    "transport_exhausted": Scenario([search()] + [("fail", 529)] * 4 + [ANSWER], "failed"),
    "cancelled": Scenario([search(), fetch(), fetch("https://docs.internal/limits"), ANSWER], "cancelled", cancelAt=2),
    # the recipe's journalling of an invalid output: its class alone, the error fed back (the next call differs)
    "invalid_output_recipe": Scenario([("tool", "fetch_page", {"link": "https://docs.internal/retry"}), fetch(), ANSWER],
                                      "succeeded", error_text=False),
    # the failure matrix, provider 529 mid-run: one retry on the primary, then the fallback route
    "overload_fallback": Scenario([search(), ("fail", 529), ("fail", 529), fetch(), ANSWER], "succeeded",
                                  overload_fallback=True),
    # the code's transport policy on three 529s: retried on the primary each time — which the matrix says not to do
    "overloaded_on_primary": Scenario([search(), ("fail", 529), ("fail", 529), ("fail", 529), fetch(), ANSWER],
                                      "succeeded"),
    # ---- planted defects
    "fault_ignore_final": Scenario([search(), fetch(), ANSWER] + DISTINCT_SEARCHES, "budget_exceeded",
                                   budgets=Budgets(maxSteps=8), faults=Faults(ignore_final=True)),
    "fault_misread_final": Scenario([search(), fetch(), ANSWER] + DISTINCT_SEARCHES, "budget_exceeded",
                                    budgets=Budgets(maxSteps=8), faults=Faults(misread_final=True)),
    # an invalid output tried again on the unchanged context, journalled as the recipe writes it (its class alone)
    "fault_unchanged_retry": Scenario([("tool", "fetch_page", {"link": "https://docs.internal/retry"}), fetch(), ANSWER],
                                      "succeeded", faults=Faults(unchanged_retry=True), error_text=False),
    "fault_ledger_drift": Scenario([search(), fetch(), EMAIL, ANSWER], "succeeded", faults=Faults(ledger_drift=True)),
    "fault_lost_result": Scenario([search(), fetch(), fetch("https://docs.internal/limits"), ANSWER], "succeeded",
                                  faults=Faults(lose_result_at=2)),
    "fault_late_detector": Scenario([search(), fetch(), fetch(), fetch(), fetch(), ANSWER], "stalled",
                                    faults=Faults(late_detector=True)),
}
DESIGNED = [name for name in SCENARIOS if not name.startswith("fault_")]
RETRIED = ["transport_retry", "rate_limit_fallback", "invalid_output", "step_budget_with_retry", "invalid_output_recipe",
           "overload_fallback"]


def run_id(name: str) -> str:
    return f"s003-{name}"


@dataclass(repr=False)
class Night:
    audit: Audit
    statuses: dict[str, str]
    ctxs: dict
    journals: Path

    def journal(self, name: str) -> Path:
        return self.journals / f"{name}.jsonl"


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Night:
    root = tmp_path_factory.mktemp("seed003")
    journals = root / "journals"
    journals.mkdir()
    statuses, ctxs = {}, {}
    for position, (name, s) in enumerate(SCENARIOS.items()):
        clock = SimClock(NIGHT + timedelta(minutes=15 * position))
        with Journal(journals / f"{name}.jsonl", clock=clock) as jr:
            ctx = new_ctx(run_id(name), Script(s.items, s.then), clock, jr, budgets=s.budgets, cancelAt=s.cancelAt,
                          faults=s.faults, error_text=s.error_text, overload_fallback=s.overload_fallback)
            statuses[name], ctxs[name] = runAgent(ctx), ctx
    return Night(audit(journals, root), statuses, ctxs, journals)


# ---- the harness itself


@pytest.mark.parametrize("name", SCENARIOS)
def test_harness_status_as_the_seed_says(night, name):
    assert night.statuses[name] == SCENARIOS[name].status


def test_no_progress_rule_needs_four_calls(night):
    tools = [s["tool"] for s in tool_outcomes(night.journal("stalled_from_start"), run_id("stalled_from_start"))]
    assert tools == ["fetch_page"] * 4  # three identical calls are not judged yet (fewer than four in the window)


def test_retries_as_the_seed_says(night):
    steps = model_steps(night.journal("transport_retry"), run_id("transport_retry"))
    failed = [s for s in steps if s.get("error_class") == "transport"]
    assert len(failed) == 1 and steps[steps.index(failed[0]) + 1]["input_hash"] == failed[0]["input_hash"]
    rl = journal_steps(night.journal("rate_limit_fallback"), run_id("rate_limit_fallback"))
    assert [(s["kind"], s.get("model"), s.get("error_class")) for s in rl[2:6]] == [
        ("model", PRIMARY, "rate_limit"), ("model", PRIMARY, "rate_limit"), ("event", None, None),
        ("model", FALLBACK, None)]
    inv = model_steps(night.journal("invalid_output"), run_id("invalid_output"))
    assert inv[0]["error_class"] == "invalid_output" and inv[1]["input_hash"] != inv[0]["input_hash"]


def test_every_line_loaded(night):
    assert_loaded_whole(night.audit)


# ---- reconcile: statuses and raw stop reasons


@pytest.mark.parametrize("name", SCENARIOS)
def test_status_and_raw_stop_reason(night, name):
    row = night.audit.run(run_id(name))
    assert (row["status"], row["stop_reason"]) == (SCENARIOS[name].status, SCENARIOS[name].status), row


# ---- reconcile: designed stops are not errors; correct retries are not even warnings


@pytest.mark.parametrize("name", DESIGNED)
def test_designed_stop_has_no_error_finding(night, name):
    errors = night.audit.errors(run_id(name))
    assert not errors, f"{name}: the harness stopped as designed, yet:\n{show(errors)}"


@pytest.mark.parametrize("name", RETRIED)
def test_retry_policy_of_the_seed_is_not_flagged(night, name):
    # transport and rate-limit retries on the same context are correct per the seed; an invalid output
    # was fed back, not retried; a fallback after one retry is the seed's policy
    flagged = [f for f in night.audit.findings(run_id(name))
               if f["check"] in ("retries_mutate_context", "rate_limits_fall_back", "retries_within_limit")]
    assert not flagged, show(flagged)


def test_side_effect_keyed_before_it_ran(night):
    rid = run_id("succeeded")
    steps = journal_steps(night.journal("succeeded"), rid)
    started = [s for s in steps if s.get("status") == "started"]
    outcome = [s for s in steps if s["kind"] == "tool" and s["tool"] == "send_email" and s["status"] == "ok"]
    assert len(started) == 1 and outcome[0]["idx"] == started[0]["idx"]
    flagged = [f for f in night.audit.findings(rid) if "side_effect" in f["check"]]
    assert not flagged, show(flagged)


# ---- reconcile: planted defects


def test_final_answer_overwritten_by_budget_stop(night):
    # the answer turn it took for a progress note ran no tool, so the loop's steps (tool turns) never
    # counted it: a model call past max_steps the budget never saw — budgets_enforced says so too, rightly
    assert_answer_overwritten(night.audit, run_id("fault_ignore_final"), night.journal("fault_ignore_final"), also=frozenset({"budgets_enforced"}))


def test_answer_misread_then_budget_stop(night):
    # as fault_ignore_final: the turn it misread ran no tool, so its steps never counted it (budgets_enforced too)
    assert_answer_misread(night.audit, run_id("fault_misread_final"), night.journal("fault_misread_final"),
                          also=frozenset({"budgets_enforced"}))


def test_an_invalid_output_tried_again_unchanged_is_found_when_journalled_by_its_class_alone(night):
    rid = run_id("fault_unchanged_retry")
    steps = model_steps(night.journal("fault_unchanged_retry"), rid)
    assert "error" not in steps[0] and steps[0]["error_class"] == "invalid_output"  # the recipe: the class alone
    assert steps[1]["input_hash"] == steps[0]["input_hash"]  # nothing fed back: the same input again
    warned = [f for f in night.audit.findings(rid) if f["check"] == "retries_mutate_context"]
    assert [(f["step"], f["severity"]) for f in warned] == [(steps[1]["idx"], "warn")], show(night.audit.findings(rid))


def test_three_529s_on_the_primary_are_found_where_the_matrix_falls_back(night):
    """Seed 003's failure matrix, provider 529 mid-run: "fallback route after one retry, not four". Its code retries
    any 5xx on the same route up to maxRetries: the third attempt on the primary is the one the matrix moves."""
    rid = run_id("overloaded_on_primary")
    attempts = [s for s in model_steps(night.journal("overloaded_on_primary"), rid) if s.get("attempt")]
    third = next(s["idx"] for s in attempts if s.get("attempt") == 3)
    flagged = [f for f in night.audit.findings(rid) if f["check"] == "rate_limits_fall_back"]
    assert [f["step"] for f in flagged][:1] == [third] and all(f["severity"] == "warn" for f in flagged), \
        show(night.audit.findings(rid))
    routed = journal_steps(night.journal("overload_fallback"), run_id("overload_fallback"))
    assert [s.get("model") for s in routed if s["kind"] == "model"][-2:] == [FALLBACK, FALLBACK]


def test_ledger_drift(night):
    only_errors(night.audit, run_id("fault_ledger_drift"), {"ledger_matches_transcript"})


def test_lost_tool_result(night):
    # the loop counted the lost result in its own steps (journalled as ledger.tool_results): the ledger
    # disagrees with the journal too, rightly
    assert_lost_result(night.audit, run_id("fault_lost_result"), night.journal("fault_lost_result"), also=frozenset({"ledger_matches_transcript"}))


def test_late_loop_detector(night):
    assert_late_detector(night.audit, run_id("fault_late_detector"), night.journal("fault_late_detector"), 4)


def test_replaying_its_own_limits_finds_each_designed_stop(night):
    """reconcile replay --as-run walks each run as this fence does: the stops it designs are found where they
    happened, and the detector that fired late is stopped where it should have fired."""
    assert_replay_finds_each_stop(night.audit, [run_id(name) for name in DESIGNED], [run_id("fault_late_detector")])
