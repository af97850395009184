"""A distributed ingest's second run: unchanged shards are not read again, a grown file is read by its tail.

The driver's flow runs here without a cluster: the executors' tasks run in this process (``on_executors``
replaced) — the code they run is the executors' own. ``tests/test_spark.py`` runs a second run on Spark.
The dataset after any sequence of runs must equal a single machine's export of the files given last.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import duckdb
import pytest

from journals import StepClock, write_simple_run
from reconcile import store
from reconcile.engines import distributed
from reconcile.engines.distributed import place
from reconcile.engines.export import export
from reconcile.engines.kept_shards import KeptShards
from reconcile.errors import BadInput
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal
from test_distributed_ingest import _assert_same

pytestmark = pytest.mark.slow  # several ingests and exports a test: CI runs it (pytest -m slow)


class _HereEngine:
    """Spark's place, taken by this process: three tasks' worth of parallelism, nothing to start or stop."""

    def __init__(self, **_):
        pass

    def parallelism(self) -> int:
        return 3

    def close(self) -> None:
        pass


@pytest.fixture
def here(monkeypatch):
    """Run a distributed ingest's tasks in this process; record which shards were sent to an executor."""
    import reconcile.engines.spark as spark_engine

    sent: list[list[int]] = []

    def on_executors(engine, payloads, task, schema):
        if schema == distributed.SHARD_SUMMARY:
            sent.append(sorted(json.loads(p)["shard"] for p in payloads))
        return [task(number, payload) for number, payload in enumerate(payloads)]

    monkeypatch.setattr(spark_engine, "SparkEngine", _HereEngine)
    monkeypatch.setattr(distributed, "on_executors", on_executors)
    monkeypatch.setattr(distributed, "require_reconcile_on_executors", lambda engine: None)
    return sent


