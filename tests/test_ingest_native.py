"""Native journal ingest: round trips, idempotence, replacement, and every way a line can be bad."""

from __future__ import annotations

import gzip
import json
import shutil
from datetime import datetime, timezone

import pytest

from journals import StepClock, journal_file, write_simple_run
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal
from reconcile.engine import DuckDBEngine


def counts(con):
    return con.execute("select (select count(*) from run_view), (select count(*) from step_view), "
                       "(select count(*) from tool_calls), (select count(*) from run_tools)").fetchall()[0]


def rejects(con):
    return con.execute("select line, reason from rejects order by line").fetchall()


def accounting_holds(con):
    rows = con.execute("select lines, loaded, rejected, skipped from ingested_files").fetchall()
    return rows and all(lines == loaded + rejected + skipped for lines, loaded, rejected, skipped in rows)


def test_writer_to_store_round_trip(con, tmp_path):
    path = tmp_path / "j.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        calls = write_simple_run(journal)
    report = ingest(con, [path])
    assert report.totals == {"lines": 7, "loaded": 7, "rejected": 0, "skipped": 0, "files": 1, "unchanged": 0,
                             "unreadable": 0, "failed": 0, "passed_over": 0, "forgotten": 0}
    run = con.execute("select status, stop_reason, steps, tool_results, events, input_uncached, cache_read, "
                      "cache_write_5m, cache_write_1h, output_tokens, reasoning_tokens, has_final_answer, "
                      "final_answer_step, max_steps, max_wall_seconds, ledger_steps, ledger_cost_micros, "
                      "catalogue_tokens, wall_seconds from run_view where run_id = 'r1'").fetchall()[0]
    assert run == ("succeeded", "model_finished", 2, 2, 1, 110, 4400, 300, 40, 130, 20, True, 4, 5, 60.5, 2,
                   12345, 300, 6.0)
    stored = con.execute("select call_id, tool_name, args_json, args_hash, idempotency_key, side_effect, "
                         "tool_status, error from step_view where kind = 'tool' order by idx").fetchall()
    assert [(c.call_id, c.name, c.args_hash, c.idempotency_key) for c in calls] == [s[:2] + s[3:5] for s in stored]
    assert stored[0][2] == '{"lines":[1,2],"path":"a.py"}'
    assert [s[5:] for s in stored] == [(False, "ok", None), (True, "error", "OSError: boom")]
    assert con.execute("select tokens_before, tokens_after from steps where event = 'compaction'").fetchall() == [(5000, 1200)]
    assert con.execute("select count(*) from tool_calls where step_idx = 0").fetchall() == [(2,)]


def test_the_step_view_question_is_one_select(con, tmp_path):
    ingest(con, [journal_file(tmp_path / "j.jsonl", runs=("8f3a",))])
    rows = con.execute("select idx, kind, tool_name, cost_micros, ms, error from step_view where run_id = '8f3a'").fetchall()
    # claude-sonnet-4-5 at $3 uncached, $0.30 cache read, $3.75 / $6 cache write 5 m / 1 h, $15 output per M:
    # step 0: 100*3 + 2000*0.3 + 300*3.75 + 40*6 + 80*15 = 3465 µ$; step 4: 10*3 + 2400*0.3 + 50*15 = 1500 µ$
    assert rows == [(0, "model", None, 3465, 900, None), (1, "tool", "read_file", None, 10, None),
                    (2, "tool", "write_file", None, 12, "OSError: boom"), (3, "event", None, None, 0, None),
                    (4, "model", None, 1500, 700, None)]


def test_reingesting_an_unchanged_file_changes_nothing(con, tmp_path):
    path = journal_file(tmp_path / "j.jsonl", runs=("a", "b"))
    first = ingest(con, [path])
    before = counts(con)
    second = ingest(con, [path])
    assert first.files[0].status == "loaded" and second.files[0].status == "unchanged"
    assert second.totals["loaded"] == 0
    assert counts(con) == before == (2, 10, 4, 4)
    assert con.execute("select count(*) from ingested_files").fetchall() == [(1,)]


