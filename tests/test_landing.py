"""The landing contract: a format is one module plus its staging SQL; the shared landing does the rest.

A toy format from "another package" (tests/fixtures/toy_format) registers through the
``reconcile.formats`` entry-point group exactly as a third party's would, and lands through the
same code as the built-ins: ownership, canonical arguments, size estimates, final answers,
accounting.
"""

from __future__ import annotations

import json
import math
import re
from importlib.metadata import EntryPoint

import pytest

import reconcile.formats as formats
from conftest import ROOT
from reconcile import store
from reconcile.errors import BadInput
from reconcile.ingest.driver import ingest

TOY = ROOT / "tests" / "fixtures" / "toy_format"


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.syspath_prepend(str(TOY))
    point = EntryPoint(name="toy", value="toyfmt.toy:FORMAT", group=formats.ENTRY_POINT_GROUP)
    monkeypatch.setattr(formats, "entry_points", lambda group: [point] if group == formats.ENTRY_POINT_GROUP else [])
    registry = formats.load_formats()
    monkeypatch.setitem(formats.FORMATS, "toy", registry["toy"])
    return registry


def toy_log(path, run="t1", result="x" * 10):
    lines = [{"toy": 1, "run": run, "who": "model", "at": "2026-11-28T01:00:00Z", "tokens_in": 100, "tokens_out": 20,
              "call": "c1", "tool": "grep", "args": {"b": 2, "a": [1, 2.0]}},
             {"toy": 1, "run": run, "who": "tool", "at": "2026-11-28T01:00:01Z", "call": "c1", "result": result},
             {"toy": 1, "run": run, "who": "model", "at": "2026-11-28T01:00:02Z", "tokens_in": 150, "tokens_out": 30,
              "said": "the answer", "done": True}]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_a_format_from_another_package_registers_after_the_built_ins(toy):
    names = list(toy)
    assert names[-1] == "toy" and names[:len(formats.BUILTIN)] == [n for n in formats.FORMATS if n != "toy"][:len(formats.BUILTIN)]


def test_the_toy_format_lands_through_the_shared_landing(toy, tmp_path):
    con = store.connect(tmp_path / "toy.duckdb")
    report = ingest(con, [toy_log(tmp_path / "a.toylog")])
    assert [(f.format, f.lines, f.loaded) for f in report.files] == [("toy", 3, 3)]
    run = con.execute("select source_format, agent, status, status_inferred, final_output from runs").fetchall()
    assert run == [("toy", "toy-agent", "succeeded", True, "the answer")]
    tool = con.execute("""select tool_name, args_json, result_tokens, result_bytes, result_preview, bounded, tool_status
                          from steps where kind = 'tool'""").fetchall()
    assert tool == [("grep", '{"a":[1,2],"b":2}', math.ceil(10 / 4), 10, "x" * 10, None, None)]  # unknown stays NULL
    finals = con.execute("select idx, is_final from steps where kind = 'model' order by idx").fetchall()
    assert finals == [(0, False), (2, True)]  # detected: the last text that asks for no tool
    key = con.execute("select idempotency_key from tool_calls").fetchall()[0][0]
    assert re.fullmatch(r"[0-9a-f]{64}", key)
    facts = dict(con.execute("select fact, recorded from format_facts where format = 'toy'").fetchall())
    assert facts["call_ids"] and not facts["catalogue"] and not facts["tool_status"]


def test_a_run_already_loaded_from_another_file_is_skipped_with_a_note(toy, tmp_path):
    con = store.connect(tmp_path / "toy.duckdb")
    ingest(con, [toy_log(tmp_path / "a.toylog")])
    again = ingest(con, [toy_log(tmp_path / "b.toylog", result="other")]).files[0]
    assert (again.loaded, again.skipped) == (0, 3)
    assert again.notes == [f"run t1 was already loaded from {tmp_path / 'a.toylog'} (3 lines)"]
    assert con.execute("select count(*) from steps").fetchall() == [(3,)]


