"""One bad file costs that file, never the night: every per-file failure is recorded and the files beside it load.

For every format, a folder holds two good files with failing files planted between them, one per
failure class: a constraint, a cast, a parse, an I/O error while reading, more memory than the limit.
Each class is planted in the format's own load (the format's SQL would raise it for a shape it does
not handle), so the test holds whatever shapes the formats learn to handle. Then real failures
(a damaged gzip, an explicit file of no format) between good files, through the CLI: exit 2, the
good files loaded, each failure in ``ingested_files`` with why.
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "hostile"))

import bases  # noqa: E402
from bases import jsonl  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.cli import main  # noqa: E402
from reconcile.errors import ExitCode  # noqa: E402
from reconcile.formats import FORMATS  # noqa: E402
from reconcile.ingest.driver import ingest  # noqa: E402

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out


def _csv(header: str, rows: list[str]) -> bytes:
    return (header + "\n" + "\n".join(rows) + "\n").encode()


def _openai_usage(uid: str) -> bytes:
    start = 1764370800 + 3600 * (sum(map(ord, uid)) % 24)
    return _csv("start_time,end_time,model,input_tokens,input_cached_tokens,output_tokens,num_model_requests",
                [f"{start},{start + 3600},gpt-4o,100,10,5,1"])


def _openai_costs(uid: str) -> bytes:
    start = 1764370800 + 3600 * (sum(map(ord, uid)) % 24)
    return _csv("start_time,end_time,line_item,project_id,amount_value,amount_currency",
                [f"{start},{start + 3600},gpt-4o input,{uid},0.25,usd"])


def _anthropic_costs(uid: str) -> bytes:
    return _csv("starting_at,ending_at,model,workspace_id,description,cost_type,amount,currency",
                [f"2026-11-28T22:00:00Z,2026-11-28T23:00:00Z,claude-sonnet-4-5,{uid},Input tokens,tokens,123.45,USD"])


def _doc(builder):
    return lambda uid: json.dumps(builder(uid)).encode()


# format -> (file name suffix, the bytes of a good file whose runs or rows carry uid)
BUILDERS = {
    "native": (".jsonl", lambda uid: jsonl(bases.native(uid))),
    "claude_code": (".jsonl", lambda uid: jsonl(bases.claude_code(uid))),
    "codex": (".jsonl", lambda uid: jsonl(bases.codex(uid))),
    "gemini_cli": (".json", _doc(bases.gemini_chat)),
    "gemini_cli_jsonl": (".jsonl", lambda uid: jsonl(bases.gemini_jsonl(uid))),
    "langfuse": (".json", _doc(bases.langfuse)),
    "inspect_ai": (".json", _doc(bases.inspect_log)),
    "mini_swe_agent": (".traj.json", _doc(bases.mini_swe_agent)),
    "swe_agent": (".traj", _doc(bases.swe_agent)),
    "openhands": (".json", _doc(bases.openhands)),
    "otel": (".json", _doc(bases.otel)),
    "anthropic_usage": (".csv", bases.anthropic_usage_csv),
    "openai_usage": (".csv", _openai_usage),
    "openai_costs": (".csv", _openai_costs),
    "anthropic_costs": (".csv", _anthropic_costs),
}


def _raise(exc: BaseException):
    def fail(con):
        raise exc
    return fail


# failure class -> what the format's load does when it meets the planted file (and the words its reason must hold)
PLANTED = {
    "constraint": (lambda con: con.execute("insert into runs (run_id) values (null)"), "Constraint Error"),
    "cast": (lambda con: con.execute("select 'twelve'::integer"), "Conversion Error"),
    "parse": (lambda con: con.execute("select json('{\"a\": ')"), "JSON"),
    "io": (_raise(OSError(5, "Input/output error")), "Input/output error"),
    "memory": (_raise(duckdb.OutOfMemoryException("failed to pin block of size 284.0 KiB")), "RECONCILE_MEMORY_LIMIT"),
}


def test_every_format_has_a_planted_night_and_every_class_several_formats():
    assert set(BUILDERS) == set(FORMATS)
    for klass in PLANTED:
        assert sum(klass in classes for _, classes in NIGHTS) >= 3, klass


# native meets every class; each other format one class in turn, so every class meets three formats or more
NIGHTS = [("native", tuple(PLANTED))] + [(fmt, (list(PLANTED)[number % len(PLANTED)],))
                                        for number, fmt in enumerate(sorted(set(BUILDERS) - {"native"}))]


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """Every format's planted night, in folders of one store, loaded by one ingest (a store per format is slow)."""
    root = tmp_path_factory.mktemp("planted")
    for fmt, classes in NIGHTS:
        suffix, build = BUILDERS[fmt]
        folder = root / fmt
        folder.mkdir()
        for uid in (f"a-good-{fmt}", f"z-good-{fmt}", *(f"m-bad-{klass}-{fmt}" for klass in classes)):
            (folder / f"{uid}{suffix}").write_bytes(build(uid))
    with pytest.MonkeyPatch.context() as patch:
        for fmt in BUILDERS:
            patch.setattr(FORMATS[fmt], "load", _planted(FORMATS[fmt].load))
        with store.connect(root / "s.duckdb") as con:
            report = ingest(con, [root])
            records = {path: (status, loaded, rejected, reason) for path, status, loaded, rejected, reason in
                       con.execute("select path, status, loaded, rejected, reason from ingested_files").fetchall()}
            rows = dict(con.execute("""select source_file, count(*) from (
                                           select source_file from runs union all select source_file from usage_buckets
                                           union all select source_file from billed_costs) group by all""").fetchall())
    return root, {f.path: f for f in report.files}, records, rows


