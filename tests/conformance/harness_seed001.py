"""Seed 001 ("Budget and Loop Ceilings"), transcribed, journalled with reconcile.journal.

The seed's code as written: ``Budget`` (four ceilings checked in the order steps, tokens, wall
clock, spend, each with ``>=``, and its stop strings ``step limit (20)``, ``token limit (200,000)``,
``time limit (300s)``, ``cost limit ($2.00)``), ``charge`` after every model call, ``run`` checking
``exhausted()`` before each iteration, ``wrap_up`` (one tool-free model turn; status
``incomplete``, ``stopped_by`` the reason), ``step_fingerprint`` and ``LoopDetector`` (a step's
fingerprint counted anywhere in the run, ``>= repeat_limit``). One ``Budget`` object is shared by
the whole agent tree: a sub-agent is ``run(subtask, budget)`` with the parent's budget.

Made deterministic: a scripted fake ``model``, tools on a simulated clock, and the clock injected
into ``Budget`` in place of ``time.monotonic``. Lines marked ``# journal:`` are what the seed's
author adds to keep a run journal. Where the seed is silent, a ``DECISION`` comment says what was
chosen. Fault switches (``Faults``, ``DriftingBudget``, ``LateLoopDetector``) plant defects.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from conformance_support import SimClock
from reconcile.journal import Journal, RunJournal, estimate_tokens

MODEL = "claude-sonnet-4-5"
PRICE_PER_MILLION = {"input": 3.00, "output": 15.00}  # the harness's own price table (list price of MODEL)


# ---- the types the seed's code uses (it does not define them)

@dataclass
class Usage:
    input_tokens: int
    output_tokens: int


@dataclass
class ToolCallRequest:
    id: str
    name: str
    arguments: dict[str, Any]


@dataclass
class Message:
    role: str
    content: str
    tool_calls: list[ToolCallRequest] | None = None


@dataclass
class Response:
    message: Message
    tool_calls: list[ToolCallRequest]
    text: str
    usage: Usage


@dataclass
class Result:
    status: str
    output: str
    budget: Budget
    stopped_by: str | None = None


def price(usage: Usage) -> float:
    return (usage.input_tokens * PRICE_PER_MILLION["input"] + usage.output_tokens * PRICE_PER_MILLION["output"]) / 1e6


def canonical(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, sort_keys=True, separators=(",", ":"))


class Metrics:
    """``metrics.increment`` of the seed: budget-exhaustion telemetry, kept in memory."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str]] = Counter()

    def increment(self, name: str, tags: dict[str, str]) -> None:
        self.counts[(name, tags.get("reason", ""))] += 1


metrics = Metrics()


# ---- the seed's Budget

@dataclass
class Budget:
    max_steps: int = 20
    max_tokens: int = 200_000
    max_seconds: float = 300
    max_cost_usd: float = 2.00

    steps: int = 0
    tokens: int = 0
    cost_usd: float = 0.0
    # The seed: ``started: float = field(default_factory=time.monotonic)`` and ``time.monotonic()`` in
    # ``exhausted``. The clock is injected instead (the only change to the class).
    clock: Callable[[], float] = field(default=time.monotonic, repr=False)
    started: float | None = None

    def __post_init__(self) -> None:
        if self.started is None:
            self.started = self.clock()

    def exhausted(self) -> str | None:
        if self.steps >= self.max_steps:
            return f"step limit ({self.max_steps})"
        if self.tokens >= self.max_tokens:
            return f"token limit ({self.max_tokens:,})"
        if self.clock() - self.started >= self.max_seconds:
            return f"time limit ({self.max_seconds}s)"
        if self.cost_usd >= self.max_cost_usd:
            return f"cost limit (${self.max_cost_usd:.2f})"
        return None

    def charge(self, usage: Usage) -> None:
        self.steps += 1
        self.tokens += usage.input_tokens + usage.output_tokens
        self.cost_usd += price(usage)


class DriftingBudget(Budget):
    """FAULT: charge forgets the output tokens, so the budget's token count drifts from the journal's."""

    def charge(self, usage: Usage) -> None:
        self.steps += 1
        self.tokens += usage.input_tokens
        self.cost_usd += price(usage)


