"""Issue 27: a line is loaded only if it is strict JSON (RFC 8259), and a line of white space is blank.

DuckDB's parser also accepts a trailing comma and NaN / Infinity; the ingest's cheap scan and exact
test (``reconcile.ingest.validate.lenient_*``) must reject exactly what a strict parser (Python's
``json`` with NaN refused) rejects among what DuckDB accepts — held here against that oracle on
hand-written and mutated texts.
"""

from __future__ import annotations

import json
import random

import duckdb
import pytest

from journals import journal_file
from reconcile.errors import ExitCode
from reconcile.ingest.validate import lenient_reason_sql, lenient_suspect_sql


def _strict(text: str) -> bool:
    def refuse(constant):
        raise ValueError(constant)

    try:
        json.loads(text, parse_constant=refuse)
    except ValueError:
        return False
    return True


HAND = [
    '{"a":1,}', '[1,2,]', '{"a":[1,],"b":2}', '{"a":1 \r\n,}', '[1 ,\t]', '{"a":[{},]}', '[[],]',
    '{"a":NaN}', '{"a":-Infinity}', '[nan, inf]', '[-INF]', '{"a":infinity}', '[ -nAn ]', 'NaN', '-inf',
    '["a,]"]', '{"k,}":"v"}', '["\\\\",]', '["\\\\\\", ]"]', '{"a":"x\\",}"}', '["nan", "-Infinity", ": inf"]',
    '{"note":"a,] b,} : NaN, [inf, -Infinity,]"}', '{"a":1.5e3,"b":[true,false,null],"c":"\\u00e9"}',
    '{"a":1e400}', '{"a":-0}', '{"a":"\u2028"}', '{"a":"\\u0000"}', '{"a":1,"a":2}', '{}', '[]', '1', '"x"',
]
PIECES = [",", " ,", ", ", "NaN", "-inf", "Infinity", " ", "\t", '"', '\\"', "\\\\", "]", "}", "[", "{", ":", '"k":']
BASES = ['{"a":[1,{"b":"c,d]"}],"e":"f\\"g"}', '[{"x":null},"nan inf",[1,[2]]]', '{"s":"a\\\\","t":[true]}']


def _mutations(count: int) -> list[str]:
    rng = random.Random(27)
    texts = []
    for _ in range(count):
        text = rng.choice(BASES)
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(text))
            text = text[:at] + rng.choice(PIECES) + text[at:]
        texts.append(text)
    return texts


def test_strict_json_is_judged_exactly_as_a_strict_parser_would():
    con = duckdb.connect()
    texts = HAND + _mutations(4000)
    rows = con.execute(
        f"""select t, json_valid(t), {lenient_suspect_sql('t')},
                   case when json_valid(t) then {lenient_reason_sql('t')} end
            from unnest(?) as u(t)""", [texts]).fetchall()
    accepted_leniently = 0
    for text, valid, suspect, reason in rows:
        if not valid:
            assert not _strict(text), text  # DuckDB is never stricter than RFC 8259 here
            continue
        accepted_leniently += not _strict(text)
        assert (reason is None) == _strict(text), (text, reason)
        if reason is not None:
            assert suspect, text  # the cheap scan never misses a line the exact test rejects
    assert accepted_leniently >= 40  # the mutations do reach the lenient forms


@pytest.mark.parametrize("line,reason", [
    ('{"v":1,"type":"event","run_id":"a","ts":"2026-11-28T23:00:09.000Z","name":"x",}', 'a trailing comma before "}"'),
    ('{"v":1,"type":"event","run_id":"a","ts":"2026-11-28T23:00:09.000Z","name":"x","n":[1,2,]}', 'a trailing comma before "]"'),
    ('{"v":1,"type":"event","run_id":"a","ts":"2026-11-28T23:00:09.000Z","name":"x","n":-Infinity}', "-Infinity is not a JSON number"),
])
def test_a_lenient_line_is_a_reject_naming_its_line(cli, tmp_path, db_path, line, reason):
    path = journal_file(tmp_path / "a.jsonl", runs=("a",))
    with open(path, "a") as handle:
        handle.write(line + "\n")
    result = cli("ingest", path, "--db", db_path, "--strict", "-v")  # -v: each rejected line, with why
    assert result.code == ExitCode.BAD_INPUT
    assert f"a.jsonl:8: not valid JSON: {reason}" in result.out
    rejects = cli("sql", "select line, reason from rejects", "--json", "--db", db_path).json()
    assert rejects == [{"line": 8, "reason": f"not valid JSON: {reason}" + (" (strict JSON allows none)" if "comma" in reason
                                                                            else " (strict JSON has no NaN or Infinity)")}]


def test_lines_of_any_white_space_are_blank(cli, tmp_path, db_path):
    path = journal_file(tmp_path / "a.jsonl", runs=("a",))
    with open(path, "ab") as handle:
        handle.write(b"\x0c\n\x0b\n \t\r\x0c \n" + "\u00a0\u3000".encode() + b"\n" + b" " * 200 + b"\n")
    data = cli("ingest", path, "--db", db_path, "--json", "--strict").json()
    (file,) = data["files"]
    assert (file["lines"], file["loaded"], file["rejected"], file["skipped"]) == (12, 7, 0, 5)
    assert "5 blank line(s)" in file["notes"]
