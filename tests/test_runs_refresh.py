"""``reconcile runs PATH…`` (issue 48, target 2): load what changed, then list, in one command.

The expectations come from the journal lines themselves (run ids read with ``json``), and from the
two commands the loop took before (``ingest`` then ``runs``), never from the store's tables.
"""

from __future__ import annotations

import json
import shutil

from reconcile.errors import ExitCode
from conftest import SAMPLE_NIGHT


def _run_ids(folder) -> set[str]:
    return {json.loads(line)["run_id"] for path in folder.glob("*.jsonl") for line in path.read_text().splitlines()
            if line.strip() and json.loads(line).get("type") == "run_start"}


def test_runs_path_lists_what_ingest_then_runs_lists(cli, tmp_path):
    night = tmp_path / "night"
    shutil.copytree(SAMPLE_NIGHT, night)
    one = cli("runs", night, "--json", "--db", tmp_path / "one.duckdb")
    assert one.code == ExitCode.OK and "ingested 3 file(s)" in one.err
    assert cli("ingest", night, "--db", tmp_path / "two.duckdb").code == ExitCode.OK
    two = cli("runs", "--json", "--db", tmp_path / "two.duckdb")
    assert one.json() == two.json()
    assert {row["run_id"] for row in one.json()} == _run_ids(night)


def test_a_grown_journal_is_loaded_and_an_unchanged_folder_says_nothing(cli, tmp_path):
    night = tmp_path / "night"
    shutil.copytree(SAMPLE_NIGHT, night)
    db = tmp_path / "store.duckdb"
    assert cli("runs", night, "--db", db).code == ExitCode.OK
    again = cli("runs", night, "--db", db, "--json")
    assert again.code == ExitCode.OK and again.err == ""  # nothing changed: no line about loading
    # Grow one journal by another's first run, under a new id (an append, as a harness writes).
    source = (night / "triage.jsonl").read_text().splitlines()
    first = json.loads(source[0])["run_id"]
    grown = [line.replace(f'"run_id":"{first}"', '"run_id":"beef"') for line in source
             if f'"run_id":"{first}"' in line]
    with (night / "coder.jsonl").open("a") as handle:
        handle.write("\n".join(grown) + "\n")
    after = cli("runs", night, "--db", db, "--json")
    assert after.code == ExitCode.OK and "ingested" in after.err
    assert {row["run_id"] for row in after.json()} == _run_ids(night) | {"beef"}


def test_a_path_that_is_not_there_exits_2_naming_it(cli, tmp_path):
    result = cli("runs", tmp_path / "no-such-folder", "--db", tmp_path / "store.duckdb")
    assert result.code == ExitCode.BAD_INPUT and "no-such-folder" in result.err


def test_a_view_dropped_by_hand_is_made_again_by_the_next_writing_open(tmp_path):
    import duckdb

    from reconcile import store

    path = tmp_path / "store.duckdb"
    store.connect(path).close()
    with duckdb.connect(str(path)) as con:
        con.execute("drop view run_view")
    with store.connect(path) as con:
        assert con.execute("select count(*) from run_view").fetchall() == [(0,)]