# ---- the seed's loop detector

def step_fingerprint(response: Response) -> str:
    calls = sorted((c.name, canonical(c.arguments)) for c in response.tool_calls)
    return hashlib.sha1(repr(calls).encode()).hexdigest()[:12]


class LoopDetector:
    def __init__(self, repeat_limit: int = 3):
        self.seen, self.limit = Counter(), repeat_limit

    def check(self, response: Response) -> str | None:
        if not response.tool_calls:
            return None
        fp = step_fingerprint(response)
        self.seen[fp] += 1
        if self.seen[fp] >= self.limit:
            return f"repeated the same tool calls {self.limit} times without progress"
        return None


class LateLoopDetector(LoopDetector):
    """FAULT: ``>`` where the seed has ``>=``: the fourth repeat, not the third, stops the run."""

    def check(self, response: Response) -> str | None:
        if not response.tool_calls:
            return None
        fp = step_fingerprint(response)
        self.seen[fp] += 1
        if self.seen[fp] > self.limit:
            return f"repeated the same tool calls {self.limit} times without progress"
        return None


# ---- the world: a scripted model and tools on the simulated clock

class ScriptedModel:
    """``await model(messages, tools=…)``: the next turn of a script.

    A turn is a list of ``(tool, args)`` calls, or a string (an answer without tool calls). With
    ``tools=[]`` (the wrap-up) it answers ``wrap_text``. Input tokens are what was sent (a fixed
    system prompt plus 4 bytes a token of every message); output tokens are the turn's ``output``
    (default 150). Each call takes ``latency`` seconds of the clock.
    """

    SYSTEM_TOKENS = 1_500

    def __init__(self, script: list, clock: SimClock, *, then: Any = None, latency: float = 2.0,
                 wrap_text: str = "Stopped by the budget. Established: the cause is in the retry loop. "
                                  "Unfinished: the fix. Next step: add a backoff cap."):
        self.script, self.clock, self.then, self.latency, self.wrap_text = list(script), clock, then, latency, wrap_text
        self.turn = 0

    async def __call__(self, messages: list[Message], tools: list) -> Response:
        sent = self.SYSTEM_TOKENS + sum(estimate_tokens(m.content) for m in messages)
        self.clock.sleep(self.latency)
        self.turn += 1
        if not tools:
            return Response(Message("assistant", self.wrap_text), [], self.wrap_text, Usage(sent, 120))
        item = self.script.pop(0) if self.script else self.then
        output = 150
        if isinstance(item, dict):  # {"calls": [...], "output": n} or {"text": ..., "output": n}
            output, item = item.get("output", output), item.get("calls", item.get("text"))
        if isinstance(item, str):
            return Response(Message("assistant", item), [], item, Usage(sent, output))
        calls = [ToolCallRequest(f"toolu_{self.turn}_{i}", name, args) for i, (name, args) in enumerate(item)]
        note = "; ".join(f"{c.name}({canonical(c.arguments)})" for c in calls)
        return Response(Message("assistant", note, calls), calls, "", Usage(sent, output))


Tool = Callable[..., Awaitable[str]]
SIDE_EFFECTS = {"write_file"}


def world_tools(clock: SimClock) -> dict[str, Tool]:
    async def search(q: str) -> str:
        clock.sleep(1.0)
        return f"3 results for {q!r}: docs/retry.md, src/retry.py, tests/test_retry.py"

    async def read_file(path: str) -> str:
        clock.sleep(0.5)
        return f"# {path}\n" + "".join(f"line {i} of {path}\n" for i in range(12))

    async def fetch_document(url: str) -> str:
        clock.sleep(3.0)
        return f"<document {url}>\n" + "An exhaustive design history, paragraph after paragraph. " * 7_000

    async def slow_query(sql: str) -> str:
        clock.sleep(99.0)  # a slow dependency; the seed's loop has no tool timeout
        return "count\n48213\n"

    async def write_file(path: str, text: str) -> str:
        clock.sleep(0.5)
        return f"wrote {len(text)} bytes to {path}"

    return {"search": search, "read_file": read_file, "fetch_document": fetch_document,
            "slow_query": slow_query, "write_file": write_file}


