"""Gemini CLI chat recordings, legacy JSON and JSON Lines: last copy of each message, tokens mapped to our buckets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest.driver import ingest

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
    assert set(statuses.values()) <= {"succeeded", "running", "failed", "cancelled"} and statuses["5b959dae-8655-4cd1-b10f-720b8c336ea2"] == "succeeded"
    # issue 57: the JSONL session ends on an info "Request cancelled." (the user stopped the request): cancelled, ended
    # then -- not running from an earlier record, and never abandoned months later
    ended = con.execute("select status, stop_reason, ended_at from runs where run_id = '0ab84937-9fe7-4284-986a-33c832af0b6a'").fetchone()
    assert ended[:2] == ("cancelled", "Request cancelled.") and ended[2].isoformat().startswith("2026-04-23T12:58:35.591")


def test_a_read_file_result_is_what_the_model_was_sent(gemini):
    """Issue 57: read_file shows nothing on the terminal (resultDisplay is empty); the function response's output
    is what went back to the model, so its size is the result's."""
    con, _ = gemini

    sizes = []
    for path in sorted(GEMINI.glob("*.json*")):
        for line in path.read_text().splitlines() if path.suffix == ".jsonl" else [path.read_text()]:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            for message in record.get("messages", [record]) if isinstance(record, dict) else []:
                for call in (message.get("toolCalls") or []) if isinstance(message, dict) else []:
                    if call.get("name") == "read_file" and call.get("resultDisplay") == "":
                        output = call["result"][0]["functionResponse"]["response"]["output"]
                        sizes.append(len(output))
    assert sizes  # every one would read as 0 tokens from what the terminal showed
    got = sorted(n for (n,) in con.execute("select result_tokens from steps where tool_name = 'read_file' "
                                          "and result_tokens > 0").fetchall())
    assert len(got) >= len(sizes) and got[-1] * 2 <= max(sizes) <= got[-1] * 6  # ~3 to 4 bytes a token
    unpriced = con.execute("select count(*) from step_view where kind = 'model' and unpriced").fetchall()[0][0]
    assert unpriced == 0


def test_a_rewind_keeps_the_rewound_messages_and_is_a_compaction_event(tmp_path):
    """$rewindTo (not in the real files): the rewound answers stay — they were billed — and the context after is shorter."""
    lines = JSONL.read_text().splitlines()
    first_gemini = next(json.loads(line)["id"] for line in lines if '"type": "gemini"' in line or '"type":"gemini"' in line)
    rewound = tmp_path / "rewound.jsonl"
    rewound.write_text("\n".join([*lines, json.dumps({"$rewindTo": first_gemini})]) + "\n")
    con = store.connect(tmp_path / "r.duckdb")
    report = ingest(con, [rewound])
    f = report.files[0]
    assert f.format == "gemini_cli_jsonl" and f.rejected == 0 and f.loaded + f.skipped == f.lines == len(lines) + 1
    total = con.execute("select sum(total_tokens) from run_view").fetchall()[0][0]
    assert total == independent(JSONL)["total"]
    events = con.execute("select event, detail, source_line from steps where kind = 'event'").fetchall()
    assert events == [("compaction", f"rewind to message {first_gemini}: it and what followed left the context",
                       len(lines) + 1)]
    last = con.execute("select max(idx) from steps").fetchall()[0][0]
    assert con.execute("select kind from steps where idx = ?", [last]).fetchall() == [("event",)]
    con.close()


def test_a_history_rewrite_is_a_compaction_event_and_other_metadata_is_not(tmp_path):
    """Gemini CLI syncs a compressed or masked history with {"$set": {"messages": [...]}}; a lastUpdated $set is metadata."""
    lines = JSONL.read_text().splitlines()
    kept = [r for r in map(json.loads, lines) if r.get("type") == "user"][:1]
    rewritten = tmp_path / "rewritten.jsonl"
    rewritten.write_text("\n".join([*lines[:21], json.dumps({"$set": {"messages": kept}}), *lines[21:]]) + "\n")
    con = store.connect(tmp_path / "w.duckdb")
    report = ingest(con, [rewritten])
    assert con.execute("select event, detail, source_line from steps where kind = 'event'").fetchall() == [
        ("compaction", "history rewritten ($set messages: 1 messages)", 22)]
    assert "a metadata update ($set) (11 lines)" in report.files[0].notes
    con.close()


# --- Every fact a recording records, and none that it does not ------------------------------------------

LEGACY = GEMINI / "codemie__session-2025-12-01T21-45-5b959dae.json"
ZEROS = GEMINI / "VibeCodingTracker__examples__test_conversation_gemini__bcec23f.json"
# which stored columns each count of a message's tokens feeds
FEEDS = {"input": ("input_uncached", "context_tokens"), "cached": ("input_uncached", "cache_read"),
         "tool": ("input_uncached", "context_tokens"), "output": ("output_tokens",),
         "thoughts": ("output_tokens", "reasoning_tokens")}
COLUMNS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens", "reasoning_tokens",
           "context_tokens")


def model_steps(con, run_id: str) -> dict:
    return {row[0]: row[1:] for row in con.execute(
        f"select response_id, {', '.join(COLUMNS)} from steps where run_id = ? and kind = 'model'", [run_id]).fetchall()}


def without(path: Path, deleted: dict[str, str], folder: Path) -> Path:
    """A copy of a recording with, for each message id in ``deleted``, that key gone from every copy of its tokens."""
    copy = folder / path.name
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        for m in data["messages"]:
            if m["id"] in deleted:
                del m["tokens"][deleted[m["id"]]]
        copy.write_text(json.dumps(data), encoding="utf-8")
        return copy
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("id") in deleted and record.get("tokens"):
            del record["tokens"][deleted[record["id"]]]
            line = json.dumps(record)
        out.append(line)
    copy.write_text("\n".join(out) + "\n", encoding="utf-8")
    return copy


