"""Generate the committed sample night: three agents, a few hundred runs, planted defects.

    python sample_runs/generate.py            # rewrites sample_runs/2026-11-28/, planted.json, PLANTED.md
    python sample_runs/generate.py --out DIR  # somewhere else (the tests regenerate and compare)

Seeded, on a simulated clock: the same command always writes the same bytes. The outcome mix
comes from the plans drawn here; the defects come from ``harness.Faults`` switched on for a few
chosen runs, and ``planted.json`` records which check should find each one.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import random
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Faults, Limits, Plan, RunSpec, run_agent  # noqa: E402
from provider_exports import BUCKETS, REPORTED_NAME, Provider, write_exports  # noqa: E402

from reconcile.journal import Journal  # noqa: E402

SEED = 20261128
NIGHT_START = datetime(2026, 11, 28, 22, 0, tzinfo=timezone.utc)
NIGHT_HOURS = 7.5
HERE = Path(__file__).resolve().parent
PREDICTION_MISSED: set[str] = set()


@dataclass
class Agent:
    name: str
    model: str
    provider: str
    task_classes: tuple[str, ...]
    tools: tuple[str, ...]
    limits: Limits
    runs: int
    answer_mu: float  # log-normal turns-to-answer: the step distribution budgets are judged on
    answer_sigma: float


AGENTS = [
    Agent("triage", "claude-haiku-4-5", "anthropic", ("bug_triage", "label_issue"), ("read_file", "search"),
          Limits(max_steps=12, max_tokens=400_000, max_wall_seconds=600, max_cost_micros=500_000), 120, 1.2, 0.45),
    Agent("coder", "claude-sonnet-4-5", "anthropic", ("fix_bug", "add_test"),
          ("read_file", "search", "run_tests", "write_file"),
          Limits(max_steps=60, max_tokens=3_000_000, max_wall_seconds=900, max_cost_micros=5_000_000), 100, 1.9, 0.35),
    Agent("researcher", "gpt-5-mini", "openai", ("summarise", "compare"), ("search", "read_file", "big_output"),
          Limits(max_steps=14, max_tokens=600_000, max_wall_seconds=900, max_cost_micros=400_000), 80, 2.0, 0.5),
]


FALLBACK = {"coder": "claude-haiku-4-5"}  # the coder's route when its model is rate limited


def draw_plan(agent: Agent, rng: random.Random) -> Plan:
    """The fake model's script for one run: when it answers, and what goes wrong on the way."""
    answer_at = max(1, int(rng.lognormvariate(agent.answer_mu, agent.answer_sigma)))
    plan = Plan(answer_at=answer_at, tools=list(agent.tools))
    roll = rng.random()
    if roll < 0.04:  # loops on a tool that always says "ok": the harness should stop it as stalled
        plan.pattern, plan.pattern_from, plan.answer_at = [("ok_forever", {})], rng.randint(1, 3), None
    elif roll < 0.07:
        plan.fatal_tool_at = rng.randint(1, 3)
    elif roll < 0.09:
        plan.cancel_at = rng.randint(2, 5)
    elif roll < 0.105:
        plan.crash_at = rng.randint(2, 5)
    elif roll < 0.15 and "run_tests" in agent.tools:
        plan.tool_latency_scale = 4.0  # a slow test suite: every run times out, the wall clock runs out
        plan.tools, plan.answer_at = ["run_tests"], None
    elif roll < 0.17:
        plan.tools = [*plan.tools, "sleep"]  # hangs; the harness kills it at the timeout
    return plan