@dataclass
class Faults:
    """Planted defects. All False / None: the seed's harness as written."""

    ignore_final: bool = False   # ``if response.tool_calls is None``: an empty list is not None, so it runs on
    misread_final: bool = False  # the same, journalled as the loop saw it: the answer not final
    lose_batch_result: bool = False  # a batch's second result is never journalled


@dataclass
class Harness:
    """What ``run`` needs besides the task and the budget: the world, the journal, how to name runs."""

    journal: Journal
    clock: SimClock
    tools: dict[str, Tool]
    models: dict[str, ScriptedModel]  # by agent: "main", and "sub" for a sub-agent
    faults: Faults = field(default_factory=Faults)
    new_detector: Callable[[], LoopDetector] = LoopDetector
    sub_agents: int = 0


TOOLS = ["search", "read_file", "fetch_document", "slow_query", "write_file", "delegate"]


# ---- the seed's run and wrap_up, journalled

async def run(task: str, budget: Budget, h: Harness, *, run_id: str, parent_run_id: str | None = None) -> Result:
    messages = [Message(role="user", content=task)]
    agent = "main" if parent_run_id is None else "sub"
    model = h.models[agent]
    detector = h.new_detector()  # DECISION: one LoopDetector per agent run; the budget is the tree's
    journal = _start(h, budget, run_id, parent_run_id, detector)

    while True:
        if (reason := budget.exhausted()):
            return await wrap_up(messages, reason, budget, h, journal, model)

        sent, t0, m0 = list(messages), h.clock.utc(), h.clock.monotonic()
        response = await model(messages, tools=TOOLS)
        budget.charge(response.usage)
        step = journal.model_step(  # journal: the call, what it cost by the harness's price, what it asked for
            usage={"input_uncached": response.usage.input_tokens, "output": response.usage.output_tokens},
            ms=(h.clock.monotonic() - m0) * 1000, ts=t0, model=MODEL, input_messages=_wire(sent),
            tool_calls=[(c.name, c.arguments) for c in response.tool_calls], text=response.text or None,
            final=not response.tool_calls and not h.faults.misread_final, cost_micros=round(price(response.usage) * 1e6),
            finish_reason="tool_use" if response.tool_calls else "end_turn")
        messages.append(response.message)

        misread = h.faults.ignore_final or h.faults.misread_final
        finished = (response.tool_calls is None) if misread else (not response.tool_calls)
        if finished:
            result = Result(status="complete", output=response.text, budget=budget)
            return _end(journal, result, parent_run_id)

        messages.extend(await execute_batch(response.tool_calls, step.calls, budget, h, journal))
        # DECISION: the seed does not say where LoopDetector.check runs. Here: after the step's batch
        # ran (a step is the model's request and its tools), so every call it asked for has a result;
        # its stop goes through the seed's one graceful exit, wrap_up, with the detector's string.
        if (reason := detector.check(response)):
            return await wrap_up(messages, reason, budget, h, journal, model)


async def execute_batch(tool_calls: list[ToolCallRequest], journalled: list, budget: Budget, h: Harness,
                        journal: RunJournal) -> list[Message]:
    out = []
    for position, (call, entry) in enumerate(zip(tool_calls, journalled)):
        t0, m0 = h.clock.utc(), h.clock.monotonic()
        # journal: a call that changes the world is keyed and recorded before it runs
        started = journal.tool_started(entry, ts=t0) if call.name in SIDE_EFFECTS else None
        if call.name == "delegate":  # a sub-agent, on the same budget (the seed: share it across the tree)
            h.sub_agents += 1
            sub = await run(call.arguments["task"], budget, h, run_id=f"{journal.run_id}-sub{h.sub_agents}",
                            parent_run_id=journal.run_id)
            text, status = f"[{sub.status}] {sub.output}", "ok"
        else:
            try:
                text, status = await h.tools[call.name](**call.arguments), "ok"
            except Exception as exc:
                text, status = f"error: {type(exc).__name__}: {exc}", "error"
        if not (h.faults.lose_batch_result and position == 1):  # FAULT switch: the second result is lost
            journal.tool_step(entry, started=started, status=status, result=text, ts=t0,
                              ms=(h.clock.monotonic() - m0) * 1000, error=text if status != "ok" else None)
        out.append(Message(role="tool", content=text))
    return out


