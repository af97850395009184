"""The same checks, costs and budgets on Apache Spark (local mode) as in DuckDB, over one export of the sample night.

Marked ``spark``: it needs pyspark (``reconcile[spark]``) and Java 17+, and a Spark session takes a while to
start, so the default suite leaves it out and ``.ci/run`` runs it (``pytest -m spark``). Under CI a missing
Spark is a failure, not a skip.
"""

from __future__ import annotations

import math
import os
import shutil
from pathlib import Path

import pytest

from reconcile.analyses.budgets import budget_report, latency_and_size, stop_reason_rates
from reconcile.checks import Scope, load_checks, run_checks
from reconcile.config import Config
from reconcile.analyses.costs import cost_report
from reconcile.engine import DuckDBEngine
from reconcile.engines.dataset import open_dataset
from reconcile.engines.export import export
from reconcile.analyses.usage import usage_report
from reconcile.when import Window, use_zone

pytestmark = pytest.mark.spark


def _spark_available() -> str | None:
    try:
        import pyspark  # noqa: F401
    except ImportError:
        return "pyspark is not installed (pip install 'reconcile[spark]')"
    if not shutil.which("java") and not os.environ.get("JAVA_HOME"):
        return "no Java (Spark needs Java 17+)"
    return None


def require_spark() -> None:
    """Skip a Spark test where Spark cannot run; under CI, fail it (the Spark suite must run there)."""
    missing = _spark_available()
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"the Spark test must run in CI: {missing}")
        pytest.skip(missing)