def plant_defects(specs: list[RunSpec], rng: random.Random) -> None:
    """Switch on one harness fault in each of a few runs (see PLANTED.md)."""
    by_agent = {a.name: [s for s in specs if s.agent == a.name and _plain(s.plan)] for a in AGENTS}
    triage, coder, researcher = by_agent["triage"], by_agent["coder"], by_agent["researcher"]

    answered_then_kept_going = triage[7]
    answered_then_kept_going.run_id = "8f3a"
    answered_then_kept_going.plan.answer_at = 8  # the 9th model step answers; max_steps is 12
    answered_then_kept_going.faults.ignore_final_answer = True

    coder[3].faults.ledger_skips_cache_reads = True

    lost = triage[11]
    lost.plan.tools, lost.plan.answer_at = ["read_file", "search"], 5
    lost.faults.drop_tool_result = True

    twice = coder[5]
    twice.plan.fatal_tool_at, twice.plan.answer_at = 2, 6
    twice.faults.retry_side_effects = True

    oscillating = researcher[4]  # alternates A B A B; the harness's detector counts repeats only
    oscillating.plan.answer_at = None
    oscillating.plan.pattern = [("search", {"query": "symbol_7777", "limit": 10}), ("read_file", {"path": "src/mod77.py"})]
    oscillating.plan.pattern_from = 3
    oscillating.faults.no_oscillation_check = True

    probing = researcher[22]  # varied calls that all answer "ok": the harness stops on the results, not the calls
    probing.plan.answer_at, probing.plan.pattern_from = None, 1
    probing.plan.pattern = [("ok_forever", {"probe": n}) for n in (1, 2, 3)]
    probing.faults.stall_on_same_results = True

    for overloaded in (triage[40], coder[22]):  # a 529 retried on the same context, as seed 003 says: no finding
        overloaded.plan.refusals = {2: ["transport"]}
    stubborn_retry = coder[24]  # refused five times; max_retries is 3, and the harness does not stop there
    stubborn_retry.plan.answer_at, stubborn_retry.plan.refusals = 5, {2: ["transport"] * 5}
    stubborn_retry.faults.retry_past_limit = True
    coder[26].plan.answer_at, coder[26].plan.refusals = 6, {3: ["rate_limit", "rate_limit"]}  # falls back: no finding
    waited = coder[28]  # rate limited three times; the harness never takes its fallback route
    waited.plan.answer_at, waited.plan.refusals = 6, {3: ["rate_limit"] * 3}
    waited.faults.no_fallback = True

    overshoot = coder[8]
    overshoot.plan.answer_at = None
    overshoot.plan.pattern, overshoot.plan.pattern_from = [("sleep", {"seconds": 2400})], 3
    overshoot.faults.timeout_not_enforced = True

    invented = triage[15]  # the model calls a tool it was never given; the harness answers unknown_tool
    invented.plan.answer_at, invented.plan.scripted = 5, {2: [("delete_branch", {"name": "main"})]}

    crashed = coder[12]
    crashed.plan.answer_at = None
    crashed.plan.scripted = {3: [("write_file", {"path": "src/mod3.py", "content_tokens": 120})]}
    crashed.plan.crash_in_tool_at = 3

    stubborn = coder[15]
    stubborn.plan.answer_at, stubborn.plan.invalid_output_at = 6, 2
    stubborn.faults.retry_same_input = True
    for handled in (coder[16], triage[20]):  # the same trouble, handled correctly: no finding
        handled.plan.answer_at, handled.plan.invalid_output_at = max(handled.plan.answer_at or 0, 3), 1

    fooled = researcher[8]
    fooled.plan.answer_at, fooled.plan.outage_at = 5, 1
    fooled.plan.scripted = {1: [("search", {"query": "symbol_9", "limit": 10})]}
    fooled.faults.trust_tool_status = True
    careful = researcher[9]  # the same outage, recorded as the error it is: no finding
    careful.plan.answer_at, careful.plan.outage_at = 5, 1
    careful.plan.scripted = {1: [("search", {"query": "symbol_9", "limit": 10})]}

    flooded = researcher[12]
    flooded.plan.answer_at, flooded.plan.scripted = 5, {2: [("big_output", {"query": "logs since 3h"})]}
    flooded.faults.no_result_bound = True

    trimmed = triage[25]
    trimmed.plan.answer_at, trimmed.plan.truncate_at = 7, 4
    trimmed.faults.silent_truncation = True

    twice = triage[35]  # the final answer's step is journalled twice; the provider billed it once
    twice.plan.answer_at = 4
    twice.faults.journal_final_twice = True

    inhouse = researcher[15]  # a run on a model no public price list has
    inhouse.model, inhouse.provider = "acme-distill-7b", "acme"

    slipped = coder[20]  # repeats one search whose results differ each time; the detector compares results
    slipped.plan.answer_at = None
    slipped.plan.pattern, slipped.plan.pattern_from = [("search", {"query": "symbol_3", "limit": 10})], 2
    slipped.faults.fingerprint_results = True

    silent = triage[30]
    silent.plan.answer_at, silent.plan.empty_answer = 4, True
    silent.faults.empty_answer_is_success = True


def _plain(plan: Plan) -> bool:
    return (plan.pattern is None and plan.fatal_tool_at is None and plan.cancel_at is None and plan.crash_at is None
            and plan.tool_latency_scale == 1.0 and "sleep" not in plan.tools)


