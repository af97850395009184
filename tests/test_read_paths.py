"""Which name DuckDB reads a file by: its own path when DuckDB takes it literally, else a link of ours.

A link a file cost up to a quarter of a millisecond (half a second for 2,000 small sessions). A name
with a glob or hive-partition character, or a compression suffix, is still read through a link
(``tests/hostile`` plants such names in every format); an I/O error that names a file read by its
own path is still that file's failure, not the store's.
"""

from __future__ import annotations

import os

import duckdb
import pytest

from journals import journal_file
from reconcile.ingest.driver import ingest
from reconcile.ingest.failures import store_failure
from reconcile.ingest.files import Aliases, inspect


def test_plain_names_are_read_by_their_own_path_and_others_through_a_link(tmp_path):
    plain = journal_file(tmp_path / "night-1.jsonl", runs=("aaaa",))
    starred = journal_file(tmp_path / "night*[2].jsonl", runs=("bbbb",))
    hive = journal_file(tmp_path / "day=3.jsonl", runs=("cccc",))
    named_gz = journal_file(tmp_path / "plain-text.gz", runs=("dddd",))  # not gzip inside, whatever its name says
    sources = [inspect(path) for path in (plain, starred, hive, named_gz)]
    with Aliases(sources) as aliased:
        aliases = [source.alias for source in aliased]
        assert aliases[0] == str(plain)
        assert all(os.path.dirname(alias) != str(tmp_path) for alias in aliases[1:])
        assert all(os.path.islink(alias) for alias in aliases[1:])


def test_a_folder_of_plain_names_makes_no_link(con, tmp_path, monkeypatch):
    for name in ("aaaa", "bbbb", "cccc"):
        journal_file(tmp_path / f"{name}.jsonl", runs=(name,))
    made = []
    monkeypatch.setattr("os.symlink", lambda *args: made.append(args))
    report = ingest(con, [tmp_path])
    assert made == []
    assert [f.status for f in report.files] == ["loaded"] * 3
    assert con.execute("select count(*) from runs").fetchall() == [(3,)]


def test_an_io_error_naming_a_file_read_by_its_own_path_is_the_files():
    error = duckdb.IOException("IO Error: Could not read file \"/data/night/a.jsonl\": Input/output error")
    assert not store_failure(error, ["/tmp/reconcile-x", "/data/night/a.jsonl"])
    assert store_failure(duckdb.IOException("IO Error: could not write to /store.duckdb.wal"), ["/data/night/a.jsonl"])


def test_files_inspected_two_at_a_time_are_each_their_own_in_order(tmp_path):
    """The driver inspects a batch's files on two threads: each result is the file's own (hash, lines, a raw
    carriage return, an unreadable file's reason) and in the order given, as one at a time gives them."""
    import gzip
    import hashlib

    from reconcile.ingest.driver import _inspected

    paths = []
    for number in range(9):
        path = tmp_path / f"f{number}.jsonl"
        body = "".join(f'{{"n":{i}}}\n' for i in range(number * 1000)) + ("tail\rx\n" if number == 4 else "")
        if number == 6:
            path = path.with_suffix(".jsonl.gz")
            path.write_bytes(gzip.compress(body.encode()))
        else:
            path.write_text(body)
        paths.append(path)
    paths.append(tmp_path / "gone.jsonl")  # not there: a reason, not an exception
    together = _inspected(paths)
    assert [s.path for s in together] == paths
    for source, path in zip(together[:-1], paths):
        assert source.sha256 == hashlib.sha256(path.read_bytes()).hexdigest() and source.error is None
    assert [s.lines for s in together[:-1]] == [n * 1000 + (1 if n == 4 else 0) for n in range(9)]
    assert [s.raw_cr for s in together[:-1]] == [n == 4 for n in range(9)] and together[6].gzip
    assert together[-1].error and not together[-1].sha256


