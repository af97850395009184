"""Claude Code transcripts: real sessions against ccusage's own totals, and bad files."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.checks import load_checks, run_checks
from reconcile.errors import ExitCode
from reconcile.ingest import ingest

REAL = ROOT / "tests" / "fixtures" / "realdata"
REFERENCE = REAL / "ccusage-reference"
FOLDERS = {"spotter-real-sessions": REAL / "spotter-real-sessions" / "projects",
           "claude-code-viewer": REAL / "claude-code-viewer" / "projects"}


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
           where coalesce(parent_run_id, run_id) = ? and starts_with(source_file, ?) and (? is null or steps.model = ?)""",
        [session, str(folder), model, model]).fetchall()[0]


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
    assert rows["short"] == rows["tool_heavy"] == "cancelled"  # they end with "[Request interrupted by user"
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
    report = run_checks(con, load_checks())
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
    assert cli("sql", "select count(*) as n from rejects", "--json", "--db", db_path).json() == [{"n": 0}]


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
