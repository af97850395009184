"""reconcile export --to DIR and --from-parquet DIR: the same answers from partitioned Parquet as from the store."""

from __future__ import annotations

import datetime as dt
import json
import re
import shutil

import pytest

from journals import StepClock, write_simple_run
from reconcile import store
from reconcile.engines.dataset import open_dataset
from reconcile.errors import ExitCode
from reconcile.engines.export import export
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out


@pytest.fixture(scope="module")
def exported(night_db, tmp_path_factory):
    folder = tmp_path_factory.mktemp("export") / "dataset"
    export(night_db, folder)
    return folder


def _without_time(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "checked_at"}


def test_check_from_parquet_gives_the_store_s_findings(cli, night_db, exported):
    ours = cli("check", "--json", "--exit-zero", "--db", night_db).json()
    theirs = cli("check", "--json", "--exit-zero", "--from-parquet", exported).json()
    assert _without_time(theirs) == _without_time(ours)
    assert sum(c["failures"] for c in ours["checks"]) > 0  # the sample night's planted findings, found in both


@pytest.mark.parametrize("command", [["cost", "--by", "model"], ["cost", "--by", "day", "--since", "2026-11-29"],
                                     ["usage", "--by", "model"], ["budgets", "--by", "agent"],
                                     ["usage", "--by", "day", "--until", "2026-11-28"]])
def test_money_and_limits_from_parquet_equal_the_store(cli, night_db, exported, command):
    ours = cli(*command, "--json", "--tz", "UTC", "--db", night_db)
    theirs = cli(*command, "--json", "--tz", "UTC", "--from-parquet", exported)
    assert theirs.code == ours.code == ExitCode.OK and theirs.json() == ours.json()


def test_reports_from_parquet_equal_the_store(cli, night_db, exported, tmp_path):
    for kind in ("finance", "morning"):
        cli("report", kind, "--out", tmp_path / f"{kind}-store.html", "--tz", "UTC", "--db", night_db)
        cli("report", kind, "--out", tmp_path / f"{kind}-parquet.html", "--tz", "UTC", "--from-parquet", exported)
        store, parquet = ((tmp_path / f"{kind}-{source}.html").read_text() for source in ("store", "parquet"))
        assert _without_generated_at(store) == _without_generated_at(parquet), kind


def test_the_notebook_api_reads_an_export_as_it_reads_the_store(night_db, exported):
    import reconcile

    with reconcile.connect(night_db) as store_rc, reconcile.open_dataset(exported) as dataset_rc:
        assert dataset_rc.steps("8f3a").equals(store_rc.steps("8f3a")) and dataset_rc.steps("8f3a").height > 12
        assert dataset_rc.runs().equals(store_rc.runs())
        assert dataset_rc.costs("agent").equals(store_rc.costs("agent"))
        assert dataset_rc.sql("select count(*) as n from runs where run_id = ?", ["8f3a"])["n"][0] == 1


def _without_generated_at(html: str) -> str:
    """The page less its "generated <minute>" stamp: two reports made a few seconds apart may straddle a minute."""
    stamped = re.subn(r"generated \d{4}-\d\d-\d\d \d\d:\d\d", "generated …", html)
    assert stamped[1] == 1, "the report carries one generated-at stamp"
    return stamped[0]


def test_layout_is_hive_by_day_and_the_manifest_counts_every_row(night_db, exported):
    manifest = json.loads((exported / "manifest.json").read_text())
    assert sorted(p.name for p in (exported / "steps").iterdir()) == ["day=2026-11-28", "day=2026-11-29"]
    with store.connect(night_db, read_only=True) as con:
        for table in ("runs", "steps", "tool_calls", "usage_buckets", "billed_costs", "ingested_files", "rejects"):
            assert manifest["tables"][table]["rows"] == con.execute(f"select count(*) from {table}").fetchall()[0][0]
        files = {row[0] for row in con.execute("select path from ingested_files").fetchall()}
    assert {f["path"] for f in manifest["source_files"]} == files
    assert manifest["schema_version"] >= 12 and manifest["partitioned_by"] == "day (UTC)"


def test_a_run_and_its_steps_share_one_day(exported):
    with open_dataset(exported) as con:
        split = con.execute("""select count(*) from (select run_id from read_parquet(?, hive_partitioning = true)
                               group by run_id having count(distinct day) > 1)""",
                            [str(exported / "steps" / "*" / "*.parquet")]).fetchall()[0][0]
        runs = con.execute("select count(*) from runs").fetchall()[0][0]
    assert split == 0 and runs == 300


def test_a_window_reads_only_the_days_that_can_hold_it(exported):
    since = dt.datetime(2026, 12, 1, tzinfo=dt.timezone.utc)  # the night is on the 28th and 29th; a day of margin
    with open_dataset(exported, since=since) as con:
        assert con.execute("select count(*) from runs").fetchall()[0][0] == 0  # pruned: no partition read
        assert con.execute("select count(*) from ingested_files").fetchall()[0][0] == 7  # not a day's fact: kept
    with open_dataset(exported, until=dt.datetime(2026, 11, 27, tzinfo=dt.timezone.utc)) as con:
        assert con.execute("select count(*) from runs").fetchall()[0][0] == 97  # the day after the window, kept


def _run_on(tmp_path, name: str, day: dt.datetime):
    path = tmp_path / f"{name}.jsonl"
    with Journal(path, clock=StepClock(day)) as journal:
        write_simple_run(journal, name)
    return path


