"""Codex CLI 0.171 read as Codex means it (issue 57), held against what the API really served.

tests/fixtures/clients/codex_cli: ten sessions the real Codex CLI 0.171.0 wrote while it talked to a local
stub of the Responses API (see its README.md). The truth here comes from outside reconcile, in plain Python:
``stub_record.json`` (every request the stub saw and the reply it sent: response id, usage, output items —
the truth of what was billed) and ``truth.json`` (built from it and the rollouts by the fixture's own
make_fixture.py: sessions, turns, tool calls and their exit codes, final answers). Reconcile is read only
through its commands: ``runs --json``, ``show RUN --json`` (and ``--step N``), ``cost --by run --json``,
``check --json``.
"""

from __future__ import annotations

import json
import shutil
from datetime import datetime
from pathlib import Path

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest.driver import ingest

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

FIXTURE = ROOT / "tests" / "fixtures" / "clients" / "codex_cli"
TRUTH = json.loads((FIXTURE / "truth.json").read_text(encoding="utf-8"))
STUB = json.loads((FIXTURE / "stub_record.json").read_text(encoding="utf-8"))
SESSIONS = {s["scenario"]: s for s in TRUTH["sessions"]}
BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")
STATUS = {"task_complete": "succeeded", "error": "failed", "turn_aborted": "cancelled"}


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def _buckets(usage: dict) -> dict:
    """The Responses API's usage (cached inside input, reasoning inside output) as disjoint buckets; OpenAI bills no
    cache writes."""
    cached = usage["input_tokens_details"]["cached_tokens"]
    return {"input_uncached": usage["input_tokens"] - cached, "cache_read": cached, "cache_write_5m": 0,
            "cache_write_1h": 0, "output_tokens": usage["output_tokens"],
            "reasoning_tokens": usage["output_tokens_details"]["reasoning_tokens"]}


def billed(session: dict) -> list[dict]:
    """The requests of a session that got a response with usage, in order, as the stub recorded them (an HTTP error
    Codex retried and a stream that ended in response.failed got none)."""
    return [r for r in STUB["requests"] if r.get("thread_id") == session["session_id"] and r.get("usage")]


def expected_tools(session: dict) -> dict[str, str]:
    """Every tool call of the session and how it ended: a command by its exit code (0 ok, else error); a hosted web
    search the stub ran by the status it sent (completed: ok)."""
    calls = {c["call_id"]: "ok" if c["exit_code"] == 0 else "error" for c in session["tool_calls"]}
    for request in billed(session):
        for item in request["output"]:
            if item["type"] == "web_search_call":
                calls[item["id"]] = "ok"  # stub_responses.web_search: status "completed"
    return calls


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("codex_cli") / "codex.duckdb"
    with store.connect(path) as con:
        ingest(con, [FIXTURE / "sessions"])
    return path


def test_the_truth_is_what_the_stub_served():
    """truth.json agrees with the stub's own record: per session, the requests with usage and their sum."""
    for session in TRUTH["sessions"]:
        requests = billed(session)
        assert len(requests) == session["requests_with_usage"], session["scenario"]
        assert sum(r["usage"]["input_tokens"] for r in requests) == session["usage_totals"]["input_tokens"]
        assert [r["response_id"] for r in requests] == [r["response_id"] for r in session["requests"] if r["usage"]]


@pytest.mark.parametrize("scenario", sorted(SESSIONS))
def test_each_session_s_run(cli, db, scenario):
    """Status, stop reason, start and wall time, model, provider, model calls, tokens, tool results, final answer."""
    session = SESSIONS[scenario]
    requests = billed(session)
    listed = {r["run_id"]: r for r in cli("runs", "--json", "--no-fold-subagents", "--db", db).json()}
    run = listed[session["session_id"]]
    assert run["status"] == STATUS[session["ended_by"]]
    last = session["turns"][-1]
    assert run["stop_reason"] == (last["error"]["codex_error_info"] if session["ended_by"] == "error"
                                  else session["ended_by"])
    assert _when(run["started_at"]) == _when(session["start"])  # session_meta's timestamp: when Codex created it
    assert run["wall_seconds"] == pytest.approx((_when(last["ended"]) - _when(session["start"])).total_seconds())
    assert run["model"] == session["model"]
    assert run["steps"] == len(requests)  # model steps: one a billed response, no more
    assert run["total_tokens"] == sum(r["usage"]["input_tokens"] + r["usage"]["output_tokens"] for r in requests)
    shown = cli("show", session["session_id"], "--json", "--db", db).json()["run"]
    assert shown["provider"] == session["model_provider"]
    assert shown["final_output"] == session["final_answer"]
    assert shown["has_final_answer"] == (session["final_answer"] is not None)
    assert shown["tool_results"] == len(expected_tools(session))