def test_a_grown_journal_replaces_its_rows(con, tmp_path):
    path = tmp_path / "night.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        write_simple_run(journal, "a", end=False)
    ingest(con, [path], now=datetime(2026, 11, 28, 23, 1, tzinfo=timezone.utc))  # within its 60.5 s budget
    assert con.execute("select status from runs").fetchall() == [("running",)]
    ingest(con, [path])  # today: silent for days past its wall-clock budget, with no end record
    assert con.execute("select status from runs").fetchall() == [("abandoned",)]
    with open(path, "a") as handle:
        handle.write(json.dumps({"v": 1, "type": "run_end", "run_id": "a", "ts": "2026-11-28T23:59:00Z",
                                 "stop_reason": "max_steps"}) + "\n")
    with Journal(path, clock=StepClock()) as journal:
        write_simple_run(journal, "b")
    report = ingest(con, [path])
    assert report.files[0].status == "replaced"  # run a was open from the first line: read whole (issue 59)
    assert report.files[0].read == "read whole: a run still open when it was last read begins on its first line"
    assert con.execute("select run_id, status from runs order by run_id").fetchall() == [("a", "budget_exceeded"), ("b", "succeeded")]
    assert counts(con) == (2, 10, 4, 4)
    assert con.execute("select count(*) from ingested_files").fetchall() == [(1,)]


def test_garbage_in_the_middle_and_a_truncated_last_line(con, tmp_path):
    source = journal_file(tmp_path / "clean.jsonl", runs=("a", "b"))
    lines = source.read_text().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(lines[:6]) + "}}garbage{{\n" + "".join(lines[6:]) + '{"v":1,"type":"step","run_id":"b","idx":9,"ki')
    report = ingest(con, [broken])
    assert rejects(con) == [(7, "not valid JSON"),
                            (16, "truncated last line: no newline and not valid JSON (the writer stopped mid-line)")]
    file = report.files[0]
    assert (file.lines, file.loaded, file.rejected, file.skipped) == (16, 14, 2, 0)
    assert counts(con)[:2] == (2, 10)
    assert accounting_holds(con)


@pytest.mark.parametrize("line,reason", [
    ('{"v":1,"type":"step","run_id":"a","idx":7,"kind":"model","ts":"2026-11-28T23:00:00Z","usage":{"output":"zzz"}}',
     'field "usage.output" is "zzz"; expected an integer from 0 to 10^15'),
    ('{"v":1,"type":"step","run_id":"a","idx":7,"kind":"model","ts":"yesterday","usage":{}}',
     'field "ts" is "yesterday"; expected an RFC 3339 timestamp such as 2026-11-28T01:02:03.123Z from 2000-01-01 '
     'up to 2100-01-01 UTC ([ingest] earliest and latest in reconcile.toml)'),
    ('{"v":1,"type":"step","run_id":"a","idx":7,"kind":"model","ts":"2026-11-28T23:00:00Z"}',
     'missing field "usage" on a step line'),
    ('{"v":1,"type":"step","run_id":"a","idx":-1,"kind":"tool","ts":"2026-11-28T23:00:00Z","call_id":"c","tool":"t","status":"ok"}',
     'field "idx" is -1; expected an integer from 0 to 2147483647'),
    ('{"v":1,"type":"step","run_id":"a","idx":7,"kind":"tool","ts":"2026-11-28T23:00:00Z","call_id":"c","tool":"t","status":"fine"}',
     'field "status" is "fine" on a tool step; expected one of ok, error, timeout, unknown_tool, invalid_args, not_run, started'),
    ('{"v":1,"type":"step","run_id":"a","idx":7,"kind":"tool","ts":"2026-11-28T23:00:00Z","call_id":"c","tool":"t","status":"stalled"}',
     'field "status" is "stalled" on a tool step; expected one of ok, error, timeout, unknown_tool, invalid_args, not_run, started'),
    ('{"v":1,"type":"step","run_id":"a","idx":7,"kind":"dream","ts":"2026-11-28T23:00:00Z"}',
     'field "kind" is "dream"; expected one of model, tool, event'),
    ('{"v":2,"type":"step","run_id":"a"}', "journal version 2 is not supported; this reconcile reads v1"),
    ('[1, 2]', "expected a JSON object, got array"),
    ('{"v":1,"type":"run_end","run_id":"a","ts":"2026-11-28T23:00:00Z","stop_reason":"felt done"}',
     'run_end says neither a status nor a stop reason reconcile knows (status (none), stop_reason "felt done"); give "status" as one of succeeded, failed, cancelled, budget_exceeded, timed_out, stalled or a stop reason of docs/status.md'),
    ('{"v":1,"type":"step","run_id":"zz","idx":0,"kind":"event","event":"retry","ts":"2026-11-28T23:00:00Z"}',
     "no run_start line for run zz in this file"),
    ('{"v":1,"type":"step","run_id":"a","idx":0,"kind":"event","event":"retry","ts":"2026-11-28T23:00:00Z"}',
     "conflicts with line 2 (same step 0 of run a, different content)"),
])
def test_each_bad_line_is_rejected_with_its_reason(con, tmp_path, line, reason):
    path = journal_file(tmp_path / "j.jsonl", runs=("a",))
    with open(path, "a") as handle:
        handle.write(line + "\n")
    report = ingest(con, [path])
    assert rejects(con) == [(8, reason)]
    assert report.files[0].loaded == 7
    assert accounting_holds(con)


