"""Distributed ingest without a cluster: the shards, and the merge that settles what crosses them.

The executors' part (``ingest_shard``) is plain Python, so the shards and the merge are tested here in the
default suite; ``tests/test_spark.py`` runs the whole thing on Spark.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest

from journals import StepClock, write_simple_run
from reconcile import store
from reconcile.engines.distributed import _merge, distributed_ingest, ingest_shard, shard_key, shards_of, verify_shards
from reconcile.errors import BadInput
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal


def test_a_session_and_its_subagents_share_a_shard():
    project = Path("/h/.claude/projects/-work-app")
    session = project / "0d7e.jsonl"
    agent = project / "0d7e" / "subagents" / "agent-a1.jsonl"
    assert shard_key(session) == shard_key(agent) == str(project)
    other = Path("/h/.codex/sessions/2026/11/28/rollout-1.jsonl")
    shards = shards_of([(agent, False), (other, False), (session, False)])
    assert [sorted(p for p, _ in shard) for shard in shards] == [  # shards in the order of their folders
        sorted([str(agent), str(session)]), [str(other)]]


def _journal(folder: Path, name: str, runs: list[str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    with Journal(path, clock=StepClock(dt.datetime(2026, 11, 28, 22, tzinfo=dt.timezone.utc))) as journal:
        for run in runs:
            write_simple_run(journal, run)
    return path


def _contents(con) -> list[tuple]:
    return con.execute("""select r.run_id, r.source_file, count(s.idx), sum(s.output_tokens)
                          from runs r left join steps s using (run_id) group by all order by all""").fetchall()


def test_a_run_seen_in_two_shards_is_settled_as_a_single_machine_would(tmp_path):
    first = _journal(tmp_path / "a", "night", ["solo-a", "twice"])
    second = _journal(tmp_path / "b", "night", ["twice", "solo-b"])  # the same run, journalled again elsewhere
    with store.connect(tmp_path / "single.duckdb") as con:
        ingest(con, [tmp_path / "a", tmp_path / "b"])
        expected = _contents(con)
        files = con.execute("select path, lines, loaded, rejected, skipped from ingested_files order by path").fetchall()
    staging = tmp_path / "staging"
    for number, path in enumerate([first, second]):
        ingest_shard(number, [(str(path), False)], str(staging), None)
    merged = tmp_path / "merged.duckdb"
    again = _merge(merged, [staging / "shard-0", staging / "shard-1"], None)
    assert again == [str(first), str(second)]  # both hold 'twice': loaded again, in path order
    with store.connect(merged, read_only=True) as con:
        assert _contents(con) == expected
        assert [r for r in expected if r[0] == "twice"][0][1] == str(first)  # the first file keeps it
        assert con.execute("select path, lines, loaded, rejected, skipped from ingested_files order by path"
                           ).fetchall() == files  # every line still accounted for


def test_shards_that_share_nothing_are_merged_without_loading_again(tmp_path):
    paths = [_journal(tmp_path / "a", "one", ["r1"]), _journal(tmp_path / "b", "two", ["r2"])]
    staging = tmp_path / "st[a]g*ing"  # a folder's name is data, never a pattern
    for number, path in enumerate(paths):
        ingest_shard(number, [(str(path), False)], str(staging), None)
    assert _merge(tmp_path / "m.duckdb", [staging / "shard-0", staging / "shard-1"], None) == []
    with store.connect(tmp_path / "m.duckdb", read_only=True) as con:
        assert [r[0] for r in _contents(con)] == ["r1", "r2"]


def test_a_shard_that_does_not_account_for_its_files_stops_the_ingest(tmp_path):
    """Never a silent empty dataset: a shard the driver cannot read back, or an input an executor could not
    read where the driver can, is an error naming it (issue 31), before the dataset is touched."""
    good = _journal(tmp_path / "a", "night", ["r1"])
    staging = tmp_path / "staging"
    shards = [[(str(good), False)]]
    summary = ingest_shard(0, shards[0], str(staging), None)
    assert summary["files"] == 1 and summary["loaded"] > 0 and json.loads(summary["unreadable"]) == []
    verify_shards(shards, [summary], staging)  # accounted for, and readable by the driver: passes
    with pytest.raises(BadInput, match="shard 0 .*no executor reported"):
        verify_shards(shards, [], staging)
    # the executor saw nothing at the path the driver gave: planted by handing it a path only the driver has
    hidden = tmp_path / "elsewhere"
    blind = ingest_shard(0, [(str(hidden / "night.jsonl"), False)], str(tmp_path / "blind"), None)
    hidden.mkdir()
    (hidden / "night.jsonl").write_bytes(good.read_bytes())  # now the driver can read it
    with pytest.raises(BadInput, match=r"executors cannot read .*elsewhere/night\.jsonl .*which the driver can"):
        verify_shards([[(str(hidden / "night.jsonl"), False)]], [blind], tmp_path / "blind")
    shutil.rmtree(staging / "shard-0")  # the shard wrote where the driver does not see it
    with pytest.raises(BadInput, match="shard 0 .*not in .*shard-0 as the driver sees it"):
        verify_shards(shards, [summary], staging)
    with pytest.raises(BadInput, match="2 file.s. given, 1 ingested"):
        verify_shards([[*shards[0], (str(tmp_path / "a" / "other.jsonl"), False)]], [summary], staging)


def test_a_shard_counts_the_files_it_passes_over_as_the_single_machine_ingest_does(tmp_path):
    folder = tmp_path / "mixed"
    journal = _journal(folder, "night", ["r1"])
    (folder / "notes.jsonl").write_text('{"hello": "world"}\n')  # JSON lines of no format reconcile reads
    with store.connect(tmp_path / "single.duckdb") as con:
        single = ingest(con, [folder]).totals
    summary = ingest_shard(0, [(str(journal), False), (str(folder / "notes.jsonl"), False)], str(tmp_path / "st"), None)
    assert (summary["files"], summary["passed_over"]) == (single["files"], single["passed_over"]) == (1, 1)


def test_a_failed_distributed_ingest_leaves_no_staging_behind(tmp_path, monkeypatch):
    import reconcile.engines.spark as spark_engine

    class NoCluster:
        def __init__(self, **_):
            raise BadInput("cannot start Spark (spark://nowhere:7077): planted")

    monkeypatch.setattr(spark_engine, "SparkEngine", NoCluster)
    with pytest.raises(BadInput, match="planted"):
        distributed_ingest([str(_journal(tmp_path / "a", "night", ["r1"]))], tmp_path / "out" / "dataset")
    assert list((tmp_path / "out").iterdir()) == []


def test_no_file_to_ingest_is_refused_not_an_empty_dataset(tmp_path):
    (tmp_path / "empty").mkdir()
    target = tmp_path / "dataset"
    target.mkdir()
    (target / "manifest.json").write_text("{}")  # an existing dataset: must stay as it is
    with pytest.raises(BadInput, match="no file to ingest in .*empty.*nothing was written"):
        distributed_ingest([str(tmp_path / "empty")], target)
    assert [p.name for p in target.iterdir()] == ["manifest.json"] and not list(tmp_path.glob(".reconcile-shards-*"))


def test_an_unreachable_master_fails_in_seconds_with_its_address(tmp_path):
    """Issue 31: not a minute of retries with "All masters are unresponsive" hidden in the log."""
    import socket

    from reconcile.engines.spark import check_reachable

    with socket.socket() as closed:  # a port nothing listens on: bound, then released
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    with pytest.raises(BadInput, match=rf"cannot reach the Spark master at spark://127.0.0.1:{port}: .*refused"):
        check_reachable(f"spark://127.0.0.1:{port}")
    with pytest.raises(BadInput, match="Spark Connect server at sc://127.0.0.1"):
        check_reachable(f"sc://127.0.0.1:{port}")
    with socket.socket() as listening:  # one of two masters answering is enough
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        check_reachable(f"spark://127.0.0.1:{port},127.0.0.1:{listening.getsockname()[1]}")
    check_reachable("local[2]")


def test_shards_are_balanced_by_bytes_and_a_folder_is_never_split(tmp_path):
    """Issue 31: 28 folders hashed into 15 tasks put up to 4 in one. With the cluster's task count the folders
    are packed by size: the largest first, each into the lightest shard."""
    sizes = {"big": [9000], "mid": [3000, 2000], "small1": [1500], "small2": [1500], "small3": [1000],
             "tiny": [100, 100]}
    files = []
    for folder, lengths in sizes.items():
        (tmp_path / folder).mkdir()
        for n, length in enumerate(lengths):
            path = tmp_path / folder / f"{n}.jsonl"
            path.write_bytes(b"x" * length)
            files.append((path, False))
    shards = shards_of(files, tasks=3)
    weights = sorted(sum((Path(p).stat().st_size for p, _ in shard)) for shard in shards)
    assert weights == [4200, 5000, 9000]  # plain hashing or folder order would give 9000 + more in one task
    folders = [{Path(p).parent.name for p, _ in shard} for shard in shards]
    assert sorted(map(sorted, folders)) == [["big"], ["mid"], ["small1", "small2", "small3", "tiny"]]
    assert len(shards_of(files)) == len(sizes) == len(shards_of(files, tasks=10))  # enough tasks: one folder each
