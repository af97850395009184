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
