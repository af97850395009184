"""The store is protected: what is not a store is refused, a newer one is not rewritten, and damage,
a lock or a full disk give a clear error (exit 2) and never a half-written store."""

from __future__ import annotations

import resource
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from conftest import SAMPLE_NIGHT  # noqa: E402
from journals import journal_file  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.cli import main  # noqa: E402
from reconcile.errors import ExitCode  # noqa: E402

RECONCILE = [sys.executable, "-m", "reconcile.cli"]


def _cli(capsys, *args) -> tuple[int, str]:
    capsys.readouterr()
    code = main([str(a) for a in args])
    return code, capsys.readouterr().err


@pytest.mark.parametrize("name,content", [
    ("night.jsonl", b'{"v":1,"type":"run_start"}\n'), ("usage.csv", b"a,b\n1,2\n"), ("export.json", b'{"data": []}'),
    ("table.parquet", b"PAR1" + b"\x00" * 64 + b"PAR1"), ("empty.duckdb", b""),
])
def test_a_file_that_is_not_a_store_is_refused_and_left_alone(tmp_path, capsys, name, content):
    target = tmp_path / name
    target.write_bytes(content)
    journal = journal_file(tmp_path / "j.jsonl")
    for args in (["ingest", journal], ["check"], ["summary"], ["morning", journal.parent, "--out", tmp_path / "out"]):
        code, err = _cli(capsys, *args, "--db", target)
        assert code == ExitCode.BAD_INPUT, err
        assert str(target) in err and "not a reconcile store" in err
    assert target.read_bytes() == content
    assert not (tmp_path / (name + ".wal")).exists()


def test_a_folder_as_the_store_is_refused(tmp_path, capsys):
    code, err = _cli(capsys, "ingest", journal_file(tmp_path / "j.jsonl"), "--db", tmp_path)
    assert code == ExitCode.BAD_INPUT and "is a folder, not a store" in err


def test_a_store_from_a_newer_schema_is_refused_not_rewritten(tmp_path, capsys):
    db = tmp_path / "newer.duckdb"
    with store.connect(db) as con:
        con.execute("insert into _migrations values ('m999_from_the_future', now())")
    before = db.read_bytes()
    for args in (["ingest", journal_file(tmp_path / "j.jsonl")], ["check"], ["sql", "select 1"]):
        code, err = _cli(capsys, *args, "--db", db)
        assert code == ExitCode.BAD_INPUT and "written by a newer reconcile" in err and "m999_from_the_future" in err
    assert db.read_bytes() == before


@pytest.mark.parametrize("damage", ["truncated", "garbled"])
def test_a_damaged_store_is_a_clear_error(tmp_path, capsys, damage):
    db = tmp_path / "damaged.duckdb"
    with store.connect(db) as con:
        con.execute("checkpoint")
    data = bytearray(db.read_bytes())
    if damage == "truncated":
        data = data[: len(data) // 3]
    else:
        data[4096:8192] = b"\xa5" * 4096  # keep DuckDB's magic, ruin its headers
    db.write_bytes(bytes(data))
    for args in (["check"], ["ingest", journal_file(tmp_path / "j.jsonl")]):
        code, err = _cli(capsys, *args, "--db", db)
        assert code == ExitCode.BAD_INPUT, err
        assert "internal error" not in err and str(db) in err


def test_a_locked_store_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("RECONCILE_LOCK_TIMEOUT", "0.5")  # wait briefly (the default is 30 s), then say so
    db = tmp_path / "locked.duckdb"
    store.connect(db).close()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import duckdb, sys, time
        con = duckdb.connect({str(db)!r})
        print("holding", flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        for args in (["ingest", journal_file(tmp_path / "j.jsonl")], ["check"]):
            code, err = _cli(capsys, *args, "--db", db)
            assert code == ExitCode.BAD_INPUT, err
            assert "in use by another process (waited" in err and "RECONCILE_LOCK_TIMEOUT" in err
    finally:
        holder.kill()
        holder.wait()


def _limit_file_size():  # the store may not grow past 3 MB: a full disk, as DuckDB sees it
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (3_000_000, 3_000_000))


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_a_full_disk_is_a_clear_error_and_leaves_the_store_as_it_was(tmp_path):
    db = tmp_path / "full.duckdb"
    (tmp_path / "small").mkdir()
    small = journal_file(tmp_path / "small" / "j.jsonl")
    assert subprocess.run([*RECONCILE, "ingest", small, "--db", db], capture_output=True).returncode == 0
    night = tmp_path / "night"
    shutil.copytree(SAMPLE_NIGHT, night)
    result = subprocess.run([*RECONCILE, "ingest", night, "--db", db], capture_output=True, text=True,
                            preexec_fn=_limit_file_size)
    assert result.returncode == ExitCode.BAD_INPUT, result.stderr
    assert "Writing the store failed" in result.stderr and "Free disk space" in result.stderr
    assert "Traceback" not in result.stderr
    with duckdb.connect(str(db), read_only=True) as con:  # what was there before is there, whole
        assert con.execute("select count(*) from runs").fetchall()[0][0] >= 1
        paths = {row[0] for row in con.execute("select path from ingested_files").fetchall()}
        for path in paths:
            loaded = con.execute("select count(*) from runs where source_file = ?", [path]).fetchall()[0][0]
            assert loaded > 0, path  # a file's record is there only with its runs
    again = subprocess.run([*RECONCILE, "ingest", night, "--db", db], capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
