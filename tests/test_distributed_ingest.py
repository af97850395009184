"""Distributed ingest without a cluster: the shards, and the merge that settles what crosses them.

The executors' part (``ingest_shard``) is plain Python, so the shards and the merge are tested here in the
default suite; ``tests/test_spark.py`` runs the whole thing on Spark.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import duckdb
import pytest

from journals import StepClock, write_simple_run
from reconcile import store
from reconcile.engines.distributed import distributed_ingest, ingest_shard, shard_key, shards_of, verify_shards
from reconcile.engines.export import export, previous_manifest
from reconcile.engines.merge import merge_shards, settle_part
from reconcile.errors import BadInput
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out


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


# the tables whose rows say what happened (not when they were ingested): a merge must equal the single machine's
RUN_TABLES = ("runs", "steps", "tool_calls", "run_tools")
FACTS = (*RUN_TABLES, "usage_buckets", "billed_costs")


def _merged(tmp_path: Path, groups: list[list[Path]], target: Path, staging: str = "staging"):
    """Each group ingested as a shard (the executors' code), then merged into ``target``."""
    folder = tmp_path / staging
    for number, files in enumerate(groups):
        ingest_shard(number, [(str(f), False) for f in files], str(folder), None)
    shards = [folder / f"shard-{n}" for n in range(len(groups))]
    return merge_shards(shards, folder, target, previous_manifest(target), None)


def _single(tmp_path: Path, paths: list[Path]) -> Path:
    """The same files ingested on one machine and exported: what the merge must equal."""
    db, dataset = tmp_path / "single.duckdb", tmp_path / "single"
    with store.connect(db) as con:
        ingest(con, paths)
    export(db, dataset)
    return dataset


def _rows(dataset: Path, name: str) -> list[tuple]:
    """A table's rows read straight from the Parquet files (no reconcile code), sorted."""
    whole = dataset / f"{name}.parquet"
    files = [str(whole)] if whole.exists() else [str(f) for f in sorted(dataset.glob(f"{name}/day=*/*.parquet"))]
    if not files:
        return []
    con = duckdb.connect()
    columns = [c for (c, *_) in con.execute("describe select * from read_parquet(?)", [files]).fetchall()]
    when_loaded = " exclude (loaded_at)" if "loaded_at" in columns else ""  # the time of each ingest, not a fact
    return sorted(con.execute(f"select *{when_loaded} from read_parquet(?)", [files]).fetchall(), key=repr)


def _assert_same(merged: Path, single: Path) -> None:
    ours, theirs = (json.loads((d / "manifest.json").read_text()) for d in (merged, single))
    for name in FACTS:
        if name in RUN_TABLES:  # rows and fingerprints per day (a bucket's fingerprint includes when it was loaded)
            assert ours["tables"][name]["days"] == theirs["tables"][name]["days"], name
        assert _rows(merged, name) == _rows(single, name), name
    assert _rows(merged, "ingest_deferrals") == _rows(single, "ingest_deferrals")
    kept = ("path", "sha256", "format", "lines", "loaded", "rejected", "skipped", "status", "reason")

    def facts(entry: dict, tail_read: bool) -> list:  # a file read by its tail has a digest of its reads (tail:…)
        return [None if k == "sha256" and tail_read else entry[k] for k in kept]

    read_by_tail = [f["sha256"].startswith("tail:") for f in ours["source_files"]]
    assert [facts(f, t) for f, t in zip(ours["source_files"], read_by_tail)] == [
        facts(f, t) for f, t in zip(theirs["source_files"], read_by_tail)]
    assert len(ours["source_files"]) == len(theirs["source_files"])
    for name in ours["tables"]:
        assert ours["tables"][name]["rows"] == theirs["tables"][name]["rows"], name


def test_a_run_seen_in_two_shards_is_settled_as_a_single_machine_would(tmp_path):
    first = _journal(tmp_path / "a", "night", ["solo-a", "twice"])
    second = _journal(tmp_path / "b", "night", ["twice", "solo-b"])  # the same run, journalled again elsewhere
    apart = _journal(tmp_path / "c", "night", ["solo-c"])
    result, again, read = _merged(tmp_path, [[first], [second], [apart]], tmp_path / "merged")
    assert again == [str(first), str(second)]  # both hold 'twice': loaded again, in path order
    assert read == 2  # the shard sharing nothing with them is merged from its manifest, not read
    single = _single(tmp_path, [tmp_path / "a", tmp_path / "b", tmp_path / "c"])
    _assert_same(tmp_path / "merged", single)
    owners = dict((r[0], r[1]) for r in duckdb.connect().execute(
        "select run_id, source_file from read_parquet(?)", [[str(f) for f in (tmp_path / "merged").glob("runs/*/*")]]
    ).fetchall())
    assert owners["twice"] == str(first) and owners["solo-c"] == str(apart)  # the first file keeps it
    assert result.written["runs"] == ["2026-11-28"]


def test_shards_linked_by_what_they_share_are_settled_in_groups_of_their_own(tmp_path):
    """a–b share a run, c–d another, e–f–g a chain of two: three groups, each settled apart (on a cluster, one
    task each), h untouched; the whole equals the single machine's."""
    runs = {"a": ["x1", "ab"], "b": ["ab"], "c": ["cd"], "d": ["cd", "d1"], "e": ["ef"], "f": ["ef", "fg"],
            "g": ["fg"], "h": ["h1"]}
    groups = [[_journal(tmp_path / name, "night", ids)] for name, ids in runs.items()]
    jobs = []

    def settle(todo):  # as on_executors would, one task per job, here in turn
        jobs.extend(json.loads(job) for job in todo)
        return [settle_part(job) for job in todo]

    folder = tmp_path / "staging"
    for number, files in enumerate(groups):
        ingest_shard(number, [(str(f), False) for f in files], str(folder), None)
    shards = [folder / f"shard-{n}" for n in range(len(groups))]
    _, again, read = merge_shards(shards, folder, tmp_path / "merged", None, None, settle=settle)
    assert [[Path(s).name for s in job["shards"]] for job in jobs] == [
        ["shard-0", "shard-1"], ["shard-2", "shard-3"], ["shard-4", "shard-5", "shard-6"]]
    assert [len(job["files"]) for job in jobs] == [2, 2, 3] and read == 7 and len(again) == 7
    _assert_same(tmp_path / "merged", _single(tmp_path, [tmp_path / name for name in runs]))


def test_a_settled_group_the_driver_cannot_see_stops_the_merge(tmp_path):
    groups = [[_journal(tmp_path / "a", "night", ["ab"])], [_journal(tmp_path / "b", "night", ["ab"])]]
    with pytest.raises(BadInput, match="settling shards 0, 1: the result is not in .*settled-0 as the driver sees"):
        folder = tmp_path / "staging"
        for number, files in enumerate(groups):
            ingest_shard(number, [(str(f), False) for f in files], str(folder), None)
        merge_shards([folder / "shard-0", folder / "shard-1"], folder, tmp_path / "merged", None, None,
                     settle=lambda todo: [])  # the executors wrote where the driver does not look
    assert not (tmp_path / "merged").exists()


def test_a_provider_bucket_in_two_shards_is_settled_as_a_single_machine_would(tmp_path):
    from conftest import SAMPLE_RUNS

    report = Path(SAMPLE_RUNS) / "provider" / "anthropic_usage_report.json"
    copies = []
    for folder in ("p1", "p2"):  # the same export downloaded twice, into two folders
        (tmp_path / folder).mkdir()
        copies.append(Path(shutil.copy(report, tmp_path / folder / report.name)))
    journal = _journal(tmp_path / "j", "night", ["r1"])
    _, again, read = _merged(tmp_path, [[copies[0]], [copies[1]], [journal]], tmp_path / "merged")
    assert again == [str(c) for c in copies] and read == 2
    _assert_same(tmp_path / "merged", _single(tmp_path, [tmp_path / "p1", tmp_path / "p2", tmp_path / "j"]))


def test_the_sample_night_merged_from_shards_equals_its_single_machine_export(tmp_path):
    from conftest import SAMPLE_RUNS

    night = Path(SAMPLE_RUNS)
    groups = [sorted(p for p in (night / folder).iterdir() if p.suffix in (".json", ".jsonl"))
              for folder in ("2026-11-28", "provider")]
    _, again, read = _merged(tmp_path, groups, tmp_path / "merged", staging="st[a]g*ing")  # a name is never a pattern
    assert (again, read) == ([], 0)  # journals and provider exports share no run and no bucket
    _assert_same(tmp_path / "merged", _single(tmp_path, [night / "2026-11-28", night / "provider"]))


def _files(dataset: Path, name: str, day: str) -> dict[str, tuple[int, int]]:
    return {f.name: (f.stat().st_ino, f.stat().st_mtime_ns) for f in (dataset / name / f"day={day}").iterdir()}


def test_a_merge_rewrites_only_the_days_whose_input_changed(tmp_path):
    target = tmp_path / "dataset"
    groups = [[_journal(tmp_path / "a", "night", ["r1", "r2"])], [_journal(tmp_path / "b", "night", ["r3"])]]
    first, _, _ = _merged(tmp_path, groups, target, staging="s1")
    assert first.written["steps"] == ["2026-11-28"]
    before = {name: _files(target, name, "2026-11-28") for name in RUN_TABLES}
    later = Path(tmp_path / "b" / "later.jsonl")
    with Journal(later, clock=StepClock(dt.datetime(2026, 11, 30, 9, tzinfo=dt.timezone.utc))) as journal:
        write_simple_run(journal, "r4")
    second, _, _ = _merged(tmp_path, [groups[0], [*groups[1], later]], target, staging="s2")
    for name in RUN_TABLES:
        assert second.written[name] == ["2026-11-30"] and second.unchanged[name] == 1, name
        assert _files(target, name, "2026-11-28") == before[name], name  # the old day was not touched
    assert _rows(target, "runs") and len(_rows(target, "runs")) == 4
    third, _, _ = _merged(tmp_path, [groups[0], [*groups[1], later]], target, staging="s3")
    assert all(third.written[name] == [] for name in FACTS)  # the same input: no data day written
    later.unlink()
    fourth, _, _ = _merged(tmp_path, groups, target, staging="s4")
    assert fourth.removed["runs"] == ["2026-11-30"] and not (target / "runs" / "day=2026-11-30").exists()
    _assert_same(target, _single(tmp_path, [tmp_path / "a", tmp_path / "b"]))


def test_a_shard_that_does_not_account_for_its_files_stops_the_ingest(tmp_path):
    """Never a silent empty dataset: a shard the driver cannot read back, or an input an executor could not
    read where the driver can, is an error naming it (issue 31), before the dataset is touched."""
    good = _journal(tmp_path / "a", "night", ["r1"])
    staging = tmp_path / "staging"
    shards = {0: [(str(good), False)]}
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
        verify_shards({0: [(str(hidden / "night.jsonl"), False)]}, [blind], tmp_path / "blind")
    shutil.rmtree(staging / "shard-0")  # the shard wrote where the driver does not see it
    with pytest.raises(BadInput, match="shard 0 .*not in .*shard-0 as the driver sees it"):
        verify_shards(shards, [summary], staging)
    with pytest.raises(BadInput, match="2 file.s. given, 1 ingested"):
        verify_shards({0: [*shards[0], (str(tmp_path / "a" / "other.jsonl"), False)]}, [summary], staging)


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


def test_a_dataset_folder_that_cannot_take_the_ingest_is_refused_before_spark_starts(tmp_path, monkeypatch):
    import reconcile.engines.spark as spark_engine

    class Unwanted:
        def __init__(self, **_):
            raise AssertionError("Spark was started for a --to that is refused")

    monkeypatch.setattr(spark_engine, "SparkEngine", Unwanted)
    journal = str(_journal(tmp_path / "a", "night", ["r1"]))
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(BadInput, match="a-file: is a file"):
        distributed_ingest([journal], tmp_path / "a-file")
    (tmp_path / "someone-elses").mkdir()
    (tmp_path / "someone-elses" / "notes.txt").write_text("keep me")
    with pytest.raises(BadInput, match="has files but no manifest.json"):
        distributed_ingest([journal], tmp_path / "someone-elses")
    assert (tmp_path / "someone-elses" / "notes.txt").read_text() == "keep me"
