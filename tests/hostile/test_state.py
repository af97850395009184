"""Ingest state is a state machine: whatever happened to the files, the store equals a fresh ingest of them.

A file's record is written only when it loaded; a forced wrong format records nothing; growth,
shrinking, rewrites that move runs between files and deletions all end where a fresh ingest of
the final files would. The property test drives random sequences of those changes (a fixed set
in the suite; RECONCILE_PROPERTY_EXAMPLES=500 searches afresh).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from pathlib import Path

import duckdb
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import bases  # noqa: E402
from journals import StepClock, write_simple_run  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.cli import main  # noqa: E402
from reconcile.errors import ExitCode  # noqa: E402
from reconcile.ingest.driver import ingest  # noqa: E402

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

RUNS = ("r1", "r2", "r3", "r4")
FILES = ("a.jsonl", "b.jsonl", "c.jsonl")


def run_lines(run_id: str) -> str:
    buffer = io.StringIO()
    from reconcile.journal import Journal

    with Journal(buffer, clock=StepClock()) as journal:
        write_simple_run(journal, run_id)
    return buffer.getvalue()


RUN_TEXT = {run: run_lines(run) for run in RUNS}


def write_files(folder: Path, layout: dict[str, list[str]]) -> None:
    """Make ``folder`` hold exactly ``layout``: file name -> the runs it holds, in order."""
    for name in FILES:
        path = folder / name
        if name in layout:
            path.write_text("".join(RUN_TEXT[run] for run in layout[name]))
        elif path.exists():
            path.unlink()


def snapshot(con: duckdb.DuckDBPyConnection) -> dict[str, list]:
    """Everything a fresh ingest determines, in a comparable form (times of ingest left out)."""
    queries = {
        "runs": "select run_id, source_file, status, agent from runs order by all",
        "steps": "select run_id, idx, kind, input_uncached, output_tokens, args_hash, tool_status from steps order by all",
        "calls": "select run_id, step_idx, call_id, args_hash, idempotency_key from tool_calls order by all",
        "tools": "select run_id, name, side_effect from run_tools order by all",
        # (not its digest: a file last read by its tail records a digest of its reads, docs/architecture.md)
        "files": "select path, format, lines, loaded, rejected, skipped from ingested_files order by all",
        "rejects": "select path, line, reason from rejects order by all",
    }
    return {name: con.execute(sql).fetchall() for name, sql in queries.items()}


def fresh(folder: Path, tmp: Path) -> dict[str, list]:
    db = tmp / f"fresh-{len(list(tmp.glob('fresh-*')))}.duckdb"
    with store.connect(db) as con:
        ingest(con, [folder])
        return snapshot(con)


def test_a_forced_wrong_format_records_nothing_and_a_later_ingest_loads(tmp_path, capsys):
    folder = tmp_path / "night"
    folder.mkdir()
    write_files(folder, {"a.jsonl": ["r1"]})
    db = tmp_path / "s.duckdb"
    assert main(["ingest", str(folder / "a.jsonl"), "--format", "otel", "--db", str(db)]) == ExitCode.BAD_INPUT
    assert not db.exists()  # issue 61: a command that loaded nothing makes no store
    store.connect(db).close()  # into a store that exists, the failure is recorded
    for forced in ("claude_code", "langfuse", "anthropic_usage", "otel", "openhands"):
        capsys.readouterr()
        code = main(["ingest", str(folder / "a.jsonl"), "--format", forced, "--db", str(db)])
        err = capsys.readouterr().err
        assert code == ExitCode.BAD_INPUT, (forced, err)
        assert "internal error" not in err and "a.jsonl" in err
        with store.connect(db) as con:  # recorded as failed, with why; nothing of it loaded
            assert con.execute("select status, loaded, reason like '%format%' from ingested_files").fetchall() \
                == [("failed", 0, True)], forced
            assert con.execute("select count(*) from runs").fetchall() == [(0,)], forced
    with store.connect(db) as con:
        report = ingest(con, [folder])
        assert [(f.status, f.loaded) for f in report.files] == [("loaded", 7)]
        assert snapshot(con) == fresh(folder, tmp_path)


def test_a_format_changed_by_force_then_detection_reloads(tmp_path):
    folder = tmp_path / "night"
    folder.mkdir()
    (folder / "trace.json").write_text(json.dumps(bases.langfuse("lf-force")))
    with store.connect(tmp_path / "s.duckdb") as con:
        forced = ingest(con, [folder / "trace.json"], format="swe_agent")
        assert [(f.status, f.loaded) for f in forced.files] == [("failed", 0)]
        report = ingest(con, [folder])
        assert [(f.format, f.status, f.loaded) for f in report.files] == [("langfuse", "loaded", 4)]
        assert snapshot(con) == fresh(folder, tmp_path)


@pytest.mark.parametrize("before,after", [
    ({"a.jsonl": ["r1"]}, {"a.jsonl": ["r1", "r2"]}),  # grown
    ({"a.jsonl": ["r1", "r2"]}, {"a.jsonl": ["r1"]}),  # shrunk
    ({"a.jsonl": ["r1", "r2"], "b.jsonl": ["r3"]}, {"a.jsonl": ["r1"], "b.jsonl": ["r2", "r3"]}),  # a run moved on
    ({"a.jsonl": ["r1"], "b.jsonl": ["r1", "r2"]}, {"a.jsonl": [], "b.jsonl": ["r1", "r2"]}),  # first copy dropped
    ({"a.jsonl": ["r2"], "b.jsonl": ["r1"]}, {"a.jsonl": ["r1", "r2"], "b.jsonl": ["r1"]}),  # an earlier file takes over
    ({"a.jsonl": ["r1"], "b.jsonl": ["r2"]}, {"b.jsonl": ["r2"]}),  # deleted
    ({"b.jsonl": ["r1"]}, {"a.jsonl": ["r3"], "b.jsonl": ["r1"], "c.jsonl": ["r1", "r4"]}),  # new files around it
])
def test_each_change_ends_where_a_fresh_ingest_would(tmp_path, before, after):
    folder = tmp_path / "night"
    folder.mkdir()
    with store.connect(tmp_path / "s.duckdb") as con:
        write_files(folder, before)
        ingest(con, [folder])
        write_files(folder, after)
        ingest(con, [folder])
        assert snapshot(con) == fresh(folder, tmp_path)


layouts = st.dictionaries(st.sampled_from(FILES), st.lists(st.sampled_from(RUNS), max_size=3, unique=True), max_size=3)


SEARCH = os.environ.get("RECONCILE_PROPERTY_EXAMPLES")


# 12 fixed examples keep the default suite quick; RECONCILE_PROPERTY_EXAMPLES=500 searches at random
@settings(max_examples=int(SEARCH or 12), derandomize=not SEARCH, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(layouts, min_size=1, max_size=4))
def test_any_sequence_of_changes_ends_where_a_fresh_ingest_would(tmp_path_factory, steps):
    tmp = tmp_path_factory.mktemp("property")
    folder = tmp / "night"
    folder.mkdir()
    with store.connect(tmp / "s.duckdb") as con:
        for layout in steps:  # append, rewrite, move, delete and re-ingest, as the layouts differ
            write_files(folder, layout)
            ingest(con, [folder])
        assert snapshot(con) == fresh(folder, tmp)
    shutil.rmtree(tmp)