def _journal(path: Path, runs: list[str], day: int = 28) -> Path:
    """Runs appended to a native journal (a journal that exists grows)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with Journal(path, clock=StepClock(dt.datetime(2026, 11, day, 22, tzinfo=dt.timezone.utc))) as journal:
        for run in runs:
            write_simple_run(journal, run)
    return path


def _single(tmp_path: Path, folders: list[Path], name: str, window=None) -> Path:
    """The same files ingested fresh on one machine and exported: what the distributed dataset must equal."""
    db, dataset = tmp_path / f"{name}.duckdb", tmp_path / name
    with store.connect(db) as con:
        ingest(con, folders, window=window)
    export(db, dataset)
    return dataset


def _run(folders: list[Path], target: Path, window=None) -> dict:
    return distributed.distributed_ingest([str(f) for f in folders], target, window=window)


def _kept_sha(target: Path, path: Path) -> str:
    """How the kept store of the file's shard last read it (a tail read's digest starts ``tail:``)."""
    for db in sorted((target / ".reconcile-kept").glob("shard-*.duckdb")):
        with duckdb.connect(str(db), read_only=True) as con:
            row = con.execute("select sha256 from ingested_files where path = ?", [str(path)]).fetchone()
        if row:
            return row[0]
    raise AssertionError(f"{path} is in no kept store")


def test_a_second_run_reads_only_the_shards_that_changed_and_equals_a_fresh_ingest(tmp_path, here):
    inputs = tmp_path / "in"
    a, b = inputs / "a", inputs / "b"
    _journal(a / "night.jsonl", ["a1", "a2"])
    grown = _journal(b / "night.jsonl", ["b1"])
    extra = _journal(b / "extra.jsonl", ["b2"])
    target = tmp_path / "dataset"

    first = _run([inputs], target)
    assert first["shards_ingested"] == first["shards"] == 2 and here == [[0, 1]]
    _assert_same(target, _single(tmp_path, [inputs], "single-1"))

    again = _run([inputs], target)  # nothing changed: no shard goes to an executor, no data day is written
    assert again["shards_ingested"] == 0 and here[-1] == []
    assert all(not again["export"]["tables"][t]["written"] for t in ("runs", "steps", "tool_calls"))
    assert sum(s["unchanged"] for s in again["shard_results"]) == 3

    _journal(grown, ["b3"], day=29)  # b's journal grew; a new folder appeared
    _journal(inputs / "c" / "night.jsonl", ["c1"], day=30)
    third = _run([inputs], target)
    assert third["shards_ingested"] == 2 and here[-1] == [1, 2]  # a's shard was not read again
    assert _kept_sha(target, grown).startswith("tail:")  # the grown journal was read by its tail
    _assert_same(target, _single(tmp_path, [inputs], "single-3"))

    extra.unlink()  # a file no longer given: its rows leave the dataset
    fourth = _run([inputs], target)
    assert fourth["shards_ingested"] == 1 and here[-1] == [1]
    _assert_same(target, _single(tmp_path, [inputs], "single-4"))

    only_a = _run([a], target)  # given fewer folders: the dataset is what they hold, the other shards dropped
    assert only_a["shards"] == 1 and only_a["shards_ingested"] == 0
    _assert_same(target, _single(tmp_path, [a], "single-5"))
    assert sorted(p.name for p in (target / ".reconcile-kept").iterdir()) == [
        "lock", "shard-0", "shard-0.duckdb", "state.json"]


def test_a_run_stopped_before_the_dataset_is_installed_leaves_its_shards_to_be_read_again(tmp_path, here, monkeypatch):
    inputs = tmp_path / "in"
    _journal(inputs / "a" / "night.jsonl", ["a1"])
    grown = _journal(inputs / "b" / "night.jsonl", ["b1"])
    target = tmp_path / "dataset"
    _run([inputs], target)
    _journal(grown, ["b2"], day=29)

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # after the shard's store and export were brought up to date

    with monkeypatch.context() as patch:
        patch.setattr(distributed, "merge_shards", stopped)
        with pytest.raises(KeyboardInterrupt):
            _run([inputs], target)
    assert json.loads((target / ".reconcile-kept" / "state.json").read_text())["shards"].keys() == {"0"}
    after = _run([inputs], target)
    assert after["shards_ingested"] == 1 and here[-1] == [1]  # b's shard is not trusted: it is read again
    _assert_same(target, _single(tmp_path, [inputs], "single"))


def test_another_window_or_version_starts_the_kept_shards_over(tmp_path, here, monkeypatch):
    inputs = tmp_path / "in"
    _journal(inputs / "a" / "night.jsonl", ["a1"])
    _journal(inputs / "b" / "night.jsonl", ["b1"], day=29)
    target = tmp_path / "dataset"
    _run([inputs], target)
    window = (dt.date(2026, 11, 29), dt.date(2026, 12, 1))
    narrowed = _run([inputs], target, window=window)
    assert narrowed["shards_ingested"] == 2  # nothing kept under another window is trusted
    _assert_same(target, _single(tmp_path, [inputs], "single", window=window))
    monkeypatch.setattr("reconcile.engines.kept_shards.__version__", "9.9.9")
    assert _run([inputs], target, window=window)["shards_ingested"] == 2
    assert _run([inputs], target, window=window)["shards_ingested"] == 0


def test_a_second_ingest_into_the_same_dataset_at_once_is_refused(tmp_path):
    target = tmp_path / "dataset"
    first = KeptShards(target, "null")
    try:
        with pytest.raises(BadInput, match="another distributed ingest into .*dataset is running"):
            KeptShards(target, "null")
    finally:
        first.close()
    KeptShards(target, "null").close()  # free again once the first is done


def test_kept_groups_stay_in_their_shards_and_new_ones_fill_free_shards_then_the_lightest(tmp_path):
    files = {}
    for folder, size in (("a", 100), ("b", 10), ("c", 50), ("d", 5)):
        path = tmp_path / folder / "x.jsonl"
        path.parent.mkdir()
        path.write_bytes(b"x" * size)
        files[folder] = (path, False)
    key = {folder: str(tmp_path / folder) for folder in files}
    placed, groups = place([files["a"], files["b"]], tasks=3, kept={key["b"]: 0})
    assert groups == {key["b"]: 0, key["a"]: 1}  # b stays in shard 0; a takes a free shard
    placed, groups = place(list(files.values()), tasks=3, kept=groups)
    assert groups[key["a"]] == 1 and groups[key["b"]] == 0 and groups[key["c"]] == 2  # c: the last free shard
    assert groups[key["d"]] == 0  # no shard free: d goes to the lightest (b's 10 bytes)
    assert sorted(placed) == [0, 1, 2] and placed[0] == [(str(files["b"][0]), False), (str(files["d"][0]), False)]
    fresh, _ = place(list(files.values()), tasks=2)  # nothing kept: packed by bytes as before
    assert sorted(len(v) for v in fresh.values()) == [1, 3]


def test_a_failed_first_run_leaves_no_dataset_folder(tmp_path, here, monkeypatch):
    _journal(tmp_path / "in" / "a" / "night.jsonl", ["a1"])
    monkeypatch.setattr(distributed, "merge_shards", lambda *a, **k: (_ for _ in ()).throw(OSError("planted")))
    with pytest.raises(OSError, match="planted"):
        _run([tmp_path / "in"], tmp_path / "out" / "dataset")
    assert not (tmp_path / "out" / "dataset").exists() and os.listdir(tmp_path / "out") == []
