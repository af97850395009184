"""Large values in every transcript format load in bounded memory, or reject their line naming the depth.

Issue 27, part 5: one Claude Code ``tool_use`` whose input was a 50,000-item array failed the whole
file with an out-of-memory error (DuckDB planned ``json_tree`` before the filter that sends large
values to the one-by-one path). Each format gets one small file per shape — an array of N
items, an object of N keys, objects nested 600 and 2,000 levels, arrays nested
2,000 levels inside an object, a long string — placed in tool arguments and beside them (a tool
result, an unknown field). All go into one store in one ingest, under the default memory limit.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "hostile"))

import bases  # noqa: E402
from bases import jsonl  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.store.canonical import MAX_DEPTH, json_depth  # noqa: E402
from reconcile.ingest.driver import ingest  # noqa: E402

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

# 10^5 items load too (measured by hand, about 2 s a file); the test keeps 2 x 10^4 so it stays quick
N = 20_000
SHAPES = {
    "array": '{"items":[' + ",".join(map(str, range(N))) + "]}",
    "object": "{" + ",".join(f'"k{i:06d}":{i}' for i in range(N)) + "}",
    "deep600": '{"a":' * 600 + "1" + "}" * 600,
    "deep2000": '{"a":' * 2000 + "1" + "}" * 2000,
    "deep-arrays": '{"a":' + "[" * 2000 + "]" * 2000 + "}",
    "long-string": '{"s":"' + "x\\n" * 500_000 + '"}',  # escapes: the depth scan must not keep state per character
}
DEPTH = {"deep600": 600, "deep2000": 2000, "deep-arrays": 2001}
_P = "__BIG__"


def _documents(uid: str) -> dict[str, tuple[bytes, bool, int]]:
    """Per format: (bytes with the placeholder, whether the value goes in as a JSON string, the arguments' record)."""
    out = {}
    r = bases.native(f"{uid}-native")
    r[1]["tool_calls"][0]["args"] = _P
    out["native.jsonl"] = (jsonl(r), False, 2)
    r = bases.claude_code(f"{uid}-cc")
    r[1]["message"]["content"][0]["input"] = _P
    r[2]["toolUseResult"] = _P  # Claude Code writes the tool's own result object on the user line
    out["claude_code.jsonl"] = (jsonl(r), False, 2)
    r = bases.codex(f"{uid}-codex")
    r[2]["payload"]["arguments"] = _P  # Codex writes arguments as JSON text
    r[4]["payload"]["output"] = _P
    out["codex.jsonl"] = (jsonl(r), True, 4)
    r = bases.gemini_jsonl(f"{uid}-gemini")
    r[2]["toolCalls"] = [{"id": "t1", "name": "read", "args": _P, "status": "success", "result": _P}]
    out["gemini.jsonl"] = (jsonl(r), False, 3)
    d = bases.gemini_chat(f"{uid}-gemini-chat")
    d["messages"][1]["toolCalls"] = [{"id": "t1", "name": "read", "args": _P, "result": _P}]
    out["gemini-chat.json"] = (json.dumps(d).encode(), False, 2)
    d = bases.langfuse(f"{uid}-lf")
    d["observations"][1]["input"] = _P
    d["observations"][1]["output"] = _P
    out["lf.trace.json"] = (json.dumps(d).encode(), False, 3)
    d = bases.inspect_log(f"{uid}-inspect")
    d["samples"][0]["events"][0]["output"]["choices"][0]["message"]["tool_calls"] = [
        {"id": "c1", "function": "bash", "arguments": _P}]
    out["inspect.json"] = (json.dumps(d).encode(), False, 1)
    d = bases.mini_swe_agent(f"{uid}-mini")
    d["messages"][2]["extra"]["big"] = _P
    out["mini.traj.json"] = (json.dumps(d).encode(), False, 0)
    d = bases.swe_agent(f"{uid}-swe")
    d["trajectory"][0]["state"] = _P
    out["swe.traj"] = (json.dumps(d).encode(), False, 0)
    r = bases.openhands(f"{uid}-oh")
    r[1]["args"] = _P
    r[2]["extras"] = _P
    out["oh.json"] = (json.dumps(r).encode(), False, 2)
    d = bases.otel(f"{uid}-otel")
    attributes = d["resourceSpans"][0]["scopeSpans"][0]["spans"][2]["attributes"]
    attributes += [{"key": "gen_ai.tool.call.arguments", "value": {"stringValue": _P}},
                   {"key": "big", "value": {"stringValue": _P}}]
    out["otel.json"] = (json.dumps(d).encode(), True, 1)  # issue 58: OTel's record is the line (the request), not the span
    return out


def _fill(data: bytes, value: str, as_string: bool) -> bytes:
    return data.replace(json.dumps(_P).encode(), (json.dumps(value) if as_string else value).encode())


@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    root = tmp_path_factory.mktemp("large")
    expected = {}
    for shape, value in SHAPES.items():
        for name, (data, as_string, record) in _documents(shape).items():
            path = root / "files" / shape / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(_fill(data, value, as_string))
            expected[str(path)] = (shape, name, record)
    with store.connect(root / "large.duckdb") as con:
        report = ingest(con, [root / "files"])
        rejects = con.execute("select path, line, reason from rejects").fetchall()
    return report, rejects, expected


def test_every_format_and_shape_was_built(loaded):
    report, _, expected = loaded
    formats = {f.format for f in report.files}
    assert len(formats) == 11, formats
    assert {f.path for f in report.files} == set(expected)


def test_every_file_loads_and_only_arguments_too_deep_are_rejected(loaded):
    report, rejects, expected = loaded
    by_file = {}
    for path, line, reason in rejects:
        by_file.setdefault(path, []).append((line, reason))
    for result in report.files:
        shape, name, record = expected[result.path]
        # a file whose only record holds the too-deep arguments had nothing read: failed, its reject kept (issue 57)
        assert result.status == ("failed" if result.rejected and not result.loaded else "loaded"), (shape, name)
        assert result.lines == result.loaded + result.rejected + result.skipped
        deep = DEPTH.get(shape, 0) > MAX_DEPTH and record  # a value beside the arguments is kept whole, any depth
        if deep:
            assert by_file.get(result.path) == [(record, f"tool arguments nested {DEPTH[shape]} levels deep; "
                                                         f"reconcile reads JSON nested at most {MAX_DEPTH} levels")], name
        else:
            assert result.rejected == 0, (shape, name, by_file.get(result.path))


def test_json_depth_ignores_brackets_in_strings_and_escapes():
    assert json_depth(r'{"a\\":["\\\"]"]}') == 2
    assert json_depth('["[[", {"x": "}}"}]') == 2
    assert json_depth('"' + "\\n" * 100_000 + '"') == 0
    assert json_depth("[" * 3000 + "]" * 3000) == 3000
