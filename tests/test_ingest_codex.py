"""Codex CLI rollouts: per-call usage from the cumulative totals (repeats skipped), one run per session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.errors import ExitCode
from reconcile.ingest.driver import ingest
from reconcile.engine import DuckDBEngine

CODEX = ROOT / "tests" / "fixtures" / "realdata" / "codex-cli"
SESSIONS = sorted((CODEX / "sessions").rglob("rollout-*.jsonl")) + [
    CODEX / "VibeCodingTracker__tests__fixtures__sessions__codex.jsonl"]
DOUBLED = CODEX / "sessions/2026/02/23/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"
KEYS = ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens")


def independent(path: Path) -> dict:
    """Written here, from the raw lines: the sum of the differences of distinct cumulative totals."""
    session, previous, summed, calls = None, None, dict.fromkeys(KEYS, 0), 0
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        payload = record["payload"]
        if record["type"] == "session_meta":
            session = payload["id"]
        if payload.get("type") != "token_count" or not payload.get("info"):
            continue
        total = {key: payload["info"]["total_token_usage"].get(key) or 0 for key in KEYS}
        if total == previous:
            continue  # the same count written again
        for key in KEYS:
            summed[key] += total[key] - (previous or {}).get(key, 0)
        previous, calls = total, calls + 1
    return {"session": session, "calls": calls, **summed}


@pytest.fixture(scope="module")
def codex(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("codex") / "codex.duckdb")
    report = ingest(con, [CODEX])
    yield con, report
    con.close()


def test_every_real_rollout_loads_without_a_reject_and_every_line_is_accounted_for(codex):
    _, report = codex
    rollouts = [f for f in report.files if f.format == "codex"]
    assert len(rollouts) == len(SESSIONS) == 7
    for f in rollouts:
        assert f.rejected == 0 and f.loaded + f.rejected + f.skipped == f.lines, f.path


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.name[:40])
def test_tokens_per_session_equal_the_differences_of_the_cumulative_totals(codex, path):
    con, _ = codex
    expected = independent(path)
    got = con.execute("""select count(*), sum(input_uncached + cache_read), sum(cache_read), sum(output_tokens),
                                sum(reasoning_tokens), sum(cache_write_5m + cache_write_1h)
                         from steps where run_id = ? and kind = 'model' and input_uncached is not null""",
                      [expected["session"]]).fetchall()[0]
    assert got == (expected["calls"], expected["input_tokens"], expected["cached_input_tokens"],
                   expected["output_tokens"], expected["reasoning_output_tokens"], 0)


def test_doubled_counts_are_not_summed_twice(codex):
    """Codex Desktop 0.104 writes each token_count twice: summing last_token_usage would count 535,265 tokens."""
    con, _ = codex
    naive = sum(json.loads(line)["payload"]["info"]["last_token_usage"]["total_tokens"]
                for line in DOUBLED.read_text().splitlines()
                if '"token_count"' in line and json.loads(line)["payload"].get("info"))
    ours = con.execute("select sum(total_tokens) from run_view where run_id = '019c8bfe-ec25-79e0-97d7-bda6a9c575ff'"
                       ).fetchall()[0][0]
    assert naive == 535_265 and ours == 299_496  # the session's last cumulative total_tokens
    doubled = next(f for f in codex[1].files if Path(f.path).name == DOUBLED.name)
    assert any("repeat of the token_count before it" in str(note) for note in doubled.notes)


def test_the_uploader_s_own_day_totals_agree(codex):
    """localpush's manifest: UTC-day 2026-02-23 totals computed from total_token_usage deltas, by another tool."""
    con, _ = codex
    manifest = json.loads((CODEX / "localpush__manifest.json").read_text())["verification"]["token_totals"]
    got = con.execute("""select sum(s.input_uncached + s.cache_read), sum(s.output_tokens), sum(s.cache_read)
                         from steps s join runs r using (run_id)
                         where r.source_format = 'codex' and r.run_id like '019c8%' and s.kind = 'model'
                           and s.started_at >= '2026-02-23T00:00:00Z' and s.started_at < '2026-02-24T00:00:00Z'""").fetchall()[0]
    assert got == (manifest["input"], manifest["output"], manifest["cache_read"])


