"""Eight nights of native journals for the fleet signals: seven ordinary, the eighth planted or clean.

Each night's runs start from 22:00 UTC. Two models (claude-sonnet-4-5 for ``fix_bug``, gpt-5-mini for
``summarise``); each run makes four to eight model calls, each followed by a ``lookup`` tool call.
Ordinary noise: about 1 % of calls refused by the provider (``transport``), 3 % of lookups failing,
prompt sizes varying by ±10 %.

The planted eighth night (``plant=True``):
- gpt-5-mini's calls are refused 25 % of the time (a provider 529 storm for one model);
- ``fix_bug`` prompts are 60 % longer (a prompt change that raises the cost per request);
- from 02:00 UTC on, ``lookup`` returns a new shape (``NEW_SHAPE``) and fails the harness's validation 90 % of
  the time (a tool server update its schema no longer fits).
The clean eighth night is an ordinary one with its own noise. Written through the real writer.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from reconcile.journal import Journal

NIGHTS = 8
RUNS = 30  # a night
FIRST = datetime(2026, 11, 20, 22, 0, tzinfo=timezone.utc)
CLASSES = {"fix_bug": ("claude-sonnet-4-5", "anthropic"), "summarise": ("gpt-5-mini", "openai")}
DRIFT_AT = 4  # hours after 22:00: 02:00 UTC
NEW_SHAPE = '{"data": {"rows": [{"id": 1, "ok": true}]}, "version": 2}'  # what the updated server returns


class Clock:
    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def write_night(path: Path, night: int, plant: bool, seed: int) -> Path:
    rng = random.Random(seed)
    start = FIRST + timedelta(days=night)
    clock = Clock(start)
    with Journal(path, clock=clock) as journal:
        for number in range(RUNS):
            task = "fix_bug" if number % 2 else "summarise"
            model, provider = CLASSES[task]
            clock.now = start + timedelta(minutes=number * 12)  # 30 runs over six hours: 22:00 to 04:00
            run = journal.start_run(f"n{night}-r{number}", agent="worker", task_class=task, model=model,
                                    provider=provider, limits={"max_steps": 20},
                                    tools=[{"name": "lookup", "schema_tokens": 100}], catalogue_tokens=100)
            for turn in range(rng.randint(4, 8)):
                clock.now += timedelta(seconds=20)
                refused = rng.random() < (0.25 if plant and task == "summarise" else 0.01)
                if refused:
                    run.model_step(model=model, usage={}, error="529 overloaded", error_class="transport", ms=300)
                    continue
                prompt = int(2000 * rng.uniform(0.9, 1.1) * (1.6 if plant and task == "fix_bug" else 1))
                step = run.model_step(model=model, usage={"input_uncached": prompt, "cache_read": 0,
                                                          "cache_write_5m": 0, "cache_write_1h": 0, "output": 200},
                                      tool_calls=[("lookup", {"q": f"{night}-{number}-{turn}"})], ms=900)
                clock.now += timedelta(seconds=5)
                drifted = plant and clock.now >= start + timedelta(hours=DRIFT_AT)
                failed = rng.random() < (0.9 if drifted else 0.03)
                result = (NEW_SHAPE if drifted else '{"error": "schema"}' if failed else '{"rows": [1, 2, 3]}')
                run.tool_step(step.calls[0], status="error" if failed else "ok", result=result, ms=40)
            clock.now += timedelta(seconds=10)
            run.model_step(model=model, usage={"input_uncached": 2100, "cache_read": 0, "cache_write_5m": 0,
                                               "cache_write_1h": 0, "output": 100}, text="done", final=True, ms=800)
            run.end("model_finished", final_output="done")
    return path


def write_nights(folder: Path, plant: bool) -> list[Path]:
    """The eight nights' journals under ``folder`` (one file a night); the last planted or clean."""
    folder.mkdir(parents=True, exist_ok=True)
    return [write_night(folder / f"night{night}.jsonl", night, plant and night == NIGHTS - 1, seed=100 + night + (
        1000 if night == NIGHTS - 1 and not plant else 0)) for night in range(NIGHTS)]