def test_exact_repeats_and_blank_lines_are_skipped_not_rejected(con, tmp_path):
    path = journal_file(tmp_path / "j.jsonl", runs=("a",))
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:3]) + lines[2] + "\n   \n" + "".join(lines[3:]))
    file = ingest(con, [path]).files[0]
    assert (file.lines, file.loaded, file.rejected, file.skipped) == (10, 7, 0, 3)
    assert "exact repeat of line 3" in file.notes[0]
    assert counts(con)[1] == 5


@pytest.mark.parametrize("text, lines", [("\n", 1), ("   \n\n\t\n \u00a0\x0c\n", 4), ("  \n \n  ", 3)],
                         ids=["one", "white space", "no last newline"])
def test_a_file_of_blank_lines_forced_native_loads_nothing_and_is_no_failure(con, tmp_path, cli, text, lines):
    # blank lines are skipped wherever they are: --format native does not make them a sign of another format
    path = tmp_path / "blank.jsonl"
    path.write_text(text)
    file = ingest(con, [path], format="native").files[0]
    assert (file.status, file.lines, file.loaded, file.rejected, file.skipped) == ("loaded", lines, 0, 0, lines)
    assert file.skipped_by == {"blank line": lines}
    assert counts(con)[0] == 0 and rejects(con) == [] and accounting_holds(con)
    assert cli("ingest", path, "--format", "native", "--db", tmp_path / "cli.duckdb").code == 0


def test_a_run_already_loaded_from_another_file_is_skipped(con, tmp_path):
    first = journal_file(tmp_path / "a.jsonl", runs=("a",))
    copy = tmp_path / "copy.jsonl"
    shutil.copy(first, copy)
    with open(copy, "a") as handle:
        handle.write("\n")  # different bytes, same runs
    ingest(con, [first])
    file = ingest(con, [copy]).files[0]
    assert (file.loaded, file.skipped, file.rejected) == (0, 8, 0)
    assert "already loaded from" in file.notes[0]
    assert counts(con)[:2] == (1, 5)


def test_an_ingest_stopped_after_forgetting_an_owner_loads_the_files_deferring_to_it_next_time(con, tmp_path,
                                                                                               monkeypatch):
    """A run kept in two files; its owner is deleted; the ingest forgets it and is stopped (a kill) before the file
    that deferred to it is loaded again: the next ingest loads that file, though it did not change (a SIGKILL of
    tests/test_tail_reads.py's longer nights found it: the run was lost for good)."""
    from reconcile.ingest import driver

    folder = tmp_path / "night"
    folder.mkdir()
    owner = journal_file(folder / "a.jsonl", runs=("a",))
    copy = folder / "b.jsonl"
    copy.write_bytes(owner.read_bytes() + b"\n")  # different bytes, the same run: b defers to a
    ingest(con, [folder])
    assert counts(con)[:2] == (1, 5)
    owner.unlink()

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(driver, "load_files", stopped)
        with pytest.raises(KeyboardInterrupt):
            ingest(con, [folder])
    assert counts(con)[0] == 0  # a forgotten; b not loaded again yet
    again = ingest(con, [folder]).files
    assert [(f.path, f.loaded) for f in again] == [(str(copy), 7)]
    assert counts(con)[:2] == (1, 5) and accounting_holds(con)
    assert con.execute("select count(*) from pending_reloads").fetchall() == [(0,)]