def test_buckets_models_calls_and_status(codex):
    con, _ = codex
    run = con.execute("""select model, provider, status, stop_reason from run_view
                         where run_id = '019c8bfe-ec25-79e0-97d7-bda6a9c575ff'""").fetchall()[0]
    assert run == ("gpt-5.3-codex", "openai", "succeeded", "task_complete")
    steps = con.execute("""select kind, tool_name, call_id, input_uncached, cache_read, context_tokens, output_tokens,
                                  reasoning_tokens from step_view
                           where run_id = '019c8bfe-ec25-79e0-97d7-bda6a9c575ff' order by idx""").fetchall()
    assert [s[0] for s in steps] == ["model", "tool"] * 5 + ["model"]
    first = steps[0]  # the first request: 42,772 input of which 3,456 cached; 204 output of which 124 reasoning
    assert first[3:] == (42_772 - 3_456, 3_456, 42_772, 204, 124)
    assert steps[1][1] == "mcp__cloud-associates__search_workflows" and steps[1][2] == "call_OIMY41RetdVChp5U51mMLGOD"
    older = con.execute("select model, provider, status from run_view where run_id = '01996135-afde-7911-97f0-d863511eca56'"
                        ).fetchall()[0]
    assert older == ("aide-gpt-5", None, "succeeded")  # 0.39: no task events, ends on the model's text; no provider recorded
    final = con.execute("""select count(*) from steps where run_id = '019c8bfe-ec25-79e0-97d7-bda6a9c575ff'
                           and is_final""").fetchall()[0][0]
    assert final == 1


def test_reconcile_ingest_dot_codex_as_typed(cli, tmp_path, monkeypatch):
    """`reconcile ingest ~/.codex`: sessions and archived_sessions read, the rest passed over, a session archived too is one run."""
    home = tmp_path / "home"
    codex = home / ".codex"
    shutil.copytree(CODEX / "sessions", codex / "sessions")
    (codex / "archived_sessions").mkdir()
    shutil.copy(DOUBLED, codex / "archived_sessions" / DOUBLED.name)  # archived, and still in sessions/
    (codex / "config.toml").write_text('model = "gpt-5.3-codex"\n')
    (codex / "auth.json").write_text('{"OPENAI_API_KEY": null, "tokens": {"id_token": "x"}}\n')
    (codex / "history.jsonl").write_text('{"session_id":"019c8bfe-ec25-79e0-97d7-bda6a9c575ff","ts":1771875265,"text":"hi"}\n')
    (codex / "log").mkdir()
    (codex / "log" / "codex-tui.log").write_text("2026-02-23T19:34:25 INFO started\n")
    monkeypatch.setenv("HOME", str(home))
    result = cli("ingest", "~/.codex", "--json", "--db", tmp_path / "c.duckdb")
    assert result.code == ExitCode.OK, result.err
    report = result.json()
    assert report["totals"]["rejected"] == 0 and report["totals"]["files"] == 7
    passed = {Path(p["path"]).name for p in report["passed_over"]}
    assert {"config.toml", "auth.json", "history.jsonl", "codex-tui.log"} <= passed
    runs = cli("runs", "--json", "--db", tmp_path / "c.duckdb").json()
    assert len(runs) == 6 and len({r["run_id"] for r in runs}) == 6
    copies = [f for f in report["files"] if Path(f["path"]).name == DOUBLED.name]
    assert len(copies) == 2 and sorted(f["loaded"] for f in copies)[0] == 0  # one copy loads; the other's run was loaded
    skipped = next(f for f in copies if f["loaded"] == 0)
    assert skipped["skipped"] == skipped["lines"]


def test_a_damaged_rollout_rejects_its_bad_lines_by_name_and_keeps_the_rest(tmp_path):
    lines = DOUBLED.read_text().splitlines()
    bad_count = json.loads(lines[17])
    bad_count["payload"]["info"]["total_token_usage"]["input_tokens"] = -5
    damaged = tmp_path / "rollout-damaged.jsonl"
    damaged.write_text("\n".join([*lines[:17], json.dumps(bad_count), "{not json", *lines[18:]]) + "\n")
    con = store.connect(tmp_path / "d.duckdb")
    report = ingest(con, [damaged])
    f = report.files[0]
    assert f.format == "codex" and f.rejected == 2 and f.loaded + f.rejected + f.skipped == f.lines == len(lines) + 1
    reasons = dict(con.execute("select line, reason from rejects").fetchall())
    assert "input_tokens" in reasons[18] and "-5" in reasons[18] and 19 in reasons
    con.close()