# fault -> (checks that should find it, whether the finding names a step)
EXPECTED = {
    "ignore_final_answer": (["final_answer_not_overwritten"], True),
    "ledger_skips_cache_reads": (["ledger_matches_transcript", "tokens_match_provider"], False),
    "drop_tool_result": (["tool_calls_paired"], True),  # one lost result, one finding (naming both sides)
    "retry_side_effects": (["tool_calls_paired", "side_effects_once"], True),
    "oscillation": (["loop_stopped_at_limit"], True),
    "stall_on_same_results": (["stalled_runs_detected"], False),
    "failed_side_effect": (["no_failed_side_effects"], True),
    "timeout_not_enforced": (["budgets_enforced"], True),
    "unknown_tool_call": (["known_tools_only"], True),
    "crash_in_side_effect": (["tool_calls_paired"], True),
    "stuck_in_flight": (["no_stuck_side_effects"], True),
    "retry_same_input": (["retries_mutate_context"], True),
    "retry_past_limit": (["retries_within_limit"], True),
    "no_fallback": (["rate_limits_fall_back"], True),
    "overload_no_fallback": (["rate_limits_fall_back"], True),
    "trust_tool_status": (["tool_errors_flagged"], True),
    "no_result_bound": (["tool_results_bounded"], True),
    "silent_truncation": (["no_silent_truncation"], True),
    "empty_answer_is_success": (["status_consistent"], False),
    "fingerprint_results": (["loop_stopped_at_limit"], True),
    "prediction_missed": (["stop_reason_as_expected"], False),
    "unpriced_model": (["models_priced"], True),
    "journal_final_twice": (["ledger_matches_transcript", "steps_equal_tool_results", "tokens_match_provider"], False),
    "phantom_bucket": (["tokens_match_provider", "costs_match_provider"], False),
    "unjournalled_run": (["tokens_match_provider", "costs_match_provider"], False),
}
DESCRIPTIONS = {
    "ignore_final_answer": "The model gave its final answer at this step (its 9th model call); the harness took it for a progress note "
                           "and ran on until the step budget (12) stopped it.",
    "ledger_skips_cache_reads": "The harness ledger's input tokens leave out cache reads, so they disagree with the steps.",
    "drop_tool_result": "The model asked for a tool call at this step; its result was never journalled.",
    "retry_side_effects": "raise_after_write failed after writing; the harness retried it with the same idempotency "
                          "key, executing the side effect twice (this step is the second execution).",
    "oscillation": "The model alternated search / read_file (A B A B); the harness declares seed 003's detector, "
                   "which fires at this step, but its own counts repeats only, so the run went on to the step budget.",
    "stall_on_same_results": "The model probed ok_forever with three different arguments in turn; the harness declares "
                             "seed 003's call detector, which never fires on that, but stopped the run as stalled because "
                             "three results in a row were the same.",
    "failed_side_effect": "raise_after_write changes the world and failed after it started (it wrote, then raised): the "
                          "world may have changed — listed with its idempotency key.",
    "timeout_not_enforced": "A hung `sleep` tool ran 2,400 s, far past its 30 s timeout: the harness did not kill it, and "
                            "the run overshot its wall clock.",
    "unknown_tool_call": "The model called `delete_branch`, a tool not in its catalogue (the harness answered "
                         "unknown_tool and did not run it).",
    "crash_in_side_effect": "The harness process died while `write_file` (a side effect) ran: the model step at this "
                            "index asked for a call whose outcome and run_end were never journalled. Silent far longer "
                            "than its wall-clock budget, the run is abandoned, not running: the call's result is lost "
                            "(while the run was younger than its budget, calls_in_flight would have said it was in "
                            "flight).",
    "stuck_in_flight": "The `write_file` call at this step was journalled as started (keyed, before it ran) and "
                       "never completed: the process died in between, so nobody knows whether the write happened.",
    "retry_same_input": "The model's output at the step before was unusable; the harness retried with exactly the "
                        "same input instead of telling the model what was wrong, paying twice for the same failure.",
    "retry_past_limit": "The provider refused the call in transport (529) five times; the harness's limit is 3 "
                        "retries but it tried again (this step is a retry past the limit).",
    "overload_no_fallback": "The provider answered 529 (overloaded) after a retry; the harness retried the same model "
                            "again, as seed 003's code retries any 5xx, where seed 003's failure matrix routes a 529 "
                            "to the fallback model after one retry (this step is such a retry).",
    "no_fallback": "The model was rate limited (429) after a retry; the harness's policy names claude-haiku-4-5 as the "
                   "fallback route, but it retried the same model (this step is such a retry).",
    "trust_tool_status": "`search` answered an HTTP 503 error body; the harness recorded it as status ok.",
    "no_result_bound": "`big_output` returned about 80,000 tokens and the harness let it into the context whole.",
    "silent_truncation": "The harness trimmed half the context before this model call without recording a "
                         "compaction event.",
    "empty_answer_is_success": "The model's last turn said nothing; the harness ended the run as model_finished, so it "
                               "is marked succeeded without a final answer.",
    "fingerprint_results": "The model called the same `search` again and again; its results differed each time and the "
                           "harness's loop detector hashed the results too, so it never fired: the declared detector "
                           "(one call 3 times in the last 6) fires at this step, and the run went on to the step budget.",
    "prediction_missed": "A scripted scenario predicted model_finished; the run ran out of steps (max_steps).",
    "journal_final_twice": "The harness journalled its final answer's model step twice (a retried write); the "
                           "provider billed the call once and the ledger counted it once.",
    "phantom_bucket": "Provider side of the step journalled twice: the journals carry tokens the provider never "
                      "billed (phantom) in that bucket, and price above the bill that day.",
    "unjournalled_run": "A coder run (lost-journal) reached the provider but its journal was lost: the provider billed "
                        "tokens no journal explains (unexplained) that day.",
    "unpriced_model": "The run used acme-distill-7b, an in-house model no public price list has: its spend is "
                      "unknown until a price override is loaded (this is its first model step).",
}


