"""The journal writer and the loader share one set of rules: the writer refuses exactly what ingest rejects.

Every field of good records of each kind is replaced, one at a time, by values of every JSON type and
of edge ranges; the writer's verdict (``journal_spec.record_problem``) is compared with the loader's
on the same line, all cases in one file, loaded once.
"""

from __future__ import annotations

import copy
import io
import json

import pytest

from reconcile import store
from reconcile.ingest.driver import ingest
from reconcile.journal import Journal, JournalError
from reconcile.formats.journal_spec import record_problem

TS = "2026-11-28T23:00:00Z"
GOOD = {
    "run_start": {"v": 1, "type": "run_start", "run_id": "r", "ts": TS, "agent": "a", "model": "claude-sonnet-4-5",
                  "limits": {"max_steps": 20, "max_tokens": 200000, "max_prompt_tokens": 60000,
                             "max_completion_tokens": 8000, "max_wall_seconds": 300.0, "max_cost_micros": 2000000,
                             "max_repeats": 2, "max_retries": 3, "scope": "tree"},
                  "loop_detector": {"kind": "calls_window", "limit": 3, "window": 6},
                  "tools": [{"name": "search", "allow_repeat": False, "schema_tokens": 150}],
                  "parent_run_id": "p", "fallback_model": "claude-haiku-4-5", "catalogue_tokens": 150},
    "model": {"v": 1, "type": "step", "run_id": "r", "ts": TS, "idx": 0, "kind": "model", "ms": 812,
              "usage": {"input_uncached": 10, "cache_read": 900, "output": 50, "reasoning": 5},
              "final": False, "attempt": 1, "error": "529 overloaded", "error_class": "transport", "cost_micros": 30,
              "tool_calls": [{"call_id": "c1", "name": "search", "args": {"q": "x"}}]},
    "tool": {"v": 1, "type": "step", "run_id": "r", "ts": TS, "idx": 1, "kind": "tool", "call_id": "c1",
             "tool": "search", "status": "not_run", "result_tokens": 4, "bounded": False},
    "event": {"v": 1, "type": "step", "run_id": "r", "ts": TS, "idx": 2, "kind": "event", "event": "wrap_up",
              "detail": "step limit (20)"},
    "run_end": {"v": 1, "type": "run_end", "run_id": "r", "ts": TS, "stop_reason": "token limit (200,000)",
                "status": "incomplete", "ledger": {"steps": 20, "tokens": 201000, "cost_micros": 1500000}},
}
VALUES = [None, "text", "", -1, 0, 1.5, 2**31, 10**16, 2**70, True, [], {}, [1], {"x": 1}, "2026-13-40T00:00:00Z",
          "complete", "zzz", "calls_anywhere", "tree", "transport"]


def _leaves(node, path=()):
    if isinstance(node, dict):
        for key, value in node.items():
            yield path + (key,)
            yield from _leaves(value, path + (key,))
    elif isinstance(node, list):
        for position, value in enumerate(node):
            yield path + (position,)
            yield from _leaves(value, path + (position,))


def _with(record, path, value):
    changed = copy.deepcopy(record)
    node = changed
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value
    return changed


def cases():
    """(name, record) for every good record and every one of its fields replaced by each value."""
    for kind, record in GOOD.items():
        yield f"{kind}", record
        for path in _leaves(record):
            if path[0] in ("run_id", "type"):  # they place the line; the cases need them to stay put
                continue
            for value in VALUES:
                yield f"{kind}:{'.'.join(map(str, path))}={json.dumps(value)}", _with(record, path, value)
    yield "run_end without stop_reason or status", {k: v for k, v in GOOD["run_end"].items()
                                                    if k not in ("stop_reason", "status")}
    yield "run_end with a status only", {k: v for k, v in GOOD["run_end"].items() if k != "stop_reason"}


def test_the_writer_and_the_loader_give_the_same_verdict_on_every_line(tmp_path):
    path = tmp_path / "cases.jsonl"
    lines, where = [], {}
    for number, (name, record) in enumerate(cases()):
        run_id = f"case{number}"
        record = {**record, "run_id": run_id}
        if record.get("type") != "run_start":  # its run needs a start in the file
            lines.append(json.dumps({**GOOD["run_start"], "run_id": run_id}))
        lines.append(json.dumps(record))
        where[len(lines)] = (name, record)
    path.write_text("\n".join(lines) + "\n")
    con = store.connect(tmp_path / "s.duckdb")
    ingest(con, [path])
    rejected = dict(con.execute("select line, reason from rejects").fetchall())
    disagree = []
    for line_no, (name, record) in where.items():
        writer = record_problem(record)
        if (writer is None) != (line_no not in rejected):
            disagree.append(f"{name}: writer says {writer!r}, loader says {rejected.get(line_no)!r}")
    assert not disagree, f"{len(disagree)} of {len(where)} cases disagree:\n" + "\n".join(disagree[:30])
    assert len(where) > 800 and len(rejected) > 300  # the corpus holds both verdicts in numbers


def test_the_writer_refuses_at_once_and_writes_nothing():
    target = io.StringIO()
    journal = Journal(target)
    run = journal.start_run("r", agent="a", limits={"max_steps": 3})
    written = target.getvalue()
    with pytest.raises(JournalError, match='field "usage.output" is -1'):
        run.model_step(usage={"output": -1})
    with pytest.raises(JournalError, match="neither a status nor a stop reason reconcile knows"):
        run.end("felt done")
    assert target.getvalue() == written  # nothing of either refused record was written
    step = run.model_step(usage={"output": 5})
    assert step.idx == 0  # a refused record takes no step index


@pytest.mark.parametrize("status,reason,expected", [
    ("complete", None, "succeeded"),  # seed 001
    ("incomplete", "token limit (200,000)", "budget_exceeded"),
    ("incomplete", "time limit (300.0s)", "timed_out"),
    ("incomplete", "cost limit ($2.00)", "budget_exceeded"),
    ("incomplete", "repeated the same tool calls 3 times without progress", "stalled"),
    ("incomplete", "the model gave up", "failed"),  # the harness says it did not complete: never 'succeeded'
    ("stalled", None, "stalled"),  # seed 003's own statuses
    (None, "max_completion_tokens", "budget_exceeded"),  # seed 000's stop strings
    (None, "identical_tool_results", "stalled"),
])
def test_a_harness_s_own_words_map_and_are_kept(tmp_path, status, reason, expected):
    path = tmp_path / "j.jsonl"
    with Journal(path) as journal:
        run = journal.start_run("r", agent="a")
        run.model_step(usage={"output": 5}, final=True, text="done")
        run.end(reason, status=status)
    con = store.connect(tmp_path / "s.duckdb")
    assert ingest(con, [path]).totals["rejected"] == 0
    assert con.execute("select status, harness_status, stop_reason from runs").fetchall() == [(expected, status, reason)]
