"""Codex CLI rollouts: per-call usage from the cumulative totals (repeats skipped), one run per session."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.errors import ExitCode
from reconcile.ingest import ingest

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