@pytest.mark.parametrize("path", [LEGACY, JSONL], ids=["json", "jsonl"])
def test_a_count_a_message_leaves_out_is_null_never_0(gemini, tmp_path, path):
    """Each optional count deleted from a different real message (one load): the buckets it feeds are NULL, the rest as before."""
    con, _ = gemini
    session, found = messages(path)
    keys = [*FEEDS, "total"]
    targets = [m["id"] for m in found if m["type"] == "gemini" and m.get("tokens")][:len(keys)]
    deleted = dict(zip(targets, keys, strict=True))
    damaged = store.connect(tmp_path / "d.duckdb")
    report = ingest(damaged, [without(path, deleted, tmp_path)])
    assert report.files[0].rejected == 0
    before, after = model_steps(con, session), model_steps(damaged, session)
    assert after.keys() == before.keys()
    for target, key in deleted.items():
        for column, was, now in zip(COLUMNS, before[target], after[target]):
            assert now == (None if column in FEEDS.get(key, ()) else was), (key, column)
            assert was is not None, (target, column)  # the real message had the value
    assert {k: v for k, v in after.items() if k not in deleted} == {k: v for k, v in before.items() if k not in deleted}
    damaged.close()


def test_a_message_whose_counts_are_all_0_was_not_counted(gemini):
    """Four responses of a real session carry tokens all 0 (Gemini CLI writes 0 for counts the API left out): unknown."""
    con, _ = gemini
    session, found = messages(ZEROS)
    zero = [m["id"] for m in found if m["type"] == "gemini" and m.get("tokens") and not any(m["tokens"].values())]
    assert len(zero) == 4
    steps = model_steps(con, session)
    assert all(steps[i] == (None,) * len(COLUMNS) for i in zero)
    assert all(None not in row for i, row in steps.items() if i not in zero)
    unpriced = con.execute("select count(*) from step_view where run_id = ? and kind = 'model' and unpriced",
                           [session]).fetchall()[0][0]
    assert unpriced == 0  # no usage: nothing to price, not a price missing


def test_cache_writes_are_0_where_a_message_was_counted(gemini):
    con, _ = gemini
    from reconcile.formats.gemini import CHAT, JSONL as LINES
    assert set(CHAT.zero_buckets) == set(LINES.zero_buckets) == {"cache_write_5m", "cache_write_1h"}
    counted, zeroed = con.execute("""select count(*) filter (where cache_read is not null),
                                            count(*) filter (where cache_read is not null and cache_write_5m = 0
                                                             and cache_write_1h = 0)
                                     from steps where kind = 'model'""").fetchall()[0]
    assert counted == zeroed > 0


def test_one_session_in_a_json_and_its_migrated_jsonl_loads_once(tmp_path):
    """Resuming a legacy session, Gemini CLI copies it whole into <name>.jsonl and appends there: one run, counted once.

    The fuller copy is kept (the landing's rule): the .jsonl, which holds the resumed turns too.
    """
    data = json.loads(LEGACY.read_text(encoding="utf-8"))
    chats = tmp_path / "chats"
    chats.mkdir()
    legacy = chats / "session-2025-12-01T21-45-5b959dae.json"
    legacy.write_text(LEGACY.read_text(encoding="utf-8"), encoding="utf-8")
    meta = {k: data[k] for k in ("sessionId", "projectHash", "startTime", "lastUpdated")}
    resumed = {**data["messages"][-1], "id": "resumed-answer", "timestamp": "2025-12-02T09:00:00.000Z"}
    migrated = chats / "session-2025-12-01T21-45-5b959dae.jsonl"
    migrated.write_text("\n".join(json.dumps(r) for r in [meta, *data["messages"], {"$set": {"sessionId": data["sessionId"]}},
                                                         resumed]) + "\n", encoding="utf-8")
    con = store.connect(tmp_path / "m.duckdb")
    report = ingest(con, [chats])
    runs = con.execute("select run_id, source_file from runs").fetchall()
    assert len(runs) == 1 and runs[0][0] == data["sessionId"]
    kept = runs[0][1]
    assert kept == str(migrated)
    (other,) = [f for f in report.files if f.path != kept]  # reported once, as it ended: skipped after the takeover
    assert other.loaded == 0 and other.skipped == other.lines
    assert any(f"run {data['sessionId']} was already loaded from {kept}" in str(n) for n in other.notes)
    legacy_total = independent(LEGACY)["total"]
    total = con.execute("select sum(total_tokens) from run_view").fetchall()[0][0]
    assert total == legacy_total + resumed["tokens"]["total"]  # the fuller copy's tokens, never both
    con.close()


def test_a_sub_agent_recording_names_its_parent_session(tmp_path):
    """A sub-agent's recording sits in chats/<parent session id>/ with kind "subagent"."""
    lines = JSONL.read_text().splitlines()
    meta = json.loads(lines[0])
    meta.update(sessionId="sub-1", kind="subagent")
    folder = tmp_path / "chats" / "0ab84937-9fe7-4284-986a-33c832af0b6a"
    folder.mkdir(parents=True)
    (folder / "sub-1.jsonl").write_text("\n".join([json.dumps(meta), *lines[1:]]) + "\n")
    con = store.connect(tmp_path / "s.duckdb")
    ingest(con, [folder / "sub-1.jsonl", JSONL])
    assert dict(con.execute("select run_id, parent_run_id from runs").fetchall()) == {
        "sub-1": "0ab84937-9fe7-4284-986a-33c832af0b6a", "0ab84937-9fe7-4284-986a-33c832af0b6a": None}
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
