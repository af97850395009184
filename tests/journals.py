"""Small native journals written through the real writer, for tests."""

from __future__ import annotations

from pathlib import Path

from datetime import datetime, timedelta, timezone

from reconcile.journal import Journal

class StepClock:
    """A clock that moves one second per reading, for deterministic journals in tests."""

    def __init__(self, start: datetime = datetime(2026, 11, 28, 23, 0, tzinfo=timezone.utc)):
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


TOOLS = [{"name": "read_file"}, {"name": "write_file", "side_effect": True, "schema_tokens": 120}]


def write_simple_run(journal: Journal, run_id: str = "r1", end: bool = True):
    """A model step asking for two tools, their results, a final answer. Returns the tool calls."""
    run = journal.start_run(run_id, agent="tester", task_class="unit", model="claude-sonnet-4-5",
                            provider="anthropic", limits={"max_steps": 5, "max_wall_seconds": 60.5},
                            tools=TOOLS, catalogue_tokens=300)
    first = run.model_step(model="claude-sonnet-4-5", ms=900.4,
                           usage={"input_uncached": 100, "cache_read": 2000, "cache_write_5m": 300,
                                  "cache_write_1h": 40, "output": 80, "reasoning": 20},
                           tool_calls=[("read_file", {"path": "a.py", "lines": [1, 2.0]}),
                                       ("write_file", {"path": "b.py", "text": "x = 1"})],
                           finish_reason="tool_use", input_messages=[{"role": "user", "content": "go"}])
    run.tool_step(first.calls[0], result="print('hi')\n", ms=10)
    run.tool_step(first.calls[1], status="error", result="Traceback: boom", ms=12, error="OSError: boom")
    run.event("compaction", tokens_before=5000, tokens_after=1200)
    run.model_step(model="claude-sonnet-4-5", ms=700, usage={"input_uncached": 10, "cache_read": 2400, "output": 50},
                   text="All done.", final=True, finish_reason="end_turn")
    if end:
        run.end("model_finished", final_output="All done.",
                ledger={"steps": 2, "input_tokens": 4850, "output_tokens": 130, "cost_micros": 12345, "tool_results": 2})
    return first.calls


def journal_file(path: Path, runs: tuple[str, ...] = ("r1",)) -> Path:
    with Journal(path, clock=StepClock()) as journal:
        for run_id in runs:
            write_simple_run(journal, run_id)
    return path
