"""Random fence faults, judged by `reconcile check` and `reconcile replay --as-run`: the two agree on every run, and
both find exactly the calls the seeds' own fences would have refused (issue 47).

Each run is one of fence_faults.py's loops — seed 000's, 001's or 003's rules, one fault or none (``>`` for
``>=``, a stale ledger, the prompt ceiling held to the last call, a ceiling never checked, sub-agents on budgets
of their own), limits drawn at and around what the calls spend. The expectation is the first call of each run
the seed's own fence refuses, computed by the loop itself from the seeds' text.
"""

from __future__ import annotations

import re
from collections import Counter

import pytest

from conformance_support import audit, show
from fence_faults import write_night

RUNS = 160


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    root = tmp_path_factory.mktemp("fence-faults")
    journals = root / "journals"
    journals.mkdir()
    plans, refused = write_night(journals / "faults.jsonl", seed=47, runs=RUNS)
    return plans, refused, audit(journals, root)


def _enforced(result, run_id: str) -> list[dict]:
    return [f for f in result.findings(run_id) if f["check"] == "budgets_enforced"]


def test_the_draw_covers_every_fault_under_every_seed_s_rules(night):
    plans, refused, _ = night
    drawn = Counter((p.style, p.fault) for p in plans)
    for style, faults in {"seed000": ("none", "greater_than", "stale_ledger", "last_call_prompt", "unchecked"),
                          "seed001": ("none", "greater_than", "stale_ledger", "unchecked", "own_tree_budget"),
                          "seed003": ("none", "greater_than", "stale_ledger", "unchecked")}.items():
        for fault in faults:
            assert drawn[(style, fault)] >= 2, (style, fault, drawn)
    faulty = [p for p in plans if p.fault != "none"]
    assert sum(p.run_id in refused for p in faulty) >= len(faulty) // 3  # most faults show; some never get the chance


def test_the_check_finds_exactly_the_calls_the_seeds_fences_refuse(night):
    plans, refused, result = night
    problems = []
    for row in result.runs:
        found = _enforced(result, row["run_id"])
        expected = refused.get(row["run_id"])
        steps = [f["step"] for f in found if f["step"] is not None]
        if (expected is None and found) or (expected is not None and steps != [expected]):
            plan = next(p for p in plans if row["run_id"].startswith(p.run_id))
            problems.append(f"{row['run_id']} ({plan.style}, {plan.fault} on {plan.ceiling}, limits {plan.limits}): "
                            f"the seed's fence refuses {expected}; budgets_enforced:\n{show(found)}")
    assert not problems, "\n".join(problems)


def test_check_and_replay_as_run_agree_on_every_run(night):
    _, _, result = night
    problems = []
    for row in result.runs:
        replayed = result.replayed[row["run_id"]]
        found = _enforced(result, row["run_id"])
        cut = replayed["outcome"] == "cut"
        if cut != bool(found) or (cut and [f["step"] for f in found] != [replayed["cut_idx"]]):
            problems.append(f"{row['run_id']}: replay --as-run {replayed['outcome']} at {replayed['cut_idx']} "
                            f"({replayed['ceiling']}); check:\n{show(found)}")
    assert not problems, "\n".join(problems)


def test_a_fence_as_the_seed_writes_it_reconciles_clean(night):
    plans, refused, result = night
    for plan in (p for p in plans if p.fault == "none"):
        for row in (r for r in result.runs if r["run_id"] == plan.run_id or r["run_id"].startswith(plan.run_id + "-")):
            assert row["run_id"] not in refused
            assert not result.errors(row["run_id"]), f"{row['run_id']} ({plan.style}):\n{show(result.errors(row['run_id']))}"
            replayed = result.replayed[row["run_id"]]
            expected = "same_stop" if row["status"] in ("budget_exceeded", "timed_out", "stalled") else "unchanged"
            assert replayed["outcome"] == expected, (row["run_id"], replayed)
            if expected == "same_stop":  # written again in the seed's own words (300.0 s and 300 s are one limit:
                # the journal keeps a number, not how the harness typed it)
                assert replayed["stop_reason_written"] == re.sub(r"\((\d+)\.0s\)", r"(\1s)", row["stop_reason"]), \
                    (row["run_id"], replayed)
