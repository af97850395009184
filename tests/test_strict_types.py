"""A wrong JSON type is rejected with its line number, whatever path the validation takes.

The typed parse that makes ingest fast is lenient (``"7"`` read as the integer 7, ``5`` as the
string ``'5'``, ``2.5`` as 2); validation must not be. For every field of the native journal and
every wrong type (and every value past its range or beyond 64 bits) a line carrying it is planted
among good lines: it must be rejected at its own line, naming the field. And the fast path must
agree line for line with examining every line in detail.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from reconcile.formats.claude_code import FORMAT as CLAUDE_CODE
from reconcile.formats.native import FIELDS, FORMAT as NATIVE
from reconcile.ingest.driver import ingest
from reconcile.ingest.files import Aliases, inspect
from reconcile.ingest.lines import load_lines_many
from reconcile.ingest.ranges import create_staging_macros
from reconcile.ingest.validate import check_lines

REAL = Path(__file__).parent / "fixtures" / "realdata"

WRONG = {  # kind: values of the wrong type, or out of range, for that kind
    "int": ["7", 2.5, 2.0, 1e3, True, {}, [], 18446744073709551616],
    "count": ["7", 2.5, True, {}, [], -1, 10**15 + 1, 2**63, 2**64 - 1, 2**64],
    "index": ["7", 2.5, True, {}, [], -1, 2**31, 2**63],
    "ms": ["7", True, {}, [], -1, 1e13],
    "seconds": ["7", True, {}, [], -1, 1e10],
    "str": [5, 2.5, True, {}, []],
    "ts": [5, True, {}, "yesterday", "2026-13-01T00:00:00Z", "1999-12-31T23:59:59Z"],
    "bool": [1, "true", {}, []],
    "object": [5, "x", [], True],
    "array": [5, "x", {}, True],
}
ITEM_WRONG = [("tools", 0, "name", 5), ("tools", 0, "side_effect", "yes"), ("tools", 0, "schema_tokens", "3"),
              ("tools", 0, "schema_tokens", -1), ("tools", 0, "schema_tokens", 2**63),
              ("tool_calls", 0, "call_id", 5), ("tool_calls", 0, "name", ["x"]),
              # past the items typed with the line (validate.ITEM_SLOTS): examined by path
              ("tools", 3, "name", 5), ("tools", 4, "name", 5), ("tools", 6, "schema_tokens", 2**31),
              ("tool_calls", 5, "call_id", True)]

RUN_START = {"v": 1, "type": "run_start", "run_id": "r", "ts": "2026-11-28T23:00:00Z", "agent": "a",
             "tools": [{"name": "read_file"}]}
MODEL = {"v": 1, "type": "step", "run_id": "r", "idx": 0, "kind": "model", "ts": "2026-11-28T23:00:01Z",
         "usage": {"output": 5}, "tool_calls": [{"call_id": "c1", "name": "read_file", "args": {}}]}


def _with(line: dict, path: str, value) -> dict:
    line = json.loads(json.dumps(line))
    *parents, leaf = path.split(".")
    node = line
    for parent in parents:
        node = node.setdefault(parent, {}) if isinstance(node.get(parent, {}), dict) else {}
    node[leaf] = value
    return line


def _planted() -> list[tuple[dict, str]]:
    """(line, the field its reject must name) for every field and every wrong value of its kind."""
    cases = []
    for field in FIELDS:
        for value in WRONG.get(field.kind, []):
            base = RUN_START if field.path in ("agent", "tools", "limits") or field.path.startswith("limits.") else MODEL
            cases.append((_with(base, field.path, value), field.path))
    for array, position, key, value in ITEM_WRONG:
        base = RUN_START if array == "tools" else MODEL
        line = json.loads(json.dumps(base))
        line[array] += [dict(line[array][0]) for _ in range(position + 1 - len(line[array]))]
        line[array][position][key] = value
        cases.append((line, f"{array}[{position + 1}].{key}"))
    for items in ([5], [MODEL["tool_calls"][0]] * 5 + ["x"]):
        line = json.loads(json.dumps(MODEL))
        line["tool_calls"] = items
        cases.append((line, f"tool_calls[{len(items)}]"))
    return cases


PLANTED = _planted()


def _planted_file(path: Path) -> list[int]:
    """Good lines, each planted line between two good ones; returns the planted lines' numbers."""
    lines, planted = [json.dumps(RUN_START)], []
    for number, (line, field) in enumerate(PLANTED):
        good = dict(MODEL, idx=2 * number + 1)
        lines.append(json.dumps(good))
        own_index = line["type"] == "step" and field != "idx"  # one step index each, bar the planted ones
        lines.append(json.dumps(dict(line, idx=2 * number + 2) if own_index else line))
        planted.append(len(lines))
    path.write_text("\n".join(lines) + "\n")
    return planted


def test_every_wrong_type_and_range_is_rejected_at_its_line(con, tmp_path):
    journal = tmp_path / "planted.jsonl"
    planted = _planted_file(journal)
    report = ingest(con, [journal])
    rejects = dict(con.execute("select line, reason from rejects").fetchall())
    assert sorted(rejects) == planted, [n for n in planted if n not in rejects]
    for number, (_, field) in zip(planted, PLANTED):
        assert rejects[number].startswith((f'field "{field}" is ', "journal version")), (number, field, rejects[number])
    file = report.files[0]
    assert file.rejected == len(PLANTED) and file.loaded + file.rejected + file.skipped == file.lines


def _reasons(path: Path, fmt, examine_all: bool) -> list[tuple[int, str | None]]:
    con = duckdb.connect()
    source = inspect(path)
    with Aliases([source]):
        load_lines_many(con, [source])
    create_staging_macros(con)
    # An extra check with no suspect-test makes every line be examined in detail: the slow, plain path.
    extra = (fmt.extra_line_checks or "when false then null") if examine_all else fmt.extra_line_checks
    check_lines(con, fmt.fields, extra, None if examine_all else fmt.extra_line_suspect)
    return con.execute("select line_no, reason from _checked order by line_no").fetchall()


@pytest.mark.parametrize("fmt,path", [
    (NATIVE, None),
    (CLAUDE_CODE, next((REAL / "claude-code-viewer").rglob("*.jsonl"))),
], ids=["native-planted", "claude-code-real"])
def test_the_fast_path_agrees_with_examining_every_line(tmp_path, fmt, path):
    if path is None:
        path = tmp_path / "planted.jsonl"
        _planted_file(path)
    fast, slow = _reasons(path, fmt, False), _reasons(path, fmt, True)
    assert fast == slow
    assert len(fast) > 10
