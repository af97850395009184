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
    # a recommendation is set in whole cents (two significant figures from a dollar on): a whole cent a few ulps
    # high or low (a spread of dollars between two runs' costs) is that cent; a real fraction still rounds up
    assert [ceilings._round_up("cost_micros", p99) for p99 in (90000.000000002, 89999.999999998, 90000.17,
                                                               2_310_700.0, 10_973_600.0)] \
        == [90000, 90000, 100000, 2_400_000, 11_000_000]


@pytest.mark.parametrize("metric, value, figure", [
    ("steps", 164, 170), ("steps", 12, 12), ("steps", 11.2, 12), ("steps", 100, 100), ("steps", 101, 110),
    ("steps", 99.5, 100), ("tokens", 3_700_068.3, 3_800_000), ("tokens", 600_000, 600_000),
    ("wall_seconds", 555.3, 560.0), ("wall_seconds", 83_956.5, 84_000.0), ("wall_seconds", 7.2, 8.0),
    ("cost_micros", 17_700, 20_000), ("cost_micros", 1_000_000, 1_000_000),
])
def test_a_recommendation_is_rounded_up_to_a_figure_people_set(metric, value, figure):
    rounded = ceilings.round_figure(metric, value)
    assert rounded == figure and rounded >= value  # up, never down: it stops no run the exact figure lets through


def test_the_exports_show_the_p95_spark_shows(cli, night_db):
    rows = [line.split(",") for line in cli("budgets", "--by", "agent", "--csv", "--db", night_db).out.splitlines()]
    header, coder = rows[0], next(row for row in rows if row[:2] == ["coder", "max_cost_usd"])
    assert coder[header.index("p95")] == "0.097955"
