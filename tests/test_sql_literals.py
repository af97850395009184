"""The one SQL quoter (``reconcile.sql_text``): each literal, read back by DuckDB, is the value it was made from."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pytest

from reconcile.sql_text import string_literal, typed_literal, value_literal

VALUES = [None, True, False, 0, -7, 2**62, 1.5, -0.25, float("inf"), Decimal("12.345678901"), "plain", "it's", "'; drop table x; --",
          "naïve ☃", dt.date(2026, 11, 28), dt.datetime(2026, 11, 28, 22, 6, 45, 327000, tzinfo=dt.timezone.utc),
          [1, 2, 3], ["a", "b'c"]]


@pytest.mark.parametrize("value", VALUES, ids=[repr(v)[:30] for v in VALUES])
def test_a_value_literal_reads_back_as_the_value(value):
    con = duckdb.connect()
    con.execute("set TimeZone = 'UTC'")
    got = con.execute(f"select {value_literal(value)}").fetchall()[0][0]
    assert got == value and (value is None or type(got) is type(value) or isinstance(value, Decimal))


def test_not_a_number_reads_back_as_one():
    got = duckdb.connect().execute(f"select {value_literal(float('nan'))}").fetchall()[0][0]
    assert got != got  # NaN is the one value not equal to itself


def test_a_decimal_is_cast_exactly_when_asked():
    con = duckdb.connect()
    literal = value_literal(Decimal("0.000000001"), "decimal(18, 9)")
    assert con.execute(f"select typeof({literal}), {literal}").fetchall()[0] == ("DECIMAL(18,9)", Decimal("1E-9"))


def test_typed_and_string_literals():
    con = duckdb.connect()
    assert con.execute(f"select {typed_literal(None, 'double')} is null, typeof({typed_literal(None, 'double')})"
                       ).fetchall()[0] == (True, "DOUBLE")
    assert con.execute(f"select {typed_literal(0.5, 'double')}").fetchall()[0][0] == 0.5
    assert con.execute(f"select {string_literal(chr(39) * 3)}").fetchall()[0][0] == "'''"
