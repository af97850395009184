"""The documented views are SQL files (``reconcile/store/sql/views/<name>.sql``), loaded by name, in order."""

from __future__ import annotations

from pathlib import Path

import duckdb
import sqlglot
from sqlglot import exp

from reconcile import store
from reconcile.docs_gen import RELATIONS
from reconcile.store.facts import RUN_FACT_NAMES
from reconcile.store.views import VIEW_NAMES, view_query

FOLDER = Path(__file__).resolve().parent.parent / "reconcile" / "store" / "sql" / "views"


def test_each_view_is_one_headed_file_and_documented():
    assert sorted(p.stem for p in FOLDER.glob("*.sql")) == sorted(VIEW_NAMES)
    usage_page = (FOLDER.parents[3] / "docs" / "usage.md").read_text()  # the three-way match's views
    for name in VIEW_NAMES:
        first = view_query(name).splitlines()[0]
        assert first.startswith(f"-- {name}: "), f"{name}.sql: begin with '-- {name}: what it holds'"
        assert name in RELATIONS or f"`{name}`" in usage_page, \
            f"{name}: describe it in docs_gen.RELATIONS (docs/sql-api.md) or docs/usage.md"


def test_a_view_reads_only_the_views_before_it():
    for number, name in enumerate(VIEW_NAMES):
        tree = sqlglot.parse_one(view_query(name), read="duckdb")
        ctes = {cte.alias for cte in tree.find_all(exp.CTE)}
        read = {table.name for table in tree.find_all(exp.Table)} - ctes
        later = sorted(read & set(VIEW_NAMES[number:]))
        assert not later, f"{name} reads {later}, created after it: move it down VIEW_NAMES"


def test_run_facts_has_a_column_for_each_run_fact_in_order():
    con = store.connect(":memory:")
    try:
        columns = [row[0] for row in con.execute("describe run_facts").fetchall()]
    finally:
        con.close()
    assert columns == ["run_id", "source_format", "agent", *RUN_FACT_NAMES]


def test_chosen_costs_answers_each_source_asked_once_a_run(night_db):
    with duckdb.connect(str(night_db), read_only=True) as con:
        runs = con.execute("select count(*) from runs").fetchall()[0][0]
        per_source = dict(con.execute("select asked, count(*) from chosen_costs group by 1").fetchall())
        # asked for ours or harness, that is the source; auto takes ours only where ours leaves nothing out
        wrong = con.execute("""select count(*) from chosen_costs c join run_costs r using (run_id)
                               where (asked in ('ours', 'harness') and source <> asked)
                                  or (asked = 'auto' and (source = 'ours') <> (r.ours_complete
                                      or r.harness_micros is null))""").fetchall()[0][0]
    assert per_source == {"auto": runs, "ours": runs, "harness": runs} and runs > 0
    assert wrong == 0
