"""An independent oracle for `reconcile replay`.

What replay reports (per run: stopped earlier or not, before which step, by which ceiling; per
agent: runs cut, successes lost, spend and steps saved) is recomputed here from the RAW journals of
the sample night (`sample_runs/*/*.jsonl`, docs/journal-format.md) in plain Python, from the
definitions written down in this module's comments (the brief's words), and compared with the
project's public output only: `reconcile replay ... --json`, run in-process through the real entry
point against the session's sample-night store (`night_db`, tests/conftest.py).

None of reconcile's replay code (reconcile/analyses/replay/**), its SQL or its helpers is read or imported:
a bug has to be made twice, independently. The journal reading (ingest's rules: duplicate lines,
in-flight tool records, rejected lines), the status mapping (docs/status.md) and the pricing
(tests/oracle_prices.py, docs/costs.md's per-step rounding) are the ones tests/test_oracles.py
already wrote independently of reconcile; they are imported from there rather than copied.

Nothing below hard-codes a figure of the sample night: every expectation is computed from the
files that are there when the tests run (the night is regenerated from time to time). The only
input besides the journals is sample_runs/planted.json, which names the runs planted for the
loop checks.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections import Counter, defaultdict
from decimal import Decimal
from pathlib import Path

import pytest

from test_oracles import (  # tests/ is on sys.path; plain-Python readers written apart from reconcile
    INPUT_BUCKETS,
    load_runs,
    parse_ts,
    run_status,
    step_cost,
    usage,
)

ROOT = Path(__file__).resolve().parent.parent
PLANTED = ROOT / "sample_runs" / "planted.json"

CENT = 10_000  # micro-dollars

# --------------------------------------------------------------------------------------------
# The definitions
# --------------------------------------------------------------------------------------------

# The ceilings, in the order a tie is broken: the first reached in this order names the stop.
CEILINGS = ("steps", "tokens", "prompt_tokens", "completion_tokens", "wall_seconds", "cost_micros", "loop")
# ceiling -> the journal's `limits` field (and replay's --set key, max_cost_usd apart)
LIMIT_FIELD = {
    "steps": "max_steps",
    "tokens": "max_tokens",
    "prompt_tokens": "max_prompt_tokens",
    "completion_tokens": "max_completion_tokens",
    "wall_seconds": "max_wall_seconds",
    "cost_micros": "max_cost_micros",
}
FENCE_STATUSES = ("budget_exceeded", "timed_out", "stalled")
REFUSED = ("transport", "rate_limit")  # the provider refused the call: not charged
NOT_HASHED = ("invalid_args", "unknown_tool", "not_run")  # calls the window detector does not hash
DEFAULT_WINDOW = {"kind": "calls_window", "limit": 3, "window": 6}  # seed 003's noProgress


def ordered_steps(run: dict) -> list[dict]:
    return [s for _, s in sorted(run["steps"].items())]


def is_wrap_up_turn(steps: list[dict], i: int) -> bool:
    """A model step right after an event step whose event is `wrap_up`, asking for no tool call."""
    step = steps[i]
    if step.get("kind") != "model" or i == 0:
        return False
    before = steps[i - 1]
    return before.get("kind") == "event" and before.get("event") == "wrap_up" and not step.get("tool_calls")


def fence_calls(run: dict) -> list[dict]:
    """The model calls the fence checks before: every model step that is not a wrap-up turn."""
    steps = ordered_steps(run)
    return [s for i, s in enumerate(steps) if s.get("kind") == "model" and not is_wrap_up_turn(steps, i)]


def charged(step: dict) -> bool:
    return step.get("error_class") not in REFUSED


def call_spend(run: dict, step: dict) -> int:
    """The ledger's spend of one call: its own cost_micros as the journal records it (the
    harness's price); without one, our price (tests/oracle_prices.py)."""
    if isinstance(step.get("cost_micros"), int):
        return step["cost_micros"]
    ours = step_cost(run, step)
    assert ours is not None, f"run {step['run_id']} step {step['idx']}: no cost_micros and no price"
    return ours


