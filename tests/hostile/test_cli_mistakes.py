"""Every command-line mistake exits 2 with a message naming the value and the fix — never a traceback."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from journals import journal_file  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.cli import main  # noqa: E402
from reconcile.errors import ExitCode  # noqa: E402
from reconcile.ingest.driver import ingest  # noqa: E402


@pytest.fixture(scope="module")
def night(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("mistakes")
    (folder / "afile").write_text("x")
    (folder / "adir").mkdir()
    db = folder / "store.duckdb"
    with store.connect(db) as con:
        ingest(con, [journal_file(folder / "j.jsonl")])
    return folder


MISTAKES = [  # (arguments, with {dir} for the fixture's folder; fragments the message must hold)
    (["ingest", "{dir}/nope.jsonl"], ["nope.jsonl", "Give a journal file"]),
    (["ingest", "{dir}/nope*.jsonl"], ["nope*.jsonl", "Check the pattern"]),
    (["ingest", "{dir}/j.jsonl", "--format", "klingon"], ["'klingon'", "Known formats"]),
    (["ingest", "{dir}/j.jsonl", "--format", "langfuse"], ["j.jsonl", "Leave --format out"]),
    (["ingest", "{dir}/afile"], ["afile", "--format NAME"]),
    (["check", "--since", "yesterday-ish"], ["'yesterday-ish'", "2026-11-28"]),
    (["check", "--until", "2026-13-45"], ["'2026-13-45'"]),
    (["check", "--set", "nope=1"], ["'nope'", "Settings:"]),
    (["check", "--set", "result_bound_tokens=many"], ["'many'", "whole number"]),
    (["check", "--checks-dir", "{dir}/no-such-folder"], ["no-such-folder", "no such folder"]),
    (["check", "--config", "{dir}/missing.toml"], ["missing.toml", "leave --config out"]),
    (["cost", "--by", "planet"], ["'planet'", "choose one of"]),
    (["cost", "--cost-source", "vibes"], ["'vibes'", "choose one of"]),
    (["usage", "--by", "planet"], ["'planet'", "choose one of"]),
    (["show", "no-such-run"], ["'no-such-run'", "List ids with"]),
    (["show", "r1", "--step", "99"], ["no step 99", "reconcile show r1"]),
    (["sql", "selec 1"], ["does not parse"]),
    (["sql", "select * from no_such_table"], ["no_such_table"]),
    (["reprice", "--as-of", "someday"], ["'someday'"]),
    (["reprice", "--prices", "{dir}/no-prices.csv"], ["no-prices.csv", "does not exist"]),
    (["prices", "add", "{dir}/adir"], ["adir", "is a folder"]),
    (["report", "finance", "--out", "{dir}/adir"], ["adir", "is a folder"]),
    (["report", "morning", "--out", "{dir}/afile/x.html"], ["afile", "is a file, not a folder"]),
    (["morning", "{dir}/j.jsonl", "--out", "{dir}/afile"], ["afile", "is a file, not a folder"]),
    (["summary", "--db", "{dir}/typo.duckdb"], ["typo.duckdb", "No store at"]),
    (["check", "--db", "{dir}/j.jsonl"], ["j.jsonl", "not a reconcile store"]),
]


@pytest.mark.parametrize("args,fragments", MISTAKES, ids=[" ".join(a[:3]) for a, _ in MISTAKES])
def test_a_mistake_is_a_clear_error(night, capsys, args, fragments):
    argv = [a.replace("{dir}", str(night)) for a in args]
    if "--db" not in argv:
        argv += ["--db", str(night / "store.duckdb")]
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == ExitCode.BAD_INPUT, err
    assert err.startswith("error: ") and "Traceback" not in err and "internal error" not in err
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_a_memory_limit_that_is_not_an_amount_is_named(night, monkeypatch, capsys):
    monkeypatch.setenv("RECONCILE_MEMORY_LIMIT", "lots")
    assert main(["summary", "--db", str(night / "store.duckdb")]) == ExitCode.BAD_INPUT
    error = capsys.readouterr().err
    assert "RECONCILE_MEMORY_LIMIT='lots'" in error and "2GB" in error


def test_the_memory_limit_reaches_duckdb(night, monkeypatch):
    monkeypatch.setenv("RECONCILE_MEMORY_LIMIT", "1GB")
    with store.connect(night / "store.duckdb", read_only=True) as con:
        assert con.execute("select current_setting('memory_limit')").fetchall() == [("953.6 MiB",)]