def build_specs() -> list[RunSpec]:
    rng = random.Random(SEED)
    ids = iter(f"{n:04x}" for n in rng.sample(range(0x10000), 2000) if f"{n:04x}" != "8f3a")
    specs = []
    for agent in AGENTS:
        for _ in range(agent.runs):
            start = NIGHT_START + timedelta(seconds=rng.uniform(0, NIGHT_HOURS * 3600))
            limits = Limits(**agent.limits.__dict__)
            specs.append(RunSpec(next(ids), agent.name, rng.choice(agent.task_classes), agent.model, agent.provider,
                                 limits, draw_plan(agent, rng), start, rng.randrange(1 << 30),
                                 fallback_model=FALLBACK.get(agent.name)))
    plant_defects(specs, rng)
    for spec in rng.sample([s for s in specs if s.agent == "researcher"], 12):
        spec.predicted_stop_reason = _dry_run_stop_reason(spec)  # scripted scenarios with a known ending
    missed = next(s for s in specs if s.agent == "researcher" and s.predicted_stop_reason is None
                  and _plain(s.plan) and s.faults == Faults() and _dry_run_stop_reason(s) == "max_steps")
    missed.predicted_stop_reason = "model_finished"  # written expecting an answer; the agent ran out of steps
    PREDICTION_MISSED.add(missed.run_id)
    return specs


def _dry_run_stop_reason(spec: RunSpec) -> str | None:
    buffer = io.StringIO()
    run_agent(Journal(buffer), _copy(spec))
    last = json.loads(buffer.getvalue().splitlines()[-1])
    return last.get("stop_reason")


def _copy(spec: RunSpec) -> RunSpec:
    import copy
    return copy.deepcopy(spec)


