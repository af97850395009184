"""The finance report says, per group, whether any of its runs records its tool catalogue (else "not recorded").

Expected values come from the journal's own records (which run_start lists its tools), in plain Python.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "hostile"))

import bases  # noqa: E402
from bases import jsonl  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.ingest.driver import ingest  # noqa: E402
from reconcile.reports.reporting import finance_context  # noqa: E402
from reconcile.engine import DuckDBEngine


def test_each_grouping_says_which_groups_record_a_catalogue(tmp_path):
    records = []
    for uid, agent, listed in [("a", "listed", True), ("b", "listed", False), ("c", "unlisted", False)]:
        run = bases.native(uid)
        run[0]["agent"] = agent
        if not listed:
            del run[0]["tools"]
        records += run
    (tmp_path / "night.jsonl").write_bytes(jsonl(records))
    expected = {}  # agent -> whether one of its runs lists its tools, from the records themselves
    for record in records:
        if record["type"] == "run_start":
            expected[record["agent"]] = expected.get(record["agent"], False) or "tools" in record
    with store.connect(tmp_path / "s.duckdb") as con:
        ingest(con, [tmp_path / "night.jsonl"])
        with store.frozen_views(DuckDBEngine(con)):
            context = finance_context(DuckDBEngine(con))
    by_agent = {g["key"]: g["catalogue_recorded"] for g in context["by"]["agent"]["groups"]}
    assert by_agent == expected == {"listed": True, "unlisted": False}
    assert context["by"]["agent"]["total"]["catalogue_recorded"] is True
    by_model = context["by"]["model"]
    assert [g["catalogue_recorded"] for g in by_model["groups"]] == [True]  # one model, one listing run among three
