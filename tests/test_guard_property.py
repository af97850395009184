"""The guarded typed read and the exact examination agree on any line (a property test).

The fast path of ``validate.check_lines`` parses each line once, leniently, and trusts it where the
text guard (``ingest/guard.py``) and the typed value tests raise nothing; the slow path examines
every line's fields by path. Lines are drawn from good journal and Claude Code lines with declared
fields (top-level, nested, array items) set to values of every JSON type and edge — digit strings,
fractions, exponents, integers past 64 bits, nulls, objects, arrays of non-objects — keys spelled
with ``\\u`` escapes or repeated, odd white space, declared keys planted where they mean nothing, and
lines that are not objects. Both paths must give every line the same verdict (the same reason, or
none), so the store and the rejects are the same whichever path a line took.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reconcile.formats.claude_code import FORMAT as CLAUDE_CODE
from reconcile.formats.native import FORMAT as NATIVE
from reconcile.ingest.files import Aliases, inspect
from reconcile.ingest.lines import load_lines_many
from reconcile.ingest.ranges import create_staging_macros
from reconcile.ingest.validate import Field, check_lines
from test_strict_types import _reasons  # the fast path, or every line examined in detail

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

NATIVE_LINES = [
    {"v": 1, "type": "run_start", "run_id": "r", "ts": "2026-11-28T23:00:00Z", "agent": "a", "model": "m",
     "limits": {"max_steps": 30, "max_wall_seconds": 60.5}, "tools": [{"name": "read_file", "side_effect": False}],
     "loop_detector": {"kind": "calls_window", "limit": 3, "window": 8}, "labels": {"team": "x"}},
    {"v": 1, "type": "step", "run_id": "r", "idx": 0, "kind": "model", "ts": "2026-11-28T23:00:01.5Z", "ms": 12.5,
     "usage": {"input_uncached": 5, "cache_read": 7, "output": 5}, "final": False,
     "tool_calls": [{"call_id": "c1", "name": "read_file", "args": {"path": "a", "n": 1}}]},
    {"v": 1, "type": "step", "run_id": "r", "idx": 1, "kind": "tool", "ts": "2026-11-28T23:00:02Z", "ms": 3,
     "call_id": "c1", "tool": "read_file", "status": "ok", "result_tokens": 4, "bounded": False},
    {"v": 1, "type": "run_end", "run_id": "r", "ts": "2026-11-28T23:00:03Z", "status": "success",
     "stop_reason": "model_finished", "ledger": {"steps": 2, "tokens": 12}},
]
CLAUDE_LINES = [
    {"type": "assistant", "sessionId": "s", "uuid": "u2", "parentUuid": "u1", "timestamp": "2026-11-28T23:00:01.000Z",
     "requestId": "q", "isSidechain": False,
     "message": {"id": "m", "model": "claude-sonnet-4-5", "stop_reason": "end_turn",
                 "content": [{"type": "text", "text": "hi"}],
                 "usage": {"input_tokens": 3, "output_tokens": 9, "cache_read_input_tokens": 0,
                           "cache_creation": {"ephemeral_5m_input_tokens": 0}}}},
    {"type": "user", "sessionId": "s", "uuid": "u1", "timestamp": "2026-11-28T23:00:00.000Z", "isMeta": False,
     "message": {"content": "hello"}, "compactMetadata": {"preTokens": 5}},
]

# Every kind, none required and no extra check: nothing but the guard stands between a misread and the store.
EVERY_KIND = SimpleNamespace(extra_line_checks="", extra_line_suspect=None, fields=[
    Field("i", "int"), Field("c", "count"), Field("x", "index"), Field("m", "ms"), Field("s", "seconds"),
    Field("t", "str"), Field("w", "ts"), Field("b", "bool"), Field("o", "object"), Field("o.k", "int"),
    Field("a", "array", items=(("n", "str"), ("q", "int"))), Field("y", "any")])
EVERY_KIND_LINES = [{"i": 1, "c": 2, "x": 3, "m": 4.5, "s": 1, "t": "x", "w": "2026-11-28T23:00:00Z", "b": True,
                     "o": {"k": -1}, "a": [{"n": "a", "q": 1}], "y": [1]}, {}]
EDGE_NUMBERS = [0, -1, 1, 2**31, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 10**15, 10**15 + 1, 10**40, 10**19]
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.sampled_from(EDGE_NUMBERS), st.integers(-5, 50),
              st.floats(allow_nan=False, allow_infinity=False), st.sampled_from([1.0, 2.5, -0.0, 1e3, 1e300]),
              st.sampled_from(["", "7", "true", "null", "2026-11-28T23:00:00Z", "1999-01-01T00:00:00Z", "ok", "x\\u"]),
              st.text(max_size=6)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "idx", "name", "ts"]), inner, max_size=2)),
    max_leaves=4,
)


def _paths(fmt) -> list[str]:
    """Every declared path, and each array field's item keys as ``field[i].key``."""
    paths = [f.path for f in fmt.fields]
    paths += [f"{f.path}[{i}].{key}" for f in fmt.fields for key, _ in f.items for i in (0, 2)]
    return paths


def _set(line: dict, path: str, value) -> None:
    """Set ``path`` (``a.b``, ``a[2].b``) in ``line``, making each container on the way the kind its step needs."""
    parts = re.findall(r"[^.\[\]]+|\[\d+\]", path)
    node = line
    for part, following in zip(parts, parts[1:]):
        node = _child(node, part, [] if following.startswith("[") else {})
    key = int(parts[-1][1:-1]) if parts[-1].startswith("[") else parts[-1]
    if isinstance(key, int):
        node.extend([None] * (key + 1 - len(node)))
    node[key] = value


