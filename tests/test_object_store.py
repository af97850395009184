"""Datasets in an object store (issue 31, part 3): export --to s3://… and --from-parquet s3a://… against a
local S3-compatible server (moto's, started here on loopback; nothing leaves the machine)."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from journals import StepClock, write_simple_run
from reconcile import store
from reconcile.engines import object_store
from reconcile.engines.export import export
from reconcile.errors import BadInput, ExitCode
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

BUCKET = "agent-runs"


@pytest.fixture(scope="module")
def s3_server():
    from moto.server import ThreadedMotoServer

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture(autouse=True)
def s3(s3_server, monkeypatch):
    """Every test talks to the local server, with throwaway credentials, never to an instance's metadata."""
    for name, value in {"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_DEFAULT_REGION": "us-east-1",
                        "AWS_ENDPOINT_URL": s3_server, "AWS_EC2_METADATA_DISABLED": "true"}.items():
        monkeypatch.setenv(name, value)
    import boto3

    client = boto3.client("s3", endpoint_url=s3_server)
    if BUCKET not in [b["Name"] for b in client.list_buckets()["Buckets"]]:
        client.create_bucket(Bucket=BUCKET)
    return client


@pytest.fixture(scope="module")
def local_export(night_db, tmp_path_factory):
    folder = tmp_path_factory.mktemp("local") / "dataset"
    export(night_db, folder)
    return folder


def _objects(client, prefix: str) -> dict[str, tuple[str, object]]:
    listing = client.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])
    return {item["Key"][len(prefix):]: (item["ETag"], item["LastModified"]) for item in listing}


def _without_time(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "checked_at"}


def test_an_export_to_s3_is_read_back_with_the_local_dataset_s_answers(cli, night_db, local_export, s3, tmp_path):
    assert cli("export", "--db", night_db, "--to", f"s3://{BUCKET}/night").code == ExitCode.OK
    written = _objects(s3, "night/")
    local = sorted(p.relative_to(local_export).as_posix() for p in local_export.rglob("*") if p.is_file())
    assert sorted(k for k in written if not k.endswith("/")) == local  # the same layout, file for file
    remote = f"s3a://{BUCKET}/night"  # Hadoop's spelling reads the same folder
    for command in (["check", "--exit-zero"], ["cost", "--by", "model"], ["budgets", "--by", "agent"],
                    ["usage", "--by", "day", "--since", "2026-11-29"], ["cost", "--since", "2026-11-29"]):
        ours = cli(*command, "--json", "--tz", "UTC", "--from-parquet", local_export)
        theirs = cli(*command, "--json", "--tz", "UTC", "--from-parquet", remote)
        assert theirs.code == ours.code == ExitCode.OK, theirs.err
        assert _without_time(theirs.json()) == _without_time(ours.json()), command
    assert cli("check", "--json", "--exit-zero", "--from-parquet", remote).json()["checks"]  # not an empty answer
    cli("report", "finance", "--out", tmp_path / "s3.html", "--tz", "UTC", "--from-parquet", remote)
    cli("report", "finance", "--out", tmp_path / "local.html", "--tz", "UTC", "--from-parquet", local_export)
    stamp = "generated"
    assert [line for line in (tmp_path / "s3.html").read_text().splitlines() if stamp not in line] == \
        [line for line in (tmp_path / "local.html").read_text().splitlines() if stamp not in line]


def test_a_window_copies_only_the_days_it_reads_and_the_copy_is_removed(cli, night_db, s3, monkeypatch, tmp_path):
    export(night_db, f"s3://{BUCKET}/windowed")
    copied: list[Path] = []
    download = object_store.RemoteDataset.download

    def recording(self, local, manifest, days_of):
        download(self, local, manifest, days_of)
        copied.append(local)
        copied.extend(sorted(p.relative_to(local) for p in local.glob("*/day=*")))

    monkeypatch.setattr(object_store.RemoteDataset, "download", recording)
    total = cli("cost", "--json", "--tz", "UTC", "--since", "2026-12-01", "--from-parquet", f"s3://{BUCKET}/windowed")
    assert total.code == ExitCode.OK and total.json()["total"]["runs"] == 0
    folder, days = copied[0], {p.as_posix() for p in copied[1:]}
    # the night is on the 28th and 29th: the runs, steps and provider buckets of the window's days only (one day
    # kept per table so its files exist to be read, filtered out), the ingest's own tables whole
    manifest = json.loads(s3.get_object(Bucket=BUCKET, Key="windowed/manifest.json")["Body"].read())
    ingested = {f"ingested_files/day={day}" for day in manifest["tables"]["ingested_files"]["days"]}
    assert "steps/day=2026-11-29" not in days and ingested and ingested <= days
    assert not folder.exists()  # the temporary copy went with the command