def _night_of_oddities(folder, broken):
    """New files of every shape the reader must get right: plain, gzip, a raw CR, no last newline, a bad line,
    two files holding the same run, and (``broken``) a truncated gzip stream."""
    import gzip

    journal_file(folder / "plain.jsonl", runs=("aaaa", "bbbb"))
    packed = journal_file(folder / "packed.src", runs=("cccc",))
    (folder / "packed.jsonl.gz").write_bytes(gzip.compress(packed.read_bytes()))
    packed.unlink()
    text = journal_file(folder / "cr.src", runs=("dddd",)).read_text()
    (folder / "cr.src").unlink()
    (folder / "raw-cr.jsonl").write_text(text.replace(',"type"', ',\r"type"', 1).replace("\n", "\r\n", 2))
    # a last line still being written (no newline yet): a reject that says so, as only the last newline can tell
    (folder / "no-newline.jsonl").write_text(journal_file(folder / "e.src", runs=("eeee",)).read_text()
                                             + '{"v":1,"type":"step","run_')
    (folder / "e.src").unlink()
    if broken:
        (folder / "broken.jsonl.gz").write_bytes(gzip.compress(text.encode())[:-12])
    (folder / "bad-line.jsonl").write_text(journal_file(folder / "f.src", runs=("ffff",)).read_text() + "{not json\n")
    (folder / "f.src").unlink()
    journal_file(folder / "again.jsonl", runs=("aaaa",))


@pytest.mark.parametrize("broken", [False, True])
def test_new_files_read_while_they_are_inspected_load_as_inspected_first(tmp_path, monkeypatch, broken):
    """New files of a line format are read while they are hashed and counted (issue 48): the store must hold
    exactly what inspecting first gives — files, hashes, line counts, rejects, runs, steps. A batch with a file
    that cannot be read falls back to inspecting first, with the same result."""
    import hashlib

    from reconcile import store
    from reconcile.ingest import driver

    folder = tmp_path / "night"
    folder.mkdir()
    _night_of_oddities(folder, broken)
    used = []
    beside = driver._load_beside_inspection

    def spying(con, group, fmt, forced):
        result = beside(con, group, fmt, forced)
        used.append(result is not None)
        return result

    def snapshot(path):
        with store.connect(path) as con:
            return {table: con.execute(f"select * exclude ({skip}) from {table} order by all").fetchall()
                    for table, skip in (("ingested_files", "ingested_at, mtime_ns"), ("rejects", "ingested_at"),
                                        ("runs", "source_file"), ("steps", "run_id"))}

    with monkeypatch.context() as patch:
        patch.setattr(driver, "_load_beside_inspection", spying)
        with store.connect(tmp_path / "beside.duckdb") as con:
            report = ingest(con, [folder])
    with monkeypatch.context() as patch:
        patch.setattr(driver, "_load_beside_inspection", lambda *args: None)
        with store.connect(tmp_path / "first.duckdb") as con:
            ingest(con, [folder])
    assert used == [not broken]  # the batch took the path under test, or (an unreadable file) fell back
    assert snapshot(tmp_path / "beside.duckdb") == snapshot(tmp_path / "first.duckdb")
    by_name = {os.path.basename(f.path): f for f in report.files}
    assert by_name["broken.jsonl.gz"].status == "unreadable" if broken else "broken.jsonl.gz" not in by_name
    assert by_name["raw-cr.jsonl"].loaded and by_name["bad-line.jsonl"].rejected == 1
    with store.connect(tmp_path / "beside.duckdb", read_only=True) as con:
        recorded = dict(con.execute("select path, sha256 from ingested_files where status = 'loaded'").fetchall())
        truncated = con.execute("select reason from rejects where path like '%no-newline.jsonl'").fetchall()
    assert truncated == [("truncated last line: no newline and not valid JSON (the writer stopped mid-line)",)]
    for path, sha in recorded.items():
        assert sha == hashlib.sha256(open(path, "rb").read()).hexdigest(), path