def test_invalid_utf8_costs_one_line(con, tmp_path):
    path = journal_file(tmp_path / "j.jsonl", runs=("a",))
    data = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(data[:4]) + b'{"v":1,"bad":"\xff\xfe"}\n' + b"".join(data[4:]))
    file = ingest(con, [path]).files[0]
    assert (file.lines, file.loaded, file.rejected) == (8, 7, 1)
    assert rejects(con)[0][0] == 5 and rejects(con)[0][1].startswith("not valid UTF-8")


def test_gzip_journals_are_read(con, tmp_path):
    plain = journal_file(tmp_path / "j.jsonl", runs=("a", "b"))
    packed = tmp_path / "j2.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    plain.unlink()
    assert ingest(con, [packed]).totals["loaded"] == 14
    assert counts(con)[0] == 2


def test_a_failure_mid_file_leaves_nothing_behind(con, tmp_path, monkeypatch):
    from reconcile.ingest import landing
    path = journal_file(tmp_path / "j.jsonl", runs=("a",))

    def explode(*args, **kwargs):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(landing, "_land_runs", explode)  # calls and steps are already inserted when this raises
    with pytest.raises(RuntimeError):
        ingest(con, [path])
    assert counts(con) == (0, 0, 0, 0)
    assert con.execute("select count(*) from ingested_files").fetchall() == [(0,)]


def test_a_process_killed_between_started_and_outcome_leaves_one_stuck_side_effect(tmp_path, con):
    """The writer's protocol, for real: a child process writes the started record, then dies (SIGKILL)."""
    import subprocess
    import sys

    from reconcile.checks import load_checks, run_checks, select_checks

    journal = tmp_path / "killed.jsonl"
    script = f"""
import os, signal
from reconcile.journal import Journal
with Journal({str(journal)!r}) as j:
    run = j.start_run("killed", agent="a", tools=[{{"name": "write_file", "side_effect": True}}])
    step = run.model_step(usage={{"input_uncached": 10, "output": 5}}, tool_calls=[("write_file", {{"path": "x"}})])
    run.tool_started(step.calls[0])
    os.kill(os.getpid(), signal.SIGKILL)  # dies while the tool would run: no outcome, no run_end
"""
    died = subprocess.run([sys.executable, "-c", script], capture_output=True)
    assert died.returncode == -9
    assert ingest(con, [journal]).totals["rejected"] == 0
    report = run_checks(DuckDBEngine(con), select_checks(load_checks(), ["no_stuck_side_effects"]), record=False)
    assert [(f.run_id, f.step) for f in report.findings] == [("killed", 1)]
    assert "started at step 1 and has no recorded outcome" in report.findings[0].detail
    assert con.execute("select tool_status, result_tokens from steps where kind = 'tool'").fetchall() == [("started", None)]


def test_a_started_record_completed_by_its_outcome_is_one_step(tmp_path, con):
    from reconcile.journal import Journal

    path = tmp_path / "j.jsonl"
    with Journal(path) as journal:
        run = journal.start_run("r", agent="a", tools=[{"name": "write_file", "side_effect": True}])
        step = run.model_step(usage={"input_uncached": 10, "output": 5}, tool_calls=[("write_file", {"path": "x"})])
        started = run.tool_started(step.calls[0])
        assert run.tool_step(step.calls[0], started=started, result="wrote") == started
        run.model_step(usage={"input_uncached": 10, "output": 5}, final=True, text="done")
        run.end("model_finished")
    result = ingest(con, [path]).files[0]
    assert (result.lines, result.loaded, result.skipped) == (6, 5, 1)
    assert result.notes == ["in-flight record of a tool step, completed by its outcome"]
    assert con.execute("select idx, tool_status from steps where kind = 'tool'").fetchall() == [(1, "ok")]
    with pytest.raises(ValueError, match="is not an outcome"):
        run.tool_step(step.calls[0], status="started")
