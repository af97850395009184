"""A cost ceiling is whole micro-dollars before it becomes dollars, so DuckDB and Spark print the same digits.

The quantiles of cost are interpolated in doubles, whose last bits differ between the engines: on the sample
night DuckDB's p95 of the coder agent's cost is 97954.99999999999 micro-dollars where Spark has 97955.0. The
exports truncated it (``int()`` in ``sheets.exported``): $0.097954 in DuckDB, $0.097955 in Spark. And a
recommended ceiling is the p99 rounded up, against an epsilon (1e-9) smaller than that noise once the costs
spread over dollars: a p99 that is a whole micro-dollar could come out one micro-dollar higher in one engine.
"""

from __future__ import annotations

import pytest

from reconcile.analyses import ceilings



@pytest.mark.parametrize("duckdb, spark, micros", [
    (97954.99999999999, 97955.0, 97955),  # the sample night's coder p95
    (54651.49999999999, 54651.5, 54652),  # a half, half up as every amount is
    (112189.17000000001, 112189.17, 112189),
    (16501.39999999999, 16501.4, 16501),
])
def test_a_quantile_of_money_is_whole_micro_dollars_in_either_engine(duckdb, spark, micros):
    assert ceilings._micros(duckdb) == ceilings._micros(spark) == micros
    assert ceilings._micros(None) is None


def test_a_cost_ceiling_rounds_up_past_the_engines_noise_only():
    # a whole micro-dollar a few ulps high or low (a spread of dollars between two runs' costs) is that micro-dollar;
    # a real fraction (the p99 sits between two runs) still rounds up
    assert [ceilings._round_up("cost_micros", p99) for p99 in (97954.000000002, 97953.999999998, 112189.17000000001)] \
        == [97954, 97954, 112190]


def test_the_exports_show_the_p95_spark_shows(cli, night_db):
    rows = [line.split(",") for line in cli("budgets", "--by", "agent", "--csv", "--db", night_db).out.splitlines()]
    header, coder = rows[0], next(row for row in rows if row[:2] == ["coder", "max_cost_usd"])
    assert coder[header.index("p95")] == "0.097955"