def saved_spend(run: dict, step: dict) -> tuple[int, bool]:
    """A step's spend for `spend saved`: our price where tests/oracle_prices.py has its model,
    else its journal cost_micros. The flag says whether it was our price."""
    ours = step_cost(run, step)
    if ours is not None:
        return ours, True
    return int(step.get("cost_micros") or 0), False


def step_in(step: dict) -> int:
    u = usage(step)  # a bucket the usage leaves out counts as 0 (native journal)
    return sum(u[b] for b in INPUT_BUCKETS)


def step_out(step: dict) -> int:
    return usage(step)["output"]


def window_fires_at(run: dict, detector: dict) -> int | None:
    """Seed 003's noProgress over the run's tool calls, in order: the idx of the model step at
    whose call the detector first fires, or None.

    A call is (tool name, args_hash as the journal records it on the call's tool step). Calls whose
    result status is invalid_args, unknown_tool or not_run are not hashed. Calls to a tool the
    run's catalogue marks allow_repeat hold their place in the window but are not counted. After
    each call: the last `window` calls, minus the allow_repeat ones; once at least 4 remain, it
    fires when one hash appears `limit` times or the last four are A B A B (A != B)."""
    limit, window = detector.get("limit", 3), detector.get("window", 6)
    allow = {t.get("name") for t in run["start"].get("tools") or [] if t.get("allow_repeat")}
    results: dict[str, dict] = {}
    for step in ordered_steps(run):
        if step.get("kind") == "tool" and step.get("call_id") not in results:
            results[step["call_id"]] = step  # a call executed twice (a retry) is still one call
    hashes: list[tuple[tuple, bool]] = []
    for step in ordered_steps(run):
        if step.get("kind") != "model":
            continue
        for call in step.get("tool_calls") or []:
            result = results.get(call.get("call_id"))
            status = None if result is None else result.get("status")
            if status in NOT_HASHED:
                continue
            args_hash = None if result is None else result.get("args_hash")
            if args_hash is None:  # never journalled as a tool step: hash it ourselves
                args_hash = json.dumps(call.get("args"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            hashes.append(((call.get("name"), args_hash), call.get("name") in allow))
            recent = [h for h, repeat_ok in hashes[-window:] if not repeat_ok]
            if len(recent) < 4:
                continue
            if max(Counter(recent).values()) >= limit:
                return step["idx"]
            a, b, c, d = recent[-4:]
            if a == c and b == d and a != b:
                return step["idx"]
    return None


def candidate_limits(run: dict, candidate: dict) -> tuple[dict, dict | None]:
    """(ceiling -> value, loop detector) a candidate puts on this run: the candidate's limits
    override the run's own; limits it does not name keep the run's own (base `own`), or are
    unset (base `none`). Only the calls_window detector is replayed here."""
    own = run["start"].get("limits") or {}
    base = candidate.get("base", "own")
    limits = {}
    for ceiling, field in LIMIT_FIELD.items():
        value = candidate.get("limits", {}).get(ceiling)
        if value is None and base == "own":
            value = own.get(field)
        if value is not None:
            limits[ceiling] = value
    detector = candidate.get("detector")
    if detector is None and base == "own":
        detector = run["start"].get("loop_detector")
    if detector is not None:
        assert detector.get("kind") == "calls_window", f"only calls_window is replayed here, not {detector}"
        detector = {**DEFAULT_WINDOW, **detector}
    return limits, detector


def reached(ledger: dict, limits: dict, loop: bool) -> str | None:
    """The first ceiling (in CEILINGS order) the ledger has reached, or None."""
    for ceiling in CEILINGS:
        if ceiling == "loop":
            if loop:
                return "loop"
        elif ceiling in limits and ledger[ceiling] >= limits[ceiling]:
            return ceiling
    return None


def replay_run(run: dict, candidate: dict) -> dict:
    """One run under one candidate: outcome (cut / same_stop / runs_on / unchanged), the idx of
    the model step the cut happens before, the ceiling, steps and spend saved."""
    limits, detector = candidate_limits(run, candidate)
    fired = window_fires_at(run, detector) if detector else None
    start_ts = parse_ts(run["start"]["ts"])
    calls = fence_calls(run)
    ledger = {c: 0 for c in CEILINGS if c != "loop"}
    status = run_status(run)
    out = {"run_id": run["run_id"], "agent": run["start"]["agent"], "status": status, "outcome": "unchanged",
           "cut_idx": None, "ceiling": None, "steps_saved": 0, "spend_saved": 0, "priced_by_us": True,
           "loop_fired_at": fired}
    for k, call in enumerate(calls):
        ledger["wall_seconds"] = (parse_ts(call["ts"]) - start_ts).total_seconds()
        ceiling = reached(ledger, limits, fired is not None and fired < call["idx"])
        if ceiling is not None:
            later = [s for s in ordered_steps(run) if s.get("kind") == "model" and s["idx"] >= call["idx"]]
            spends = [saved_spend(run, s) for s in later]
            out.update(outcome="cut", cut_idx=call["idx"], ceiling=ceiling,
                       steps_saved=sum(1 for s in calls[k:] if charged(s)),
                       spend_saved=sum(v for v, _ in spends), priced_by_us=all(ours for _, ours in spends))
            return out
        # the call is made: the ledger takes what it spent
        ledger["steps"] += charged(call)
        ledger["prompt_tokens"] += step_in(call)
        ledger["completion_tokens"] += step_out(call)
        ledger["tokens"] += step_in(call) + step_out(call)
        ledger["cost_micros"] += call_spend(run, call)
    if status in FENCE_STATUSES:
        # one more check after its last call, at its end, with everything spent
        steps = ordered_steps(run)
        wrap = [s for s in steps if s.get("kind") == "event" and s.get("event") == "wrap_up"]
        end_ts = parse_ts(wrap[0]["ts"] if wrap else run["end"]["ts"])
        ledger["wall_seconds"] = (end_ts - start_ts).total_seconds()
        ceiling = reached(ledger, limits, fired is not None)
        out.update(outcome="same_stop" if ceiling else "runs_on", ceiling=ceiling)
    return out


def replay_all(runs: dict, candidate: dict) -> dict[str, dict]:
    return {run_id: replay_run(run, candidate) for run_id, run in runs.items()}


def per_agent(rows: dict[str, dict]) -> dict[str, dict]:
    """Per agent: runs, stopped_earlier (cut runs), successes_lost (cut runs that succeeded),
    spend_saved_micros (cut runs that did not succeed), spend_lost_micros (cut runs that
    succeeded), steps_saved, same_stop, runs_on; and whether every figure was our price."""
    groups: dict[str, dict] = defaultdict(lambda: {"runs": 0, "stopped_earlier": 0, "successes_lost": 0,
                                                   "spend_saved_micros": 0, "spend_lost_micros": 0,
                                                   "steps_saved": 0, "same_stop": 0, "runs_on": 0,
                                                   "priced_by_us": True})
    for row in rows.values():
        g = groups[row["agent"]]
        g["runs"] += 1
        g["same_stop"] += row["outcome"] == "same_stop"
        g["runs_on"] += row["outcome"] == "runs_on"
        if row["outcome"] != "cut":
            continue
        g["stopped_earlier"] += 1
        g["steps_saved"] += row["steps_saved"]
        g["priced_by_us"] &= row["priced_by_us"]
        if row["status"] == "succeeded":
            g["successes_lost"] += 1
            g["spend_lost_micros"] += row["spend_saved"]
        else:
            g["spend_saved_micros"] += row["spend_saved"]
    return groups


# --------------------------------------------------------------------------------------------
# The project's figures: only through `reconcile replay ... --json`
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def replay_json(night_db, tmp_path_factory):
    """`reconcile replay ARGS --runs --json --db <the session's sample-night store>`, in-process
    through the real entry point, from an empty folder; its candidates by name."""
    from reconcile.cli import main

    cwd = tmp_path_factory.mktemp("replay_oracle_cwd")
    cache: dict[tuple, dict] = {}

    def run(*args: str) -> dict[str, dict]:
        if args not in cache:
            out = io.StringIO()
            here = os.getcwd()
            try:
                os.chdir(cwd)
                with contextlib.redirect_stdout(out):
                    code = main(["replay", *args, "--runs", "--json", "--db", str(night_db)])
            finally:
                os.chdir(here)
            assert code == 0, f"reconcile replay {' '.join(args)} exited {code}"
            # --json writes money as exact dollars (*_usd); read them as decimals, compare in micro-dollars
            data = as_micros(json.loads(out.getvalue(), parse_float=Decimal))
            cache[args] = {c["name"]: c for c in data["candidates"]}
        return cache[args]

    return run


def as_micros(value):
    """Every ``*_usd`` figure of ``value`` also as integer micro-dollars under ``*_micros``."""
    if isinstance(value, dict):
        out = {k: as_micros(v) for k, v in value.items()}
        for key, item in value.items():
            if key.endswith("_usd") and (item is None or isinstance(item, (int, Decimal))):
                out[key.removesuffix("_usd") + "_micros"] = None if item is None else int(Decimal(item) * 1_000_000)
        return out
    return [as_micros(v) for v in value] if isinstance(value, list) else value


@pytest.fixture(scope="module")
def runs() -> dict[str, dict]:
    loaded = load_runs()
    for run_id, run in loaded.items():
        run["run_id"] = run_id
    return loaded


# One call for the run's own limits and every --set candidate (base own), one for the detector
# alone (base none applies to the whole call).
SET_CANDIDATES = {
    "steps8": ("max_steps=8", {"limits": {"steps": 8}}),
    "cost5c": ("max_cost_usd=0.05", {"limits": {"cost_micros": 50_000}}),
    "wall60": ("max_wall_seconds=60", {"limits": {"wall_seconds": 60}}),
    "tok40k": ("max_tokens=40000", {"limits": {"tokens": 40_000}}),
}
OWN_ARGS = ("--as-run", *[a for label, (kv, _) in SET_CANDIDATES.items() for a in ("--set", f"{label}:{kv}")])
DETECTOR_ARGS = ("--detector", "calls_window", "--base", "none")


def planted_loop_runs() -> set[str]:
    planted = json.loads(PLANTED.read_text())
    return {p["run_id"] for p in planted if p["check"] in ("loop_stopped_at_limit", "stalled_runs_detected")}


def dollars(micros) -> str:
    return "None" if micros is None else f"${micros / 1e6:,.6f}"


def compare_runs(name: str, ours: dict[str, dict], theirs: list[dict]) -> list[str]:
    """Per run: the outcome; for a cut run, the step it happens before, the ceiling, steps saved
    and spend saved; for a same_stop run, the ceiling its end check finds."""
    problems = []
    by_id = {r["run_id"]: r for r in theirs}
    if sorted(by_id) != sorted(ours):
        missing, extra = sorted(set(ours) - set(by_id)), sorted(set(by_id) - set(ours))
        problems.append(f"{name}: the runs differ (only ours: {missing}, only reconcile's: {extra})")
    for run_id in sorted(set(ours) & set(by_id)):
        mine, row = ours[run_id], by_id[run_id]
        where = f"{name}: run {run_id} ({mine['agent']}, {mine['status']})"
        if mine["status"] != row["status"]:
            problems.append(f"{where}: status expected {mine['status']}, reconcile says {row['status']}")
        if mine["outcome"] != row["outcome"]:
            problems.append(f"{where}: outcome expected {mine['outcome']} (cut before {mine['cut_idx']}, "
                            f"{mine['ceiling']}, loop fired at {mine['loop_fired_at']}), reconcile says "
                            f"{row['outcome']} (cut before {row['cut_idx']}, {row['ceiling']}, "
                            f"loop fired at {row['loop_fired_at']})")
            continue
        if mine["outcome"] == "cut":
            for field, theirs_field in (("cut_idx", "cut_idx"), ("ceiling", "ceiling"), ("steps_saved", "steps_saved")):
                if mine[field] != row[theirs_field]:
                    problems.append(f"{where}: {field} expected {mine[field]}, reconcile says {row[theirs_field]}")
            # Our price vs theirs per step: both round per step half up (docs/costs.md), so a run
            # every step of which our price table covers must agree to the micro-dollar. A run with
            # a model our table lacks is priced by its journal cost_micros here, by the harness's
            # figure there (--cost-source auto): the two may count it differently, so to the cent.
            tolerance = 0 if mine["priced_by_us"] else CENT
            if abs(mine["spend_saved"] - (row["spend_saved_micros"] or 0)) > tolerance:
                problems.append(f"{where}: spend saved expected {dollars(mine['spend_saved'])}, "
                                f"reconcile says {dollars(row['spend_saved_micros'])}")
        elif mine["outcome"] == "same_stop" and mine["ceiling"] != row["ceiling"]:
            problems.append(f"{where}: same_stop by {mine['ceiling']} expected, reconcile says {row['ceiling']}")
    return problems


def compare_groups(name: str, ours: dict[str, dict], theirs: list[dict]) -> list[str]:
    problems = []
    by_key = {g["key"]: g for g in theirs}
    if sorted(by_key) != sorted(ours):
        problems.append(f"{name}: the agents differ: ours {sorted(ours)}, reconcile's {sorted(by_key)}")
    for agent in sorted(set(ours) & set(by_key)):
        mine, row = ours[agent], by_key[agent]
        for field in ("runs", "stopped_earlier", "successes_lost", "steps_saved", "same_stop", "runs_on"):
            if mine[field] != row[field]:
                problems.append(f"{name}: agent {agent}: {field} expected {mine[field]}, reconcile says {row[field]}")
        # exact where every cut run of the group is priced by our table (the same per-step rule
        # as reconcile's), else to the cent (see compare_runs)
        tolerance = 0 if mine["priced_by_us"] else CENT
        for field in ("spend_saved_micros", "spend_lost_micros"):
            if row[field] is None or abs(mine[field] - row[field]) > tolerance:
                problems.append(f"{name}: agent {agent}: {field} expected {dollars(mine[field])}, "
                                f"reconcile says {dollars(row[field])}")
    return problems


# --------------------------------------------------------------------------------------------
# 1. --as-run: each run's own limits find every fence stop where it happened
# --------------------------------------------------------------------------------------------


def test_as_run_finds_every_fence_stop(runs, replay_json):
    ours = replay_all(runs, {"base": "own"})
    planted = planted_loop_runs()
    problems = []
    # The oracle's own claim first: every fence-stopped run comes out same_stop, the runs planted
    # for the loop checks apart (their declared detector disagrees with how they really stopped).
    for run_id, row in sorted(ours.items()):
        if row["status"] in FENCE_STATUSES and run_id not in planted and row["outcome"] != "same_stop":
            problems.append(f"oracle: run {run_id} ({row['status']}) comes out {row['outcome']} "
                            f"(ceiling {row['ceiling']}, cut before {row['cut_idx']}), not same_stop")
    assert planted and all(ours[r]["outcome"] != "same_stop" for r in planted if r in ours), (
        "the planted loop runs should not replay as same_stop: "
        + ", ".join(f"{r} {ours[r]['outcome']}" for r in sorted(planted) if r in ours))
    candidate = replay_json(*OWN_ARGS)["as run"]
    problems += compare_runs("as run", ours, candidate["runs"])
    problems += compare_groups("as run", per_agent(ours), candidate["groups"])
    assert not problems, "replay --as-run:\n  " + "\n  ".join(problems)


# --------------------------------------------------------------------------------------------
# 2. Candidates: budgets over the runs' own limits, and the window detector alone
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("label", sorted(SET_CANDIDATES))
def test_candidate_budgets(label, runs, replay_json):
    _, spec = SET_CANDIDATES[label]
    ours = replay_all(runs, {"base": "own", **spec})
    assert any(r["outcome"] == "cut" for r in ours.values()), f"{label} cuts no run: a weak candidate"
    candidate = replay_json(*OWN_ARGS)[label]
    problems = compare_runs(label, ours, candidate["runs"])
    problems += compare_groups(label, per_agent(ours), candidate["groups"])
    assert not problems, f"replay --set {SET_CANDIDATES[label][0]}:\n  " + "\n  ".join(problems)


def test_candidate_calls_window_alone(runs, replay_json):
    ours = replay_all(runs, {"base": "none", "detector": dict(DEFAULT_WINDOW)})
    candidate = replay_json(*DETECTOR_ARGS)["calls_window"]
    problems = compare_runs("calls_window", ours, candidate["runs"])
    problems += compare_groups("calls_window", per_agent(ours), candidate["groups"])
    assert not problems, "replay --detector calls_window --base none:\n  " + "\n  ".join(problems)
