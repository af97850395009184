"""The engine interface (``reconcile/engine.py``): what every analysis and check asks, and the capability flags.

An engine that declares no capability (no transactions, no temp table hiding a view, no statement parser)
must still give every check's findings and the cost report exactly as DuckDB does; what needs a capability
is refused in words, not attempted.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pyarrow
import pytest

from reconcile import store
from reconcile.analyses.costs import cost_report
from reconcile.analyses.inspect import QueryError, run_select
from reconcile.checks import load_checks, run_checks
from reconcile.engine import Capabilities, DuckDBEngine, Engine
from reconcile.engines.dataset import reading

PACKAGE = Path(__file__).resolve().parent.parent / "reconcile"


class Plain(Engine):
    """DuckDB underneath, declaring nothing beyond answering queries (as a new engine might start)."""

    name = "plain"
    capabilities = Capabilities(transactions=False, temp_tables_hide_views=False, parses_statements=False)

    def __init__(self, inner: DuckDBEngine):
        self.inner = inner

    def execute(self, sql, params=None):
        return self.inner.execute(sql, params)

    def rows(self, sql, params=None):
        return self.inner.rows(sql, params)

    def described(self, sql, params=None):
        return self.inner.described(sql, params)

    def columns(self, sql):
        return self.inner.columns(sql)

    def run(self, sql, params=None):
        self.inner.run(sql, params)


@pytest.fixture
def night(night_db):
    with reading(night_db, None) as engine:
        yield engine


def test_the_store_is_read_through_a_duckdb_engine(night):
    assert isinstance(night, DuckDBEngine) and night.capabilities.transactions
    table = night.execute("select run_id, status from runs order by run_id")
    assert isinstance(table, pyarrow.Table) and table.column_names == ["run_id", "status"]
    rows = night.rows("select run_id, status from runs order by run_id")
    assert table.to_pylist() == [{"run_id": r, "status": s} for r, s in rows] and len(rows) > 10
    assert night.records("select count(*) as n from runs") == [{"n": len(rows)}]
    assert night.value("select count(*) from runs where status = ?", ["succeeded"]) == \
        sum(1 for _, s in rows if s == "succeeded")
    assert night.columns("select run_id, 1 as one from runs") == ["run_id", "one"]
    assert night.statement_kinds("select 1; insert into x values (1)") == ["SELECT", "INSERT"]


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_an_engine_without_capabilities_finds_the_same(night_db):
    checks = load_checks()
    with store.connect(night_db, read_only=True) as con:
        duck = DuckDBEngine(con)
        ours = run_checks(duck, checks, record=False).to_json()
        same_costs = cost_report(duck, "agent")
    with store.connect(night_db, read_only=True) as con:
        plain = Plain(DuckDBEngine(con))
        theirs = run_checks(plain, checks, record=False).to_json()
        assert cost_report(plain, "agent") == same_costs
        with pytest.raises(QueryError, match="plain engine cannot vouch"):
            run_select(plain, "select 1")
        with pytest.raises(NotImplementedError, match="no transactions"), plain.transaction():
            pass
    assert theirs == ours and ours["findings"] and len(ours["checks"]) == len(checks)


def test_the_upper_layers_never_talk_to_a_duckdb_connection():
    """Analyses, checks and reports take an Engine: no DuckDB connection type, no cursor calls."""
    offenders = []
    for path in sorted([*(PACKAGE / "analyses").rglob("*.py"), *(PACKAGE / "checks").rglob("*.py"),
                        *(PACKAGE / "reports").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr in ("DuckDBPyConnection", "fetchall", "fetchone",
                                                                 "description", "connection"):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} .{node.attr}")
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "execute" \
                    and not (isinstance(node.func.value, ast.Name) and node.func.value.id == "engine"):
                offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} .execute on something not an engine")
    assert not offenders, "\n".join(offenders)


class Counting(Plain):
    """Counts the statements that return rows or change the session (``columns`` only plans)."""

    def __init__(self, inner: DuckDBEngine):
        super().__init__(inner)
        self.statements: list[str] = []

    def rows(self, sql, params=None):
        self.statements.append(sql)
        return super().rows(sql, params)

    def execute(self, sql, params=None):
        self.statements.append(sql)
        return super().execute(sql, params)

    def run(self, sql, params=None):
        self.statements.append(sql)
        super().run(sql, params)


def test_each_check_is_one_statement(night_db):
    """Issue 31: a check was four statements (its not-judged runs as a temporary table, their counts, the
    provider buckets, the findings), each a Spark job; now its findings and what it could not judge come back
    from one statement, after the few the run shares (settings, scope, facts)."""
    checks = load_checks()

    def statements(chosen):
        with store.connect(night_db, read_only=True) as con:
            counting = Counting(DuckDBEngine(con))
            report = run_checks(counting, chosen, record=False)
        return report, [sql for sql in counting.statements if "as part" in sql], \
            [sql for sql in counting.statements if "as part" not in sql]

    report, per_check, shared = statements(checks)
    assert len(per_check) == len(checks) == len(report.results)
    assert any(r.not_judged for r in report.results) and any(r.findings for r in report.results)
    # a few checks that need what the others need made first: a loop detector replayed, the fence walked
    few = [c for c in checks if "loop_firings" in c.sql][:1] + [c for c in checks if "journals" in c.needs][:1] \
        + [c for c in checks if "fence_as_run" in c.sql][:1]
    _, per_few, shared_by_few = statements(few)
    assert len(per_few) == 3 and len(shared_by_few) == len(shared)  # shared: once for the run, whatever the checks


def test_budgets_bring_back_a_small_sample_s_interval_never_its_steps(night_db):
    """Issue 31: a small sample's bootstrap (under 100 succeeded runs) runs where its rows are (``per_group``: on
    Spark, the executors); what reaches the report is each group's interval, never a list of step counts, and a
    large group is never resampled."""
    from reconcile.analyses.budgets import budget_report

    answered: list[dict] = []
    grouped: list[dict] = []

    class Watching(Plain):
        def described(self, sql, params=None):
            names, rows = super().described(sql, params)
            answered.extend(dict(zip(names, row)) for row in rows)
            return names, rows

        def per_group(self, sql, key, task, schema):
            answers = super().per_group(sql, key, task, schema)
            grouped.extend(answers)
            return answers

    with store.connect(night_db, read_only=True) as con:
        report = budget_report(Watching(DuckDBEngine(con)), "agent")
    assert not any(isinstance(value, list) and len(value) > 20 for row in answered for value in row.values())
    sizes = {g["key"]: g["succeeded"] for g in report["groups"]}
    assert grouped and all(set(g) == {"key", "low", "high"} for g in grouped)
    assert {g["key"] for g in grouped} == {key for key, n in sizes.items() if n < 100} != set(sizes)
    flags = {g["key"]: {f["flag"]: f for f in g["flags"]} for g in report["groups"]}
    for g in grouped:
        assert flags[g["key"]]["small_sample"]["p99_steps_interval"] == (g["low"], g["high"])