def _child(node, part: str, empty):
    if part.startswith("["):
        index = int(part[1:-1])
        node.extend({"name": "t", "call_id": "c"} for _ in range(index + 1 - len(node)))
        key = index
    else:
        key = part
    if not isinstance(node[key] if isinstance(key, int) else node.get(key), type(empty)):
        node[key] = empty
    return node[key]


def _escape_key(text: str, key: str) -> str:
    """Spell the first ``"key":`` with a \\u escape for its first character."""
    return text.replace(f'"{key}":', '"\\u%04x%s":' % (ord(key[0]), key[1:]), 1)


@st.composite
def mutated_line(draw, fmt, bases):
    line = json.loads(json.dumps(draw(st.sampled_from(bases))))
    for _ in range(draw(st.integers(0, 3))):
        _set(line, draw(st.sampled_from(_paths(fmt))), draw(VALUES))
    if draw(st.booleans()):  # a declared key where it means nothing: a false alarm at worst
        line.setdefault("extra", {})[draw(st.sampled_from(["idx", "ts", "usage", "tools", "v"]))] = draw(VALUES)
    separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,\t", " :\n ")]))
    text = json.dumps(line, separators=separators, ensure_ascii=draw(st.booleans()))
    how = draw(st.sampled_from(["plain", "plain", "escape", "repeat", "not-object"]))
    if how == "escape":
        text = _escape_key(text, draw(st.sampled_from([p.split(".")[-1].split("[")[0] for p in _paths(fmt)])))
    elif how == "repeat":  # a repeated key: the first occurrence wins in every reader DuckDB has
        path = draw(st.sampled_from([f.path for f in fmt.fields if "." not in f.path]))
        text = "{" + json.dumps(path) + ":" + json.dumps(draw(VALUES)) + "," + text[1:]
    elif how == "not-object":
        text = json.dumps(draw(st.one_of(st.lists(st.integers(), max_size=2), st.text(max_size=3), st.integers())))
    return text.replace("\n", " ")


def _agree(tmp_path: Path, fmt, lines: list[str]) -> None:
    path = tmp_path / "lines.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fast, slow = _reasons(path, fmt, False), _reasons(path, fmt, True)
    assert len(fast) == len(lines)
    assert fast == slow, [(f, s, lines[f[0] - 1]) for f, s in zip(fast, slow) if f != s][:3]


SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                           HealthCheck.too_slow])


@SETTINGS
@given(lines=st.lists(mutated_line(NATIVE, NATIVE_LINES), min_size=1, max_size=40))
def test_native_lines_get_the_same_verdict_on_both_paths(tmp_path, lines):
    _agree(tmp_path, NATIVE, lines)


@SETTINGS
@given(lines=st.lists(mutated_line(CLAUDE_CODE, CLAUDE_LINES), min_size=1, max_size=40))
def test_claude_code_lines_get_the_same_verdict_on_both_paths(tmp_path, lines):
    _agree(tmp_path, CLAUDE_CODE, lines)


@SETTINGS
@given(lines=st.lists(mutated_line(EVERY_KIND, EVERY_KIND_LINES), min_size=1, max_size=40))
@example(lines=['{"i": 18446744073709551616}', '{"o": {"k": 100000000000000000000000000000000000000000}}',  # past 64 bits
                '[{"i": 1}]', ' "x"', '{"\\u0069": "1"}', '{"a": [{"n": "a"}, 5]}', '{"b": 1, "a": [{"q": 1.0}]}'])
def test_lines_of_every_kind_get_the_same_verdict_on_both_paths(tmp_path, lines):
    _agree(tmp_path, EVERY_KIND, lines)


def test_the_guard_passes_good_lines_and_flags_each_misreadable_one(tmp_path):
    """The fast path is fast only if good lines pass the guard; each kind of misreading is flagged."""
    good = [json.dumps(line) for line in NATIVE_LINES]
    bad = [_escape_key(good[1], "idx").replace('"\\u0069dx": 0', '"\\u0069dx": "0"'),  # a string index, escaped key
           good[1].replace('"idx": 0', '"idx": 0.0'), good[1].replace('"ms": 12.5', '"ms": "12.5"'),
           good[1].replace('"output": 5', '"output": 18446744073709551616'),
           good[1].replace('{"call_id": "c1", "name": "read_file", "args": {"path": "a", "n": 1}}', "7"),
           good[3].replace('"ledger": {', '"ledger": [{').replace("12}", "12}]"), "[1, 2]"]
    path = tmp_path / "guarded.jsonl"
    path.write_text("\n".join(good + bad) + "\n")
    con = duckdb.connect()
    source = inspect(path)
    with Aliases([source]):
        load_lines_many(con, [source])
    create_staging_macros(con)
    check_lines(con, NATIVE.fields, NATIVE.extra_line_checks, NATIVE.extra_line_suspect)
    suspects = [row[0] for row in con.execute("select line_no from _typed where suspect order by line_no").fetchall()]
    assert suspects == list(range(len(good) + 1, len(good) + len(bad) + 1))
    reasons = dict(con.execute("select line_no, reason from _checked where reason is not null").fetchall())
    assert sorted(reasons) == suspects  # every one of them a real reject, named by the exact path