# --- Every fact a rollout records, and none that it does not -------------------------------------------

V039 = CODEX / "VibeCodingTracker__tests__fixtures__sessions__codex.jsonl"
COMPACTED = CODEX / "sessions/2026/02/23/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.jsonl"
# which stored columns each usage key of a token_count feeds (cached and input both feed uncached = input - cached)
FEEDS = {"input_tokens": ("input_uncached", "context_tokens"), "cached_input_tokens": ("input_uncached", "cache_read"),
         "output_tokens": ("output_tokens",), "reasoning_output_tokens": ("reasoning_tokens",)}
COLUMNS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens", "reasoning_tokens",
           "context_tokens")


def load(tmp_path: Path, *files: Path):
    con = store.connect(tmp_path / f"{files[0].stem[:20]}.duckdb")
    return con, ingest(con, list(files))


def model_steps(con, run_id: str) -> list[tuple]:
    return con.execute(f"select source_line, {', '.join(COLUMNS)} from steps where run_id = ? and kind = 'model' "
                       "order by idx", [run_id]).fetchall()


def test_tool_status_is_the_exit_code_in_a_0_39_shell_output_and_null_where_nothing_says(codex):
    """0.39 writes a shell call's output as JSON text with metadata.exit_code; update_plan and a rejected patch say nothing."""
    con, _ = codex
    rows = con.execute("""select tool_name, tool_status, result_preview from steps
                          where run_id = '01996135-afde-7911-97f0-d863511eca56' and kind = 'tool' order by idx""").fetchall()
    raw = [json.loads(line)["payload"] for line in V039.read_text().splitlines()]
    codes = [json.loads(p["output"])["metadata"]["exit_code"] if p["output"].startswith("{") else None
             for p in raw if p.get("type") == "function_call_output"]
    assert [status for _, status, _ in rows] == [None if code is None else "ok" if code == 0 else "error" for code in codes]
    assert sum(1 for _, status, _ in rows if status == "ok") == 13
    rejected = next(row for row in rows if row[2] == "patch rejected: empty patch")
    assert rejected[:2] == ("shell", None)  # a failure in words only: nothing records its status
    assert all(status is None for name, status, _ in rows if name == "update_plan")


def test_a_non_zero_exit_code_in_a_0_39_output_is_an_error(tmp_path):
    lines = V039.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '\\"exit_code\\":0' in line)
    record = json.loads(lines[at])
    output = json.loads(record["payload"]["output"])
    output["metadata"]["exit_code"] = 2
    record["payload"]["output"] = json.dumps(output)
    failed = tmp_path / V039.name
    failed.write_text("\n".join([*lines[:at], json.dumps(record), *lines[at + 1:]]) + "\n")
    con, _ = load(tmp_path, failed)
    assert con.execute("select tool_status from steps where kind = 'tool' and source_line = ?", [at + 1]).fetchall() == [("error",)]
    assert con.execute("select count(*) from steps where tool_status = 'ok'").fetchall()[0][0] == 12
    con.close()