def test_a_name_clash_and_a_broken_plug_in_are_errors_naming_them(monkeypatch):
    monkeypatch.syspath_prepend(str(TOY))
    clash = EntryPoint(name="native", value="reconcile.formats.native:FORMAT", group=formats.ENTRY_POINT_GROUP)
    monkeypatch.setattr(formats, "entry_points", lambda group: [clash])
    with pytest.raises(BadInput, match="a format named 'native' is already registered"):
        formats.load_formats()
    broken = EntryPoint(name="gone", value="no_such_package.fmt:FORMAT", group=formats.ENTRY_POINT_GROUP)
    monkeypatch.setattr(formats, "entry_points", lambda group: [broken])
    with pytest.raises(BadInput, match="entry point 'gone'.*failed to load: ModuleNotFoundError"):
        formats.load_formats()


def test_staging_sql_that_breaks_the_contract_is_refused_by_name(toy, tmp_path, monkeypatch):
    fmt = formats.FORMATS["toy"]
    statements = fmt.staging_sql()
    monkeypatch.setattr(type(fmt), "staging_sql", lambda self: statements[:-1])  # no _stage_runs
    con = store.connect(tmp_path / "toy.duckdb")
    # a plug-in's bug costs the file it was loading: recorded as failed, with the broken contract named
    report = ingest(con, [toy_log(tmp_path / "a.toylog")])
    assert [f.status for f in report.files] == ["failed"]
    assert "the toy staging SQL did not create _stage_runs" in report.files[0].notes[0]
    stray = statements[:-1] + [statements[-1].replace("as agent,", "as agent, 1 as flavour,")]
    monkeypatch.setattr(type(fmt), "staging_sql", lambda self: stray)
    report = ingest(con, [toy_log(tmp_path / "a.toylog")])
    assert [f.status for f in report.files] == ["failed"]
    assert "columns runs does not have: flavour" in report.files[0].notes[0]
    assert con.execute("select count(*) from runs").fetchall() == [(0,)]  # nothing half-loaded
    assert con.execute("select status from ingested_files").fetchall() == [("failed",)]


def test_the_shared_landing_names_no_format():
    landing = (ROOT / "reconcile" / "ingest" / "landing.py").read_text()
    for name in formats.FORMATS:
        assert f"'{name}'" not in landing and f'"{name}"' not in landing, name


def _copies(tmp_path):
    """One native run in two files: a short copy (cut after its first step) and the whole run."""
    from journals import journal_file

    whole = journal_file(tmp_path / "b_whole.jsonl", runs=("r1",))
    lines = whole.read_text().splitlines()
    short = tmp_path / "a_short.jsonl"
    short.write_text("\n".join(lines[:2]) + "\n")  # run_start and the first model step: path order puts it first
    return short, whole, len(lines)


@pytest.mark.parametrize("order", ["one batch", "short first", "whole first"])
def test_a_run_in_two_files_is_loaded_once_from_its_fullest_copy(tmp_path, order):
    short, whole, whole_lines = _copies(tmp_path)
    con = store.connect(tmp_path / "s.duckdb")
    files = {"one batch": [[short, whole]], "short first": [[short], [whole]], "whole first": [[whole], [short]]}[order]
    reports = [ingest(con, batch) for batch in files]
    assert con.execute("select run_id, source_file from runs").fetchall() == [("r1", str(whole))]
    assert con.execute("select count(*) from steps").fetchone()[0] == whole_lines - 2  # all but run_start and run_end
    last = {f.path: f for report in reports for f in report.files}  # as each file ended
    assert last[str(short)].loaded == 0 and last[str(short)].skipped == 2
    assert any(f"run r1 was already loaded from {whole}" in str(n) for n in last[str(short)].notes)
    for report in reports:
        assert len({f.path for f in report.files}) == len(report.files)  # a file taken over is reported once
