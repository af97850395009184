"""Logs written by inspect-ai 0.3.285 itself (tests/fixtures/clients/inspect_ai), read as Inspect means them.

Every expectation is computed here, in plain Python, from ``truth.json`` -- what Inspect's own API
(``read_eval_log(..., resolve_attachments=True)``) says of each sample -- and the hand-typed list prices of
tests/oracle_prices.py; never from reconcile's SQL. It is compared with what the commands print:
``reconcile runs --json --no-fold-subagents``, ``reconcile show RUN --json``, ``reconcile cost --by run --json``,
``reconcile cost --by model --json`` and ``reconcile check --json``.

How Inspect's record is read (the fixture's README says what Inspect writes):

- **Model calls** are every ModelEvent of the sample, the scorer's included: a model-graded scorer's calls (inside a
  span of type ``scorer``) are billed, so they are model steps and their cost is in the run's. They are no part of the
  agent's conversation: labelled ``scorer`` (their own thread), never the final answer. A call that raised (empty
  output, no usage, no completion) is a model step with the exception as its error; its cost is unknown, so the run's
  is "at least" the rest.
- **Tool calls and results**: a handled error (``error``) and a crash (``failed: true``, no error) are tool errors; a
  call interrupted mid-run (``pending: true``, no completion: a time limit, Ctrl-C) is ``started``: no result. A call
  the limit-crossing model call asked for, which Inspect never ran (no ToolEvent), is ``not_run``. react()'s and
  basic_agent()'s ``submit`` call is the final answer, not a tool call (as SWE-agent's submit, OpenHands' finish): its
  ToolEvent only echoes the answer.
- **Tokens**: 0.3.285's ``input_tokens`` excludes cache reads and writes: uncached = input_tokens, cache read and
  5-minute write as recorded, 1-hour writes 0 (Inspect asks for none), OpenAI's writes 0 (OpenAI bills none), and a
  cache read Inspect's OpenAI Responses mapping leaves out when there was none is 0 where the provider's total shows
  no cached part (total - output = input + writes). Reasoning is unknown where Inspect leaves it out (Anthropic),
  never 0.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

import pytest

from conftest import ROOT
from oracle_prices import PRICES
from reconcile import store
from reconcile.ingest.driver import ingest

FIXTURE = ROOT / "tests" / "fixtures" / "clients" / "inspect_ai"
LOGS = FIXTURE / "logs"
TRUTH = json.loads((FIXTURE / "truth.json").read_text(encoding="utf-8"))
SAMPLES = {sample["uuid"]: sample for sample in TRUTH["samples"].values()}
BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")


# --- what truth.json says, in plain Python -------------------------------------------------------------------------

def agent_calls(sample: dict) -> list[dict]:
    """The agent's own model calls (the scorer's are apart)."""
    return [call for call in sample["model_calls"] if not call["scorer"]]


def answered_names() -> dict[tuple[str, str], str]:
    """(log, model string asked for) -> the dated model the answers name (a failed call's output names none)."""
    names = {}
    for sample in SAMPLES.values():
        for call in sample["model_calls"]:
            if not call["error"]:
                names[(sample["file"], call["model"])] = call["output_model"]
    return names


NAMES = answered_names()


def call_model(sample: dict, call: dict) -> str:
    return NAMES[(sample["file"], call["model"])] if call["error"] else call["output_model"]


def buckets(call: dict) -> dict | None:
    """A call's five disjoint buckets (None: Inspect recorded no usage); an unknown bucket is None."""
    usage = call["usage"]
    if usage is None:
        return None
    write = usage["input_tokens_cache_write"]
    if write is None and call["output_model"].startswith("gpt-"):
        write = 0  # OpenAI bills no cache writes
    read = usage["input_tokens_cache_read"]
    whole = usage["total_tokens"] - usage["output_tokens"]  # the provider's own prompt size
    if read is None and write is not None and whole == usage["input_tokens"] + write:
        read = 0  # the provider's own total holds no cached part: none was read (the mapping leaves a 0 out)
    got = {"input_uncached": usage["input_tokens"], "cache_read": read, "cache_write_5m": write, "cache_write_1h": 0,
           "output_tokens": usage["output_tokens"]}
    if None not in got.values():  # Inspect's own whole prompt agrees
        assert sum(v for k, v in got.items() if k != "output_tokens") == call["input_context_tokens"]
    return got


def run_buckets(sample: dict) -> dict:
    """The run's buckets: sums over its calls; a call that recorded no usage (one that raised: the log does not say
    whether the provider billed it) leaves every total unknown, as its cost is "at least"."""
    counted = list(map(buckets, sample["model_calls"]))
    if any(b is None for b in counted):
        return dict.fromkeys(BUCKETS)
    return {k: (sum(b[k] for b in counted) if counted and all(b[k] is not None for b in counted) else None)
            for k in BUCKETS}


def price_key(model: str) -> str:
    return re.sub(r"-(\d{8}|\d{4}-\d{2}-\d{2})$", "", model)


def call_cost(sample: dict, call: dict) -> Decimal | None:
    """Micro-dollars (unrounded) at the hand-typed list price; None where the usage is unknown."""
    counts = buckets(call)
    if counts is None:
        return None
    (price,) = PRICES[price_key(call_model(sample, call))]
    assert not price.get("tier") or sum(counts.values()) - counts["output_tokens"] <= price["tier"]["above"]
    names = {"input_uncached": "input", "cache_read": "cache_read", "cache_write_5m": "cache_write_5m",
             "cache_write_1h": "cache_write_1h", "output_tokens": "output"}
    return sum((Decimal(counts[k]) * price[names[k]] for k in BUCKETS), Decimal(0))


def micros(value: Decimal) -> int:
    return int(value.quantize(Decimal(1), rounding=ROUND_HALF_UP))


def run_cost(sample: dict) -> tuple[int | None, int]:
    """(exact cost or None, its floor), micro-dollars: every call's, the scorer's included (they are billed)."""
    costs = [call_cost(sample, call) for call in sample["model_calls"]]
    floor = micros(sum((c for c in costs if c is not None), Decimal(0)))
    return (floor if None not in costs else None), floor


def final_answer(sample: dict) -> str | None:
    """react()'s submit answer; else the agent's last call, if it answered (text, no tool asked for, no error)."""
    if sample["final_answer_source"] == "submit":
        return sample["final_answer"]
    calls = agent_calls(sample)
    last = calls[-1] if calls else None
    if last and last["text"] and not last["tool_call_ids"] and not last["error"]:
        assert last["text"] == sample["final_answer"]
        return last["text"]
    return None  # tool_crash, stopped_by_token_limit: Inspect's "last assistant text" was a progress note asking a tool


def submit_call(sample: dict) -> str | None:
    if sample["final_answer_source"] != "submit":
        return None
    return next(t["id"] for t in reversed(sample["tool_calls"]) if t["function"] == "submit")


def expected_steps(sample: dict) -> list[dict]:
    """Every step in order: each model call; each ToolEvent but submit's; a call a limit left unrun, after its ask."""
    submit = submit_call(sample)
    final_event = None
    if final_answer(sample) is not None:
        final_event = (next(t["model_event_index"] for t in sample["tool_calls"] if t["id"] == submit) if submit
                       else agent_calls(sample)[-1]["event_index"])
    rows = []
    for call in sample["model_calls"]:
        what = "model call" if call["error"] else call["stop_reason"]
        final = call["event_index"] == final_event
        rows.append({"at": (call["event_index"], 0), "kind": "model", "what": what + (" (final answer)" if final else ""),
                     "agent_label": "scorer" if call["scorer"] else None, "error": call["error"] and call["error"][:200],
                     "input_tokens": None if buckets(call) is None else call["input_context_tokens"],
                     "output_tokens": call["usage"] and call["usage"]["output_tokens"],
                     "tool_call_ids": call["tool_call_ids"]})
    ran = {result["id"] for result in sample["tool_results"]}
    for result in sample["tool_results"]:
        if result["id"] == submit:
            continue
        if result["pending"]:
            status, error = "started", None
        elif result["error"]:
            status, error = "error", result["error"]["message"]
        elif result["failed"]:
            status, error = "error", f"the tool crashed ({sample['error'].split('(')[0]})"
        else:
            status, error = "ok", None
        rows.append({"at": (result["event_index"], 0), "kind": "tool", "what": f"{result['function']} → {status}",
                     "agent_label": None, "error": error, "input_tokens": None, "output_tokens": None,
                     "call_id": result["id"]})
    limit = sample["limit_type"] or next((e["type"] for e in sample["sample_limit_events"]), None)
    if limit and agent_calls(sample):
        asker = agent_calls(sample)[-1]
        functions = {t["id"]: t["function"] for t in sample["tool_calls"]}
        for position, call_id in enumerate(asker["tool_call_ids"]):
            if call_id not in ran:
                rows.append({"at": (asker["event_index"], 1 + position), "kind": "tool",
                             "what": f"{functions[call_id]} → not_run", "agent_label": None,
                             "error": f"not run: the {limit} limit stopped the sample after the call that asked for it",
                             "input_tokens": None, "output_tokens": None, "call_id": call_id})
    rows.sort(key=lambda row: row["at"])
    for idx, row in enumerate(rows):
        row["idx"] = idx
    return rows


def status(sample: dict) -> tuple[str, str | None]:
    """The canonical status and a short stop reason naming the limit and its value."""
    if sample["cancelled"]:  # Ctrl-C, the operator's cancel: a CancelledError, never a failure
        by = " by the operator" if any(e["type"] == "operator" for e in sample["sample_limit_events"]) else ""
        return "cancelled", f"cancelled{by} (CancelledError)"
    if sample["status"] == "error":
        return "failed", sample["error"][:200]
    if sample["status"] == "success":
        return "succeeded", None
    kind, value = sample["limit_type"], sample["limit_value"]
    shown = f"{value:g}"
    return {"message": ("budget_exceeded", f"message limit ({shown})"),
            "token": ("budget_exceeded", f"token limit ({shown})"),
            "turn": ("budget_exceeded", f"turn limit ({shown})"),
            "cost": ("budget_exceeded", f"cost limit (${shown})"),
            "time": ("timed_out", f"time limit ({shown}s)"),
            "working": ("timed_out", f"working time limit ({shown}s)"),
            "operator": ("cancelled", "interrupted by the operator")}[kind]


def run_model(sample: dict) -> str:
    """The eval's model, as the log's answered calls name it (the dated snapshot its steps carry)."""
    return NAMES[(sample["file"], sample["model"])]


def limits(sample: dict) -> dict:
    configured = TRUTH["logs"][sample["file"]]["limits_configured"]
    return {"max_tokens": sample["token_limit"] or configured.get("token_limit"),
            "max_wall_seconds": sample["time_limit"] or configured.get("time_limit"),
            "max_cost_usd": configured.get("cost_limit"),
            "labels": {k: v for k, v in [("message_limit", sample["message_limit"] or configured.get("message_limit")),
                                         ("turn_limit", configured.get("turn_limit")),
                                         ("working_limit", configured.get("working_limit"))] if v is not None}}


def when(text: str) -> datetime:
    return datetime.fromisoformat(text)


# --- the store, loaded once ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("inspect-client") / "store.duckdb"
    with store.connect(path) as con:
        report = ingest(con, [LOGS])
    return path, report


def test_every_sample_is_one_run_and_a_log_without_samples_says_so(db, cli):
    path, report = db
    assert len(SAMPLES) == 23
    runs = cli("runs", "--json", "--no-fold-subagents", "--db", path).json()
    assert sorted(r["run_id"] for r in runs) == sorted(SAMPLES)
    files = {Path(f.path).name: f for f in report.files}
    assert all(f.rejected == 0 and f.lines == f.loaded + f.skipped for f in files.values())
    for name, log in TRUTH["logs"].items():
        assert files[name].loaded == log["sample_count"], name
    # header_only.json: log_samples=False, eval-level usage only: one record, skipped, with why -- never "0 lines"
    header = files["header_only.json"]
    assert TRUTH["logs"]["header_only.json"]["eval_model_usage"] and not TRUTH["logs"]["header_only.json"]["log_samples"]
    assert (header.lines, header.loaded, header.skipped) == (1, 0, 1)
    assert header.notes == ["an Inspect log without samples (written with log_samples=False): only the eval's usage "
                            "totals by model (stats.model_usage), no sample, call or per-call usage to load as runs"]


def test_status_stop_reason_model_provider_and_times(db, cli):
    path, _ = db
    runs = {r["run_id"]: r for r in cli("runs", "--json", "--no-fold-subagents", "--db", path).json()}
    wrong = []
    for uuid, sample in SAMPLES.items():
        run = runs[uuid]
        expected = {"status": status(sample)[0], "stop_reason": status(sample)[1], "model": run_model(sample),
                    "task_class": sample["task"], "steps": len(sample["model_calls"]),
                    "started_at": when(sample["started_at"])}
        got = {k: (when(run[k]) if k == "started_at" else run[k]) for k in expected}
        if got != expected:
            wrong.append((sample["sample_id"], got, expected))
        # wall time: the sample's own start to its own end (to the millisecond); Inspect's total_time, taken a moment
        # before it stamps completed_at, is within a few milliseconds of it
        wall = (when(sample["completed_at"]) - when(sample["started_at"])).total_seconds()
        if abs(run["wall_seconds"] - wall) > 0.0011 or abs(run["wall_seconds"] - sample["total_time"]) > 0.006:
            wrong.append((sample["sample_id"], "wall", run["wall_seconds"], wall, sample["total_time"]))
    assert wrong == []
    # a cancelled sample's reason is short: no repr of a task with memory addresses and local paths
    for uuid, sample in SAMPLES.items():
        if sample["cancelled"]:
            assert len(runs[uuid]["stop_reason"]) < 50 and "0x" not in runs[uuid]["stop_reason"]
            assert "CancelledError(" in sample["error"] and len(sample["error"]) > 200


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_show_every_step_tokens_errors_final_answer_limits_and_ledger(db, cli):
    path, _ = db
    wrong = []
    for uuid, sample in SAMPLES.items():
        shown = cli("show", uuid, "--json", "--db", path).json()
        run, steps = shown["run"], shown["steps"]
        want = expected_steps(sample)
        keys = ("idx", "kind", "what", "agent_label", "error", "input_tokens", "output_tokens")
        if [{k: s[k] for k in keys} for s in steps] != [{k: s[k] for k in keys} for s in want]:
            wrong.append((sample["sample_id"], "steps", [{k: s[k] for k in keys} for s in steps],
                          [{k: s[k] for k in keys} for s in want]))
        # model calls: the agent's, the scorer's (labelled, billed) and the failed ones (an error, no usage)
        model = [s for s in steps if s["kind"] == "model"]
        assert len(model) == sample["totals"]["model_calls"]
        assert sum(s["agent_label"] == "scorer" for s in model) == sample["totals"]["scorer_model_calls"]
        assert sum(s["error"] is not None for s in model) == sample["totals"]["failed_model_calls"]
        # tool calls: Inspect's counts, the submit answer and a limit's unrun calls apart
        tools = [s for s in steps if s["kind"] == "tool"]
        statuses = [s["what"].rsplit(" → ", 1)[1] for s in tools]
        totals = sample["totals"]
        assert statuses.count("started") == totals["tool_pending"]
        assert statuses.count("error") == totals["tool_errors"] + sum(
            1 for t in sample["tool_results"] if t["failed"] and not t["error"])
        assert len(tools) - statuses.count("not_run") == totals["tool_events"] - (submit_call(sample) is not None)
        assert statuses.count("not_run") == totals["tool_calls_requested"] - totals["tool_events"]
        # the five buckets, the final answer, the limits, Inspect's own ledger (its model_usage)
        # (a run with no call: its buckets are test_a_sample_cancelled_before_any_model_call_used_no_tokens's)
        expected = {**(run_buckets(sample) if sample["model_calls"] else {}),
                    "has_final_answer": final_answer(sample) is not None, "final_output": final_answer(sample),
                    "final_answer_step": next((s["idx"] for s in want if s["what"].endswith("(final answer)")), None),
                    "provider": sample["provider"], "working_seconds": sample["working_time"],
                    **{k: v for k, v in limits(sample).items() if k != "labels"}}
        if sample["model_calls"]:
            usage = sample["model_usage"].values()
            expected.update(ledger_input_tokens=sum(u["input_tokens"] + (u["input_tokens_cache_read"] or 0)
                                                    + (u["input_tokens_cache_write"] or 0) for u in usage),
                            ledger_output_tokens=sum(u["output_tokens"] for u in usage),
                            ledger_tokens=sum(u["total_tokens"] for u in usage))
        else:  # no call: Inspect counted nothing, a ledger of 0
            assert sample["model_usage"] == {}
            expected.update(ledger_input_tokens=0, ledger_output_tokens=0, ledger_tokens=0)
        got = {k: run[k] for k in expected}
        if got != expected:
            wrong.append((sample["sample_id"], "run", {k: (got[k], expected[k]) for k in got if got[k] != expected[k]}))
    assert wrong == []


def test_declared_limits_the_store_has_no_column_for_are_labels(db, cli):
    path, _ = db
    rows = cli("sql", "select run_id, labels from runs", "--json", "--db", path).json()
    got = {r["run_id"]: json.loads(r["labels"]) if r["labels"] else {} for r in rows}
    expected = {uuid: ({"limits": limits(s)["labels"]} if limits(s)["labels"] else {}) for uuid, s in SAMPLES.items()}
    assert got == expected
    assert {tuple(v["limits"]) for v in got.values() if v} == {("message_limit",), ("turn_limit",), ("working_limit",)}


def test_reasoning_is_unknown_where_inspect_leaves_it_out_never_0(db, cli):
    path, _ = db
    for sample_id in ("fix_failing_test", "parallel_calls", "model_call_raises"):
        uuid, sample = next((u, s) for u, s in SAMPLES.items() if s["sample_id"] == sample_id)
        for step in expected_steps(sample):
            if step["kind"] != "model":
                continue
            call = next(c for c in sample["model_calls"] if c["event_index"] == step["at"][0])
            got = cli("show", uuid, "--step", step["idx"], "--json", "--db", path).json()
            assert got.get("reasoning_tokens") == (call["usage"] or {}).get("reasoning_tokens"), (sample_id, step)
            assert got.get("model") == call_model(sample, call)
            assert got.get("price_provider") == "mockllm" and not got.get("unpriced")  # priced through the mock prefix


def test_cost_by_run_includes_the_scorer_calls_and_says_at_least_when_a_call_has_no_usage(db, cli):
    path, _ = db
    data = cli("cost", "--by", "run", "--json", "--db", path).json()
    groups = {g["key"]: g for g in data["groups"]}
    runs = {r["run_id"]: r for r in cli("runs", "--json", "--no-fold-subagents", "--db", path).json()}
    wrong = []
    for uuid, sample in SAMPLES.items():
        exact, floor = run_cost(sample)
        listed = runs[uuid]
        got = (listed["cost_usd"], listed["cost_low_usd"], listed["cost_complete"])
        expected = (None if exact is None else exact / 1e6, floor / 1e6, exact is not None)
        if got != expected:
            wrong.append((sample["sample_id"], "runs", got, expected))
        if not sample["model_calls"]:  # a sample cancelled before any call used nothing: $0, exact
            assert (listed["cost_usd"], listed["cost_complete"], listed["steps"]) == (0.0, True, 0)
            assert uuid not in groups or (groups[uuid]["cost_usd"], groups[uuid]["model_calls"]) == (0.0, 0)
            continue
        group = groups[uuid]
        got = (group["model_calls"], group["cost_usd"], group["cost_low_usd"], group["cost_high_usd"],
               *(group[k] for k in BUCKETS))
        expected = (len(sample["model_calls"]), None if exact is None else exact / 1e6, floor / 1e6,
                    None if exact is None else exact / 1e6, *run_buckets(sample).values())
        if got != expected:
            wrong.append((sample["sample_id"], "cost", got, expected))
        scorer = [call_cost(sample, c) for c in sample["model_calls"] if c["scorer"]]
        if scorer:  # billed: the run's cost holds the grader's calls
            assert all(c and c > 0 for c in scorer) and exact == micros(
                sum(call_cost(sample, c) for c in sample["model_calls"]))
    assert wrong == []
    # Inspect's own price of the cost-limited calls (model_cost_config: gpt-4o-mini's list price) is the harness's
    (cost_limited,) = [u for u, s in SAMPLES.items() if s["limit_type"] == "cost"]
    recorded = [c["usage"]["total_cost"] for c in SAMPLES[cost_limited]["model_calls"]]
    assert groups[cost_limited]["harness_cost_usd"] == sum(round(Decimal(str(c)) * 1_000_000) for c in recorded) / 1e6
    assert groups[cost_limited]["cost_usd"] == pytest.approx(sum(recorded), abs=2e-6)  # ours: the same list price
    # the total is never the known part alone: one call without usage leaves it "at least"
    assert data["total"]["cost_usd"] is None
    assert data["total"]["cost_low_usd"] == sum(run_cost(s)[1] for s in SAMPLES.values()) / 1e6


def test_a_sample_cancelled_before_any_model_call_used_no_tokens(db, cli):
    path, _ = db
    runs = {r["run_id"]: r for r in cli("runs", "--json", "--no-fold-subagents", "--db", path).json()}
    empty = [uuid for uuid, s in SAMPLES.items() if not s["model_calls"]]
    assert len(empty) == 2 and all(SAMPLES[uuid]["cancelled"] for uuid in empty)
    assert [runs[uuid]["total_tokens"] for uuid in empty] == [0, 0]
    for uuid in empty:
        run = cli("show", uuid, "--json", "--db", path).json()["run"]
        assert [run[k] for k in BUCKETS] == [0] * len(BUCKETS)


def test_a_run_whose_calls_record_no_reasoning_has_unknown_reasoning(db, cli):
    path, _ = db
    unknown = [uuid for uuid, s in SAMPLES.items()
               if s["model_calls"] and all(c["usage"] is None or c["usage"]["reasoning_tokens"] is None
                                           for c in s["model_calls"])]
    assert len(unknown) == 6  # the samples with no grader call: Anthropic calls only
    assert {cli("show", uuid, "--json", "--db", path).json()["run"]["reasoning_tokens"] for uuid in unknown} == {None}


def test_cost_by_model_has_one_row_per_model_the_calls_name(db, cli):
    """The run's model and its steps' are named alike: no model split into a phantom row of no calls and a real one."""
    path, _ = db
    data = cli("cost", "--by", "model", "--json", "--db", path).json()
    calls = {}
    for sample in SAMPLES.values():
        for call in sample["model_calls"]:
            calls[call_model(sample, call)] = calls.get(call_model(sample, call), 0) + 1
    assert {g["key"]: g["model_calls"] for g in data["groups"]} == calls
    assert set(calls) == {"claude-sonnet-4-5-20250929", "gpt-4o-mini-2024-07-18", "gpt-5-mini-2025-08-07"}


# Each finding on the fixture, and why it is a true defect of what the log records.
WHY = {
    "tool_calls_paired": "the tool was interrupted while it ran (time_limit, or Ctrl-C): Inspect recorded the ToolEvent "
                         "pending, with no result and no completion; the call's result is lost",
    "no_silent_truncation": "Inspect's own input_context_tokens shrinks between two calls of one conversation: react() "
                            "and generate() keep every message (no truncation configured, no compaction event), so the "
                            "recorded prompt cannot have shrunk -- the usage the scripted mock reported is not the "
                            "conversation's (the fixture's README: plausible counts, not tokenizer counts), and the "
                            "check rightly refuses it: the record's usage does not describe the calls",
}


def expected_findings() -> set[tuple[str, str, int]]:
    found = set()
    for uuid, sample in SAMPLES.items():
        steps = expected_steps(sample)
        for step in steps:
            if step["what"].endswith("→ started"):
                asker = next(s for s in steps if step["call_id"] in s.get("tool_call_ids", ()))
                found.add(("tool_calls_paired", uuid, asker["idx"]))  # one lost call, one finding
        # the agent's thread: a context below the one before, by more than the earlier calls' reasoning
        thread = [(s["idx"], c) for s in steps for c in agent_calls(sample)
                  if s["kind"] == "model" and s["at"][0] == c["event_index"] and c["usage"]]
        for n in range(1, len(thread)):
            earlier = sum(c["usage"]["reasoning_tokens"] or 0 for _, c in thread[:n])
            if thread[n][1]["input_context_tokens"] < thread[n - 1][1]["input_context_tokens"] - earlier:
                found.add(("no_silent_truncation", uuid, thread[n][0]))
    return found


def test_every_finding_is_a_true_defect_of_the_record(db, cli):
    path, _ = db
    result = cli("check", "--json", "--db", path)
    assert result.code == 1  # findings at error severity
    findings = result.json()["findings"]
    got = {(f["check"], f["run_id"], f["step"]) for f in findings}
    assert got == expected_findings()
    assert {check for check, _, _ in got} == set(WHY)
    by_check = {f["check"]: f["detail"] for f in findings}
    assert "has no result: lost" in by_check["tool_calls_paired"]
    # the scorer's calls are a thread of their own: a grader's short prompt after the agent's long one is no truncation
    scorer_steps = {(uuid, s["idx"]) for uuid, sample in SAMPLES.items() for s in expected_steps(sample)
                    if s["agent_label"] == "scorer"}
    assert len(scorer_steps) == 6 and not {(run, step) for _, run, step in got} & scorer_steps