def test_tool_status_from_the_end_events_of_newer_rollouts(tmp_path):
    """exec_command_end.exit_code, patch_apply_end.success and mcp_tool_call_end.result, paired by call_id.

    The real 0.104 rollouts here carry none (that version's rollout/policy.rs does not persist them; later ones
    do); these are written to the shape of codex-rs protocol.rs (ExecCommandEndEvent, PatchApplyEndEvent,
    McpToolCallEndEvent).
    """
    lines = DOUBLED.read_text().splitlines()
    ends = {"call_OIMY41RetdVChp5U51mMLGOD": {"type": "exec_command_end", "exit_code": 0, "stdout": "", "stderr": ""},
            "call_SengCcPYInk46d62DPE6eqqb": {"type": "exec_command_end", "exit_code": 1, "status": "failed"},
            "call_B6bYQ40tItkpgpg7DLdo8mEG": {"type": "patch_apply_end", "success": False, "stdout": "", "stderr": "x"},
            "call_wt673E9ScmRn47BB5LRf0kwk": {"type": "mcp_tool_call_end", "result": {"Ok": {"content": [], "isError": True}}},
            "call_kTYGACDKLb03RGgGqdx4XgBl": {"type": "mcp_tool_call_end", "result": {"Err": "tool call failed"}}}
    out = []
    for line in lines:
        out.append(line)
        payload = json.loads(line)["payload"]
        if payload.get("type") == "function_call_output":
            end = {"call_id": payload["call_id"], **ends[payload["call_id"]]}
            out.append(json.dumps({"timestamp": json.loads(line)["timestamp"], "type": "event_msg", "payload": end}))
    out.append(json.dumps({"timestamp": json.loads(lines[-1])["timestamp"], "type": "event_msg",
                           "payload": {"type": "exec_command_end", "call_id": "call_nowhere", "exit_code": 0}}))
    ended = tmp_path / DOUBLED.name
    ended.write_text("\n".join(out) + "\n")
    con, report = load(tmp_path, ended)
    statuses = con.execute("select call_id, tool_status from steps where kind = 'tool' order by idx").fetchall()
    assert statuses == [("call_OIMY41RetdVChp5U51mMLGOD", "ok"), ("call_SengCcPYInk46d62DPE6eqqb", "error"),
                        ("call_B6bYQ40tItkpgpg7DLdo8mEG", "error"), ("call_wt673E9ScmRn47BB5LRf0kwk", "error"),
                        ("call_kTYGACDKLb03RGgGqdx4XgBl", "error")]
    f = report.files[0]
    assert f.rejected == 0 and f.loaded + f.skipped == f.lines == len(out)
    assert any("exec_command_end of a call with no output in this file" in str(n) for n in f.notes)
    from reconcile.checks import load_checks, run_checks
    checks = run_checks(DuckDBEngine(con), load_checks(), record=False)
    flagged = next(r for r in checks.results if r.name == "tool_errors_flagged")
    assert not flagged.not_judged  # the statuses are there to judge
    con.close()


def test_a_usage_key_a_token_count_leaves_out_is_null_never_0(codex, tmp_path):
    """Each usage key deleted from a different real token_count (its total and its last request), in one load:
    the buckets it feeds are NULL on that request; every other request keeps its value (the next count's
    difference is unknown, so its own last_token_usage gives it)."""
    lines = V039.read_text().splitlines()
    counts = [i for i, line in enumerate(lines) if '"token_count"' in line]
    keys = [*FEEDS, "total_tokens"]
    deleted = dict(zip(counts[2::3], keys, strict=False))
    assert len(deleted) == len(keys)
    out = list(lines)
    for at, key in deleted.items():
        record = json.loads(lines[at])
        for usage in ("total_token_usage", "last_token_usage"):
            del record["payload"]["info"][usage][key]
        out[at] = json.dumps(record)
    damaged = tmp_path / V039.name
    damaged.write_text("\n".join(out) + "\n")
    con, report = load(tmp_path, damaged)
    assert report.files[0].rejected == 0
    before = {row[0]: row[1:] for row in model_steps(codex[0], "01996135-afde-7911-97f0-d863511eca56")}
    after = {row[0]: row[1:] for row in model_steps(con, "01996135-afde-7911-97f0-d863511eca56")}
    assert after.keys() == before.keys() and len(after) == 19
    hits = {min(line for line in after if line >= at + 1): key for at, key in deleted.items()}  # each count's model step
    assert len(hits) == len(keys)
    for hit, key in hits.items():
        for column, was, now in zip(COLUMNS, before[hit], after[hit]):
            assert now == (None if column in FEEDS.get(key, ()) else was), (key, column)
            assert was is not None, (hit, column)
    assert {line: row for line, row in after.items() if line not in hits} == {
        line: row for line, row in before.items() if line not in hits}
    con.close()


def test_a_bucket_left_out_of_the_cumulative_total_only_comes_from_the_request_s_own_count(codex, tmp_path):
    lines = V039.read_text().splitlines()
    at = [i for i, line in enumerate(lines) if '"token_count"' in line][4]
    record = json.loads(lines[at])
    del record["payload"]["info"]["total_token_usage"]["cached_input_tokens"]
    damaged = tmp_path / V039.name
    damaged.write_text("\n".join([*lines[:at], json.dumps(record), *lines[at + 1:]]) + "\n")
    con, _ = load(tmp_path, damaged)
    assert model_steps(con, "01996135-afde-7911-97f0-d863511eca56") == model_steps(
        codex[0], "01996135-afde-7911-97f0-d863511eca56")
    con.close()