async def wrap_up(messages: list[Message], reason: str, budget: Budget, h: Harness, journal: RunJournal,
                  model: ScriptedModel) -> Result:
    metrics.increment("agent.budget_exhausted", tags={"reason": reason.split(" ")[0]})
    messages.append(Message(role="user", content=(
        f"You have reached the {reason}. Stop working. Summarize what you "
        f"established, what remains unfinished, and the single best next step."
    )))
    journal.event("wrap_up", detail=reason)  # journal: the tool-free last turn, and why
    sent, t0, m0 = list(messages), h.clock.utc(), h.clock.monotonic()
    final = await model(messages, tools=[])   # no tools: it cannot start anything new
    # journal: the wrap-up turn is a model call like any other, but not a final answer. The seed does
    # not charge it to the budget, so it is not in the ledger either (see _ledger).
    journal.model_step(usage={"input_uncached": final.usage.input_tokens, "output": final.usage.output_tokens},
                       ms=(h.clock.monotonic() - m0) * 1000, ts=t0, model=MODEL, input_messages=_wire(sent),
                       text=final.text, final=False, cost_micros=round(price(final.usage) * 1e6),
                       finish_reason="end_turn")
    result = Result(status="incomplete", output=final.text, stopped_by=reason, budget=budget)
    return _end(journal, result, journal.parent_run_id)


# ---- journalling helpers (what the author adds around the seed's code)

def _start(h: Harness, budget: Budget, run_id: str, parent_run_id: str | None, detector: LoopDetector) -> RunJournal:
    tools = [{"name": name, "side_effect": name in SIDE_EFFECTS} for name in TOOLS]
    loop = {"kind": "calls_anywhere", "limit": detector.limit}
    if parent_run_id is None:
        # The root run owns the Budget: its four ceilings, shared by every run under it (scope "tree").
        limits = {"max_steps": budget.max_steps, "max_tokens": budget.max_tokens,
                  "max_wall_seconds": float(budget.max_seconds), "max_cost_micros": round(budget.max_cost_usd * 1e6),
                  "scope": "tree"}
        run = h.journal.start_run(run_id, agent="seed001", model=MODEL, provider="anthropic", task_class="research",
                                  limits=limits, tools=tools, loop_detector=loop, fence="seed001")
    else:
        # DECISION: a sub-agent declares no limits of its own (it has none: it charges its parent's
        # Budget); it names its parent, whose limits have scope "tree".
        run = h.journal.start_run(run_id, agent="seed001", model=MODEL, provider="anthropic", task_class="research",
                                  tools=tools, loop_detector=loop, parent_run_id=parent_run_id, fence="seed001")
    run.parent_run_id = parent_run_id
    return run


def _end(journal: RunJournal, result: Result, parent_run_id: str | None) -> Result:
    # journal: the seed's Result in its own words: status "complete" / "incomplete", stopped_by the
    # budget's or the detector's string (None when complete: the seed gives no reason then).
    journal.end(result.stopped_by, status=result.status, final_output=result.output,
                ledger=_ledger(result.budget) if parent_run_id is None else None)
    return result


def _ledger(budget: Budget) -> dict[str, int]:
    """DECISION: the ledger is the Budget's counters as the seed keeps them — steps and tokens
    (input + output as one total) and spend, charged once per model call in the loop. ``wrap_up``
    does not charge, so the wrap-up turn is in the journal but not in the ledger. The Budget is the
    tree's, so only the root run (its owner) journals it, after every sub-agent has charged it."""
    return {"steps": budget.steps, "tokens": budget.tokens, "cost_micros": round(budget.cost_usd * 1e6)}


def _wire(messages: list[Message]) -> list[dict[str, Any]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def run_sync(task: str, budget: Budget, h: Harness, run_id: str) -> Result:
    return asyncio.run(run(task, budget, h, run_id=run_id))
