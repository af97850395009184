"""A full disk is never a success: on a small tmpfs, ingest, morning and export exit 2 and change nothing.

A real file system that fills up (a 12 MB tmpfs mounted for the test, filled to the room each test leaves): DuckDB's commit can succeed
there while the store file cannot grow, which a size limit on the process does not show. Mounting
needs root (CI runs as root); elsewhere the test is skipped with the reason.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from reconcile.errors import ExitCode

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

SAMPLE_NIGHT = Path(__file__).resolve().parents[2] / "sample_runs"
RECONCILE = [sys.executable, "-m", "reconcile.cli"]
SIZE_MB = 12
NIGHT_ROOM_KB = 6 * 1024  # room a whole night's log fits in, beside which its store does not


@pytest.fixture
def small_disk(tmp_path):
    mount = tmp_path / "small"
    mount.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE_MB}m", "tmpfs", str(mount)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a {SIZE_MB} MB tmpfs here (needs root): {result.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path, leave_kb: int) -> None:
    """Fill ``disk`` so that about ``leave_kb`` KB are free."""
    stats = os.statvfs(disk)
    free = stats.f_bavail * stats.f_frsize
    (disk / "filler").write_bytes(b"\0" * max(0, free - leave_kb * 1024))


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _run(*args) -> subprocess.CompletedProcess:
    return subprocess.run([*RECONCILE, *map(str, args)], capture_output=True, text=True)


def _store_facts(db: Path) -> list:
    result = _run("sql", "select (select count(*) from runs), (select count(*) from steps), "
                  "(select count(*) from ingested_files), (select coalesce(sum(loaded), 0) from ingested_files)",
                  "--db", db, "--json")
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_ingest_onto_a_full_disk_exits_2_and_leaves_the_store_as_it_was(small_disk, tmp_path):
    db = small_disk / "night.duckdb"
    first = tmp_path / "first"
    first.mkdir()
    shutil.copy(SAMPLE_NIGHT / "2026-11-28" / "coder.jsonl", first)
    assert _run("ingest", first, "--db", db).returncode == 0
    before = _store_facts(db)
    _fill(small_disk, leave_kb=1000)  # where it fails (before, in a commit, in a checkpoint) depends on the room
    result = _run("ingest", SAMPLE_NIGHT, "--db", db)
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    assert "Writing the store failed" in result.stderr and "othing" in result.stderr
    assert "No space left on device" in result.stderr and "Traceback" not in result.stderr
    (small_disk / "filler").unlink()
    assert _store_facts(db) == before  # exactly as before: no file half there, no record without its rows
    again = _run("ingest", SAMPLE_NIGHT / "provider", "--db", db)  # with room, the store takes what fits
    assert again.returncode == 0, again.stderr


def test_a_commit_that_fits_but_cannot_be_written_into_the_store_is_undone(small_disk):
    """The night's log (about 4 MB) fits the 6 MB left on the disk; the store file cannot take it in beside it: DuckDB says
    "committed", and on close would give the store up silently. The unit is undone: no runs, an empty log."""
    db = small_disk / "new.duckdb"
    _fill(small_disk, leave_kb=NIGHT_ROOM_KB)
    result = _run("ingest", SAMPLE_NIGHT, "--db", db)
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    assert "while saving" in result.stderr and "was saved: the store is exactly as it was before" in result.stderr
    wal = Path(f"{db}.wal")
    assert not wal.exists() or wal.stat().st_size == 0
    # as it was before: there was no store, and a store this command made and saved nothing into is not left (issue 61)
    assert not db.exists() or '"(SELECT count_star() FROM runs)": 0' in _store_facts(db).replace("\n", "")


def _small_night(tmp_path: Path) -> Path:
    night = tmp_path / "night"
    night.mkdir()
    shutil.copy(SAMPLE_NIGHT / "2026-11-28" / "triage.jsonl", night)
    return night


def test_morning_onto_a_full_disk_exits_2(small_disk, tmp_path):
    _fill(small_disk, leave_kb=300)
    result = _run("morning", _small_night(tmp_path), "--db", small_disk / "m.duckdb", "--out", small_disk / "out")
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    assert "No space left on device" in result.stderr and "Traceback" not in result.stderr


def test_morning_reports_onto_a_full_disk_exit_2_and_keep_the_old_reports(small_disk, tmp_path):
    db, night = tmp_path / "m.duckdb", _small_night(tmp_path)
    out = small_disk / "out"
    assert _run("morning", night, "--db", db, "--out", out).returncode in (ExitCode.OK, ExitCode.FINDINGS)
    reports = _files(out)
    _fill(small_disk, leave_kb=40)
    result = _run("morning", night, "--db", db, "--out", out)  # the same night: the reports are written afresh
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    assert "No space left on device" in result.stderr and "Traceback" not in result.stderr
    assert _files(out).keys() == reports.keys()  # no half-written report, no stray temporary file


def test_export_onto_a_full_disk_exits_2_and_leaves_the_dataset_as_it_was(small_disk, tmp_path):
    db = tmp_path / "s.duckdb"
    assert _run("ingest", SAMPLE_NIGHT / "2026-11-28" / "coder.jsonl", "--db", db).returncode == 0
    dataset = small_disk / "dataset"
    assert _run("export", "--db", db, "--to", dataset).returncode == 0
    before = _files(dataset)
    assert _run("ingest", SAMPLE_NIGHT, "--db", db).returncode == 0  # more days and rows to export
    _fill(small_disk, leave_kb=60)
    result = _run("export", "--db", db, "--to", dataset)
    assert result.returncode == ExitCode.BAD_INPUT, result.stdout + result.stderr
    assert "Nothing in it was changed" in result.stderr and "No space left on device" in result.stderr
    assert _files(dataset) == before
    (small_disk / "filler").unlink()
    assert _run("export", "--db", db, "--to", dataset).returncode == 0
    assert _files(dataset) != before


def test_every_other_write_the_disk_refuses_is_exit_2_not_a_bug(small_disk, tmp_path):
    """A file system that refuses every write (remounted read-only: an I/O error DuckDB cannot write around)."""
    db = small_disk / "s.duckdb"
    assert _run("ingest", _small_night(tmp_path), "--db", db).returncode == 0
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    for command in (["ingest", SAMPLE_NIGHT / "provider"],):  # (check and reprice only read)
        result = _run(*command, "--db", db)
        assert result.returncode == ExitCode.BAD_INPUT, (command, result.stderr)
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr, (command, result.stderr)