def test_cache_writes_are_0_only_on_requests_whose_usage_was_recorded(codex):
    """OpenAI bills no cache writes (zero_buckets); a model step with no token_count has no usage at all."""
    con, _ = codex
    from reconcile.formats.codex import FORMAT
    assert set(FORMAT.zero_buckets) == {"cache_write_5m", "cache_write_1h"}
    rows = con.execute("""select count(*) filter (where input_uncached is not null and cache_write_5m = 0 and cache_write_1h = 0),
                                 count(*) filter (where input_uncached is not null),
                                 count(*) filter (where input_uncached is null and coalesce(cache_write_5m, cache_write_1h) is not null)
                          from steps s join runs r using (run_id) where r.source_format = 'codex' and s.kind = 'model'""").fetchall()[0]
    assert rows[0] == rows[1] > 0 and rows[2] == 0


def test_a_compaction_and_a_rollback_are_events(codex, tmp_path):
    con, _ = codex
    events = con.execute("""select event, detail, source_line from steps
                            where run_id = '019c8a59-e9dd-71f0-9ae3-4079fe9726a9' and event = 'compaction'""").fetchall()
    assert events == [("compaction", "compacted", 1788)]  # the real `compacted` line (and its context_compacted event)
    lines = DOUBLED.read_text().splitlines()
    rolled = json.dumps({"timestamp": json.loads(lines[40])["timestamp"], "type": "event_msg",
                         "payload": {"type": "thread_rolled_back", "num_turns": 1}})
    rollback = tmp_path / DOUBLED.name
    rollback.write_text("\n".join([*lines[:40], rolled, *lines[40:]]) + "\n")
    con2, report = load(tmp_path, rollback)
    assert con2.execute("select event, source_line from steps where event = 'compaction'").fetchall() == [("compaction", 41)]
    assert report.files[0].loaded + report.files[0].skipped == len(lines) + 1
    con2.close()


def test_a_new_task_after_an_unanswered_call_means_the_call_was_lost_not_in_flight(codex):
    """A resumed session's task_started follows the lost exec_command (line 826): an event after it, so no call waits."""
    con, _ = codex
    run = "019c8a53-a0dd-7130-bcd7-95445d84846a"
    assert con.execute("select count(*) from steps where run_id = ? and event = 'task_started'", [run]).fetchone()[0] > 0
    assert con.execute("select step_idx, in_flight from open_calls where run_id = ?", [run]).fetchall() == [(231, False)]
    # its only task: the file ends on the call, but the session has been silent for months: abandoned, and the call
    # lost, not in flight
    assert con.execute("select status from runs where run_id = '019c8a70-dda7-7f33-98ea-f30553347322'"
                       ).fetchall() == [("abandoned",)]
    assert con.execute("select in_flight from open_calls where run_id = '019c8a70-dda7-7f33-98ea-f30553347322'"
                       ).fetchall() == [(False,)]


def test_a_resume_and_a_hosted_web_search_explain_the_context_s_changes(codex):
    """One conversation per rollout (thread): a resume re-sends the opening instructions (an event: the context is
    rebuilt), a hosted web search's input counts its own passes (no context size); the rest only grows, or drops
    earlier reasoning — so no_silent_truncation finds nothing in the real rollouts."""
    con, _ = codex
    run = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"
    assert con.execute("select source_line from steps where run_id = ? and event = 'resume' order by 1", [run]
                       ).fetchall() == [(129,), (217,), (448,)]  # 448: the block 4 hours after line 445's task_complete
    searched = con.execute("select context_tokens, input_uncached + cache_read from steps where run_id = ? and "
                           "source_line = 47", [run]).fetchone()
    assert searched == (None, 23414)  # line 41 ran a web search in this request: billed, but not a context size
    from reconcile.checks import load_checks, run_checks, select_checks

    report = run_checks(DuckDBEngine(con), select_checks(load_checks(), ["no_silent_truncation"]), record=False)
    assert report.findings == [] and not report.results[0].not_judged


def test_the_run_id_is_the_recorded_session_and_one_session_in_two_files_loads_once(tmp_path):
    """session_meta's id; without one, the session id that ends the file name; a second copy is skipped and says so."""
    headless = tmp_path / "a" / DOUBLED.name
    headless.parent.mkdir()
    headless.write_text("\n".join(DOUBLED.read_text().splitlines()[1:]) + "\n")  # no session_meta
    copy = tmp_path / "b" / DOUBLED.name
    copy.parent.mkdir()
    shutil.copy(DOUBLED, copy)
    con, report = load(tmp_path, headless, copy)
    assert con.execute("select run_id, source_file from runs").fetchall() == [
        ("019c8bfe-ec25-79e0-97d7-bda6a9c575ff", str(headless))]
    second = next(f for f in report.files if Path(f.path) == copy)
    assert second.loaded == 0 and second.skipped == second.lines
    assert any(f"run 019c8bfe-ec25-79e0-97d7-bda6a9c575ff was already loaded from {headless}" in str(n) for n in second.notes)
    assert con.execute("select sum(total_tokens) from run_view").fetchall()[0][0] == 299_496  # counted once
    con.close()


