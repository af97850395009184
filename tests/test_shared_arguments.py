"""Arguments are canonicalised once per distinct text, and every call (and tool step) that holds the text gets it.

The landing keys canonical arguments by their JSON text, so a text shared by calls in different runs,
by a tool step and its call, or nested too deep in two runs must still land on (or reject) each holder.
The expected values are computed here with the standard library, not with reconcile's canonicaliser.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "hostile"))

import bases  # noqa: E402
from bases import jsonl  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.ingest.driver import ingest  # noqa: E402

SHARED = '{"z": [3, {"y": true, "b": null}], "a": "\\u00e9t\\u00e9", "m": {"k": 15}}'
DEPTH = 600  # deeper than reconcile reads (512)
DEEP = '{"a":' * DEPTH + "1" + "}" * DEPTH


def _canonical(text: str) -> str:
    return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _journal(tmp_path: Path) -> Path:
    body = b""
    for uid, args, own in [("a", SHARED, False), ("b", SHARED, True), ("c", DEEP, False), ("d", DEEP, False)]:
        records = bases.native(uid)
        records[1]["tool_calls"][0]["args"] = "__ARGS__"
        if own:  # the tool step repeats its call's arguments
            records[2]["args"] = "__ARGS__"
        body += jsonl(records).replace(b'"__ARGS__"', args.encode())
    path = tmp_path / "night.jsonl"
    path.write_bytes(body)
    return path


def test_a_shared_text_lands_on_every_holder_and_a_deep_one_rejects_each(tmp_path):
    with store.connect(tmp_path / "s.duckdb") as con:
        (result,) = ingest(con, [_journal(tmp_path)]).files
        calls = dict(con.execute("select run_id, args_json from tool_calls where call_position = 0").fetchall())
        steps = dict(con.execute("select run_id, args_json from steps where kind = 'tool' and idx = 1").fetchall())
        rejects = con.execute("select line, reason from rejects order by line").fetchall()
    assert calls == {"a": _canonical(SHARED), "b": _canonical(SHARED)}
    # a tool step whose call was rejected keeps its own record, without arguments it does not carry
    assert steps == {"a": _canonical(SHARED), "b": _canonical(SHARED), "c": None, "d": None}
    reason = f"tool arguments nested {DEPTH} levels deep; reconcile reads JSON nested at most 512 levels"
    assert rejects == [(16, reason), (23, reason)]  # run c's and run d's model step that asked for the call
    assert result.lines == 28 and result.lines == result.loaded + result.rejected + result.skipped
