"""Transcripts written by Claude Code 2.1.197 itself against a stub of the Messages API (tests/fixtures/clients/claude_code).

Every expectation is computed here, in plain Python, from ``truth.json`` -- the stub's own record of every request it
answered (the usage it sent is the truth), how Claude Code wrote each call, and Claude Code's own ``total_cost_usd`` --
with the prices the fixture states (``prices_per_mtok_for_cost_check``, Claude Code's own); never from reconcile's SQL.
It is compared with what the commands print: ``reconcile runs --json --no-fold-subagents``, ``reconcile show RUN
--json`` (and ``--step N``), ``reconcile cost --by run --json`` and ``reconcile check --json``.

How the record is read (the fixture's README says what 2.1.197 writes):

- **Model calls** are the answered calls the file writes (one step per message id and request id, however many lines),
  the calls that failed with an API error (Claude Code's ``<synthetic>`` message, ``isApiErrorMessage``: a model step
  with the error, zero usage, no answer), and the compaction's own call, which 2.1.197 writes nowhere: a model step of
  unknown usage, so the run's cost reads "at least". A 529 that Claude Code retried leaves no trace (nor a step); the
  "No response requested." ``<synthetic>`` message of a ``--continue`` is no call.
- **A fork** (``--fork-session``) copies the parent's lines verbatim: they are skipped, the calls counted once, in the
  session that made them; the fork starts at its own first line.
- **Tokens** are the stub's usage, buckets disjoint; 5m/1h as the stub sent them, unknown where it sent no breakdown
  (Claude Code writes a zeroed one: the cost is a range, Claude Code's own figure its floor). A subagent line written
  before ``message_delta`` keeps ``output_tokens: 1`` for good: nothing in the file tells the true count, so reconcile
  has the count written and Claude Code's own cost is above it by exactly the missing output.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import ROUND_HALF_UP, Decimal

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest.driver import ingest

FIXTURE = ROOT / "tests" / "fixtures" / "clients" / "claude_code"
PROJECTS = FIXTURE / "projects"
PROJECT = PROJECTS / "-home-dev-acme-api"
TRUTH = json.loads((FIXTURE / "truth.json").read_text(encoding="utf-8"))
SESSIONS = TRUTH["sessions"]  # key: the file's path under the fixture
PRICES = {model: {bucket: Decimal(str(price)) for bucket, price in prices.items()}
          for model, prices in TRUTH["prices_per_mtok_for_cost_check"].items()}
BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")
STATUS = {"completed": "succeeded", "api_error": "failed", "max_turns": "budget_exceeded"}
FORK, BASE = "f0dd98d0-6a32-4930-a85f-9eecc0ec83e5", "44760667-7ca4-4806-a865-40e1dc76117f"
COMPACT, API_ERROR = "9cdbc8ec-ee76-4a58-ab15-24fcee5b116a", "ec69d5bd-0af8-444c-a1b2-606da48423c9"
SUBAGENTS, NO_BREAKDOWN = "c6b93a2c-39f8-4591-af78-d04a2b349aa2", "b2038293-c82a-4d9a-acda-f313993c91d2"
TOOLS, MAX_TURNS = "dda308a0-d397-449e-a5b6-e403b5a79f3e", "3ca11234-c54c-4031-a402-abd35ba13d94"


# --- what truth.json says, in plain Python -------------------------------------------------------------------------

def run_id(session: dict) -> str:
    return f"{session['sessionId']}/agent-{session['agentId']}" if session["kind"] == "subagent" else session["sessionId"]


RUNS = {run_id(s): s for s in SESSIONS.values()}


def answered(session: dict) -> list[dict]:
    """The calls the file writes: answered (HTTP 200), with lines of their own (a fork's copies are not its calls)."""
    return [c for c in session["api_calls"] if c["status"] == 200 and c["transcript_lines"]]


def unrecorded(session: dict) -> list[dict]:
    """Answered and billed, written nowhere: 2.1.197's compaction call."""
    return [c for c in session["api_calls"] if c["status"] == 200 and not c["transcript_lines"]]


def failed(session: dict) -> list[dict]:
    """The calls the API refused that the file records: Claude Code's <synthetic> API-error messages."""
    return [m for m in session.get("synthetic_messages", []) if m["isApiErrorMessage"]]


def as_written(call: dict) -> dict:
    """A call's five buckets as the file writes them (its last line): the stub's usage, the output as written (a stale
    subagent line keeps message_start's), 5m/1h unknown where the stub sent no breakdown."""
    return {**as_sent(call), "output_tokens": call["as_written"]["output_tokens"][-1]}


def as_sent(call: dict) -> dict:
    usage, sent_breakdown = call["usage"], call["usage"]["cache_creation_breakdown_sent"]
    return {"input_uncached": usage["input_tokens"], "cache_read": usage["cache_read_input_tokens"],
            "cache_write_5m": usage["ephemeral_5m_input_tokens"] if sent_breakdown else None,
            "cache_write_1h": usage["ephemeral_1h_input_tokens"] if sent_breakdown else None,
            "output_tokens": usage["output_tokens"]}


def dollars(call: dict, buckets: dict, writes_at: str = "cache_write_5m") -> Decimal:
    """A call's cost at the fixture's prices; writes of unknown lifetime all at ``writes_at``."""
    price = PRICES[call["model"]]
    unknown = buckets["cache_write_5m"] is None
    tokens = {"input": buckets["input_uncached"], "cache_read": buckets["cache_read"],
              "cache_write_5m": 0 if unknown else buckets["cache_write_5m"],
              "cache_write_1h": 0 if unknown else buckets["cache_write_1h"], "output": buckets["output_tokens"]}
    if unknown:
        tokens[writes_at] = call["usage"]["cache_creation_input_tokens"]
    return sum(Decimal(n) * price[bucket] for bucket, n in tokens.items()) / 1_000_000


def usd(amount: Decimal) -> float:
    """Rounded once, to the micro-dollar, half away from zero (as every sum of money is)."""
    return float(amount.quantize(Decimal("0.000001"), rounding=ROUND_HALF_UP))


def run_buckets(session: dict) -> dict:
    """The run's five token totals: a refused call is billed nothing; an unrecorded one (the compaction's) leaves every
    total unknown -- the answered calls' sum is only a part of it."""
    calls = [as_written(c) for c in answered(session)]
    if unrecorded(session):
        return dict.fromkeys(BUCKETS)
    return {b: None if any(c[b] is None for c in calls) else sum(c[b] for c in calls) for b in BUCKETS}


def run_cost(session: dict) -> tuple[Decimal, Decimal | None]:
    """Floor and ceiling (None: none, an unrecorded call) of the run's cost, from the calls as written."""
    calls = answered(session)
    low = sum((dollars(c, as_written(c), "cache_write_5m") for c in calls), Decimal(0))
    high = sum((dollars(c, as_written(c), "cache_write_1h") for c in calls), Decimal(0))
    return low, None if unrecorded(session) else high


def ending(session: dict) -> tuple[str, str | None]:
    """Status and stop reason: how the file's last run ended."""
    status = STATUS[session["ended"]]
    if status == "failed":
        return status, failed(session)[-1]["text"]
    if status == "budget_exceeded":
        return status, "max_turns"
    reason = answered(session)[-1]["as_written"]["stop_reasons"][-1]
    return status, None if reason == "None" else reason  # a stale subagent line: stop_reason null


def when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def claude_code_cost(session: dict) -> Decimal:
    """Claude Code's own total_cost_usd of the session's `claude -p` runs (its subagents' calls included)."""
    key = next(k for k, s in SESSIONS.items() if s is session)
    # a float of an amount of at most 8 decimals (0.039209999999999995 for 0.03921): read back to 10
    return sum((Decimal(repr(r["result"]["total_cost_usd"])).quantize(Decimal("1e-10")) for r in TRUTH["runs"]
                if r["session_file"] == key), Decimal(0))


# --- the store, loaded once ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("claude-code-client") / "store.duckdb"
    with store.connect(path) as con:
        report = ingest(con, [PROJECTS])
    return path, report


def test_the_truth_is_what_the_readme_says():
    """The fixture's own account, checked once so the tests below can lean on it."""
    assert len(RUNS) == 14 and sum(len(answered(s)) for s in SESSIONS.values()) == 32
    fork = RUNS[FORK]
    assert [c["request_id"] for c in fork["copied_api_calls"]] == [c["request_id"] for c in answered(RUNS[BASE])[:2]]
    assert fork["first_timestamp"] > fork["min_timestamp"]  # the copies are older than the fork's own first line
    for session in SESSIONS.values():
        for message in failed(session):  # the <synthetic> message names the refused request
            assert [c["status"] for c in session["api_calls"] if c["request_id"] == message["requestId"]] == [400]
    # Claude Code's own cost is the stub's usage at these prices, every run (the compaction call included)
    assert all(r["total_cost_usd_matches_stub_usage"] for r in TRUTH["runs"])


def test_every_file_is_one_run_and_copied_or_local_lines_are_skipped_with_why(db, cli):
    path, report = db
    runs = cli("runs", "--json", "--no-fold-subagents", "--db", path).json()
    assert sorted(r["run_id"] for r in runs) == sorted(RUNS)
    files = {f.path.split("/projects/", 1)[1]: f for f in report.files}
    assert all(f.rejected == 0 and f.lines == f.loaded + f.skipped for f in files.values())
    assert {p.path.rsplit("/", 1)[1] for p in report.passed_over} == {"agent-a1ab3c997f9026430.meta.json",
                                                                       "agent-af0acb79e0916e97c.meta.json"}
    for key, session in SESSIONS.items():
        assert files[key.removeprefix("projects/")].lines == session["lines"]
    # the fork's copies: the parent's prompt, its call asking for Read, the result and the answer
    copied = "history copied from an earlier session (a fork): counted in the session that made the call"
    assert {k: f.skipped_by.get(copied, 0) for k, f in files.items() if f.skipped_by.get(copied)} == \
        {f"-home-dev-acme-api/{FORK}.jsonl": 4}
    local = "not a model call: a <synthetic> message Claude Code wrote itself"  # "No response requested."
    assert sum(f.skipped_by.get(local, 0) for f in files.values()) == sum(
        not m["isApiErrorMessage"] for s in SESSIONS.values() for m in s.get("synthetic_messages", [])) == 2


def test_status_stop_reason_model_provider_and_times(db, cli):
    path, _ = db
    runs = {r["run_id"]: r for r in cli("runs", "--json", "--no-fold-subagents", "--db", path).json()}
    wrong = []
    for rid, session in RUNS.items():
        run = runs[rid]
        status, reason = ending(session)
        calls = answered(session)
        expected = {"status": status, "stop_reason": reason[:200] if reason else reason,
                    "model": calls[0]["model"] if calls else None,
                    "steps": len(calls) + len(failed(session)) + len(unrecorded(session)),
                    # the run's own first line (a fork's copies are older), to its last
                    "started_at": when(session["first_timestamp"])}
        got = {k: when(run[k]) if k == "started_at" else run[k] for k in expected}
        if got != expected:
            wrong.append((rid, {k: (got[k], expected[k]) for k in got if got[k] != expected[k]}))
        wall = (when(session["last_timestamp"]) - when(session["first_timestamp"])).total_seconds()
        assert session["last_timestamp"] == session["max_timestamp"]
        if run["wall_seconds"] is None or abs(run["wall_seconds"] - wall) > 0.0005:
            wrong.append((rid, "wall", run["wall_seconds"], wall))
    assert wrong == []
    assert runs[FORK]["started_at"] != when(RUNS[FORK]["min_timestamp"])


@pytest.mark.slow  # every step of every fixture session through show --step: CI runs it (pytest -m slow)
def test_show_every_model_call_its_usage_and_every_tool_call(db, cli):
    """Per run: each model step is one call of the truth (by request id; a fork's copies are absent), with the usage
    the file writes; each tool step is one of the run's own tool calls, with its name and is_error."""
    path, _ = db
    wrong = []
    for rid, session in RUNS.items():
        shown = cli("show", rid, "--json", "--db", path).json()
        run, steps = shown["run"], shown["steps"]
        model = [s for s in steps if s["kind"] == "model"]
        detail = [cli("show", rid, "--step", s["idx"], "--json", "--db", path).json() for s in model]
        expected_calls = {c["request_id"]: c for c in answered(session)}
        refused = {m["requestId"]: m for m in failed(session)}
        got_ids = [d.get("request_id") for d in detail]
        if sorted(i for i in got_ids if i) != sorted([*expected_calls, *refused]) or \
                got_ids.count(None) != len(unrecorded(session)):
            wrong.append((rid, "calls", got_ids, list(expected_calls), list(refused)))
            continue
        asked = []
        for step, d in zip(model, detail):
            if d.get("request_id") in expected_calls:
                call = expected_calls[d["request_id"]]
                buckets = as_written(call)
                got = {"response_id": d.get("response_id"), "model": d.get("model"), "error": step["error"],
                       **{b: d.get(b) for b in BUCKETS}}
                want = {"response_id": call["message_id"], "model": call["model"], "error": None, **buckets}
            elif d.get("request_id") in refused:  # the refused call: an error, billed nothing, no answer or model
                got = {"error": step["error"], "model": d.get("model"), "what": step["what"],
                       **{b: d.get(b) for b in BUCKETS}}
                want = {"error": refused[d["request_id"]]["text"], "model": None, "what": "model call",
                        **dict.fromkeys(BUCKETS, 0)}
            else:  # the compaction's call: written nowhere, its usage unknown
                got = {b: d.get(b) for b in BUCKETS} | {"cost_low_usd": d.get("cost_low_usd"),
                                                         "cost_high_usd": d.get("cost_high_usd")}
                want = dict.fromkeys(BUCKETS) | {"cost_low_usd": 0.0, "cost_high_usd": None}
                assert "compaction" in d.get("detail", "")
            if got != want:
                wrong.append((rid, step["idx"], got, want))
            asked += [(t["call_id"], t["tool_name"]) for t in d.get("tool_calls", [])]
        own = [t for t in session["tool_calls"] if not t["copied"]]
        if sorted(asked) != sorted((t["id"], t["name"]) for t in own):  # `show --step` lists a step's calls by id
            wrong.append((rid, "asked", asked, [(t["id"], t["name"]) for t in own]))
        results = [s["what"] for s in steps if s["kind"] == "tool"]
        if results != [f"{t['name']} → {'error' if t['is_error'] else 'ok'}" for t in own if t["has_result"]]:
            wrong.append((rid, "results", results))
        # the five buckets, the final answer
        expected = {**run_buckets(session), "final_output": session["final_answer"],
                    "has_final_answer": session["final_answer"] is not None, "provider": "anthropic"}
        got = {k: run[k] for k in expected}
        if got != expected:
            wrong.append((rid, "run", {k: (got[k], expected[k]) for k in got if got[k] != expected[k]}))
    assert wrong == []


def test_cost_by_run_is_claude_codes_own_total_cost_usd(db, cli):
    path, _ = db
    data = cli("cost", "--by", "run", "--json", "--db", path).json()
    groups = {g["key"]: g for g in data["groups"]}
    wrong = []
    for rid, session in RUNS.items():
        low, high = run_cost(session)
        exact = high if high == low else None
        group = groups[rid]
        got = (group["model_calls"], group["cost_usd"], group["cost_low_usd"], group["cost_high_usd"],
               *(group[b] for b in BUCKETS))
        expected = (len(answered(session)) + len(failed(session)) + len(unrecorded(session)),
                    None if exact is None else usd(exact), usd(low), None if high is None else usd(high),
                    *run_buckets(session).values())
        if got != expected:
            wrong.append((rid, got, expected))
    assert wrong == []

    # Claude Code's own figure (its `claude -p` runs of the session file, subagents included), to the micro-dollar
    def ours(rid: str) -> Decimal:
        return Decimal(str(groups[rid]["cost_low_usd"]))

    whole = [rid for rid, s in RUNS.items() if s["kind"] == "session" and rid not in (COMPACT, SUBAGENTS)]
    assert {FORK, BASE, API_ERROR, NO_BREAKDOWN} < set(whole) and len(whole) == 10
    for rid in whole:  # every call as sent: ours is Claude Code's (writes without a breakdown at 5m: our floor)
        assert ours(rid) == Decimal(str(usd(claude_code_cost(RUNS[rid])))), rid
    # the fork: its own two calls, not its parent's again -- what Claude Code charged for the fork
    assert groups[FORK]["cost_usd"] == usd(claude_code_cost(RUNS[FORK])) == 0.032112
    # no breakdown: Claude Code priced the writes at 5m; ours is the range 5m .. 1h
    assert groups[NO_BREAKDOWN]["cost_high_usd"] > groups[NO_BREAKDOWN]["cost_low_usd"]
    # the /compact call: in Claude Code's total, written nowhere: ours is "at least" the rest
    (compaction,) = unrecorded(RUNS[COMPACT])
    compaction_cost = dollars(compaction, as_sent(compaction))
    assert compaction["kind"] == "compact" and compaction_cost == Decimal("0.016869")
    assert claude_code_cost(RUNS[COMPACT]) == run_cost(RUNS[COMPACT])[0] + compaction_cost
    assert (groups[COMPACT]["cost_usd"], groups[COMPACT]["cost_high_usd"]) == (None, None)
    assert ours(COMPACT) == Decimal(str(usd(claude_code_cost(RUNS[COMPACT]) - compaction_cost)))
    # the subagents session: Claude Code's total is its calls and its two subagents' as sent; the general-purpose
    # subagent's lines kept message_start's output (1): ours is below by exactly that output, which no file tells
    family = [rid for rid in RUNS if rid.startswith(SUBAGENTS)]
    calls = [c for rid in family for c in answered(RUNS[rid])]
    assert len(family) == 3 and claude_code_cost(RUNS[SUBAGENTS]) == sum(dollars(c, as_sent(c)) for c in calls)
    stale = [c for c in calls if c["as_written"]["output_tokens"][-1] != c["usage"]["output_tokens"]]
    assert [c["as_written"]["output_tokens"][-1] for c in stale] == [1, 1]
    missing = sum(c["usage"]["output_tokens"] - 1 for c in stale) * PRICES["claude-opus-4-8"]["output"] / 1_000_000
    assert claude_code_cost(RUNS[SUBAGENTS]) - sum(run_cost(RUNS[rid])[0] for rid in family) == missing
    assert missing == Decimal("0.0026")
    # calls are summed unrounded, the run rounded once: rounding each call first would be off by a micro-dollar here
    shown = cli("show", TOOLS, "--json", "--db", path).json()
    per_call = sum(Decimal(str(s["cost_usd"])) for s in shown["steps"] if s["kind"] == "model")
    assert per_call - Decimal(str(groups[TOOLS]["cost_usd"])) == Decimal("0.000001")
    # the total is never the known part alone: the compaction call leaves it "at least"
    assert data["total"]["cost_usd"] is None and data["total"]["cost_high_usd"] is None


def test_no_check_finds_a_defect_the_transcripts_do_not_have(db, cli):
    """Every call's tool results are there and paired, the failed Bash calls carry is_error, each context grows until
    the /compact (a compaction event is on the record), the refused calls have no context to compare: no finding.
    The one defect the files do have -- the general-purpose subagent's output counts stuck at 1 -- no check can see
    (a count of 1 is a count)."""
    path, _ = db
    result = cli("check", "--json", "--db", path)
    assert result.code == 0 and result.json()["findings"] == []


# --- the rules, each on a file cut or changed from the fixture -------------------------------------------------------

def load(folder, files: dict[str, list[str]]) -> None:
    project = folder / "projects" / "p"
    project.mkdir(parents=True)
    for name, lines in files.items():
        (project / name).write_text("".join(lines), encoding="utf-8")


def lines_of(session_id: str) -> list[str]:
    return (PROJECT / f"{session_id}.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_a_fork_counts_once_whatever_order_the_files_load_in(tmp_path, cli):
    """Within the fork's own file: loading it alone, before or after its parent, gives the store one load of both."""
    fork, base = PROJECT / f"{FORK}.jsonl", PROJECT / f"{BASE}.jsonl"
    outputs = []
    for order in ([fork, base], [base, fork], [[fork, base]], [fork]):
        path = tmp_path / f"store{len(outputs)}.duckdb"
        with store.connect(path) as con:
            for paths in order:
                ingest(con, paths if isinstance(paths, list) else [paths])
        runs = cli("runs", "--json", "--no-fold-subagents", "--db", path).json()
        cost = cli("cost", "--by", "run", "--json", "--db", path).json()["groups"]
        outputs.append((runs, cost, cli("show", FORK, "--json", "--db", path).json()["steps"]))
    assert outputs[0] == outputs[1] == outputs[2]
    fork_alone = outputs[3]
    assert fork_alone[2] == outputs[0][2] and [r for r in outputs[0][0] if r["run_id"] == FORK] == fork_alone[0]
    assert [g["model_calls"] for g in fork_alone[1]] == [2]


def test_copies_that_keep_their_sessions_id_are_skipped_too(tmp_path, cli):
    """The older shape of a copy: the parent's lines with the parent's sessionId, no queue-operation line before them."""
    lines = []
    for line in lines_of(FORK)[3:]:  # without the fork's mode and queue-operation lines
        record = json.loads(line)
        if record.get("timestamp", "9") < RUNS[FORK]["first_timestamp"]:
            record["sessionId"] = BASE
        lines.append(json.dumps(record) + "\n")
    load(tmp_path, {f"{FORK}.jsonl": lines})
    path = tmp_path / "store.duckdb"
    with store.connect(path) as con:
        ingest(con, [tmp_path / "projects"])
    (run,) = cli("runs", "--json", "--no-fold-subagents", "--db", path).json()
    assert (run["run_id"], run["steps"], run["status"]) == (FORK, 2, "succeeded")
    own = answered(RUNS[FORK])
    assert run["started_at"] == "2026-12-06T04:47:16.643000+00:00"  # its own first prompt: no queue line now
    assert run["cost_usd"] == usd(sum(dollars(c, as_written(c)) for c in own))


def test_an_api_error_fails_the_session_until_a_continue_recovers(tmp_path, cli):
    cut = lines_of(API_ERROR)[:9]  # the first run only: its second call refused (400)
    load(tmp_path, {f"{API_ERROR}.jsonl": cut})
    path = tmp_path / "store.duckdb"
    with store.connect(path) as con:
        ingest(con, [tmp_path / "projects"])
    (run,) = cli("runs", "--json", "--no-fold-subagents", "--db", path).json()
    error = failed(RUNS[API_ERROR])[0]["text"]
    assert (run["status"], run["stop_reason"], run["steps"]) == ("failed", error, 2)
    shown = cli("show", API_ERROR, "--json", "--db", path).json()["run"]
    assert shown["final_output"] is None and not shown["has_final_answer"]
    assert when(shown["ended_at"]) == when(json.loads(cut[7])["timestamp"])  # the error's own line
    # the whole file: the --continue answered, and that answer ends the session
    with store.connect(tmp_path / "whole.duckdb") as con:
        ingest(con, [PROJECT / f"{API_ERROR}.jsonl"])
    shown = cli("show", API_ERROR, "--json", "--db", tmp_path / "whole.duckdb").json()["run"]
    assert (shown["status"], shown["final_output"]) == ("succeeded", RUNS[API_ERROR]["final_answer"])
    assert when(shown["ended_at"]) == when(RUNS[API_ERROR]["last_timestamp"])


def test_a_session_that_ends_right_after_compact_has_ended(tmp_path, cli):
    """The file as /compact left it: the answer before it stands; the local command asked the model nothing."""
    lines = lines_of(COMPACT)
    end = next(n for n, line in enumerate(lines) if '"queue-operation"' in line and n > 12)  # before compact_post
    load(tmp_path, {f"{COMPACT}.jsonl": lines[:end]})
    path = tmp_path / "store.duckdb"
    with store.connect(path) as con:
        ingest(con, [tmp_path / "projects"])
    shown = cli("show", COMPACT, "--json", "--db", path).json()
    run = shown["run"]
    pre = [c for c in answered(RUNS[COMPACT]) if c["run"] == "compact_pre"]
    stdout = json.loads(next(line for line in lines[:end] if "<local-command-stdout>" in line))
    assert (run["status"], run["stop_reason"]) == ("succeeded", "end_turn")
    assert run["final_output"].startswith("`total([])` returns `0`")
    assert when(run["ended_at"]) == when(stdout["timestamp"])  # the command's output: the session's last word
    assert [s["what"] for s in shown["steps"]] == ["tool_use", "Read → ok", "end_turn (final answer)", "model call",
                                                   "compaction"]
    assert (run["cost_usd"], run["cost_high_usd"]) == (None, None)
    assert run["cost_low_usd"] == usd(sum(dollars(c, as_written(c)) for c in pre))


def test_max_turns_stops_the_session_without_an_answer(db, cli):
    path, _ = db
    shown = cli("show", MAX_TURNS, "--json", "--db", path).json()
    run = shown["run"]
    assert (run["status"], run["stop_reason"], run["has_final_answer"]) == ("budget_exceeded", "max_turns", False)
    assert when(run["ended_at"]) == when(RUNS[MAX_TURNS]["last_timestamp"])  # the max_turns_reached attachment
    assert [s["what"] for s in shown["steps"]] == ["tool_use", "Bash → ok"] * 2
