"""``reconcile sql`` reads the store and nothing else: each way out is refused, and nothing is written or fetched.

The statement check gives the plain refusal; the connection (read-only, no file or network
access, no extension loading, settings locked) is what holds even for a statement that slips
past it — several cases below reach DuckDB and are stopped there.
"""

from __future__ import annotations

import os
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
    folder = tmp_path_factory.mktemp("sqlro")
    db = folder / "store.duckdb"
    with store.connect(db) as con:
        ingest(con, [journal_file(folder / "j.jsonl")])
    return db


OUT = "/tmp/reconcile-sql-escape-test"
REFUSED = {
    "attach": f"attach '{OUT}.duckdb' as other",
    "copy": f"copy runs to '{OUT}.csv'",
    "explain analyze copy": f"explain analyze copy (select * from runs) to '{OUT}.csv'",
    "export database": f"export database '{OUT}'",
    "install": "install httpfs",
    "explain analyze install": "explain analyze install httpfs",
    "load": "load httpfs",
    "explain analyze load": "explain analyze load httpfs",
    "set": "set enable_external_access = true",
    "explain analyze set": "explain analyze set enable_external_access = true",
    "reset": "reset lock_configuration",
    "pragma": "pragma database_list",
    "call": "call pragma_version()",
    "multiple statements": "select 1; select 2",
    "create table": "create table t as select 1",
    "explain analyze create": "explain analyze create table t as select 1",
    "insert": "insert into runs select * from runs",
    "delete": "delete from runs",
    "update": "update runs set agent = 'x'",
    "drop": "drop view run_view",
    "checkpoint": "checkpoint",
    "detach": "detach memory",
    "use": "use memory",
    "create secret": "create secret s (type s3, key_id 'a', secret 'b')",
    "explain analyze create secret": "explain analyze create secret (type s3, key_id 'a', secret 'b')",
    "read_text": "select * from read_text('/etc/passwd')",
    "read_csv": "select * from read_csv('/etc/passwd')",
    "read_json url": "select * from read_json('http://127.0.0.1:9/x.json')",
    "parquet url": "select * from 'https://127.0.0.1:9/x.parquet'",
    "read_blob": "select * from read_blob('/etc/hostname')",
    "glob": "select * from glob('/etc/*')",
    "file as table": "select * from '/etc/passwd'",
    "sniff_csv": "select * from sniff_csv('/etc/passwd')",
    "secret setting": "select current_setting('s3_secret_access_key')",
    "secrets": "select * from duckdb_secrets()",
    "extensions": "select * from duckdb_extensions()",
}


@pytest.mark.parametrize("name", REFUSED)
def test_each_way_out_is_refused(night, capsys, name):
    before = {p for p in os.listdir("/tmp") if p.startswith("reconcile-sql-escape-test")}
    capsys.readouterr()
    code = main(["sql", REFUSED[name], "--db", str(night)])
    err = capsys.readouterr().err
    assert code == ExitCode.BAD_INPUT, err
    assert err.startswith("error: ") and "internal error" not in err
    assert {p for p in os.listdir("/tmp") if p.startswith("reconcile-sql-escape-test")} == before


def test_the_store_is_unchanged_and_reads_still_work(night, capsys):
    capsys.readouterr()
    assert main(["sql", "select count(*) as runs from runs", "--db", str(night), "--csv"]) == 0
    assert capsys.readouterr().out.splitlines() == ["runs", "1"]
    assert main(["sql", "explain analyze select count(*) from steps", "--db", str(night)]) == 0
    assert main(["sql", "with x as (select 1 as one) select * from x", "--db", str(night)]) == 0


def test_refusals_say_what_was_refused(night, capsys):
    capsys.readouterr()
    main(["sql", REFUSED["explain analyze copy"], "--db", str(night)])
    assert "EXPLAIN COPY statements are refused" in capsys.readouterr().err
    main(["sql", REFUSED["read_text"], "--db", str(night)])
    assert "files, URLs, extensions and settings are out of its reach" in capsys.readouterr().err


def test_other_read_only_commands_cannot_reach_files_either(night):
    with store.connect(night, read_only=True) as con:
        with pytest.raises(Exception, match="disabled by configuration"):
            con.execute("select * from read_text('/etc/passwd')").fetchall()
        with pytest.raises(Exception, match="locked"):
            con.execute("set enable_external_access = true")