@pytest.fixture(scope="module")
def exported_night(night_db, tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("spark") / "dataset"
    export(night_db, folder)
    return folder


@pytest.fixture(scope="module")
def engines(exported_night):
    require_spark()
    from reconcile.engines.spark_dataset import open_spark_dataset

    spark = open_spark_dataset(exported_night, master="local[2]")
    with open_dataset(exported_night) as con:
        yield DuckDBEngine(con), spark
    spark.close()


@pytest.fixture
def bound_again(exported_night):
    """As ``engines``, with the night's views bound again: a test that ran ``reconcile … --engine spark``
    in this process (sharing its Spark session) bound and dropped views of the same names."""
    require_spark()
    from reconcile.engines.spark_dataset import open_spark_dataset

    spark = open_spark_dataset(exported_night, master="local[2]")
    with open_dataset(exported_night) as con:
        yield DuckDBEngine(con), spark
    spark.close()


def same(ours, theirs, path="") -> None:
    """Equal, except floats, which may differ in the last bits (Spark interpolates a percentile in another order)."""
    if isinstance(ours, float) or isinstance(theirs, float):
        assert ours is not None and theirs is not None and math.isclose(ours, theirs, rel_tol=1e-12), (path, ours, theirs)
    elif isinstance(ours, dict):
        assert isinstance(theirs, dict) and ours.keys() == theirs.keys(), (path, ours.keys(), theirs)
        for key in ours:
            same(ours[key], theirs[key], f"{path}.{key}")
    elif isinstance(ours, (list, tuple)):
        assert isinstance(theirs, (list, tuple)) and len(ours) == len(theirs), (path, ours, theirs)
        for i, (a, b) in enumerate(zip(ours, theirs)):
            same(a, b, f"{path}[{i}]")
    else:
        assert ours == theirs, (path, ours, theirs)


def test_every_check_finds_the_same_in_spark(engines):
    duck, spark = engines
    checks = load_checks(None)
    ours = run_checks(duck, checks, Scope(), record=False).to_json()
    theirs = run_checks(spark, checks, Scope(), record=False).to_json()
    assert len(ours["checks"]) == len(checks) and sum(c["failures"] for c in ours["checks"]) > 0
    for mine, yours in zip(ours["checks"], theirs["checks"]):
        assert mine == yours, mine["name"]
    assert theirs["findings"] == ours["findings"]


@pytest.mark.parametrize("by", ["model", "day", "agent", "run", "tree"])
def test_the_cost_report_is_the_same_in_spark(engines, by):
    duck, spark = engines
    for engine in (duck, spark):
        use_zone(engine, "UTC")
    same(cost_report(duck, by, None, "auto"), cost_report(spark, by, None, "auto"))


def test_budget_percentiles_and_stop_reasons_are_the_same_in_spark(engines):
    duck, spark = engines
    for engine in (duck, spark):
        use_zone(engine, "UTC")
    same(budget_report(duck, "agent", None, "auto"), budget_report(spark, "agent", None, "auto"))
    same(budget_report(duck, "agent", None, "auto", "tree"), budget_report(spark, "agent", None, "auto", "tree"))
    same(stop_reason_rates(duck, "agent", None), stop_reason_rates(spark, "agent", None))
    same(latency_and_size(duck, Config()), latency_and_size(spark, Config()))


def test_a_replay_is_the_same_in_spark(engines):
    """reconcile replay is SQL the Spark engine runs too: each run's stop, its reason and what it saves agree. (Before
    the tests that open a second engine on this session: closing one drops the views the session shares.)"""
    from reconcile.analyses.replay import as_run, from_options, replay

    duck, spark = engines
    for engine in (duck, spark):
        use_zone(engine, "UTC")
    candidates = [as_run(), *from_options(["max_steps=8", "max_cost_usd=0.05", "tight:max_tokens=40000",
                                           "tight:max_wall_seconds=60"], ["all"])]
    ours, theirs = replay(duck, candidates, runs=True), replay(spark, candidates, runs=True)
    assert sum(g["stopped_earlier"] for c in ours["candidates"] for g in c["groups"]) > 0
    same(ours, theirs)


def test_the_three_way_usage_match_is_the_same_in_spark(engines):
    duck, spark = engines
    for engine in (duck, spark):
        use_zone(engine, "UTC")
    same(usage_report(duck, "model", Window()), usage_report(spark, "model", Window()))


def test_the_notebook_api_on_spark_answers_what_the_store_answers(engines, exported_night, night_db):
    """``reconcile.open_dataset(…, engine="spark")``: a query's result comes back through the engine as Arrow."""
    import reconcile

    with reconcile.connect(night_db) as store_rc, reconcile.open_dataset(exported_night, engine="spark") as spark_rc:
        ours, theirs = store_rc.steps("8f3a"), spark_rc.steps("8f3a")
        assert theirs.height == ours.height > 12 and theirs.columns == ours.columns
        assert theirs.select("idx", "kind", "tool_name", "input_tokens").to_dicts() == \
            ours.select("idx", "kind", "tool_name", "input_tokens").to_dicts()
        assert spark_rc.sql("select count(*) as n from runs where run_id = ?", ["8f3a"])["n"][0] == 1


def test_ingest_on_spark_then_check_on_spark_equals_the_single_machine_run(engines, cli, night_db, tmp_path):
    from conftest import SAMPLE_RUNS

    dataset = tmp_path / "distributed"
    loaded = cli("ingest", SAMPLE_RUNS, "--engine", "spark", "--to", dataset, "--master", "local[2]", "--json")
    assert loaded.code == 0, loaded.err
    shards = loaded.json()
    assert shards["shards"] >= 2 and sum(s["rejected"] for s in shards["shard_results"]) == 0
    single = cli("check", "--json", "--exit-zero", "--db", night_db).json()
    spark = cli("check", "--json", "--exit-zero", "--engine", "spark", "--master", "local[2]", "--from-parquet", dataset)
    assert spark.code == 0, spark.err
    assert _without_time(spark.json()) == _without_time(single)


def _without_time(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "checked_at"}


def test_a_check_over_spark_connect_finds_what_duckdb_finds(engines, cli, tmp_path, night_db):
    """--remote: a Spark Connect session (pyspark starts a local Connect server for local[…]); in its own
    process, as a user runs it, apart from this module's classic session."""
    import json
    import subprocess
    import sys

    dataset = tmp_path / "connect"
    export(night_db, dataset)
    only = ["--only", "status_consistent", "--only", "side_effects_once", "--json", "--exit-zero"]
    ours = cli("check", *only, "--from-parquet", dataset).json()
    reconcile = Path(sys.executable).with_name("reconcile")
    theirs = subprocess.run([reconcile, "check", *only, "--engine", "spark", "--remote", "local[2]",
                             "--from-parquet", dataset], capture_output=True, text=True, timeout=900)
    assert theirs.returncode == 0, theirs.stderr[-2000:]
    assert _without_time(json.loads(theirs.stdout)) == _without_time(ours)


def _cost_over_a_corrupt_file(exported_night, tmp_path, table: str, how: str):
    """``reconcile cost`` on Spark (``--master`` or ``--remote`` local[1]), in its own process, over a copy of
    the dataset whose first file of ``table`` is not Parquet; the file and the finished process."""
    import subprocess
    import sys

    copy = tmp_path / "corrupt"
    shutil.copytree(exported_night, copy)
    broken = sorted((copy / table).glob("day=*/*.parquet"))[0]
    broken.write_bytes(b"not parquet at all")
    reconcile = Path(sys.executable).with_name("reconcile")
    return broken, subprocess.run([reconcile, "cost", "--engine", "spark", how, "local[1]", "--from-parquet", copy],
                                  capture_output=True, text=True, timeout=600)


def test_a_corrupt_or_older_dataset_is_named_and_exits_2_in_spark(engines, exported_night, tmp_path):
    """Issue 31: not exit 3 with Spark's cause dropped; in its own process, apart from this module's session."""
    import subprocess
    import sys

    broken, result = _cost_over_a_corrupt_file(exported_night, tmp_path, "steps", "--master")
    assert result.returncode == 2, result.stderr[-2000:]
    assert f"{broken} cannot be read (Could not read footer)" in result.stderr, result.stderr[-2000:]
    reconcile = Path(sys.executable).with_name("reconcile")
    # a dataset another version wrote, without a column this one reads: the column named, exit 2
    from test_export import _without_column

    older = tmp_path / "older"
    shutil.copytree(exported_night, older)
    _without_column(older, "runs", "agent")
    result = subprocess.run([reconcile, "cost", "--engine", "spark", "--master", "local[1]", "--from-parquet", older],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 2, result.stderr[-2000:]
    assert "the files of table runs have no column agent" in " ".join(result.stderr.split()), result.stderr[-2000:]


def test_over_spark_connect_a_corrupt_file_is_named_without_a_json_log(engines, exported_night, tmp_path):
    """Issue 31: over Spark Connect the files are read lazily, when the view is made (outside the error mapping:
    exit 3), and pyspark logged each failed query's plan and JVM trace as JSON on stderr (10-28 KB)."""
    import subprocess
    import sys

    broken, result = _cost_over_a_corrupt_file(exported_night, tmp_path, "runs", "--remote")
    assert result.returncode == 2, result.stderr[-2000:]
    assert f"{broken} cannot be read" in result.stderr
    # a statement Spark refuses: our one-line error, not pyspark's JSON log of the plan and the JVM trace
    script = ("from reconcile.engines.spark import SparkEngine\nfrom reconcile.engine import EngineError\n"
              "engine = SparkEngine(remote='local[1]')\ntry:\n    engine.rows('select nope from range(3)')\n"
              "except EngineError as exc:\n    print(str(exc).splitlines()[0])\nengine.close()\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert result.stdout.startswith("Spark: [UNRESOLVED_COLUMN"), result.stderr[-2000:]
    assert "SQLQueryContextLogger" not in result.stderr and "JVM stacktrace" not in result.stderr


def test_unknown_money_and_microsecond_times_read_the_same_in_spark(engines):
    """Issue 31: Spark's format_string writes 'null' for a NULL (DuckDB's printf gives NULL, so the report
    says unknown), and Spark's DATEDIFF counts whole units where DuckDB counts boundaries crossed."""
    duck, spark = engines
    sql = """select n, coalesce('$' || printf('%.2f', m / 1000000), 'unknown') as money,
                    coalesce(format('{:.2f} over {}', m / 1000000, n), 'unknown') as said,
                    date_diff('millisecond', a, b) as ms, date_diff('second', a, b) as s,
                    date_diff('microsecond', a, b) as us
             from (values (1, null::bigint, '2026-01-01 00:00:00.000900+00'::timestamptz,
                           '2026-01-01 00:00:01.001100+00'::timestamptz),
                          (2, 1500000::bigint, '2026-01-01 00:00:00.999999+00'::timestamptz,
                           '2026-01-01 00:00:02.000001+00'::timestamptz)) as t(n, m, a, b)
             order by n"""
    ours = duck.rows(sql)
    assert ours == [(1, "unknown", "unknown", 1001, 1, 1000200), (2, "$1.50", "1.50 over 2", 1001, 2, 1000002)]
    assert spark.rows(sql) == ours


def test_each_shard_of_a_distributed_ingest_is_its_own_task(engines):
    """Issue 31: hash partitioning put 28 shards into 15 tasks (up to 4 in one); by range each gets its own."""
    from pyspark.sql.functions import spark_partition_id

    from reconcile.engines.distributed import shard_frame

    _, spark = engines
    placed = shard_frame(spark.spark, [(n, "[]") for n in range(28)]).select(
        "shard", spark_partition_id().alias("task")).collect()
    assert sorted(row.task for row in placed) == list(range(28))
    assert all(row.task == row.shard for row in placed)


def test_findings_written_by_the_executors_equal_duckdb_s(bound_again, tmp_path):
    """``check --findings-to``: on Spark the executors write the findings table and count it; the driver gets
    the counts and the first findings. The table, read by pyarrow, equals the one DuckDB writes."""
    import pyarrow.parquet as pq

    from reconcile.checks.written import write_findings

    duck, spark = bound_again
    checks = load_checks()
    reports, tables = {}, {}
    for name, engine in (("duckdb", duck), ("spark", spark)):
        reports[name] = write_findings(tmp_path / name, lambda table, engine=engine: run_checks(
            engine, checks, Scope(), config=Config(), record=False, findings_to=table))
        files = sorted((tmp_path / name / "findings").glob("*.parquet"))
        tables[name] = sorted((tuple(r.values()) for f in files for r in pq.read_table(f).to_pylist()), key=repr)
    assert len(tables["duckdb"]) > 40 and tables["spark"] == tables["duckdb"]
    assert any(f.name.startswith("part-") for f in (tmp_path / "spark" / "findings").iterdir())  # Spark's own files
    for ours, theirs in zip(reports["duckdb"].results, reports["spark"].results):
        assert (ours.name, ours.failures, ours.outcome) == (theirs.name, theirs.failures, theirs.outcome)
        assert [(f.run_id, f.step, f.detail) for f in ours.findings] == [(f.run_id, f.step, f.detail) for f in theirs.findings]


def test_a_distributed_ingest_settles_what_crosses_shards_on_the_executors(engines, tmp_path):
    """Two folders journalling the same run land in two shards; the group they form is settled in a task on
    the executors, and the dataset equals the single machine's export."""
    import datetime as dt
    import json

    from journals import StepClock, write_simple_run
    from reconcile import store
    from reconcile.engines.distributed import distributed_ingest
    from reconcile.ingest.driver import ingest
    from reconcile.journal import Journal

    files = []
    for folder, runs in (("a", ["a1", "twice"]), ("b", ["twice", "b1"]), ("c", ["c1"])):
        (tmp_path / "in" / folder).mkdir(parents=True)
        files.append(tmp_path / "in" / folder / "night.jsonl")
        with Journal(files[-1], clock=StepClock(dt.datetime(2026, 11, 28, 22, tzinfo=dt.timezone.utc))) as journal:
            for run in runs:
                write_simple_run(journal, run)
    result = distributed_ingest([str(tmp_path / "in")], tmp_path / "distributed", master="local[2]")
    assert result["shards"] == 2 and result["loaded_again_in_merge"] == [str(files[0]), str(files[1])]
    assert result["shards_read_in_merge"] == 2
    # a second run, c's journal grown: the shard without c is not sent to an executor; the other reads c's tail
    with Journal(files[2], clock=StepClock(dt.datetime(2026, 11, 29, 22, tzinfo=dt.timezone.utc))) as journal:
        write_simple_run(journal, "c2")
    again = distributed_ingest([str(tmp_path / "in")], tmp_path / "distributed", master="local[2]")
    assert (again["shards"], again["shards_ingested"]) == (2, 1)
    assert again["loaded_again_in_merge"] == [str(files[0]), str(files[1])]
    with store.connect(tmp_path / "single.duckdb") as con:
        ingest(con, [tmp_path / "in"])
    export(tmp_path / "single.duckdb", tmp_path / "single")
    ours, theirs = (json.loads((tmp_path / d / "manifest.json").read_text()) for d in ("distributed", "single"))
    for name in ("runs", "steps", "tool_calls", "run_tools", "ingest_deferrals"):
        assert ours["tables"][name].get("days") == theirs["tables"][name].get("days"), name
        assert ours["tables"][name]["rows"] == theirs["tables"][name]["rows"], name


def test_a_small_sample_s_interval_is_computed_where_reconcile_is_not_installed(engines):
    """``per_group`` sends the bootstrap's module by value: pickled as Spark pickles it for the executors, it
    loads and runs in a Python that cannot import reconcile (a cluster's executors need nothing for budgets)."""
    import subprocess
    import sys

    import pyarrow as pa
    from pyspark import cloudpickle

    from reconcile.analyses import resample

    cloudpickle.register_pickle_by_value(resample)
    try:
        payload = cloudpickle.dumps(resample.p99_interval)
    finally:
        cloudpickle.unregister_pickle_by_value(resample)
    script = (
        "import pickle, sys\n"
        "class NoReconcile:\n"
        "    @staticmethod\n"
        "    def find_spec(name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'reconcile':\n"
        "            raise ImportError('reconcile is not installed here')\n"
        "sys.meta_path.insert(0, NoReconcile)\n"
        "import pyarrow as pa\n"
        "task = pickle.loads(sys.stdin.buffer.read())\n"
        "print(task(pa.table({'key': ['g'] * 4, 'run_id': ['b', 'a', 'd', 'c'], 'steps': [5, 3, 9, 4]})))\n")
    done = subprocess.run([sys.executable, "-c", script], input=payload, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    group = pa.table({"key": ["g"] * 4, "run_id": ["b", "a", "d", "c"], "steps": [5, 3, 9, 4]})
    assert done.stdout.decode().strip() == str(resample.p99_interval(group))


def test_budgets_intervals_on_the_executors_equal_duckdb_s(bound_again):
    duck, spark = bound_again
    for by in ("agent", "task_class", "model"):
        ours, theirs = budget_report(duck, by), budget_report(spark, by)
        intervals = [[f.get("p99_steps_interval") for f in g["flags"] if f["flag"] == "small_sample"]
                     for g in ours["groups"]]
        assert any(i and i[0] for i in intervals), by  # the sample night has small groups with an interval
        same(ours, theirs)


def test_executors_of_another_reconcile_version_stop_the_ingest_before_any_work(engines, tmp_path, monkeypatch):
    """One tiny job first: the executors import reconcile themselves and report their version."""
    import reconcile.engines.distributed as distributed
    from conftest import SAMPLE_NIGHT
    from reconcile.errors import BadInput

    monkeypatch.setattr(distributed, "__version__", "9.9.9")  # the driver only: the executors import their own
    with pytest.raises(BadInput, match=r"executors run reconcile 0\.\d+\.\d+\S*, this driver 9\.9\.9: install the same"):
        distributed.distributed_ingest([str(SAMPLE_NIGHT)], tmp_path / "dataset", master="local[2]")
    assert not (tmp_path / "dataset").exists() and not list(tmp_path.glob(".reconcile-shards-*"))


def test_executors_without_reconcile_are_told_what_to_install(engines, tmp_path):
    """The executors' Python cannot import reconcile (a wrapper hides it from the workers only): exit 2 with what
    to install where, nothing written — in its own process, whose Spark workers start with that Python."""
    import subprocess
    import sys

    from conftest import SAMPLE_NIGHT

    hidden = tmp_path / "hide"
    hidden.mkdir()
    (hidden / "sitecustomize.py").write_text(
        "import sys\n"
        "class NoReconcile:\n"
        "    @staticmethod\n"
        "    def find_spec(name, path=None, target=None):\n"
        "        if name.split('.')[0] == 'reconcile':\n"
        "            raise ModuleNotFoundError(\"No module named 'reconcile'\", name='reconcile')\n"
        "sys.meta_path.insert(0, NoReconcile)\n")
    worker = tmp_path / "worker-python"
    worker.write_text(f"#!/bin/sh\nPYTHONPATH={hidden}${{PYTHONPATH:+:$PYTHONPATH}} exec {sys.executable} \"$@\"\n")
    worker.chmod(0o755)
    reconcile = Path(sys.executable).with_name("reconcile")
    done = subprocess.run([reconcile, "ingest", SAMPLE_NIGHT, "--engine", "spark", "--master", "local[1]", "--to",
                           tmp_path / "dataset"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYSPARK_PYTHON": str(worker)})
    assert done.returncode == 2, done.stderr[-2000:]
    assert "executors cannot import reconcile: install reconcile on every executor" in done.stderr
    assert not (tmp_path / "dataset").exists()
