"""``reconcile check --findings-to DIR``: every finding written as a Parquet dataset, only counts come back.

The written table is read here with pyarrow alone (no reconcile code) and compared with what an ordinary
``check --json`` lists: the same findings, none lost, none added. ``tests/test_spark.py`` writes it on Spark.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from reconcile.errors import ExitCode


def _table(folder: Path) -> list[tuple]:
    """The findings table as written, read by pyarrow from its files, sorted."""
    rows = []
    for file in sorted((folder / "findings").glob("*.parquet")):
        rows += [(r["check"], r["severity"], r["run_id"], r["step"], r["detail"]) for r in pq.read_table(file).to_pylist()]
    return sorted(rows, key=repr)


def _listed(report: dict) -> list[tuple]:
    return sorted(((f["check"], f["severity"], f["run_id"], f["step"], f["detail"]) for f in report["findings"]), key=repr)


def test_every_finding_is_written_and_only_the_counts_come_back(cli, night_db, tmp_path):
    listed = cli("check", "--db", night_db, "--json", "--exit-zero").json()
    written = cli("check", "--db", night_db, "--json", "--exit-zero", "--findings-to", tmp_path / "found")
    assert written.code == 0, written.err
    report = written.json()
    table = _table(tmp_path / "found")
    assert len(table) > 40 and table == _listed(listed)  # the same findings, each once
    summary = json.loads((tmp_path / "found" / "summary.json").read_text())
    assert summary["format"] == "reconcile-findings" and summary["table"] == "findings"
    counts = {}
    for check, *_ in table:
        counts[check] = counts.get(check, 0) + 1
    for ours, theirs, kept in zip(report["checks"], listed["checks"], summary["checks"]):
        assert ours["name"] == theirs["name"] == kept["name"]
        assert ours["failures"] == theirs["failures"] == kept["failures"] == counts.get(ours["name"], 0), ours["name"]
        assert ours["outcome"] == theirs["outcome"] and ours["not_judged"] == theirs["not_judged"]
    assert report["findings_to"] == str((tmp_path / "found" / "findings").resolve())
    assert not list(tmp_path.glob(".reconcile-findings-*"))  # the staging folder is gone


def test_a_check_with_many_findings_sends_back_only_its_first(cli, night_db, tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "every_step.sql").write_text(
        "-- name: every_step\n-- invariant: planted: a finding on every model step\n-- severity: warn\n"
        "-- remedy: none, a test\nselect run_id, idx as step, 'step ' || idx as detail from steps where kind = 'model'\n")
    steps = cli("sql", "--db", night_db, "--json", "select count(*) as n from steps where kind = 'model'").json()[0]["n"]
    result = cli("check", "--db", night_db, "--only", "every_step", "--checks-dir", mine, "--json", "--exit-zero",
                 "--findings-to", tmp_path / "found")
    assert result.code == 0, result.err
    report = result.json()
    assert report["checks"][0]["failures"] == steps > 100  # counted where they were computed
    assert len(report["findings"]) == 25  # only the first come back, in the report's order
    table = _table(tmp_path / "found")
    assert len(table) == steps
    first = sorted(table, key=lambda r: (r[2], r[3], r[4]))[:25]
    assert [(f["run_id"], f["step"]) for f in report["findings"]] == [(r[2], r[3]) for r in first]
    printed = cli("check", "--db", night_db, "--only", "every_step", "--checks-dir", mine, "--exit-zero",
                  "--findings-to", tmp_path / "found")
    assert f"and {steps - 25:,} more of this check's findings, every one in" in printed.out


def test_a_second_run_replaces_the_dataset_and_nothing_found_is_still_a_table(cli, night_db, tmp_path):
    found = tmp_path / "found"
    assert cli("check", "--db", night_db, "--exit-zero", "--findings-to", found).code == 0
    assert len(_table(found)) > 40
    quiet = cli("check", "--db", night_db, "--only", "models_priced", "--json", "--exit-zero", "--findings-to", found)
    assert quiet.code == 0 and quiet.json()["checks"][0]["failures"] == 1  # the sample night plants one
    assert [r[0] for r in _table(found)] == ["models_priced"]  # replaced, not added to
    none = cli("check", "--db", night_db, "--only", "models_priced", "--agent", "nobody-at-all", "--json",
               "--findings-to", found)
    assert none.code == 0 and _table(found) == []
    names = pq.read_schema(next((found / "findings").glob("*.parquet"))).names
    assert names == ["check", "severity", "run_id", "step", "detail"]


def test_a_folder_that_is_not_a_findings_dataset_is_refused_untouched(cli, night_db, tmp_path):
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / "notes.txt").write_text("keep me")
    refused = cli("check", "--db", night_db, "--findings-to", theirs)
    assert refused.code == ExitCode.BAD_INPUT and "has files but no summary.json" in refused.err
    assert [p.name for p in theirs.iterdir()] == ["notes.txt"]
    (tmp_path / "a-file").write_text("x")
    assert "is a file" in cli("check", "--db", night_db, "--findings-to", tmp_path / "a-file").err
    both = cli("check", "--db", night_db, "--csv", "--findings-to", tmp_path / "found")
    assert both.code == ExitCode.BAD_INPUT and "--csv and --parquet would list them again" in both.err
    url = cli("check", "--db", night_db, "--findings-to", "s3://bucket/found")
    assert url.code == ExitCode.BAD_INPUT and "give a local folder" in url.err
    web = cli("check", "--db", night_db, "--findings-to", "https://example.com/found")
    assert web.code == ExitCode.BAD_INPUT and "https://example.com/found" in web.err
    local = cli("check", "--db", night_db, "--exit-zero", "--findings-to", f"file://{tmp_path / 'as-url'}")
    assert local.code == 0 and (tmp_path / "as-url" / "summary.json").is_file()  # a file:// URL is a folder
