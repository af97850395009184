"""Quiet ingest: one summary line (skips by reason, paths as typed), details with -v, errors always shown."""

from __future__ import annotations

import os
import re
import shutil

from conftest import ROOT
from reconcile.errors import ExitCode

CODEX = ROOT / "tests" / "fixtures" / "realdata" / "codex-cli"


def copy_into(tmp_path, source, name):
    target = tmp_path / name
    shutil.copytree(source, target)
    return target


def test_a_codex_folder_is_one_line_with_skips_by_reason(cli, tmp_path, monkeypatch):
    copy_into(tmp_path, CODEX, "codex")
    (tmp_path / "codex" / "notes.txt").write_text("not a journal\n")
    monkeypatch.chdir(tmp_path)
    result = cli("ingest", "codex", "--db", "c.duckdb")
    assert result.code == ExitCode.OK
    lines = result.out.strip().splitlines()
    assert len(lines) == 1, result.out  # not a line per skipped kind, per file, or per passed-over file
    line = lines[0]
    assert re.match(r"ingested \d+ file\(s\); lines [\d,]+ = [\d,]+ loaded \+ 0 rejected \+ [\d,]+ skipped \(", line)
    assert "not a step" in line and "token_count without usage" in line  # by reason
    assert "(event_msg/" not in line  # the reason, not each of its details
    assert "passed over (not a recognised format)" in line and "-v for each file" in line
    data = cli("ingest", "codex", "--db", "c2.duckdb", "--json").json()  # the machine output stays whole
    assert sum(data["skipped_by_reason"].values()) == data["totals"]["skipped"] > 0
    assert data["files"][0]["notes"] and data["passed_over"][0]["reason"].startswith("not a recognised format")


def test_verbose_lists_each_file_with_paths_as_typed(cli, tmp_path, monkeypatch):
    copy_into(tmp_path, CODEX, "codex")
    (tmp_path / "codex" / "notes.txt").write_text("not a journal\n")
    work = tmp_path / "elsewhere"
    work.mkdir()
    monkeypatch.chdir(work)
    out = cli("ingest", "../codex", "--db", "c.duckdb", "-v").out
    assert "passed over ../codex/notes.txt: not a recognised format" in out
    assert "../codex/VibeCodingTracker__tests__fixtures__sessions__codex.jsonl: skipped: not a step (event_msg/" in out
    assert str(tmp_path) not in out  # as typed, not absolute
    absolute = cli("ingest", str(tmp_path / "codex"), "--db", "d.duckdb", "-v").out
    assert f"passed over {tmp_path / 'codex' / 'notes.txt'}:" in absolute  # typed absolute, shown absolute
    assert "../" not in absolute


def test_a_second_ingest_prints_no_table_of_unchanged_files(cli, tmp_path, monkeypatch):
    copy_into(tmp_path, ROOT / "sample_runs" / "2026-11-28", "night")
    monkeypatch.chdir(tmp_path)
    cli("ingest", "night", "--db", "n.duckdb")
    again = cli("ingest", "night", "--db", "n.duckdb")
    assert again.out.strip() == "ingested 3 file(s), all unchanged: nothing new to load"
    verbose = cli("ingest", "night", "--db", "n.duckdb", "-v").out
    assert "unchanged" in verbose and "│" not in verbose  # a count, not a table of "unchanged 0 0 0" rows


def test_rejects_and_failures_stay_visible_without_verbose(cli, tmp_path, monkeypatch):
    night = copy_into(tmp_path, ROOT / "sample_runs" / "2026-11-28", "night")
    with open(night / "triage.jsonl", "a") as journal:
        journal.write('{"v":1,"type":"step","run_id":"cdac","idx":"not a number"}\n')
    (tmp_path / "broken.jsonl").write_text('{"broken json\n')
    monkeypatch.chdir(tmp_path)
    result = cli("ingest", "night", "broken.jsonl", "--db", "n.duckdb")
    assert result.code == ExitCode.BAD_INPUT
    assert "1 not loaded" in result.out
    assert "1 line(s) rejected" in result.out and 'reconcile sql "select path, line, reason from rejects"' in result.out
    assert "error: could not load broken.jsonl:" in result.err  # the failed file, as typed, on stderr
    verbose = cli("ingest", "night", "--db", "m.duckdb", "-v").out
    assert f"rejected {os.path.join('night', 'triage.jsonl')}:" in verbose


def test_runs_already_loaded_from_another_file_are_one_reason(cli, tmp_path, monkeypatch):
    """A night exported twice: every run of the copy is skipped, and the summary names the reason once
    (not "run r1 was already loaded from …" for each of its runs); -v still names each run and its file."""
    night = copy_into(tmp_path, ROOT / "sample_runs" / "2026-11-28", "night")
    journal = next(night.glob("*.jsonl"))
    shutil.copy(journal, tmp_path / "again.jsonl")
    monkeypatch.chdir(tmp_path)
    line = cli("ingest", str(journal.relative_to(tmp_path)), "again.jsonl", "--db", "n.duckdb").out.strip()
    assert len(line.splitlines()) == 1, line
    assert line.count("already loaded") == 1 and "run already loaded from another file" in line, line
    verbose = cli("ingest", str(journal.relative_to(tmp_path)), "again.jsonl", "--db", "v.duckdb", "-v").out
    assert verbose.count("was already loaded from") > 1  # each run, with the file that holds it


def test_a_picture_is_not_a_journal_and_no_store_is_made(cli, tmp_path):
    """Issue 61: a PNG named to ingest is "not a journal" in one line, no rejected lines, and no store left behind."""
    picture = tmp_path / "chart.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    db = tmp_path / "new.duckdb"
    result = cli("ingest", picture, "--db", db)
    assert result.code == 2 and not db.exists()
    assert f"error: could not load {picture}: not a journal or transcript (a PNG image)" in result.err
    assert result.err.count(str(picture)) == 1  # the path named once
    assert "0 rejected" in result.out and "no store was made" in result.err
    assert "--format" not in result.err  # no format would read it: no hint to force one


def test_a_path_that_is_not_there_makes_no_store(cli, tmp_path):
    db = tmp_path / "typo.duckdb"
    result = cli("ingest", tmp_path / "nowhere.jsonl", "--db", db)
    assert result.code == 2 and "No such file or folder" in result.err and not db.exists()
