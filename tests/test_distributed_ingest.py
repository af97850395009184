"""Distributed ingest without a cluster: the shards, and the merge that settles what crosses them.

The executors' part (``ingest_shard``) is plain Python, so the shards and the merge are tested here in the
default suite; ``tests/test_spark.py`` runs the whole thing on Spark.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from journals import StepClock, write_simple_run
from reconcile import store
from reconcile.engines.distributed import _merge, ingest_shard, shard_key, shards_of
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
