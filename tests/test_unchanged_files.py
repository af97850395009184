"""An unchanged file is recognised by its size and modification time, without being read again.

Only a stamp old enough to trust counts (as git treats a "racily clean" index entry): a file
changed within two seconds of being read is hashed again the next time, so a same-size rewrite
in the same clock tick is never missed.
"""

from __future__ import annotations

import os
import time

from journals import journal_file
from reconcile.ingest import files
from reconcile.ingest.driver import ingest


def _age(path, seconds: float = 60) -> None:
    past = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(past, past))


def test_an_old_unchanged_file_is_not_read_again(con, tmp_path, monkeypatch):
    journal = journal_file(tmp_path / "j.jsonl")
    _age(journal)
    assert ingest(con, [journal]).files[0].status == "loaded"
    assert con.execute("select mtime_ns from ingested_files").fetchall() == [(journal.stat().st_mtime_ns,)]

    def no_reading(path):
        raise AssertionError(f"{path} was read again")

    monkeypatch.setattr("reconcile.ingest.driver.inspect", no_reading)
    monkeypatch.setattr("reconcile.formats.detect.detect", no_reading)
    again = ingest(con, [journal])
    assert [(f.status, f.format) for f in again.files] == [("unchanged", "native")]


def test_a_fresh_file_is_hashed_again_and_its_stamp_kept_once_it_is_old(con, tmp_path):
    journal = journal_file(tmp_path / "j.jsonl")  # just written: its stamp is not yet trusted
    ingest(con, [journal])
    assert con.execute("select mtime_ns from ingested_files").fetchall() == [(None,)]
    _age(journal)
    assert ingest(con, [journal]).files[0].status == "unchanged"  # hashed: same content
    assert con.execute("select mtime_ns from ingested_files").fetchall() == [(journal.stat().st_mtime_ns,)]


def test_a_same_size_rewrite_in_the_same_tick_is_not_missed(con, tmp_path):
    journal = journal_file(tmp_path / "j.jsonl", runs=("aaaa",))
    ingest(con, [journal])
    stamp = journal.stat().st_mtime_ns
    journal.write_text(journal.read_text().replace("aaaa", "bbbb"))  # same size
    os.utime(journal, ns=(stamp, stamp))  # and the same modification time, as a coarse clock would give
    result = ingest(con, [journal]).files[0]
    assert result.status == "replaced"
    assert con.execute("select distinct run_id from runs").fetchall() == [("bbbb",)]


def test_a_changed_old_file_is_read(con, tmp_path):
    journal = journal_file(tmp_path / "j.jsonl", runs=("aaaa",))
    _age(journal)
    ingest(con, [journal])
    journal.write_text(journal.read_text().replace("aaaa", "cccc"))
    assert ingest(con, [journal]).files[0].status == "replaced"
    assert files.stamp(journal) is None  # just written: not trusted yet


def test_unchanged_files_in_a_batch_are_not_read_either(con, tmp_path, monkeypatch):
    """Files of a format that loads in batches follow the first file of their batch unopened when unchanged.

    Only the first file of a batch used to be held to its stamp; the rest were read, hashed and
    re-stamped one query each (2,000 unchanged sessions cost two seconds for nothing).
    """
    folder = tmp_path / "night"
    folder.mkdir()
    journals = [journal_file(folder / f"{name}.jsonl", runs=(name,)) for name in ("aaaa", "bbbb", "cccc", "dddd")]
    for journal in journals:
        _age(journal)
    assert {f.status for f in ingest(con, [folder]).files} == {"loaded"}
    new = journal_file(folder / "bbbb-2.jsonl", runs=("eeee",))  # sorts among the old ones
    read = []
    original = files.inspect
    monkeypatch.setattr("reconcile.ingest.driver.inspect", lambda path: read.append(path.name) or original(path))
    again = ingest(con, [folder])
    assert read == [new.name]
    assert sorted((os.path.basename(f.path), f.status) for f in again.files) == sorted(
        [(j.name, "unchanged") for j in journals] + [(new.name, "loaded")])


def test_fresh_files_of_a_batch_are_stamped_together_once_old(con, tmp_path):
    folder = tmp_path / "night"
    folder.mkdir()
    journals = [journal_file(folder / f"{name}.jsonl", runs=(name,)) for name in ("aaaa", "bbbb", "cccc")]
    ingest(con, [folder])
    assert con.execute("select count(mtime_ns) from ingested_files").fetchall() == [(0,)]
    for journal in journals:
        _age(journal)
    assert {f.status for f in ingest(con, [folder]).files} == {"unchanged"}
    assert sorted(con.execute("select mtime_ns from ingested_files").fetchall()) == sorted(
        (j.stat().st_mtime_ns,) for j in journals)