@pytest.mark.parametrize("scenario", sorted(SESSIONS))
def test_each_model_step_is_one_response_with_its_own_usage(cli, db, scenario):
    """Every model step, in order, is a response the stub served, with that response's usage in five disjoint
    buckets, and one request's input as its context size (not for a response that ran hosted web searches, whose
    input counts the search passes)."""
    session = SESSIONS[scenario]
    run_id = session["session_id"]
    steps = cli("show", run_id, "--json", "--db", db).json()["steps"]
    model = [cli("show", run_id, "--step", s["idx"], "--json", "--db", db).json() for s in steps if s["kind"] == "model"]
    requests = billed(session)
    assert [m.get("response_id") for m in model] == [r["response_id"] for r in requests]
    for step, request in zip(model, requests, strict=True):
        want = _buckets(request["usage"])
        assert {b: step.get(b) for b in (*BUCKETS, "reasoning_tokens")} == want, request["response_id"]
        searches = sum(1 for item in request["output"] if item["type"] == "web_search_call")
        assert step.get("web_searches") == searches
        assert step.get("context_tokens") == (None if searches else request["usage"]["input_tokens"])


@pytest.mark.parametrize("scenario", sorted(SESSIONS))
def test_each_tool_call_has_its_result_and_how_it_ended(cli, db, scenario):
    """Commands by their exit code — 3 (check.sh) and 1 (a write the sandbox refused: its code is only in the
    output's text) and -1 (interrupted: its item written after turn_aborted) are errors — and hosted web searches
    as calls of their own, each answered inside its response."""
    session = SESSIONS[scenario]
    run_id = session["session_id"]
    steps = cli("show", run_id, "--json", "--db", db).json()["steps"]
    tools = [cli("show", run_id, "--step", s["idx"], "--json", "--db", db).json() for s in steps if s["kind"] == "tool"]
    assert {t["call_id"]: t.get("tool_status") for t in tools} == expected_tools(session)
    assert len(tools) == len(expected_tools(session))
    for tool in tools:
        assert tool["tool_name"] == ("web_search" if tool["call_id"].startswith("ws_") else "exec_command")


def test_cost_by_run_carries_the_truth_s_calls_and_buckets(cli, db):
    groups = {g["key"]: g for g in cli("cost", "--by", "run", "--json", "--db", db).json()["groups"]}
    assert set(groups) == {s["session_id"] for s in TRUTH["sessions"]}
    for session in TRUTH["sessions"]:
        group, requests = groups[session["session_id"]], billed(session)
        assert group["model_calls"] == len(requests), session["scenario"]
        for bucket in BUCKETS:
            assert group[bucket] == sum(_buckets(r["usage"])[bucket] for r in requests), (session["scenario"], bucket)
        assert group["calls_without_usage"] == 0 and group["cost_usd"] is not None


def test_a_fork_counts_its_own_usage_not_its_parent_s_again(cli, db):
    """`codex exec fork`: the fork's cumulative totals start from its parent's (truth: inherited_usage_totals)."""
    fork = SESSIONS["forked"]
    parent = next(s for s in TRUTH["sessions"] if s["session_id"] == fork["forked_from_id"])
    assert fork["inherited_usage_totals"] == parent["usage_totals"]
    run = {r["run_id"]: r for r in cli("runs", "--json", "--no-fold-subagents", "--db", db).json()}[fork["session_id"]]
    own = fork["usage_totals"]
    assert run["total_tokens"] == own["input_tokens"] + own["output_tokens"] == 22_063
    assert fork["rollout_facts"]["last_total_token_usage"]["input_tokens"] == own["input_tokens"] + \
        parent["usage_totals"]["input_tokens"]  # what differencing the fork's totals from zero would have counted


