"""Canonical JSON: the writer (Python) and the store (SQL) give the same bytes and hashes."""

from __future__ import annotations

import json

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconcile.store.canonical import (args_hash, canonical_json, canonicalize_column, idempotency_key,
                                 idempotency_key_sql)


def sql_canonical(texts: list[str]) -> list[str]:
    con = duckdb.connect()
    con.execute("create table src (id integer, j json)")
    con.executemany("insert into src values (?, ?)", list(enumerate(texts)))
    canonicalize_column(con, "src", "id", "j", "out")
    got = dict(con.execute("select doc, canonical from out").fetchall())
    return [got[i] for i in range(len(texts))]


def test_key_order_and_whitespace_do_not_change_the_hash():
    a = json.loads('{"b": 1, "a": {"y": [1, 2], "x": "s"}}')
    b = json.loads('{"a":{"x":"s","y":[1,2]},"b":1}')
    assert canonical_json(a) == canonical_json(b) == '{"a":{"x":"s","y":[1,2]},"b":1}'
    assert args_hash(a) == args_hash(b)
    assert args_hash(a) != args_hash({"a": {"x": "s", "y": [2, 1]}, "b": 1})


@pytest.mark.parametrize("text,expected", [
    ("3.0", "3"), ("-0.0", "0"), ("1e2", "100"), ("0.1", "0.1"), ("1e20", "1e+20"),
    ("100000000000000000000", "1e+20"), ("1.5e-7", "1.5e-07"), ("9007199254740993", "9007199254740993"),
    ('"é\\u00e9\\n"', '"éé\\n"'), ("[]", "[]"), ("{}", "{}"), ("null", "null"), ("true", "true"),
])
def test_numbers_and_strings_have_one_form(text, expected):
    assert canonical_json(json.loads(text)) == expected
    assert sql_canonical([text]) == [expected]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(st.characters(exclude_categories=["Cs"]), max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.text(st.characters(exclude_categories=["Cs"]), max_size=5), children, max_size=4),
    max_leaves=20,
)


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
@settings(max_examples=60, deadline=None)
@given(st.lists(json_values, min_size=1, max_size=20))
def test_sql_canonicalizer_matches_python_on_any_json(values):
    texts = [json.dumps(v, indent=1, ensure_ascii=True) for v in values]  # other whitespace, \u escapes
    assert sql_canonical(texts) == [canonical_json(v) for v in values]


def test_idempotency_key_is_the_same_in_sql():
    digest = args_hash({"path": "a"})
    expected = idempotency_key("run-1", 4, "write_file", digest)
    sql = idempotency_key_sql("?", "?", "?", "?")
    assert duckdb.connect().execute(f"select {sql}", ["run-1", 4, "write_file", digest]).fetchall()[0][0] == expected


def test_nan_is_refused():
    with pytest.raises(ValueError):
        canonical_json(float("nan"))
