"""Which name DuckDB reads a file by: its own path when DuckDB takes it literally, else a link of ours.

A link a file cost up to a quarter of a millisecond (half a second for 2,000 small sessions). A name
with a glob or hive-partition character, or a compression suffix, is still read through a link
(``tests/hostile`` plants such names in every format); an I/O error that names a file read by its
own path is still that file's failure, not the store's.
"""

from __future__ import annotations

import os

import duckdb

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