# --- Calls the totals do not show, and hosted tools (issue 57) ------------------------------------------------

WEB_SEARCHED = CODEX / "sessions/2026/02/23/rollout-2026-02-23T12-40-23-019c8a4c-ed82-79a1-aa28-7738fc5ab61a.jsonl"


def test_a_remote_compaction_is_a_billed_call_of_unknown_usage(codex):
    """Line 1788: `compacted` with an empty message (the sanitiser's len=0) — Codex asked /responses/compact for the
    summary, a billed call whose usage it never records: the totals before and after it are the same. A model step
    with every bucket unknown, before its compaction event; the run's cost reads "at least"."""
    con, _ = codex
    raw = [json.loads(line) for line in COMPACTED.read_text().splitlines()]
    assert raw[1787]["type"] == "compacted" and "len=0 " in raw[1787]["payload"]["message"]
    totals = [(i, r["payload"]["info"]["total_token_usage"]) for i, r in enumerate(raw)
              if r["payload"].get("type") == "token_count" and r["payload"].get("info")]
    assert next(t for i, t in reversed(totals) if i < 1787) == next(t for i, t in totals if i > 1787)
    run = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"
    rows = con.execute("""select kind, event, input_uncached, cache_read, cache_write_5m, cache_write_1h, output_tokens,
                                 context_tokens, model from steps where run_id = ? and source_line = 1788 order by idx""",
                       [run]).fetchall()
    assert rows == [("model", None, None, None, None, None, None, None, "gpt-5.3-codex"),
                    ("event", "compaction", None, None, None, None, None, None, None)]
    calls = independent(COMPACTED)["calls"] + 1  # every new total, and the compaction
    assert con.execute("select count(*) from steps where run_id = ? and kind = 'model'", [run]).fetchone()[0] == calls
    cost = con.execute("""select ours_micros, ours_low_micros > 0, ours_high_micros, calls_without_usage
                          from run_costs where run_id = ?""", [run]).fetchone()
    assert cost == (None, True, None, 1)


def test_hosted_web_searches_are_tool_calls_answered_inside_their_response(codex):
    """web_search_call items (0.104 writes them without an id) are calls to web_search, each with a result step of its
    own (status completed: ok; no result text), so a run's calls are all its function, custom tool and web search
    calls, and none goes unanswered."""
    con, _ = codex
    for path, run, calls in ((WEB_SEARCHED, "019c8a4c-ed82-79a1-aa28-7738fc5ab61a", 105),  # the issue: "104 for 105"
                             (COMPACTED, "019c8a59-e9dd-71f0-9ae3-4079fe9726a9", 372)):  # and "365 for 372"
        raw = [json.loads(line)["payload"] for line in path.read_text().splitlines()]
        asked = sum(1 for p in raw if p.get("type") in ("function_call", "custom_tool_call", "web_search_call"))
        assert asked == calls
        searches = sum(1 for p in raw if p.get("type") == "web_search_call")
        assert con.execute("select count(*) from tool_calls where run_id = ?", [run]).fetchone()[0] == asked
        got = con.execute("""select count(*), count(*) filter (where tool_status = 'ok' and result_bytes is null)
                             from steps where run_id = ? and kind = 'tool' and tool_name = 'web_search'""", [run]).fetchone()
        assert got == (searches, searches)
        assert con.execute("select sum(web_searches) from steps where run_id = ?", [run]).fetchone()[0] == searches
    from reconcile.checks import load_checks, run_checks, select_checks

    report = run_checks(DuckDBEngine(con), select_checks(load_checks(), ["tool_calls_paired", "steps_equal_tool_results"]),
                        record=False)
    assert {f.run_id for f in report.findings} == {"019c8a53-a0dd-7130-bcd7-95445d84846a",
                                                   "019c8a70-dda7-7f33-98ea-f30553347322"}  # the two lost calls only
