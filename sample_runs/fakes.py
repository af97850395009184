"""The scripted world the reference harness runs in: a fake model, simulated tools, a clock.

Nothing here is what reconcile audits; it only makes ``harness.py`` produce realistic journals
quickly and reproducibly (seeded, on a simulated clock).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path

# The harness's own price table for its ledger, in dollars per million tokens (= µ$ per token).
PRICES = {
    "claude-sonnet-4-5": {"input_uncached": 3, "cache_read": "0.30", "cache_write_5m": "3.75", "cache_write_1h": 6,
                          "output": 15},
    "claude-haiku-4-5": {"input_uncached": 1, "cache_read": "0.10", "cache_write_5m": "1.25", "cache_write_1h": 2,
                         "output": 5},
    "gpt-5-mini": {"input_uncached": "0.25", "cache_read": "0.025", "cache_write_5m": 0, "cache_write_1h": 0,
                   "output": 2},
    # an in-house model on a negotiated rate: no public price list has it
    "acme-distill-7b": {"input_uncached": "0.10", "cache_read": "0.01", "cache_write_5m": 0, "cache_write_1h": 0,
                        "output": "0.40"},
}
INPUT_BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h")

TOOLS = {  # name: (side effect, allow repeat, schema tokens)
    "read_file": (False, False, 180), "search": (False, False, 240), "run_tests": (False, True, 210),
    "write_file": (True, False, 260), "ok_forever": (False, False, 90), "big_output": (False, False, 120),
    "sleep": (False, False, 80), "raise_after_write": (True, False, 150),
}
MISBEHAVING = ("ok_forever", "big_output", "sleep", "raise_after_write")
OUTAGE_BODY = '{"status": 503, "error": "upstream search index unavailable"}'


@dataclass
class Plan:
    """What the scripted model will do (and what happens to the process): its whole 'intelligence'."""

    answer_at: int | None  # answer on this model turn (0-based); None: never
    tools: list[str]
    pattern: list[tuple[str, dict]] | None = None  # repeat these calls from pattern_from on
    pattern_from: int = 0
    scripted: dict[int, list[tuple[str, dict]]] = field(default_factory=dict)  # calls forced on a turn
    invalid_output_at: int | None = None  # the model's output on this turn is unusable (once)
    empty_answer: bool = False  # on its answer turn the model says nothing at all
    outage_at: int | None = None  # search answers with an HTTP 503 body on this turn
    crash_at: int | None = None  # the process dies before this model turn (no run_end)
    crash_in_tool_at: int | None = None  # the process dies while running this turn's first tool call
    cancel_at: int | None = None  # an operator cancels before this model turn
    fatal_tool_at: int | None = None  # on this turn, call raise_after_write and give up on its error
    truncate_at: int | None = None  # before this turn the context is trimmed (see Faults.silent_truncation)
    refusals: dict[int, list[str]] = field(default_factory=dict)  # turn: the provider refuses its first tries
    # ("transport": 529 overloaded; "rate_limit": 429), before it answers
    tool_latency_scale: float = 1.0


class SimClock:
    def __init__(self, start: datetime):
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, ms: float) -> None:
        self.now += timedelta(milliseconds=ms)


def cost_micros(model: str, usage: dict) -> int:
    price = PRICES[model]
    total = sum(Decimal(str(price[b])) * usage.get(b, 0) for b in (*INPUT_BUCKETS, "output"))
    return int(total.quantize(Decimal(1)))


class FakeModel:
    """Deterministic model: follows a Plan, with usage that grows like a real conversation."""

    def __init__(self, name: str, rng: random.Random):
        self.name, self.rng = name, rng
        self.cached = 0  # tokens of the previous call's input, still in the provider cache

    def call(self, turn: int, context: int, plan: Plan, wrap_up: bool) -> dict:
        rng = self.rng
        new_tokens = max(context - self.cached, 0)
        usage = {"cache_read": min(self.cached, context), "input_uncached": min(new_tokens, 40 + rng.randint(0, 60))}
        usage["cache_write_5m"] = new_tokens - usage["input_uncached"]
        self.cached = context
        calls: list[tuple[str, dict]] = []
        final = wrap_up or (plan.answer_at is not None and turn >= plan.answer_at)
        invalid = plan.invalid_output_at == turn and not wrap_up
        if invalid:
            plan.invalid_output_at = None
            final = False
        elif not final:
            if turn in plan.scripted:
                calls = list(plan.scripted[turn])
            elif plan.fatal_tool_at == turn:
                calls = [("raise_after_write", {"path": f"out/{rng.randint(1, 9)}.txt"})]
            elif plan.pattern and turn >= plan.pattern_from:
                calls = [plan.pattern[(turn - plan.pattern_from) % len(plan.pattern)]]
            else:
                calls = [self._pick(plan.tools) for _ in range(1 if rng.random() < 0.85 else 2)]
        usage["output"] = rng.randint(300, 900) if final else rng.randint(60, 320)
        if self.name in ("gpt-5-mini", "acme-distill-7b"):
            usage["reasoning"] = usage["output"] // 3
            usage["input_uncached"] += usage.pop("cache_write_5m")  # OpenAI has no cache writes
        ms = rng.lognormvariate(7.3, 0.45) * (4 if rng.random() < 0.08 else 1)  # bimodal: some slow calls
        text = ("Here is what I found and changed: " + "details " * rng.randint(5, 40)) if final else None
        if final and plan.empty_answer and not wrap_up:
            final, text = False, None
        return {"usage": usage, "calls": calls, "final": final and not wrap_up, "text": text, "ms": ms,
                "finish_reason": "end_turn" if final or text is None and not calls else "tool_use",
                "error": "invalid output: tool arguments are not valid JSON" if invalid else None}

    def _pick(self, tools: list[str]) -> tuple[str, dict]:
        rng = self.rng
        name = rng.choice(tools)
        args = {"read_file": {"path": f"src/mod{rng.randint(1, 40)}.py"},
                "search": {"query": f"symbol_{rng.randint(1, 500)}", "limit": 10},
                "run_tests": {"target": f"tests/test_{rng.randint(1, 12)}.py"},
                "write_file": {"path": f"src/mod{rng.randint(1, 40)}.py", "content_tokens": rng.randint(50, 400)},
                "big_output": {"query": f"logs since {rng.randint(1, 23)}h"},
                "ok_forever": {}, "sleep": {"seconds": 120}}.get(name, {})
        return name, args


def simulate_tool(name: str, args: dict, rng: random.Random, scale: float, workspace: Path, outage: bool) -> dict:
    """One tool's behaviour: status, result text and duration. May raise, like real tools."""
    if name == "sleep":  # hangs for as long as it is let
        return {"status": "ok", "result": "slept", "ms": args.get("seconds", 120) * 1000, "error": None}
    if name == "raise_after_write":  # the side effect happens, then the tool fails
        _write(workspace, args["path"], "partial output\n")
        raise RuntimeError("disk quota exceeded after write")
    if name == "ok_forever":
        return {"status": "ok", "result": "ok", "ms": rng.uniform(2, 10), "error": None}
    if name == "big_output":
        return {"status": "ok", "result": "log line with details\n" * rng.randint(12000, 20000),
                "ms": rng.uniform(200, 900), "error": None}
    if name == "run_tests":
        passed = rng.random() < 0.6
        text = f"{rng.randint(3, 40)} passed" if passed else \
            "FAILED test_x - AssertionError: expected 3, got 4\n" * rng.randint(1, 6)
        return {"status": "ok", "result": text, "ms": rng.lognormvariate(9.2, 0.6) * scale, "error": None}
    if name == "write_file":
        _write(workspace, args["path"], "x" * (args.get("content_tokens", 100) * 4))
        return {"status": "ok", "result": f"wrote {args.get('content_tokens', 100) * 4} bytes",
                "ms": rng.uniform(5, 30), "error": None}
    if name == "search" and outage:
        return {"status": "ok", "result": OUTAGE_BODY, "ms": rng.uniform(50, 200), "error": None}
    size = rng.randint(150, 3000) if name == "read_file" else rng.randint(800, 4000)
    line = "def f():\n    return 1\n" if name == "read_file" else "match: x.py:12\n"
    ms = rng.uniform(5, 60) if name == "read_file" else rng.uniform(300, 1500)
    return {"status": "ok", "result": line * (size // 20), "ms": ms, "error": None}


def _write(workspace: Path, relative: str, text: str) -> None:
    target = workspace / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target, "a") as handle:
        handle.write(text)