def test_every_line_is_accounted_for_and_the_new_ones_say_what_they_are(cli, tmp_path):
    """world_state is read for nothing (skipped with a note); token_usage_record is read; every token_count is
    skipped, each as what it is: its request's usage was read from the record, a repeat (a response.failed
    reconnect, a compaction), or the made-up count of a request refused for exceeding the context window."""
    report = cli("ingest", FIXTURE / "sessions", "--json", "--db", tmp_path / "c.duckdb").json()
    files = {Path(f["path"]).name: f for f in report["files"]}
    assert len(files) == 10 and report["totals"]["rejected"] == 0
    for session in TRUTH["sessions"]:
        f, facts = files[Path(session["rollout"]).name], session["rollout_facts"]
        assert f["lines"] == facts["lines"] == f["loaded"] + f["skipped"], session["scenario"]
        skipped = f["skipped_by"]
        assert skipped.get("not a step (world_state)", 0) == facts["line_types"].get("world_state", 0) >= 0
        counts = {reason: n for reason, n in skipped.items() if "token_count" in reason}
        assert sum(counts.values()) == facts["token_count_lines"], (session["scenario"], counts)
        assert counts.get("repeat of the token_count before it (same cumulative totals)", 0) == facts["token_count_repeats"]
        assert counts.get("token_count of a request whose token_usage_record was read", 0) == facts["token_usage_records"]
    fatal = files[Path(SESSIONS["api_error_fatal"]["rollout"]).name]["skipped_by"]
    assert fatal["token_count with every bucket 0 (written when a request exceeded the context window: no usage)"] == 1


# --- The findings -----------------------------------------------------------------------------------------------

# The fixture's sessions have no defect planted: every command's result is in its rollout, every request that got a
# response is a step -- so no finding at all. (The web_search session's final answer ran three hosted web searches
# inside the answering response, each with its result: no call left for the harness, so no finding either.)
NOT_A_DEFECT: set = set()


def test_every_finding_on_the_fixture_is_a_true_defect(cli, db):
    findings = cli("check", "--json", "--db", db).json()["findings"]
    assert [f for f in findings if (f["check"], f["run_id"], f["step"]) not in NOT_A_DEFECT] == []


def test_a_final_answer_that_searched_the_web_is_no_finding(cli, db):
    findings = cli("check", "--json", "--db", db).json()["findings"]
    assert [f for f in findings if f["run_id"] == SESSIONS["web_search"]["session_id"]] == []


def _variant(tmp_path: Path, scenario: str, keep=lambda record: True, change=lambda record: record) -> Path:
    """A copy of a session's rollout, some lines left out or changed."""
    source = FIXTURE / SESSIONS[scenario]["rollout"]
    out = tmp_path / "sessions" / source.name
    out.parent.mkdir(parents=True, exist_ok=True)
    records = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    out.write_text("".join(json.dumps(change(r)) + "\n" for r in records if keep(r)), encoding="utf-8")
    return out


def test_one_lost_call_is_one_finding(cli, tmp_path):
    """The sandbox-refused command's output left out: the session went on without it (lost, not in flight)."""
    lost = SESSIONS["shell_multi_turn"]["tool_calls"][3]["call_id"]
    _variant(tmp_path, "shell_multi_turn",
             keep=lambda r: not (r["type"] == "response_item" and r["payload"].get("call_id") == lost
                                 and r["payload"].get("type") == "function_call_output"))
    db = tmp_path / "lost.duckdb"
    assert cli("ingest", tmp_path / "sessions", "--db", db).code == 0
    findings = cli("check", "--json", "--db", db).json()["findings"]
    assert len(findings) == 1, findings


# --- Older shapes still read: without a token_usage_record, the cumulative totals -----------------------------------