def _planted(original):
    def planted_load(con, sources, forced):
        counts = original(con, sources, forced)
        for source in sources:  # as a format's SQL would fail on a shape it does not handle
            for klass, (failure, _) in PLANTED.items():
                if source.path.name.startswith(f"m-bad-{klass}-"):
                    failure(con)
        return counts
    return planted_load


@pytest.mark.parametrize("fmt,classes", NIGHTS, ids=[fmt for fmt, _ in NIGHTS])
def test_each_failure_class_costs_only_its_file(planted, fmt, classes):
    root, results, records, rows = planted
    suffix = BUILDERS[fmt][0]
    for uid in (f"a-good-{fmt}", f"z-good-{fmt}"):
        path = str(root / fmt / f"{uid}{suffix}")
        assert results[path].status == "loaded" and results[path].loaded > 0, (path, results[path])
        assert records[path][:3] == ("loaded", results[path].loaded, results[path].rejected)
        assert rows.get(path, 0) > 0, path  # its runs or rows are in the store
    for klass in classes:
        words = PLANTED[klass][1]
        path = str(root / fmt / f"m-bad-{klass}-{fmt}{suffix}")
        status, loaded, rejected, reason = records[path]
        assert (status, loaded, results[path].status) == ("failed", 0, "failed"), (path, records[path])
        assert words in reason, (klass, reason)
        assert rejected == results[path].lines  # loaded + rejected + skipped = lines, still
        assert path not in rows, path  # nothing of it in the store


def test_real_failures_between_good_files_exit_2_and_load_the_rest(tmp_path, capsys):
    folder = tmp_path / "night"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(jsonl(bases.native("rf-a")))
    (folder / "b-truncated.jsonl.gz").write_bytes(gzip.compress(jsonl(bases.native("rf-b")), mtime=0)[:200])
    (folder / "c-header-only.jsonl.gz").write_bytes(gzip.compress(b"", mtime=0)[:10])
    (folder / "d-fake.jsonl.gz").write_bytes(b"\x1f\x8b" + b"garbage" * 20)
    (folder / "e-notes.txt").write_text("just some notes\n")
    (folder / "f.jsonl").write_bytes(jsonl(bases.claude_code("rf-f")))
    db = tmp_path / "s.duckdb"
    named = sorted(str(p) for p in folder.iterdir())
    code = main(["ingest", *named, "--db", str(db)])
    captured = capsys.readouterr()
    assert code == ExitCode.BAD_INPUT, captured.err
    assert "internal error" not in captured.err
    for name in ("b-truncated.jsonl.gz", "c-header-only.jsonl.gz", "d-fake.jsonl.gz", "e-notes.txt"):
        assert f"{name}: " in captured.err, name  # each named, with why
    with store.connect(db) as con:
        records = {Path(p).name: (status, reason) for p, status, reason in
                   con.execute("select path, status, reason from ingested_files").fetchall()}
        runs = {row[0] for row in con.execute("select run_id from runs").fetchall()}
    assert records["a.jsonl"] == ("loaded", None) and records["f.jsonl"] == ("loaded", None)
    assert runs == {"rf-a", "rf-f"}
    assert records["b-truncated.jsonl.gz"][0] == "unreadable" and "ends early" in records["b-truncated.jsonl.gz"][1]
    assert records["c-header-only.jsonl.gz"][0] == "unreadable"
    assert records["d-fake.jsonl.gz"][0] == "unreadable" and "not a valid gzip" in records["d-fake.jsonl.gz"][1]
    assert records["e-notes.txt"][0] == "failed" and "not a format reconcile reads" in records["e-notes.txt"][1]
    # once the damaged files are mended, the next ingest loads them (a failure is never "unchanged")
    (folder / "b-truncated.jsonl.gz").write_bytes(gzip.compress(jsonl(bases.native("rf-b")), mtime=0))
    assert main(["ingest", str(folder / "b-truncated.jsonl.gz"), "--db", str(db)]) == ExitCode.OK
    with store.connect(db) as con:
        assert con.execute("select status from ingested_files where path like '%b-truncated%'").fetchall() == [("loaded",)]
        assert con.execute("select count(*) from runs where run_id = 'rf-b'").fetchall() == [(1,)]


