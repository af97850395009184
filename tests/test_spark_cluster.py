"""The recipe of docs/scale-out.md, run as written (issue 31, part 6): a Spark standalone master and a
worker on this machine, reconcile's checks and its distributed ingest sent to it with ``--master
spark://…``, and a Spark Connect server in front of it reached with ``--remote sc://…`` — each
answer compared with DuckDB's on the same dataset, and a relative dataset path given from a folder
that is not the server's (a Connect server resolved it in its own working folder).

Marked ``spark`` (``.ci/run`` runs it with ``pytest -m spark``). The cluster's processes are started
here from pyspark's own scripts and stopped at the end of the module.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SAMPLE_RUNS
from reconcile.engines.export import export
from test_spark import require_spark

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
from cluster import standalone  # noqa: E402  (bench/cluster.py: the benchmark starts its clusters the same way)

pytestmark = pytest.mark.spark
ONLY = ["--only", "status_consistent", "--only", "side_effects_once", "--only", "tokens_match_provider"]
RECONCILE = Path(sys.executable).with_name("reconcile")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """A standalone master, one worker (2 cores: one for the Spark Connect server, one for the jobs sent
    with --master) and the Connect server: (master URL, sc:// URL)."""
    require_spark()
    with standalone(1, tmp_path_factory.mktemp("cluster"), connect=True, cores=2) as urls:
        yield urls


def _check(*args, cwd: Path) -> dict:
    done = subprocess.run([RECONCILE, "check", *ONLY, "--json", "--exit-zero", *args], capture_output=True, text=True,
                          timeout=400, cwd=cwd)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    report.pop("checked_at", None)
    return report


def test_checks_on_a_standalone_cluster_and_over_spark_connect_equal_duckdb(cluster, night_db, tmp_path):
    master, connect = cluster
    export(night_db, tmp_path / "dataset")
    ours = _check("--from-parquet", "dataset", cwd=tmp_path)
    assert sum(c["failures"] for c in ours["checks"]) > 0
    assert _check("--engine", "spark", "--master", master, "--from-parquet", "dataset", cwd=tmp_path) == ours
    # a relative path, from a folder that is not the server's: sent as the absolute path the client means
    assert _check("--engine", "spark", "--remote", connect, "--from-parquet", "dataset", cwd=tmp_path) == ours


def test_a_distributed_ingest_on_the_cluster_reads_back_as_the_single_machine_ingest(cluster, night_db, tmp_path):
    master, _ = cluster
    done = subprocess.run([RECONCILE, "ingest", SAMPLE_RUNS, "--engine", "spark", "--master", master, "--to",
                           tmp_path / "ingested", "--json"], capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stderr[-3000:]
    export(night_db, tmp_path / "exported")
    assert _check("--from-parquet", "ingested", cwd=tmp_path) == _check("--from-parquet", "exported", cwd=tmp_path)
