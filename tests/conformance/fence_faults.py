"""Fences with one fault each, drawn at random, and what the seeds say each should have done.

A run here is a loop of model calls under a budget, checked before each call the way one seed checks it:
seed 000's ``Ledger.check`` (steps, prompt tokens, completion tokens, wall clock, all at ``>=``), seed 001's
``Budget.exhausted`` (steps, tokens, wall clock, spend at ``>=``; a tool-free wrap-up turn after the stop;
one budget for an agent tree) or seed 003's ``runAgent`` (``Date.now() > deadline``, then steps and tokens at
``>=``; a call the provider refused is retried inside ``step()``, with no check before the retry). The fence
may carry one fault:

- ``greater_than``: one ceiling compared with ``>`` where the seed has ``>=``;
- ``stale_ledger``: the counters are charged after the next check (one call late), so every count ceiling
  lets one more call through;
- ``last_call_prompt``: seed 000's prompt ceiling held to the last call's prompt, not the run's total;
- ``unchecked``: a ceiling declared on the journal and never checked;
- ``own_tree_budget``: seed 001's sub-agents each spend a fresh budget of their own instead of the tree's.

Beside the faulty fence each run keeps the seed's own, as the seed's text writes it: the first call of each run
that one would have refused is the expectation (``refused``), computed here from the seeds' rules and never
from reconcile's code. Limits are drawn from what the run's calls will spend — most often exactly a prefix of
it, where the comparison decides.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from conformance_support import SimClock
from reconcile.journal import Journal, RunJournal

MODEL = "claude-sonnet-4-5"
STYLES = ("seed000", "seed001", "seed003")
CEILINGS = {"seed000": ("steps", "prompt", "completion", "wall"),  # each seed's ceilings, in its order of checks
            "seed001": ("steps", "tokens", "wall", "cost"),
            "seed003": ("wall", "steps", "tokens")}
JOURNAL_NAMES = {"steps": "max_steps", "prompt": "max_prompt_tokens", "completion": "max_completion_tokens",
                 "tokens": "max_tokens", "wall": "max_wall_seconds", "cost": "max_cost_micros"}
FAULTS = ("none", "greater_than", "stale_ledger", "last_call_prompt", "unchecked", "own_tree_budget")


@dataclass
class Call:
    prompt: int
    completion: int
    cost: int  # the harness's own price, micro-dollars
    latency: float  # seconds; multiples of 0.25, which the journal's milliseconds keep exactly
    tool: float  # seconds its tool ran
    refusals: int = 0  # times the provider refused it first (seed 003 retries inside the call)


@dataclass
class Plan:
    run_id: str
    style: str
    fault: str
    ceiling: str | None  # the ceiling the fault is on (stale_ledger and own_tree_budget: every count)
    limits: dict[str, float]
    calls: list[Call]
    answer_after: int  # the model answers on this call (1-based) if nothing stops it first
    tree: list[int] = field(default_factory=list)  # seed 001: sub-agents' call counts, run one after another


def _empty() -> dict[str, float]:
    return {"steps": 0, "prompt": 0, "completion": 0, "tokens": 0, "cost": 0}


def _charge(ledger: dict, call: Call) -> None:
    ledger["steps"] += 1
    ledger["prompt"] += call.prompt
    ledger["completion"] += call.completion
    ledger["tokens"] += call.prompt + call.completion
    ledger["cost"] += call.cost


def seed_reached(style: str, name: str, spent: dict, limit: float, elapsed: float) -> bool:
    """The seed's own check of one ceiling before a call: ``>=`` on counts; the wall clock ``>=`` (seeds 000 and
    001: ``wall_seconds >= max_wall_seconds``, ``monotonic() - started >= max_seconds``) or, seed 003, only past
    the deadline (``Date.now() > deadline``)."""
    if name == "wall":
        return elapsed > limit if style == "seed003" else elapsed >= limit
    return spent[name] >= limit


def draw(rng: random.Random, number: int) -> Plan:
    style = rng.choice(STYLES)
    tree = style == "seed001" and rng.random() < 0.3
    choices = [f for f in FAULTS if (f != "last_call_prompt" or style == "seed000")
               and (f != "own_tree_budget" or tree)]
    fault = rng.choice(choices + ["own_tree_budget"] * 3 if tree else choices)  # a tree's own fault, often
    calls = [Call(prompt=rng.randrange(200, 2000, 100), completion=rng.randrange(20, 400, 10),
                  cost=rng.randrange(500, 5000, 250), latency=rng.choice((0.5, 1.0, 1.5, 2.0)),
                  tool=rng.choice((0.25, 1.0, 2.5, 4.0)), refusals=rng.choice((0, 0, 1, 2)) if style == "seed003" else 0)
             for _ in range(16)]
    names = CEILINGS[style]
    if tree:  # the tree's shared budget: its step count decides
        return Plan(f"ff-{number:03d}", style, fault, "steps" if fault != "none" else None,
                    {"steps": rng.randint(2, 5)}, calls, 99, [rng.randint(1, 3), rng.randint(1, 3)])
    ceiling = {"none": None, "stale_ledger": None, "last_call_prompt": "prompt"}.get(fault, rng.choice(names))
    prefix = rng.randint(1, 8)  # a limit is what the first `prefix` calls spend, most often exactly
    spent = _empty()
    for call in calls[:prefix]:
        _charge(spent, call)
    limits: dict[str, float] = {}
    for name in names:
        if name == ceiling or rng.random() < 0.45:
            if name == "wall":  # a call's start, exactly, or a quarter second either side
                starts, t = [], 0.0
                for call in calls[:8]:
                    t += 0.75 * call.refusals
                    starts.append(t)
                    t += call.latency + call.tool
                limits[name] = max(0.25, rng.choice(starts[1:]) + rng.choice((0.0, 0.0, -0.25, 0.25)))
            else:
                nudge = rng.choice((0, 0, 0, -1, 1)) * (1 if name == "steps" else rng.randint(1, 60))
                limits[name] = max(1, spent[name] + nudge)
    if fault == "stale_ledger" and not any(n != "wall" for n in limits):
        limits["steps"] = prefix
    return Plan(f"ff-{number:03d}", style, fault, ceiling, limits, calls, rng.randint(3, 12))


class Drive:
    """One plan, journalled as the seed's recipe in docs/journal-format.md writes it."""

    def __init__(self, plan: Plan, journal: Journal, clock: SimClock):
        self.plan, self.journal, self.clock = plan, journal, clock
        self.queue = list(plan.calls)
        self.shared = _empty()  # the tree's ledger (the run's own, when there is no tree)
        self.stale = _empty()  # what a stale-ledger fence reads: charged one call late
        self.refused: dict[str, int] = {}  # run id -> its first call the seed's own fence would have refused

    def go(self) -> dict[str, int]:
        plan = self.plan
        limits = {JOURNAL_NAMES[k]: v for k, v in plan.limits.items()}
        if plan.tree:
            limits["scope"] = "tree"
        self.start = self.clock.now
        root = self.journal.start_run(plan.run_id, agent=f"faults-{plan.style}", model=MODEL, provider="anthropic",
                                      limits=limits, fence=plan.style, tools=[{"name": "read_file"}])
        if not plan.tree:
            self._end(root, self._loop(root, plan.answer_after, self.shared))
            return self.refused
        stopped = self._loop(root, 99, self.shared, calls=1)  # the root asks once, delegates, then answers
        for position, count in enumerate([] if stopped else plan.tree):
            sub = self.journal.start_run(f"{plan.run_id}-sub{position}", agent=f"faults-{plan.style}", model=MODEL,
                                         provider="anthropic", parent_run_id=plan.run_id, fence=plan.style,
                                         tools=[{"name": "read_file"}])
            own = _empty() if plan.fault == "own_tree_budget" else self.shared  # the fault: a budget of its own
            self._end(sub, self._loop(sub, count, own))
            self.clock.sleep(0.25)
        self._end(root, stopped or self._loop(root, 1, self.shared))
        return self.refused

    def _faulty_reached(self, ledger: dict, last: dict) -> str | None:
        plan, elapsed = self.plan, self.clock.now - self.start
        for name in CEILINGS[plan.style]:
            if name not in plan.limits:
                continue
            limit = plan.limits[name]
            if plan.ceiling == name and plan.fault == "unchecked":
                continue
            if plan.ceiling == name and plan.fault == "greater_than":
                if (elapsed if name == "wall" else ledger[name]) > limit:
                    return name
                continue
            if plan.ceiling == name and plan.fault == "last_call_prompt":
                if last.get("prompt", 0) >= limit:
                    return name
                continue
            if seed_reached(plan.style, name, self.stale if plan.fault == "stale_ledger" else ledger, limit, elapsed):
                return name
        return None

    def _loop(self, run: RunJournal, answer_after: int, ledger: dict, calls: int | None = None) -> str | None:
        """Model calls until the model answers (None), the faulty fence stops the loop (the ceiling), or ``calls``."""
        plan, last, made = self.plan, {}, 0
        while calls is None or made < calls:
            stop = self._faulty_reached(ledger, last)
            if stop:
                return stop
            elapsed = self.clock.now - self.start
            if run.run_id not in self.refused and any(
                    seed_reached(plan.style, n, self.shared, plan.limits[n], elapsed)
                    for n in CEILINGS[plan.style] if n in plan.limits):
                self.refused[run.run_id] = run.next_idx  # the seed's own fence would not make this call
            call = self.queue.pop(0)
            for attempt in range(call.refusals):  # seed 003: refused, retried on the same context, unchecked
                run.model_step(usage={"input_uncached": 0, "output": 0}, ms=250, ts=self.clock.utc(),
                               error="529 overloaded_error", error_class="transport", attempt=attempt + 1,
                               cost_micros=0)
                self.clock.sleep(0.75)
            made += 1
            final = made >= answer_after
            t0 = self.clock.utc()
            self.clock.sleep(call.latency)
            step = run.model_step(usage={"input_uncached": call.prompt, "output": call.completion},
                                  ms=call.latency * 1000, ts=t0, cost_micros=call.cost, final=final,
                                  text="the answer" if final else None,
                                  tool_calls=[] if final else [("read_file", {"path": f"f{len(self.queue)}"})])
            if plan.fault == "stale_ledger":
                self.stale.update(ledger)  # the charge before this one reaches the counters the fence reads
            for charged in {id(ledger): ledger, id(self.shared): self.shared}.values():
                _charge(charged, call)
            last = {"prompt": call.prompt}
            if final:
                return None
            t1 = self.clock.utc()
            self.clock.sleep(call.tool)
            run.tool_step(step.calls[0], result=f"line {len(self.queue)}", ms=call.tool * 1000, ts=t1)
        return None

    def _end(self, run: RunJournal, stopped: str | None) -> None:
        style, limits = self.plan.style, self.plan.limits
        if stopped is None:
            if style == "seed001":
                run.end(None, status="complete", final_output="the answer")
            else:
                run.end("model_finished" if style == "seed000" else "succeeded",
                        status="succeeded" if style == "seed003" else None, final_output="the answer")
            return
        words = {"seed000": {"steps": "max_steps", "prompt": "max_prompt_tokens",
                             "completion": "max_completion_tokens", "wall": "max_wall_seconds"},
                 "seed001": {"steps": f"step limit ({limits.get('steps')})",
                             "tokens": f"token limit ({int(limits.get('tokens', 0)):,})",
                             "wall": f"time limit ({limits.get('wall')}s)",
                             "cost": f"cost limit (${limits.get('cost', 0) / 1e6:.2f})"},
                 "seed003": {"steps": "budget_exceeded", "tokens": "budget_exceeded", "wall": "timed_out"}}[style]
        reason = words[stopped]
        if style == "seed001":  # the tool-free wrap-up turn: not checked, not charged
            run.event("wrap_up", detail=f"{reason}: summarise", ts=self.clock.utc())
            run.model_step(usage={"input_uncached": 300, "output": 80}, ms=500, ts=self.clock.utc(),
                           text="what I found", cost_micros=900)
            self.clock.sleep(0.5)
            run.end(reason, status="incomplete", final_output="what I found")
        elif style == "seed003":
            run.end(reason, status=reason)
        else:
            run.end(reason)


def write_night(path, seed: int, runs: int) -> tuple[list[Plan], dict[str, int]]:
    """``runs`` plans drawn with ``seed``, journalled into ``path``; the first call the seeds' fences refuse, by run."""
    from conformance_support import NIGHT
    from datetime import timedelta

    rng, plans, refused = random.Random(seed), [], {}
    with Journal(path) as journal:
        for number in range(runs):
            plan = draw(rng, number)
            clock = SimClock(NIGHT + timedelta(minutes=10 * number))
            journal.clock = clock
            refused.update(Drive(plan, journal, clock).go())
            plans.append(plan)
    return plans, refused