@pytest.mark.parametrize("named", [True, False], ids=["named", "in-a-folder"])
def test_a_file_that_cannot_be_opened_is_recorded_and_exits_2(named, tmp_path, monkeypatch, capsys):
    """Mode 000 as a user other than root sees it (root reads every file, so the refusal is planted in ``open``)."""
    import builtins

    from reconcile.formats import detect
    from reconcile.ingest import files

    folder = tmp_path / "night"
    folder.mkdir()
    for uid in ("pd-a", "pd-c"):
        (folder / f"{uid}.jsonl").write_bytes(jsonl(bases.native(uid)))
    locked = folder / "pd-b.jsonl"
    locked.write_bytes(jsonl(bases.native("pd-b")))

    def refusing_open(path, *args, **kwargs):
        if str(path) == str(locked):
            raise PermissionError(13, "Permission denied", str(path))
        return builtins.open(path, *args, **kwargs)

    monkeypatch.setattr(detect, "open", refusing_open, raising=False)
    monkeypatch.setattr(files, "open", refusing_open, raising=False)
    db = tmp_path / "s.duckdb"
    code = main(["ingest", *(sorted(map(str, folder.iterdir())) if named else [str(folder)]), "--db", str(db)])
    captured = capsys.readouterr()
    assert code == ExitCode.BAD_INPUT, captured.err
    assert "pd-b.jsonl: " in captured.err and "permission" in captured.err.lower()
    with store.connect(db) as con:
        assert con.execute("select status, reason ilike '%permission%' from ingested_files where path = ?",
                           [str(locked)]).fetchall() == [("unreadable", True)]
        assert {r[0] for r in con.execute("select run_id from runs").fetchall()} == {"pd-a", "pd-c"}


def test_morning_names_the_files_it_could_not_load_and_exits_2(tmp_path, capsys):
    folder = tmp_path / "night"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(jsonl(bases.native("mo-a")))
    (folder / "b.jsonl.gz").write_bytes(gzip.compress(jsonl(bases.native("mo-b")), mtime=0)[:150])
    out = tmp_path / "out"
    code = main(["morning", str(folder), "--db", str(tmp_path / "m.duckdb"), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == ExitCode.BAD_INPUT, captured.err
    assert "b.jsonl.gz: the gzip stream ends early" in captured.err
    html = (out / "morning.html").read_text()  # the reports are written, and say what they leave out
    assert "Files that could not be loaded: 1" in html and "b.jsonl.gz" in html and "ends early" in html


def test_a_staging_step_out_of_memory_names_the_memory_limit(tmp_path, monkeypatch):
    """An out-of-memory error inside a format's staging SQL is the memory limit's, not a broken format's."""
    (tmp_path / "big.json").write_bytes(json.dumps(bases.langfuse("oom-lf")).encode())

    def staging_out_of_memory(con):
        raise duckdb.OutOfMemoryException("failed to allocate data of size 256.0 MiB (1.6 GiB/1.8 GiB used)")

    monkeypatch.setattr(FORMATS["langfuse"], "stage", staging_out_of_memory)
    with store.connect(tmp_path / "s.duckdb") as con:
        report = ingest(con, [tmp_path / "big.json"])
    assert [f.status for f in report.files] == ["failed"]
    assert "RECONCILE_MEMORY_LIMIT" in report.files[0].notes[0] and "staging SQL" not in report.files[0].notes[0]