def test_an_export_writes_again_only_the_days_that_changed(tmp_path):
    db, folder = tmp_path / "s.duckdb", tmp_path / "ds"
    with store.connect(db) as con:
        ingest(con, [_run_on(tmp_path, "monday", dt.datetime(2026, 11, 23, 9, tzinfo=dt.timezone.utc))])
    first = export(db, folder)
    assert first.written["steps"] == ["2026-11-23"]
    written_at = (folder / "steps" / "day=2026-11-23").stat().st_mtime_ns
    with store.connect(db) as con:
        ingest(con, [_run_on(tmp_path, "tuesday", dt.datetime(2026, 11, 24, 9, tzinfo=dt.timezone.utc))])
    second = export(db, folder)
    assert second.written["steps"] == ["2026-11-24"] and second.unchanged["steps"] == 1
    assert (folder / "steps" / "day=2026-11-23").stat().st_mtime_ns == written_at  # left as it was
    assert export(db, folder).written["runs"] == []  # nothing changed, nothing written
    with store.connect(db) as con:
        for table in ("tool_calls", "steps", "run_tools", "runs"):
            con.execute(f"delete from {table} where run_id = 'monday'")
    third = export(db, folder)
    assert third.removed["runs"] == ["2026-11-23"] and not (folder / "runs" / "day=2026-11-23").exists()
    with open_dataset(folder) as con:
        assert con.execute("select run_id from runs").fetchall() == [("tuesday",)]


def test_folder_names_are_data_not_patterns(cli, night_db, tmp_path):
    folder = tmp_path / "we[i]rd*" / "d?s 'x'"
    assert cli("export", "--to", folder, "--db", night_db).code == ExitCode.OK
    decoy = tmp_path / "weirdX"  # what the pattern would also match
    shutil.copytree(folder, decoy / "d?s 'x'")
    assert cli("check", "--json", "--exit-zero", "--from-parquet", folder).json()["runs"] == 300


@pytest.mark.parametrize("setup, message", [
    (lambda d: None, "does not exist"),
    (lambda d: d.mkdir(), "no manifest.json"),
    (lambda d: (d.mkdir(), (d / "manifest.json").write_text("{")), "not a readable export manifest"),
    (lambda d: (d.mkdir(), (d / "manifest.json").write_text('{"format": "reconcile-export", "schema_version": 1}')),
     "export again from the store with this version"),
])
def test_a_folder_that_is_not_a_current_export_is_refused(cli, tmp_path, setup, message):
    folder = tmp_path / "ds"
    setup(folder)
    result = cli("check", "--from-parquet", folder)
    assert result.code == ExitCode.BAD_INPUT and message in result.err and "Traceback" not in result.err


def test_export_refuses_a_file_or_a_folder_of_other_files(cli, night_db, tmp_path):
    assert "is a file" in cli("export", "--to", night_db, "--db", night_db).err
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    result = cli("export", "--to", tmp_path / "busy", "--db", night_db)
    assert result.code == ExitCode.BAD_INPUT and "has files but no manifest.json" in result.err
    assert (tmp_path / "busy" / "notes.txt").read_text() == "mine"


def test_a_corrupt_file_of_the_dataset_is_named_by_its_path_and_exits_2(cli, exported, tmp_path):
    """Issue 31: not exit 3 with the temporary link the dataset is read through in the message."""
    copy = tmp_path / "copy"
    shutil.copytree(exported, copy)
    broken = sorted((copy / "steps").glob("day=*/*.parquet"))[0]
    broken.write_bytes(b"not parquet at all")
    for command in (["cost"], ["check"]):
        result = cli(*command, "--from-parquet", copy)
        assert result.code == ExitCode.BAD_INPUT, (command, result.err)
        assert str(broken) in result.err and "reconcile-dataset-" not in result.err, result.err
        assert "reconcile export --to" in result.err


def test_a_dataset_is_named_by_a_path_or_a_file_url_and_a_remote_file_system_is_refused(cli, night_db, tmp_path):
    """Issue 31: file:// was refused; s3a://… became a local folder named 's3a:' (writing) or 'no manifest' (reading).
    Object stores are read and written now (test_object_store); HDFS and web servers are refused in words."""
    url = (tmp_path / "by url").as_uri()  # file:///…/by%20url
    assert cli("export", "--db", night_db, "--to", url).code == ExitCode.OK
    assert (tmp_path / "by url" / "manifest.json").is_file()
    assert cli("cost", "--from-parquet", url, "--json").json()["total"]["runs"] == 300
    for command in (["export", "--db", night_db, "--to"], ["cost", "--from-parquet"]):
        for url in ("hdfs://namenode/agent-runs", "https://example.org/agent-runs"):
            refused = cli(*command, url)
            assert refused.code == ExitCode.BAD_INPUT and f"{url}: datasets on" in refused.err
    assert not list(tmp_path.glob("hdfs*")) and not list(tmp_path.glob("https*"))  # no local folder named hdfs:
    assert "another host" in cli("cost", "--from-parquet", "file://elsewhere/data").err


def _without_column(folder, table: str, column: str) -> None:
    """Rewrite ``table``'s files without ``column``: a dataset as another version of reconcile wrote it."""
    import duckdb

    for path in sorted((folder / table).glob("day=*/*.parquet")):
        with duckdb.connect() as con:
            con.execute(f"copy (select * exclude ({column}) from read_parquet(?)) to '{path}.new' (format parquet)",
                        [str(path)])
        path.with_name(path.name + ".new").replace(path)


def test_a_dataset_missing_a_column_names_it_and_exits_2(cli, exported, tmp_path):
    """Issue 31: a schema mismatch names the column, not a binder error and exit 3."""
    copy = tmp_path / "older"
    shutil.copytree(exported, copy)
    _without_column(copy, "runs", "agent")
    result = cli("cost", "--from-parquet", copy)
    assert result.code == ExitCode.BAD_INPUT, result.err
    assert f"--from-parquet {copy}: the files of table runs have no column agent" in " ".join(result.err.split())
