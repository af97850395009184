"""How a harness's fence checks its ceilings: one declaration per rule set, read by every judge of a fence.

Every fence the seeds write checks its ceilings *before* each model call, against what the calls before
it spent, and reaches a count ceiling at ``>=``. Three things still differ from one harness to another,
and each decides a verdict exactly at the limit:

- **the wall clock**: seed 000's ``Ledger.check`` and seed 001's ``Budget.exhausted`` stop once the time
  since the start is ``>=`` the limit; seed 003's ``runAgent`` only once ``Date.now() > deadline`` — a
  call that starts exactly at the deadline is allowed there, and a fault elsewhere;
- **the order of the checks**: when several ceilings are reached at one check, the first checked names
  the stop (seed 003 checks the deadline first: ``timed_out`` over ``budget_exceeded``). A loop
  detector that runs after the tool results (seeds 001 and 003) stops the run before the budgets are
  looked at again; seed 000 checks its repeats last, inside ``Ledger.check``;
- **the words of the stop reason**: ``max_steps`` (seed 000), ``step limit (20)`` (seed 001), or only
  the status (seed 003's ``finish(ctx, "budget_exceeded")``).

A run says which rules its harness follows with ``fence`` on its ``run_start`` (or the configuration's
``fence`` setting for its agent or format); without either, ``default``: ``>=`` on every ceiling, the
order below, and the words ``reconcile replay`` has always written. ``budgets_enforced`` (through the
fence walk, ``reconcile/analyses/fence``), ``reconcile replay`` and ``reconcile budgets`` read these
declarations and nothing else, so they cannot disagree on a run. ``docs/status.md`` lists them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from reconcile.sql_text import string_literal

# The ceilings a fence checks, as the fence walk names them, and the limit each reads.
CEILINGS = ("steps", "tokens", "prompt_tokens", "completion_tokens", "wall_seconds", "cost_micros", "loop")
LIMITS = {"steps": "max_steps", "tokens": "max_tokens", "prompt_tokens": "max_prompt_tokens",
          "completion_tokens": "max_completion_tokens", "wall_seconds": "max_wall_seconds",
          "cost_micros": "max_cost_micros", "loop": "loop_detector"}


@dataclass(frozen=True)
class Fence:
    name: str
    about: str
    order: tuple[str, ...]  # every ceiling, in the order the fence checks them
    wall_at_limit: bool  # the wall clock is reached at the limit (>=); False: only past it (>)
    checks_retries: bool  # the fence checks before each retry of a call the provider refused (else once, before it)
    words: Mapping[str, str]  # the stop reason per ceiling: a str.format template of the limits (see stop_reason)


def _fence(name: str, about: str, order: tuple[str, ...], wall_at_limit: bool, checks_retries: bool,
           words: Mapping[str, str]) -> Fence:
    assert sorted(order) == sorted(CEILINGS) and set(words) == set(CEILINGS), name
    return Fence(name, about, order, wall_at_limit, checks_retries, words)


_STATUS_WORDS = {c: "budget_exceeded" for c in CEILINGS} | {"wall_seconds": "timed_out", "loop": "stalled"}

FENCES: dict[str, Fence] = {f.name: f for f in (
    _fence("default", "a harness that declares no rules: every ceiling reached at >=, checked in this order",
           ("steps", "tokens", "prompt_tokens", "completion_tokens", "wall_seconds", "cost_micros", "loop"), True, True,
           {"steps": "step limit ({max_steps})", "tokens": "token limit ({max_tokens:,})",
            "prompt_tokens": "max_prompt_tokens", "completion_tokens": "max_completion_tokens",
            "wall_seconds": "time limit ({max_wall_seconds:g}s)", "cost_micros": "cost limit (${max_cost_usd:.2f})",
            "loop": "{loop_words}"}),
    _fence("seed000", "seed 000's Ledger.check: steps, prompt tokens, completion tokens, wall clock at >=, then "
                      "identical results in a row (ceilings the seed lacks checked after its wall clock)",
           ("steps", "prompt_tokens", "completion_tokens", "wall_seconds", "tokens", "cost_micros", "loop"), True, True,
           {"steps": "max_steps", "tokens": "max_tokens", "prompt_tokens": "max_prompt_tokens",
            "completion_tokens": "max_completion_tokens", "wall_seconds": "max_wall_seconds",
            "cost_micros": "max_cost_micros", "loop": "identical_tool_results"}),
    _fence("seed001", "seed 001's Budget.exhausted: steps, tokens, time, cost at >=; its LoopDetector, checked "
                      "after each batch of tool results, stops the run before the budget is looked at again",
           ("loop", "steps", "tokens", "wall_seconds", "cost_micros", "prompt_tokens", "completion_tokens"), True, True,
           {"steps": "step limit ({max_steps})", "tokens": "token limit ({max_tokens:,})",
            "prompt_tokens": "prompt token limit ({max_prompt_tokens:,})",
            "completion_tokens": "completion token limit ({max_completion_tokens:,})",
            "wall_seconds": "time limit ({max_wall_seconds:g}s)", "cost_micros": "cost limit (${max_cost_usd:.2f})",
            "loop": "repeated the same tool calls {loop_limit} times without progress"}),
    _fence("seed003", "seed 003's runAgent: its no-progress check after each tool call, then the deadline "
                      "(Date.now() > deadline: a call exactly at it is allowed), steps and tokens at >=, once a turn "
                      "(a refused call is retried inside step(), unchecked); the stop reason is the status",
           ("loop", "wall_seconds", "steps", "tokens", "prompt_tokens", "completion_tokens", "cost_micros"), False,
           False, _STATUS_WORDS),
)}
DEFAULT = "default"
NAMES = tuple(FENCES)

# The default rules' words for a loop detector: each detector in the words of the seed that defines it.
_LOOP_WORDS = {"results_in_a_row": "identical_tool_results",
               "calls_anywhere": "repeated the same tool calls {loop_limit} times without progress"}


def stop_reason(row: Mapping[str, Any]) -> str | None:
    """The stop reason a fence would have written at ``row["ceiling"]`` under the rules ``row["fence"]`` names,
    with the row's limits (``max_steps`` …, ``loop_detector``, ``loop_limit``). ``reconcile.store.status`` maps
    each back to the status the ceiling gives."""
    ceiling = row.get("ceiling")
    if ceiling is None:
        return None
    fence = FENCES.get(row.get("fence") or DEFAULT, FENCES[DEFAULT])
    cost = row.get("max_cost_micros")
    values = {**row, "max_cost_usd": Decimal(cost) / 1_000_000 if cost is not None else None,
              "max_wall_seconds": float(row["max_wall_seconds"]) if row.get("max_wall_seconds") is not None else None}
    values["loop_words"] = _LOOP_WORDS.get(row.get("loop_detector"), "no_progress").format(**values)
    return fence.words[ceiling].format(**values)


def status_of(fence: str | None, ceiling: str) -> str:
    """The canonical status a stop at ``ceiling`` ends in (the same under every rule set)."""
    return "stalled" if ceiling == "loop" else "timed_out" if ceiling == "wall_seconds" else "budget_exceeded"


def rules_sql() -> str:
    """A query of one row per rule set: ``fence``, ``wall_at_limit``, ``checks_retries`` and ``pos_<ceiling>``
    (where each ceiling comes in its order of checks) — what the fence walk joins each run to."""
    rows = []
    for fence in FENCES.values():
        cells = [string_literal(fence.name), "true" if fence.wall_at_limit else "false",
                 "true" if fence.checks_retries else "false",
                 *(str(fence.order.index(c)) for c in CEILINGS)]
        rows.append(f"({', '.join(cells)})")
    names = ", ".join(["fence", "wall_at_limit", "checks_retries", *(f"pos_{c}" for c in CEILINGS)])
    return f"select * from (values {', '.join(rows)}) as rules({names})"