def generate(out: Path) -> list[dict]:
    """Write the night's journals under ``out``; return the planted defects."""
    night = out / NIGHT_START.date().isoformat()
    night.mkdir(parents=True, exist_ok=True)
    planted: list[dict] = []
    specs = build_specs()
    provider = Provider()
    for spec in specs:  # the provider's own record of every call it answered
        spec.on_call = provider.recorder(f"key_{spec.agent}", "wrkspc_nightly", "proj_agents")
    for agent in AGENTS:
        path = night / f"{agent.name}.jsonl"
        path.unlink(missing_ok=True)
        with Journal(path) as journal:
            for spec in sorted((s for s in specs if s.agent == agent.name), key=lambda s: s.start):
                ledger_off = spec.faults.ledger_skips_cache_reads
                incidents = run_agent(journal, spec)
                if ledger_off:
                    incidents.append(("ledger_skips_cache_reads", -1))
                if spec.faults.empty_answer_is_success:
                    incidents.append(("empty_answer_is_success", -1))
                if spec.run_id in PREDICTION_MISSED:
                    incidents.append(("prediction_missed", -1))
                if spec.model == "acme-distill-7b":
                    incidents.append(("unpriced_model", 0))
                for fault, idx in incidents:
                    checks, with_step = EXPECTED[fault]  # with_step: True, False, or the checks that name it
                    planted += [{"check": c, "run_id": spec.run_id,
                                 "step": idx if (with_step is True or (with_step and c in with_step)) else None,
                                 "fault": fault} for c in checks]
    planted += _unjournalled_run(specs, provider, out)
    planted += _phantom_bucket(specs, night)
    write_exports(provider, out / "provider")
    planted.sort(key=lambda p: (p["check"], p["run_id"] or "", -1 if p["step"] is None else p["step"]))
    (out / "planted.json").write_text(
        json.dumps([{k: p[k] for k in ("check", "run_id", "step")} for p in planted], indent=1) + "\n")
    (out / "PLANTED.md").write_text(_planted_markdown(planted))
    return planted


def _unjournalled_run(specs: list[RunSpec], provider: Provider, out: Path) -> list[dict]:
    """A coder run that reached the provider but whose journal was lost: unexplained tokens."""
    template = next(s for s in specs if s.agent == "coder" and s.faults == Faults() and _plain(s.plan))
    lost = copy.deepcopy(template)
    lost.run_id, lost.seed = "lost-journal", 12345
    lost.start = NIGHT_START + timedelta(hours=3)
    mine = Provider()
    record_both = (lambda at, model, prov, usage, a=lost.on_call, b=mine.recorder(
        "key_coder", "wrkspc_nightly", "proj_agents"): (a(at, model, prov, usage), b(at, model, prov, usage)))
    lost.on_call = record_both
    run_agent(Journal(io.StringIO()), lost)  # the journal went nowhere
    _record_planted_usage(out, "unexplained", mine)
    return [{"check": c, "run_id": None, "step": None, "fault": "unjournalled_run"}
            for c in EXPECTED["unjournalled_run"][0]]


def _phantom_bucket(specs: list[RunSpec], night: Path) -> list[dict]:
    """The provider-side findings of the step journalled twice: phantom tokens in its bucket."""
    twice = next(s for s in specs if s.faults.journal_final_twice)
    lines = [json.loads(line) for line in (night / f"{twice.agent}.jsonl").read_text().splitlines()]
    steps = [line for line in lines if line.get("run_id") == twice.run_id and line.get("kind") == "model"]
    duplicate = steps[-1]
    usage = {b: duplicate["usage"].get("output" if b == "output" else b, 0) for b in BUCKETS}
    day = datetime.fromisoformat(duplicate["ts"].replace("Z", "+00:00")).date().isoformat()
    path = HERE if night.parent == HERE else night.parent
    key = f"anthropic|{REPORTED_NAME[twice.model]}|{day}"
    data = json.loads((path / "planted_usage.json").read_text())
    data["phantom"] = {key: usage}
    (path / "planted_usage.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    return [{"check": c, "run_id": None, "step": None, "fault": "phantom_bucket"} for c in EXPECTED["phantom_bucket"][0]]


def _record_planted_usage(out: Path, kind: str, provider: Provider) -> None:
    data = {kind: {f"{k[0]}|{k[2]}|{k[1].isoformat()}": {b: u[b] for b in BUCKETS}
                   for k, u in provider.usage.items()}}
    (out / "planted_usage.json").write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def _planted_markdown(planted: list[dict]) -> str:
    lines = ["# Planted defects in the sample night", "",
             "Generated by `sample_runs/generate.py` (do not edit by hand). Each defect comes from a fault",
             "switched on in `harness.Faults` for one run; `planted.json` lists the same rows for machines",
             "as `{check, run_id, step}`.", "",
             "| check | run | step | what happened |", "|---|---|---|---|"]
    for p in planted:
        step = "" if p["step"] is None else str(p["step"])
        run = f"`{p['run_id']}`" if p["run_id"] else "(a bucket)"
        lines.append(f"| `{p['check']}` | {run} | {step} | {DESCRIPTIONS[p['fault']]} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE)
    args = parser.parse_args()
    planted = generate(args.out)
    print(f"wrote {args.out} ({len(planted)} planted findings)")


if __name__ == "__main__":
    main()
