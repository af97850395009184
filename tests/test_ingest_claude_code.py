"""Claude Code transcripts: real sessions against ccusage's own totals, identity by session, unknown usage, bad files."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.checks import load_checks, run_checks
from reconcile.errors import ExitCode
from reconcile.formats.claude_code import ClaudeCode
from reconcile.ingest.driver import ingest
from reconcile.engine import DuckDBEngine

REAL = ROOT / "tests" / "fixtures" / "realdata"
REFERENCE = REAL / "ccusage-reference"
FOLDERS = {"spotter-real-sessions": REAL / "spotter-real-sessions" / "projects",
           "claude-code-viewer": REAL / "claude-code-viewer" / "projects"}
EXTRA = REAL / "spotter-real-sessions" / "extra-fixtures"
SHORT = "55604662-cf2a-4331-851a-ec234028f8ca"  # the sessionId on every line of extra-fixtures/short.jsonl
TOOL_HEAVY = "d6e0bada-1959-4eec-a9d2-0bfade768d8f"  # … of tool_heavy.jsonl
SPOTTER = REAL / "spotter-real-sessions" / "projects" / "-home-marco-projects-spotter"


@pytest.fixture(scope="module")
def sessions(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("cc") / "cc.duckdb")
    report = ingest(con, [REAL / "spotter-real-sessions", REAL / "claude-code-viewer"])
    yield con, report
    con.close()


def totals(con, session, folder, model=None):
    return con.execute(
        """select sum(input_uncached), sum(output_tokens), sum(cache_write_5m + cache_write_1h), sum(cache_read)
           from steps join runs using (run_id)
           -- ccusage's sessions are files: <id>.jsonl and its subagents/ folder (an old side-chain file apart)
           where (source_file like '%/' || $s || '.jsonl' or source_file like '%/' || $s || '/subagents/%')
             and starts_with(source_file, $folder) and ($model is null or steps.model = $model)""",
        {"s": session, "folder": str(folder), "model": model}).fetchall()[0]


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_session_and_model_token_totals_equal_ccusage(sessions, folder):
    con, _ = sessions
    reference = json.loads((REFERENCE / f"v20.0.24_{folder}_session.json").read_text())
    assert reference["sessions"]
    for session in reference["sessions"]:
        expected = (session["inputTokens"], session["outputTokens"], session["cacheCreationTokens"],
                    session["cacheReadTokens"])
        assert totals(con, session["sessionId"], FOLDERS[folder]) == expected, session["sessionId"]
        for model in session["modelBreakdowns"]:
            expected = (model["inputTokens"], model["outputTokens"], model["cacheCreationTokens"],
                        model["cacheReadTokens"])
            assert totals(con, session["sessionId"], FOLDERS[folder], model["modelName"]) == expected


def test_every_real_session_loads_without_a_reject(sessions):
    con, report = sessions
    assert report.totals["rejected"] == 0 and report.totals["files"] == 14
    assert {f.format for f in report.files} == {"claude_code"}
    assert all(f.lines == f.loaded + f.skipped for f in report.files)
    assert {p.path.rsplit("/", 1)[1] for p in report.passed_over} == {"SOURCE.txt", "README.md"}


def test_sessions_subagents_statuses_and_final_answers(sessions):
    con, _ = sessions
    rows = dict(con.execute("select run_id, status from runs").fetchall())
    assert rows["ae4a77f8-aedd-4bc1-888f-c94edc91af04"] == "succeeded"
    assert rows[SHORT] == rows[TOOL_HEAVY] == "cancelled"  # they end with "[Request interrupted by user"
    child = con.execute("select parent_run_id, status, has_final_answer from run_view "
                        "where run_id = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04/agent-aac57f5'").fetchall()
    assert child == [("ae4a77f8-aedd-4bc1-888f-c94edc91af04", "succeeded", True)]
    final = con.execute("select output_text from steps where run_id = 'ae4a77f8-aedd-4bc1-888f-c94edc91af04' "
                        "and is_final").fetchall()
    assert len(final) == 1 and final[0][0].startswith("All done.")
    labels = {r[0] for r in con.execute("select distinct agent_label from steps where run_id like 'fe5e1c67%'").fetchall()}
    assert None in labels and any(label and label.startswith("sidechain-") for label in labels)


def test_tool_calls_pair_with_results_and_errors_keep_their_status(sessions):
    con, _ = sessions
    unpaired = con.execute("select count(*) from tool_calls q where not exists (select 1 from steps s "
                           "where s.run_id = q.run_id and s.call_id = q.call_id)").fetchall()[0][0]
    assert unpaired <= 3  # only the interrupted sessions leave calls unanswered
    errors = con.execute("select count(*) from steps where tool_status = 'error'").fetchall()[0][0]
    assert errors == 54  # every is_error tool_result in the data
    compactions = con.execute("select run_id, tokens_before from steps where event = 'compaction' order by 1").fetchall()
    assert compactions == [("4d5611e5-241a-462a-8d15-5122611a9569", 170251),
                           ("ae4a77f8-aedd-4bc1-888f-c94edc91af04", 142431)]


def test_checks_run_on_real_sessions_without_errors_of_their_own(sessions):
    con, _ = sessions
    report = run_checks(DuckDBEngine(con), load_checks())
    assert len(report.results) == len(load_checks())
    flagged = {f.check for f in report.findings}
    assert "tool_calls_paired" not in flagged and "status_consistent" not in flagged


def test_ingest_claude_projects_folder_as_typed(cli, tmp_path, monkeypatch, db_path):
    home = tmp_path / "home"
    shutil.copytree(REAL / "claude-code-viewer" / "projects", home / ".claude" / "projects")
    monkeypatch.setenv("HOME", str(home))
    result = cli("ingest", "~/.claude/projects", "--json", "--db", db_path)
    assert result.code == ExitCode.OK
    assert result.json()["totals"]["files"] == 5 and result.json()["totals"]["rejected"] == 0


def test_a_damaged_transcript_rejects_exactly_the_bad_lines(tmp_path, con):
    source = REAL / "spotter-real-sessions" / "extra-fixtures" / "subagent.jsonl"
    lines = source.read_text().splitlines(keepends=True)
    damaged = tmp_path / "damaged.jsonl"
    bad_usage = json.loads(next(line for line in lines if '"type":"assistant"' in line))
    bad_usage["message"]["usage"]["output_tokens"] = "many"
    damaged.write_text(lines[0] + "{not json\n" + json.dumps(bad_usage) + "\n" + "".join(lines[1:]))
    file = ingest(con, [damaged]).files[0]
    assert file.format == "claude_code"
    reasons = con.execute("select line, reason from rejects order by line").fetchall()
    assert reasons == [(2, "not valid JSON"),
                       (3, 'field "message.usage.output_tokens" is "many"; expected an integer from 0 to 10^15')]
    assert file.loaded + file.rejected + file.skipped == file.lines == len(lines) + 2


def test_a_file_forced_to_the_wrong_format_says_what_it_expected(cli, db_path):
    source = REAL / "spotter-real-sessions" / "extra-fixtures" / "short.jsonl"
    result = cli("ingest", source, "--format", "native", "--db", db_path)
    assert result.code == ExitCode.BAD_INPUT
    assert "--format native expects a reconcile native journal" in result.err
    assert 'line 1: missing field "v" on a file-history-snapshot line' in result.err
    assert not db_path.exists()  # nothing loaded: no store made, so no rejects kept either


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_a_batch_loads_like_files_one_by_one(tmp_path):
    folder = tmp_path / "projects" / "p"
    folder.mkdir(parents=True)
    sources = sorted((REAL / "spotter-real-sessions" / "extra-fixtures").glob("*.jsonl"))
    for source in sources:
        shutil.copy(source, folder / source.name)
    (folder / "copy").mkdir()
    shutil.copy(sources[0], folder / "copy" / sources[0].name)  # the same session id twice in one batch
    broken = (folder / "tool_heavy.jsonl").read_bytes().splitlines(keepends=True)
    (folder / "tool_heavy.jsonl").write_bytes(b"".join(broken[:3]) + b'{"type": "user", "bad": "\xff"}\n' + b"".join(broken[3:]))
    together = store.connect(tmp_path / "together.duckdb")
    report = ingest(together, [tmp_path / "projects"])
    alone = store.connect(tmp_path / "alone.duckdb")
    for path in sorted(folder.rglob("*.jsonl")):
        ingest(alone, [path])
    query = "select run_id, status, steps, tool_results, total_tokens from run_view order by run_id"
    assert together.execute(query).fetchall() == alone.execute(query).fetchall()
    assert together.execute("select path, line, reason from rejects").fetchall() == \
        alone.execute("select path, line, reason from rejects").fetchall()
    assert together.execute("select count(*) from rejects").fetchall() == [(1,)]  # the undecodable line
    twins = sorted((f for f in report.files if f.path.endswith("/short.jsonl")), key=lambda f: f.loaded)
    assert twins[0].loaded == 0 and "already loaded from" in twins[0].notes[0] and twins[1].loaded > 0
    assert all(f.loaded + f.rejected + f.skipped == f.lines for f in report.files)


# --- identity: the run is the session Claude Code recorded ---------------------------------------------------------

def test_a_run_is_named_by_the_ids_on_its_lines(sessions):
    con, _ = sessions
    runs = dict(((r[0]), r[1:]) for r in con.execute(
        "select run_id, parent_run_id, regexp_extract(source_file, '[^/]+$') from runs").fetchall())
    assert runs[SHORT] == (None, "short.jsonl") and runs[TOOL_HEAVY] == (None, "tool_heavy.jsonl")
    session = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
    assert runs[f"{session}/agent-aac57f5"] == (session, "agent-aac57f5.jsonl")  # agentId aac57f5, sessionId: its parent
    # an old side-chain file: its lines carry their session's sessionId and no agentId — a child of that session,
    # named by its file
    parent = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    assert runs[f"{parent}/agent-test-hash-123"] == (parent, "agent-test-hash-123.jsonl")


def test_the_same_session_in_two_files_is_loaded_once_and_said_so(tmp_path, con):
    for folder, name in (("a", "short.jsonl"), ("b", "renamed.jsonl")):
        (tmp_path / "projects" / folder).mkdir(parents=True)
        shutil.copy(EXTRA / "short.jsonl", tmp_path / "projects" / folder / name)
    moved = tmp_path / "projects" / "c" / "x.jsonl"  # a subagent file out of its <session>/subagents/ folder
    moved.parent.mkdir()
    shutil.copy(SPOTTER / "ae4a77f8-aedd-4bc1-888f-c94edc91af04" / "subagents" / "agent-aac57f5.jsonl", moved)
    report = ingest(con, [tmp_path / "projects"])
    runs = con.execute("select run_id, parent_run_id, source_file from runs order by run_id").fetchall()
    assert runs == [("55604662-cf2a-4331-851a-ec234028f8ca", None, str(tmp_path / "projects" / "a" / "short.jsonl")),
                    ("ae4a77f8-aedd-4bc1-888f-c94edc91af04/agent-aac57f5", "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
                     str(moved))]
    second = next(f for f in report.files if f.path.endswith("renamed.jsonl"))
    assert second.loaded == 0 and second.skipped == second.lines
    assert second.notes[0].startswith(f"run {SHORT} was already loaded from {tmp_path / 'projects' / 'a' / 'short.jsonl'}")
    once = con.execute("select count(*) from steps where run_id = ?", [SHORT]).fetchall()[0][0]
    alone = store.connect(tmp_path / "alone.duckdb")
    ingest(alone, [EXTRA / "short.jsonl"])
    assert once == alone.execute("select count(*) from steps").fetchall()[0][0]  # not doubled
    alone.close()


# --- usage: a key the record leaves out is unknown, never 0 --------------------------------------------------------

BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens", "context_tokens")
# (name, usage keys deleted from the first API response of short.jsonl, buckets unknown, buckets with another value)
DELETIONS = [
    ("usage", ["."], set(BUCKETS), {}),
    ("input", ["input_tokens"], {"input_uncached", "context_tokens"}, {}),
    ("read", ["cache_read_input_tokens"], {"cache_read", "context_tokens"}, {}),
    ("output", ["output_tokens"], {"output_tokens"}, {}),
    ("written", ["cache_creation_input_tokens"], set(), {}),  # the breakdown still says it
    ("written-and-breakdown", ["cache_creation_input_tokens", "cache_creation"],
     {"cache_write_5m", "cache_write_1h", "context_tokens"}, {}),
    ("1h", ["cache_creation.ephemeral_1h_input_tokens"], set(), {}),  # the total less the 5-minute part
    ("5m", ["cache_creation.ephemeral_5m_input_tokens"], set(), {}),
    # no breakdown: a 5-minute write (a declared zero bucket, see ClaudeCode.zero_buckets)
    ("breakdown", ["cache_creation"], set(), {"cache_write_5m": 13835, "cache_write_1h": 0}),
]


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """short.jsonl once per deletion, each a session of its own (its sessionId renamed); one ingest."""
    folder = tmp_path_factory.mktemp("planted") / "projects" / "p"
    folder.mkdir(parents=True)
    lines = (EXTRA / "short.jsonl").read_text().splitlines()
    first = next(json.loads(line)["message"]["id"] for line in lines if '"type":"assistant"' in line)
    for name, keys, _, _ in [("original", [], set(), {}), *DELETIONS]:
        out = []
        for line in lines:
            record = json.loads(line)
            if record.get("message", {}).get("id") == first:  # every line of that API response
                for key in keys:
                    if key == ".":
                        del record["message"]["usage"]
                        continue
                    *parents, last = key.split(".")
                    holder = record["message"]["usage"]
                    for parent in parents:
                        holder = holder[parent]
                    del holder[last]
            out.append(json.dumps(record).replace(SHORT, f"session-{name}"))
        (folder / f"{name}.jsonl").write_text("\n".join(out) + "\n")
    con = store.connect(tmp_path_factory.mktemp("planted_db") / "cc.duckdb")
    assert ingest(con, [folder]).totals["rejected"] == 0
    yield con
    con.close()


def first_response(con, run_id: str) -> dict:
    row = con.execute(f"select {', '.join(BUCKETS)} from steps where run_id = ? and kind = 'model' order by idx limit 1",
                      [run_id]).fetchall()[0]
    return dict(zip(BUCKETS, row))


@pytest.mark.parametrize("name, keys, unknown, changed", DELETIONS, ids=[d[0] for d in DELETIONS])
def test_a_usage_key_the_record_leaves_out_is_unknown_never_zero(planted, name, keys, unknown, changed):
    original = first_response(planted, "session-original")
    assert original == {"input_uncached": 3, "cache_read": 11515, "cache_write_5m": 0, "cache_write_1h": 13835,
                        "output_tokens": 13, "context_tokens": 3 + 11515 + 13835}
    got = first_response(planted, f"session-{name}")
    assert {bucket for bucket, value in got.items() if value is None} == unknown
    assert {bucket: value for bucket, value in got.items() if value is not None} == \
        {bucket: changed.get(bucket, value) for bucket, value in original.items() if bucket not in unknown}
    assert set(changed) <= set(ClaudeCode.zero_buckets) | {"cache_write_5m"}


def test_the_context_is_every_input_token_of_the_response(sessions):
    con, _ = sessions
    rows = con.execute("""select count(*), count(*) filter (where context_tokens = input_uncached + cache_read
                                                            + cache_write_5m + cache_write_1h)
                          from steps where kind = 'model' and input_uncached is not null""").fetchall()[0]
    assert rows[0] > 500 and rows[0] == rows[1]