def _run_on(tmp_path, name: str, day: dt.datetime):
    path = tmp_path / f"{name}.jsonl"
    with Journal(path, clock=StepClock(day)) as journal:
        write_simple_run(journal, name)
    return path


def test_an_export_to_s3_uploads_only_the_days_that_changed_and_deletes_the_days_gone(s3, tmp_path):
    db, url = tmp_path / "s.duckdb", f"s3://{BUCKET}/incremental"
    with store.connect(db) as con:
        ingest(con, [_run_on(tmp_path, "monday", dt.datetime(2026, 11, 23, 9, tzinfo=dt.timezone.utc))])
    assert export(db, url).written["steps"] == ["2026-11-23"]
    monday = {k: v for k, v in _objects(s3, "incremental/").items() if "day=2026-11-23" in k}
    with store.connect(db) as con:
        ingest(con, [_run_on(tmp_path, "tuesday", dt.datetime(2026, 11, 24, 9, tzinfo=dt.timezone.utc))])
    second = export(db, url)
    assert second.written["steps"] == ["2026-11-24"] and second.unchanged["steps"] == 1
    after = _objects(s3, "incremental/")
    assert {k: v for k, v in after.items() if "day=2026-11-23" in k} == monday  # not uploaded again
    assert any(k.startswith("steps/day=2026-11-24/") for k in after)
    with store.connect(db) as con:
        for table in ("tool_calls", "steps", "run_tools", "runs"):
            con.execute(f"delete from {table} where run_id = 'monday'")
    third = export(db, url)
    assert third.removed["runs"] == ["2026-11-23"]
    assert not [k for k in _objects(s3, "incremental/") if k.startswith(("runs/day=2026-11-23", "steps/day=2026-11-23"))]
    manifest = json.loads(s3.get_object(Bucket=BUCKET, Key="incremental/manifest.json")["Body"].read())
    assert list(manifest["tables"]["runs"]["days"]) == ["2026-11-24"]


def test_object_store_mistakes_exit_2_naming_the_url(cli, night_db, s3):
    missing = cli("cost", "--from-parquet", "s3://no-such-bucket/night")
    assert missing.code == ExitCode.BAD_INPUT and "the bucket 'no-such-bucket' does not exist" in missing.err
    written = cli("export", "--db", night_db, "--to", "s3://no-such-bucket/night")
    assert written.code == ExitCode.BAD_INPUT and "s3://no-such-bucket/night" in written.err
    empty = cli("cost", "--from-parquet", f"s3://{BUCKET}/nothing-here")
    assert empty.code == ExitCode.BAD_INPUT and f"s3://{BUCKET}/nothing-here: no manifest.json" in empty.err
    s3.put_object(Bucket=BUCKET, Key="others/notes.txt", Body=b"not ours")
    foreign = cli("export", "--db", night_db, "--to", f"s3://{BUCKET}/others")
    assert foreign.code == ExitCode.BAD_INPUT and "has files but no manifest.json" in foreign.err
    s3.put_object(Bucket=BUCKET, Key="broken/manifest.json", Body=b"{not json")
    broken = cli("cost", "--from-parquet", f"s3://{BUCKET}/broken")
    assert broken.code == ExitCode.BAD_INPUT and f"s3://{BUCKET}/broken/manifest.json: not a readable" in broken.err
    s3.put_object(Bucket=BUCKET, Key="latin/manifest.json", Body='{"format": "caf\xe9"}'.encode("latin-1"))
    undecodable = cli("cost", "--from-parquet", f"s3://{BUCKET}/latin")  # as strict as a local manifest
    assert undecodable.code == ExitCode.BAD_INPUT and "latin/manifest.json: not a readable" in undecodable.err
    assert "codec can't decode" in undecodable.err
    secret = cli("cost", "--from-parquet", f"s3://AKIA:hunter2@{BUCKET}/night")
    assert secret.code == ExitCode.BAD_INPUT and "hunter2" not in secret.err and "never in the URL" in secret.err


def test_a_url_is_a_remote_dataset_and_a_path_is_not():
    from reconcile.engines.export import dataset_location

    assert isinstance(dataset_location("gs://bucket/runs", "--to"), object_store.RemoteDataset)
    assert isinstance(dataset_location("abfss://runs@account.dfs.core.windows.net/night", "--to"),
                      object_store.RemoteDataset)  # Azure's container@account is not a credential
    assert dataset_location("s3:weird-local-name", "--to") == Path("s3:weird-local-name")  # no '//' : a path
    with pytest.raises(BadInput, match="name the bucket"):
        dataset_location("s3:///folder", "--to")