def _totals(session: dict) -> dict:
    requests = billed(session)
    return {b: sum(_buckets(r["usage"])[b] for r in requests) for b in BUCKETS}


def _steps_sum(db: Path, run_id: str) -> tuple[dict, int]:
    """The model steps' own counts summed (the calls that have one), and how many calls have none."""
    con = store.connect(db, read_only=True)
    try:
        rows = con.execute(f"select {', '.join(BUCKETS)} from steps where run_id = ? and kind = 'model'",
                           [run_id]).fetchall()
    finally:
        con.close()
    counted = [r for r in rows if any(v is not None for v in r)]
    return {b: sum(r[i] or 0 for r in counted) for i, b in enumerate(BUCKETS)}, len(rows) - len(counted)


def _read_from_cumulative_totals(cli, tmp_path, scenario: str) -> None:
    """Without the per-response records, a count written after the tool outputs lands among the next response's
    lines, so one difference of the totals covers two requests and the first of them has no count of its own: the
    counts the rollout gives add up to the truth, and no total is claimed for the run (a call without usage makes
    its totals unknown, and its cost "at least": which request used what, the rollout no longer says)."""
    _variant(tmp_path, scenario, keep=lambda r: r["type"] != "token_usage_record")
    db = tmp_path / "v.duckdb"
    assert cli("ingest", tmp_path / "sessions", "--db", db).code == 0
    run_id = SESSIONS[scenario]["session_id"]
    counted, without = _steps_sum(db, run_id)
    assert counted == _totals(SESSIONS[scenario])
    group = next(g for g in cli("cost", "--by", "run", "--json", "--db", db).json()["groups"] if g["key"] == run_id)
    if without:
        assert {b: group[b] for b in BUCKETS} == dict.fromkeys(BUCKETS)
        assert group["calls_without_usage"] == without and group["cost_usd"] is None and group["cost_low_usd"] > 0
    else:
        assert {b: group[b] for b in BUCKETS} == _totals(SESSIONS[scenario])


def test_without_its_usage_records_a_session_is_read_from_its_cumulative_totals(cli, tmp_path):
    _read_from_cumulative_totals(cli, tmp_path, "shell_multi_turn")


def test_without_its_usage_records_a_fork_differences_from_its_inherited_totals(cli, tmp_path):
    _read_from_cumulative_totals(cli, tmp_path, "forked")


def test_the_exit_code_of_a_command_output_is_read_from_its_header_only(cli, tmp_path):
    """The sandbox-refused write has no CommandExecution item: `Process exited with code 1` in its output's header
    says it failed. The same line in what the command printed says nothing."""
    refused = SESSIONS["shell_multi_turn"]["tool_calls"][3]["call_id"]

    def printed(record):
        if record["payload"].get("call_id") == refused and record["payload"].get("type") == "function_call_output":
            head, body = record["payload"]["output"].split("Output:\n", 1)
            record["payload"]["output"] = (head.replace("code 1", "code 0") + "Output:\nProcess exited with code 1\n"
                                           + body)
        return record

    _variant(tmp_path, "shell_multi_turn", change=printed)
    db = tmp_path / "h.duckdb"
    assert cli("ingest", tmp_path / "sessions", "--db", db).code == 0
    rows = cli("sql", f"select tool_status from steps where call_id = '{refused}'", "--json", "--db", db).json()
    assert rows == [{"tool_status": "ok"}]


def test_an_archive_of_the_fixture_is_the_same_runs(cli, tmp_path):
    """~/.codex as Codex 0.171 lays it out: sessions/ and archived_sessions/ copies of one session are one run."""
    home = tmp_path / ".codex"
    shutil.copytree(FIXTURE / "sessions", home / "sessions")
    one = FIXTURE / SESSIONS["plain_answer"]["rollout"]
    (home / "archived_sessions").mkdir()
    shutil.copy(one, home / "archived_sessions" / one.name)
    db = tmp_path / "a.duckdb"
    assert cli("ingest", home, "--db", db).code == 0
    assert len(cli("runs", "--json", "--no-fold-subagents", "--db", db).json()) == 10
