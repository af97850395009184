"""The fence walk: every run's budgets checked before each model call, as its harness's fence checks them.

Seed 000: "the budget has to be checked before each call rather than audited after the invoice". One walk,
in set-based SQL, serves every judge of a fence, so that they cannot disagree on a run:

- ``reconcile replay`` judges the ledger against a candidate's limits (``judge``), and ``budgets_enforced`` reads
  its candidate of each run's own limits (``reconcile replay --as-run``: ``replay.fence.as_run``), under the
  rules each fence declares (``reconcile.store.fences``) — a call the walk says the fence should not have made
  is a call the fence let through;
- ``reconcile budgets`` reads the ledger at each succeeded run's last call (``peaks``): a ceiling at or below
  it would have stopped that run, and no other ceiling would.

The steps (``stage_steps``) and whose budget each run spends (``stage_owners``) are staged first; ``ledger.sql``
adds up, before each check, what the calls before it spent (``_fence_points``); ``judge.sql`` holds each run's
limits against it. Every statement reads and writes temporary tables of fixed names, as ``loop_firings`` does.
"""

from __future__ import annotations

from importlib import resources

from reconcile import store
from reconcile.engine import Engine
from reconcile.store.fences import rules_sql

# the columns of step_view the walk reads (pricing every column of every step would cost more than the walk)
STEP_COLUMNS = ("run_id", "idx", "kind", "is_wrap_up", "provider_refused", "input_tokens", "output_tokens",
                "cost_micros", "harness_cost_micros", "started_at", "ms", "event")
UNITS = ("declared", "run", "tree")  # whose budget a run spends: as its journal says, its own, its tree's
FENCE_STATUSES = ("budget_exceeded", "timed_out", "stalled")  # a run that ended on a fence checked once more


def _sql(name: str) -> str:
    return (resources.files("reconcile.analyses.fence") / f"{name}.sql").read_text()


def stage_steps(engine: Engine, window: str = "true", params: dict | None = None) -> None:
    """``_fence_steps``: the steps of the runs ``window`` (SQL over ``runs r``) selects; only model calls are
    priced, so the other steps come from the table, not through the pricing join."""
    columns = ", ".join(f"s.{c}" for c in STEP_COLUMNS)
    plain = ", ".join("false" if c in ("is_wrap_up", "provider_refused") else
                      "null" if c in ("input_tokens", "output_tokens", "cost_micros", "harness_cost_micros")
                      else f"s.{c}" for c in STEP_COLUMNS)
    with store.priced_runs(engine, f"select r.run_id from runs r where {window}", params):  # a night's replay prices the night, not every step of the history
        engine.run(f"""create or replace temp table _fence_steps as
            select {columns} from step_view s join runs r on r.run_id = s.run_id where s.kind = 'model' and {window}
            union all
            select {plain} from steps s join runs r on r.run_id = s.run_id where s.kind <> 'model' and {window}""",
                   params or {})


def owners_sql(unit: str = "declared") -> str:
    """A query of whose budget each run spends: ``run_id``, ``budget_key`` (the run, or the root of its agent tree),
    ``tree`` (the budget is shared: spent in time across the tree), ``budget_started_at`` (the owner's start, where
    its wall clock counts from), ``status`` and ``ended_at``. ``declared``: a tree shares one budget where its root's
    limits say ``scope = "tree"`` (seed 001); ``run``: every run its own; ``tree``: every tree one budget."""
    shared = {"declared": "coalesce(o.budget_scope = 'tree', false)", "run": "false", "tree": "true"}[unit]
    return f"""select x.run_id, case when {shared} then o.run_id else x.run_id end as budget_key, {shared} as tree,
                      case when {shared} then o.started_at else r.started_at end as budget_started_at,
                      r.status, r.ended_at
               from run_roots x join runs o on o.run_id = x.root_run_id join runs r on r.run_id = x.run_id"""


def stage_ledger(engine: Engine, unit: str = "declared") -> None:
    """``_fence_owners`` (``owners_sql``) for the runs of ``_fence_steps``, the rule sets (``_fence_rules``) and the
    ledger at every check (``_fence_points``: ``ledger.sql``)."""
    if unit not in UNITS:
        raise ValueError(f"unit {unit!r}: one of {', '.join(UNITS)}")
    engine.run_all([
        f"""create or replace temp table _fence_owners as select * from ({owners_sql(unit)}) as o
            where o.run_id in (select run_id from _fence_steps)""",
        f"create or replace temp table _fence_rules as {rules_sql()}",
        "create or replace temp table _fence_points as\n" + _sql("ledger"),
    ])


def judge(engine: Engine, into: str) -> None:
    """``into``: each run of ``_fence_limits`` judged against ``_fence_points`` with ``_fence_loops`` (``judge.sql``).
    ``_fence_limits`` holds ``run_id``, ``budget_key``, ``fence``, ``grace_us``, ``loop_detector`` and the six
    ``max_*`` limits."""
    engine.run(f"create or replace temp table {into} as\n" + _sql("judge"))


def peaks() -> str:
    """A query of the ledger of each budget (``budget_key``: a run, or a tree spending one budget) at its last checked
    call, in ``_fence_points``: what any ceiling at or below it would have stopped — ``peak_steps`` …, ``peak_at_us``
    (microseconds from the budget's start) — and whether each is only a lower bound (``*_unknown``). A run that ended
    on a fence is checked once more after its last call: that check is no call, so it is no peak. Needs
    ``run_settings`` (each run's rules) and ``stage_ledger``."""
    return """select p.budget_key, max(p.steps_before) as peak_steps, bool_or(p.steps_unknown) as steps_unknown,
                     max(p.tokens_before) as peak_tokens, bool_or(p.tokens_unknown) as tokens_unknown,
                     max(p.prompt_before) as peak_prompt, bool_or(p.prompt_unknown) as prompt_unknown,
                     max(p.completion_before) as peak_completion, bool_or(p.completion_unknown) as completion_unknown,
                     max(p.cost_before) as peak_cost, bool_or(p.cost_unknown) as cost_unknown,
                     max(p.at_us) as peak_at_us, count(*) - count(p.at_us) > 0 as wall_unknown,
                     bool_or(f.wall_at_limit) as wall_at_limit
              from _fence_points p
              join run_roots t on t.run_id = p.budget_key
              left join run_settings rs on rs.run_id = t.root_run_id  -- the rules of the tree's harness
              join _fence_rules f on f.fence = coalesce(rs.fence, 'default')
              where not p.at_end and (f.checks_retries or not p.retry)
              group by p.budget_key"""


def drop_staging(engine: Engine) -> None:
    for table in ("_fence_steps", "_fence_owners", "_fence_rules", "_fence_points", "_fence_limits", "_fence_loops"):
        engine.run(f"drop table if exists {table}")
