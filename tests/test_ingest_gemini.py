"""Gemini CLI chat recordings, legacy JSON and JSON Lines: last copy of each message, tokens mapped to our buckets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest import ingest

GEMINI = ROOT / "tests" / "fixtures" / "realdata" / "gemini-cli"
FILES = sorted(p for p in GEMINI.iterdir() if p.suffix in (".json", ".jsonl"))
JSONL = GEMINI / "VibeCodingTracker__tests__fixtures__sessions__gemini.jsonl"


def messages(path: Path) -> tuple[str, list[dict]]:
    """Written here: the session id and its messages, the last copy of each id (JSON Lines re-appends them)."""
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        return data["sessionId"], data["messages"]
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    last = {r["id"]: r for r in records if "id" in r and "type" in r}
    return records[0]["sessionId"], list(last.values())


def independent(path: Path) -> dict:
    session, found = messages(path)
    tokens = [m["tokens"] for m in found if m["type"] == "gemini" and m.get("tokens")]
    return {"session": session, "responses": sum(1 for m in found if m["type"] == "gemini"),
            "input": sum(t["input"] - t.get("cached", 0) + t.get("tool", 0) for t in tokens),
            "cached": sum(t.get("cached", 0) for t in tokens),
            "output": sum(t["output"] + t.get("thoughts", 0) for t in tokens),
            "total": sum(t["total"] for t in tokens),
            "calls": sum(len(m.get("toolCalls") or []) for m in found if m["type"] == "gemini")}


@pytest.fixture(scope="module")
def gemini(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("gemini") / "gemini.duckdb")
    report = ingest(con, [GEMINI])
    yield con, report
    con.close()


def test_every_recording_loads_without_a_reject(gemini):
    _, report = gemini
    formats = sorted(f.format for f in report.files)
    assert formats == ["gemini_cli"] * 4 + ["gemini_cli_jsonl"]
    assert all(f.rejected == 0 and f.loaded + f.skipped == f.lines for f in report.files)
    jsonl = next(f for f in report.files if f.format == "gemini_cli_jsonl")
    notes = " ".join(str(n) for n in jsonl.notes)
    assert "an earlier copy of a message re-written under the same id" in notes and "$set" in notes


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name[-30:])
def test_tokens_per_session_equal_the_raw_file_with_each_message_once(gemini, path):
    con, _ = gemini
    expected = independent(path)
    got = con.execute("""select count(*) filter (where kind = 'model'), sum(input_uncached), sum(cache_read),
                                sum(output_tokens), sum(input_uncached + cache_read + output_tokens),
                                count(*) filter (where kind = 'tool')
                         from steps where run_id = ?""", [expected["session"]]).fetchall()[0]
    assert got == (expected["responses"], expected["input"], expected["cached"], expected["output"],
                   expected["total"], expected["calls"])


def test_a_re_written_message_is_counted_once(gemini):
    """Five gemini messages of the JSONL file appear twice (without, then with their tool calls): counting both doubles them."""
    con, _ = gemini
    records = [json.loads(line) for line in JSONL.read_text().splitlines()]
    naive = sum(r["tokens"]["total"] for r in records if r.get("type") == "gemini")
    ours = con.execute("select sum(total_tokens) from run_view where run_id = '0ab84937-9fe7-4284-986a-33c832af0b6a'"
                       ).fetchall()[0][0]
    assert ours == independent(JSONL)["total"] < naive


def test_models_tools_and_status(gemini):
    con, _ = gemini
    models = [m for (m,) in con.execute("""select distinct model from steps
                                           where run_id = '0ab84937-9fe7-4284-986a-33c832af0b6a' and kind = 'model'
                                           order by 1""").fetchall()]
    assert models == ["gemini-3-flash-preview", "gemini-3.1-pro-preview"]  # the model changed mid-session
    tool = con.execute("""select tool_name, tool_status, call_id from step_view
                          where run_id = '0ab84937-9fe7-4284-986a-33c832af0b6a' and kind = 'tool' order by idx limit 1""").fetchall()[0]
    assert tool == ("update_topic", "ok", "b5qo7ls5")
    statuses = dict(con.execute("select run_id, status from runs").fetchall())
    assert set(statuses.values()) <= {"succeeded", "running", "failed"} and statuses["5b959dae-8655-4cd1-b10f-720b8c336ea2"] == "succeeded"
    unpriced = con.execute("select count(*) from step_view where kind = 'model' and unpriced").fetchall()[0][0]
    assert unpriced == 0


def test_a_rewind_keeps_the_rewound_messages_and_is_accounted_for(tmp_path):
    """$rewindTo (not in the real files): skipped, counted, and the rewound answers stay — they were billed."""
    lines = JSONL.read_text().splitlines()
    first_gemini = next(json.loads(line)["id"] for line in lines if '"type": "gemini"' in line or '"type":"gemini"' in line)
    rewound = tmp_path / "rewound.jsonl"
    rewound.write_text("\n".join([*lines, json.dumps({"$rewindTo": first_gemini})]) + "\n")
    con = store.connect(tmp_path / "r.duckdb")
    report = ingest(con, [rewound])
    f = report.files[0]
    assert f.format == "gemini_cli_jsonl" and f.rejected == 0 and f.loaded + f.skipped == f.lines == len(lines) + 1
    assert "a rewind to an earlier message" in str(f.notes)
    total = con.execute("select sum(total_tokens) from run_view").fetchall()[0][0]
    assert total == independent(JSONL)["total"]
    con.close()


def test_reconcile_ingest_dot_gemini_as_typed(cli, tmp_path, monkeypatch):
    """`reconcile ingest ~/.gemini`: the chats are runs; logs, checkpoints, settings and credentials are passed over."""
    import shutil
    project = tmp_path / "home" / ".gemini" / "tmp" / ("9d" * 32)
    (project / "chats").mkdir(parents=True)
    shutil.copy(GEMINI / "codemie__session-2025-12-01T21-45-5b959dae.json", project / "chats" / "session-2025-12-01T21-45-5b959dae.json")
    shutil.copy(JSONL, project / "chats" / "session-2026-04-23T12-52-0ab84937.jsonl")
    (project / "logs.json").write_text('[{"sessionId": "s", "messageId": 0, "type": "user", "message": "hi", '
                                       '"timestamp": "2026-04-23T12:52:52.759Z"}]')
    (project / "checkpoint-before-refactor.json").write_text('[{"role": "user", "parts": [{"text": "hi"}]}]')
    (project.parent.parent / "settings.json").write_text('{"theme": "Default"}')
    (project.parent.parent / "oauth_creds.json").write_text('{"access_token": "ya29.secret", "refresh_token": "1//x"}')
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    result = cli("ingest", "~/.gemini", "--json", "--db", tmp_path / "g.duckdb")
    assert result.code == 0, result.err
    report = result.json()
    assert sorted(f["format"] for f in report["files"]) == ["gemini_cli", "gemini_cli_jsonl"]
    assert report["totals"]["rejected"] == 0
    passed = {Path(p["path"]).name for p in report["passed_over"]}
    assert passed == {"logs.json", "checkpoint-before-refactor.json", "settings.json", "oauth_creds.json"}
    assert "ya29.secret" not in result.out  # a credentials file is passed over without its content being shown