@pytest.mark.spark
def test_spark_without_an_s3_connector_says_what_to_add(cli, night_db, s3):
    """pyspark ships no hadoop-aws: reading s3a:// exits 2 with the package to add, not exit 3 with a Java trace."""
    export(night_db, f"s3://{BUCKET}/for-spark")
    answer = cli("cost", "--engine", "spark", "--master", "local[1]", "--from-parquet", f"s3a://{BUCKET}/for-spark")
    assert answer.code == ExitCode.BAD_INPUT and "hadoop-aws" in answer.err and "s3a://" in answer.err


@pytest.mark.spark
def test_a_distributed_ingest_writes_its_dataset_to_s3(cli, local_export, s3):
    """The shards are staged locally (one machine here), merged, and the dataset uploaded as export --to does."""
    from conftest import SAMPLE_RUNS

    url = f"s3://{BUCKET}/distributed"
    written = cli("ingest", SAMPLE_RUNS, "--engine", "spark", "--master", "local[1]", "--to", url, "--json")
    assert written.code == ExitCode.OK, written.err
    assert written.json()["to"] == url and not list(Path(".").glob("s3*"))
    ours = cli("check", "--json", "--exit-zero", "--from-parquet", local_export).json()
    theirs = cli("check", "--json", "--exit-zero", "--from-parquet", url).json()
    assert _without_time(theirs) == _without_time(ours)


# Hadoop 3.5 (pyspark 4's) writes some S3A defaults with units ("60s", "24h") and names AWS SDK v2 credential
# providers; the 3.3 connector the test can get reads plain numbers and SDK v1 classes. A cluster with the
# matching hadoop-aws (3.5.0) needs only the endpoint and credentials lines.
_OLD_CONNECTOR = {"threads.keepalivetime": "60", "connection.establish.timeout": "30000",
                  "connection.timeout": "200000", "multipart.purge.age": "86400", "connection.ttl": "300000",
                  "retry.interval": "500", "retry.throttle.interval": "100", "assumed.role.session.duration": "1800",
                  "connection.idle.time": "60000", "connection.acquisition.timeout": "60000",
                  "connection.request.timeout": "0",
                  "aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}


@pytest.mark.spark
def test_spark_reads_an_s3a_dataset_through_its_own_connector(night_db, local_export, s3_server, s3, tmp_path, cli):
    """Spark itself reads s3a:// (the driver only reads the manifest): the connector's jars on the classpath and
    the endpoint in spark-defaults.conf, as a cluster is configured. The jars come from RECONCILE_S3A_JARS
    (.ci/run takes them from sagemaker_pyspark's sdist: Maven Central is out of reach)."""
    import os
    import subprocess
    import sys

    from test_spark import require_spark

    require_spark()
    jars = os.environ.get("RECONCILE_S3A_JARS")
    if not jars:
        if os.environ.get("CI"):
            pytest.fail("RECONCILE_S3A_JARS is not set: .ci/run provides hadoop-aws and the AWS SDK bundle")
        pytest.skip("RECONCILE_S3A_JARS (hadoop-aws and the AWS SDK bundle jars) is not set")
    export(night_db, f"s3://{BUCKET}/spark-s3a")
    conf = tmp_path / "spark-conf"
    conf.mkdir()
    settings = {"spark.jars": jars, "spark.hadoop.fs.s3a.endpoint": s3_server,
                "spark.hadoop.fs.s3a.path.style.access": "true", "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
                "spark.hadoop.fs.s3a.access.key": "test", "spark.hadoop.fs.s3a.secret.key": "test",
                **{f"spark.hadoop.fs.s3a.{k}": v for k, v in _OLD_CONNECTOR.items()}}
    (conf / "spark-defaults.conf").write_text("".join(f"{k} {v}\n" for k, v in settings.items()))
    reconcile = Path(sys.executable).with_name("reconcile")
    done = subprocess.run([reconcile, "check", "--json", "--exit-zero", "--engine", "spark", "--master", "local[1]",
                           "--from-parquet", f"s3a://{BUCKET}/spark-s3a"], capture_output=True, text=True,
                          timeout=900, env={**os.environ, "SPARK_CONF_DIR": str(conf)})
    assert done.returncode == 0, done.stderr[-3000:]
    ours = cli("check", "--json", "--exit-zero", "--from-parquet", local_export).json()
    assert _without_time(json.loads(done.stdout)) == _without_time(ours)
