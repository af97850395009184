"""Block four on block one's journals: load them into a fresh store, run the checks, judge every stop.

Everything here goes through reconcile's library, as ``reconcile ingest`` and ``reconcile check``
do: ``ingest`` into a new store (the journals and the fake provider's usage report), then
``run_checks`` with the built-in configuration (a project's ``reconcile.toml`` does not change the
protocol). The checks that run:

- block four, seed 000's three reconciliation invariants: ``steps_equal_tool_results``,
  ``ledger_matches_transcript`` and ``tokens_match_provider`` (token totals against what the
  provider — the scripted model — reported), ``final_answer_not_overwritten``. A block-four check
  that cannot judge a run fails the protocol: an invariant nobody checked has not held;
- the fence, where the run declares what it needs: ``loop_stopped_at_limit`` and
  ``stalled_runs_detected`` (the declared loop detector, replayed with its seed's semantics) and
  ``budgets_enforced`` (the declared limits were checked before each call);
- ``no_failed_side_effects``, a warning: raise_after_write's failed write, listed with its key.

Each stub's stop is judged from the store (its canonical status and raw stop reason, and how many
of its tool calls timed out) against seed 000's table (``stubs.EXPECTATIONS``); a probe run again with
every other ceiling lifted (``StubOutcome.alone``) against ``Expectation.alone``: its ceiling stops it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reconcile.engine import DuckDBEngine, Engine
from reconcile.sql_text import string_literal
from reconcile.store.facts import FACTS
from reconcile.testing.provider import FakeProvider, write_report
from reconcile.store.status import named_limit
from reconcile.testing.stubs import BUDGETS, EXPECTATIONS, FENCES, Expectation, Seen

if TYPE_CHECKING:  # the store's modules load when block one is judged, not when the kit is imported
    from reconcile.checks.runner import Finding

BLOCK_FOUR = ("steps_equal_tool_results", "ledger_matches_transcript", "tokens_match_provider",
              "final_answer_not_overwritten")
FENCE = ("loop_stopped_at_limit", "stalled_runs_detected", "budgets_enforced")
WARNINGS = ("no_failed_side_effects",)
CHECKS = BLOCK_FOUR + FENCE + WARNINGS


@dataclass
class StubOutcome:
    """One stub's run: how it stopped, and everything that did not hold."""

    stub: str
    expected: str
    run_id: str | None = None
    stop_reason: str | None = None
    status: str | None = None  # canonical; None while the run has no end
    harness_status: str | None = None  # the harness's own word, as journalled (seed 001: complete / incomplete)
    timeouts: int = 0
    problems: list[str] = field(default_factory=list)  # the fence's verdict, and what the loop did wrong
    findings: list[str] = field(default_factory=list)  # error findings of the checks, one line each
    warnings: list[str] = field(default_factory=list)
    probe: str = ""  # the stub whose script drove it (``stub`` unless it is a probe run with its ceiling alone)
    alone: str | None = None  # the ceiling left when every other one was lifted (FENCES' key: ``cost_micros``)
    expectation: Expectation | None = field(default=None, repr=False)  # its row, when not EXPECTATIONS[stub]
    capped: int | None = None  # a run alone the fence never stopped: the model's calls when it gave up

    def __post_init__(self) -> None:
        self.probe = self.probe or self.stub

    @property
    def passed(self) -> bool:
        return not self.problems and not self.findings

    @property
    def stop(self) -> str:
        """The stop as the harness said it, and its canonical status: ``'max_steps' (budget_exceeded)``."""
        if self.capped is not None:
            return f"never stopped ({self.capped} calls)"
        if self.stop_reason:
            return f"{self.stop_reason!r} ({self.status})"
        return f"status {self.harness_status!r} ({self.status})" if self.harness_status else f"({self.status})"

    def lines(self) -> list[str]:
        head = (self.problems[0] if self.problems
                else f"stopped with {self.stop} as expected, but block four does not hold")
        return [f"- {self.stub}: {head}", *(f"    {p}" for p in self.problems[1:]),
                *(f"    {f}" for f in self.findings)]


@dataclass
class BlockOneReport:
    """What block one found: a ``StubOutcome`` per stub, and problems of the protocol as a whole."""

    stubs: dict[str, StubOutcome]
    workdir: Path
    store: Path
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # checks that could not judge, waived expectations

    @property
    def passed(self) -> bool:
        return not self.problems and all(s.passed for s in self.stubs.values())

    def assert_holds(self) -> BlockOneReport:
        """Raise ``BlockOneFailure`` unless block one held; returns the report when it did."""
        __tracebackhide__ = True  # read by pytest, when it runs this: the failure shows at the caller
        if not self.passed:
            raise BlockOneFailure(self)
        return self

    def summary(self) -> str:
        failing = [s for s in self.stubs.values() if not s.passed]
        if self.passed:
            lines = [f"block one holds for {len(self.stubs)} stub(s):"]
            lines += [f"- {s.stub}: {s.stop}" for s in self.stubs.values()]
        else:
            lines = [f"block one failed for {len(failing)} of {len(self.stubs)} stub(s)"
                     + (" and the protocol" if self.problems else "") + ":"]
            lines += [line for s in failing for line in s.lines()] + [f"- {p}" for p in self.problems]
        lines += [f"  warning: {s.stub}: {w}" for s in self.stubs.values() for w in s.warnings]
        lines += [f"  note: {n}" for n in self.notes]
        lines.append(f"  journals: {self.workdir}; store: reconcile check --db {self.store}")
        return "\n".join(lines)

    __str__ = summary


class BlockOneFailure(AssertionError):
    """Block one did not hold: the message names each failing stub, the stop expected, the stop seen and
    every finding. ``report`` has the details."""

    def __init__(self, report: BlockOneReport):
        super().__init__(report.summary())
        self.report = report


@dataclass
class Driven:
    """One harness driven through the stubs: its journals and the fake provider's record, not yet judged."""

    agent: str
    workdir: Path
    journals: Path
    provider: FakeProvider
    outcomes: dict[str, StubOutcome]
    files: dict[str, bool | None]  # raise_after_write's file exists (None: the stub writes none)
    tool_timeouts: bool
    ended: datetime  # where its last provider window ends on its clock
    unlifted: str | None = None  # why no probe was run with its ceiling alone (None: they were)


def judge(driven: list[Driven], store_path: Path) -> list[BlockOneReport]:
    """Ingest every harness's journals and provider report into one fresh store, check once, judge each."""
    from reconcile import store
    from reconcile.checks import load_checks, run_checks, select_checks
    from reconcile.config import Config
    from reconcile.ingest.driver import ingest

    reports = [BlockOneReport(d.outcomes, d.workdir, store_path) for d in driven]
    store_path.unlink(missing_ok=True)  # a fresh store every time: nothing from an earlier run
    bill = write_report([d.provider for d in driven], store_path.parent / "provider" / "anthropic_usage_report.json")
    with store.connect(store_path) as con:
        # two ingests, each of one format, so that every harness's journals load as one batch
        loaded = [*ingest(con, [d.journals for d in driven]).files, *(ingest(con, [bill]).files if bill else [])]
        for f in loaded:
            if f.rejected or f.status in ("failed", "unreadable"):  # a file that did not load at all too
                for report in reports:
                    if Path(f.path).is_relative_to(report.workdir):
                        report.problems.append(f"{Path(f.path).name}: {f.rejected} line(s) rejected by ingest: "
                                               + "; ".join(f.notes[:3]))
        engine = DuckDBEngine(con)  # judged in the connection that loaded it
        checks = select_checks(load_checks(), list(CHECKS))
        checked = run_checks(engine, checks, config=Config(), record=False)
        for d, report in zip(driven, reports):  # after the checks: each run's detector and its fence's walk
            report.notes += _judge_stops(engine, d.outcomes, d.files, d.tool_timeouts, d.unlifted)
        roots = dict(engine.rows("select run_id, root_run_id from run_view"))
        unjudged = _unjudged(engine, checks)
    placed = _Placer(driven, reports, roots)
    for result in checked.results:
        for finding in result.findings:
            outcome, report = placed.finding(finding)
            line = f"{finding.check}{'' if finding.step is None else f', step {finding.step}'}: {finding.detail}"
            if outcome is None:  # about no run of a stub: the protocol's problem (every harness's, if unplaced)
                for each in [report] if report else reports:
                    each.problems.append(line)
            elif finding.check in WARNINGS:
                outcome.warnings.append(line)
            else:
                outcome.findings.append(f"{line}\n      remedy: {result.remedy}")
        for gap in result.not_judged:  # provider rows with no journal of that provider: nothing was matched
            if gap.unit != "run":
                for report in reports:
                    report.problems.append(f"{result.name} could not judge {gap.text()}")
    unheld: dict[tuple[int, str, str], list] = {}
    for run_id, check, why in unjudged:
        outcome, report = placed.run(run_id)
        if outcome is None or outcome.status is None:  # a run that never ended has its verdict already
            continue
        if check in BLOCK_FOUR:  # an invariant nobody could check has not held
            outcome.problems.append(f"{check} could not judge its run: it records no {why}")
        else:  # a fence check the run gave nothing to judge by: said, not failed
            unheld.setdefault((id(report), check, why), [report]).append(outcome.stub)
    for (_, check, why), (report, *stubs) in unheld.items():
        report.notes.append(f"{check} did not judge {', '.join(stubs)}: the runs record no {why}")
    for d, report in zip(driven, reports):
        if not d.tool_timeouts:
            report.notes.append("sleep: no tool timeout was required (tool_timeouts=False); a tool that never "
                                "returns would hang this loop, and its wall clock only stops it after the tool returns")
    return reports


class _Placer:
    """Which harness and stub a finding is about: by its run (a sub-agent's by its root), or, for a provider
    window's finding that names no run, by the window's start in its text."""

    def __init__(self, driven: list[Driven], reports: list[BlockOneReport], roots: dict[str, str]):
        self.driven, self.reports, self.roots = driven, reports, roots
        self.by_run = {o.run_id: (o, r) for d, r in zip(driven, reports) for o in d.outcomes.values() if o.run_id}

    def run(self, run_id: str) -> tuple[StubOutcome | None, BlockOneReport | None]:
        return self.by_run.get(self.roots.get(run_id, run_id), (None, None))

    def finding(self, finding: Finding) -> tuple[StubOutcome | None, BlockOneReport | None]:
        if finding.run_id is not None:
            return self.run(finding.run_id)
        for d, report in zip(self.driven, self.reports):
            stub = d.provider.stub_at(finding.detail)
            if stub:
                return d.outcomes.get(stub), report
        return None, None


def _unjudged(engine: Engine, checks: list) -> list[tuple[str, str, str]]:
    """(run, check, what it lacks) for each run a check could not judge, as the runner decides it (``run_facts``)."""
    branches = [f"select run_id, {string_literal(check.name)} as check_name, {string_literal(FACTS[fact].what)} "
                f"as what from run_facts where not {fact}"
                for check in checks for fact in check.needs if FACTS[fact].subject == "run"]
    if not branches:
        return []
    return engine.rows(" union all ".join(branches) + " order by 1, 2")


def _judge_stops(engine: Engine, outcomes: dict[str, StubOutcome], files: dict[str, bool | None],
                 tool_timeouts: bool, unlifted: str | None = None) -> list[str]:
    """Each stub's run as the store sees it — status, stop reason, timed-out tool calls, the loop detector it
    declares, the ceilings it declares and those reached when it stopped, a call its fence let past a ceiling
    (``fence_as_run``, which ``budgets_enforced`` reads) — against its row. Returns the notes: a probe stopped by
    another declared ceiling before its own was reached, which that probe therefore did not exercise (and the run
    alone that did, if any); a probe alone that its ceiling did not reach in the model's calls; and, when no probe
    could be run alone (``unlifted`` says why), the declared ceilings that stopped no probe."""
    runs = [o.run_id for o in outcomes.values() if o.run_id]
    reached = ", ".join(f"case when {limit} is null then null else {spent} >= {limit} end as {name}"
                        for name, (spent, limit) in _REACHED.items())
    rows = engine.records(
        f"""with spent as (
                select run_id, count(*) filter (where not provider_refused) as steps,
                       sum(input_tokens + output_tokens) as tokens, sum(input_tokens) as prompt,
                       sum(output_tokens) as completion, sum(coalesce(harness_cost_micros, cost_micros)) as cost
                from step_view where kind = 'model' and not is_wrap_up group by run_id),
            checked as (  -- the check after the last call: at the wrap-up turn, else at the end (else, for a
                          -- run that never ended, a probe alone its fence never stopped: at its last step)
                select r.run_id, date_diff('millisecond', r.started_at,
                           coalesce(min(e.started_at) filter (where e.kind = 'event' and e.event = 'wrap_up'),
                                    r.ended_at, max(e.started_at))) / 1000.0 as wall
                from runs r left join steps e on e.run_id = r.run_id group by r.run_id, r.started_at, r.ended_at)
            select r.run_id, r.status, r.stop_reason, r.harness_status, rs.loop_detector,
                   (select count(*) from steps s where s.run_id = r.run_id and s.kind = 'tool'
                    and s.tool_status = 'timeout') as timeouts,
                   {reached},
                   case when f.late_us is not null then 'wall_seconds'
                        when not f.budget_at_end then f.budget_ceiling end as overrun
            from runs r left join spent p on p.run_id = r.run_id left join checked c on c.run_id = r.run_id
            left join run_settings rs on rs.run_id = r.run_id left join fence_as_run f on f.run_id = r.run_id
            where r.run_id in (select unnest(?::varchar[]))""", [runs])
    seen = {row["run_id"]: row for row in rows}
    notes: list[str] = []
    alone = {o.alone: o.stub for o in outcomes.values() if o.alone}
    declared: set[str] = set()  # the ceilings the runs of the stubs declare, and those that stopped one
    stopped: set[str] = set()
    for outcome in outcomes.values():
        if outcome.problems:  # the loop never stopped, or raised: that is the verdict
            continue
        if outcome.run_id not in seen:
            outcome.problems.append(f"expected {outcome.expected}; no run of it is in the journal "
                                    "(did the harness start one on the journal it was given?)")
            continue
        row = seen[outcome.run_id]
        status, stop = row["status"], row["stop_reason"]
        # no end record: running, or abandoned once silent past its budget (the kit's simulated clock is in the past)
        outcome.status = None if status in ("running", "abandoned") else status
        outcome.stop_reason, outcome.timeouts, outcome.harness_status = stop, row["timeouts"], row["harness_status"]
        facts = Seen(row["loop_detector"], frozenset(c for c in _REACHED if row[c] is not None),
                     frozenset(c for c in _REACHED if row[c]), row["overrun"])
        expectation = (outcome.expectation or EXPECTATIONS[outcome.stub]).for_detector(facts.detector)
        outcome.expected = expectation.expected
        if outcome.capped is not None:  # a probe alone the fence never stopped: did its ceiling ever come?
            _judge_capped(outcome, row, notes)
            continue
        problem = expectation.problem(outcome.status, stop, row["timeouts"], tool_timeouts, files.get(outcome.stub),
                                      facts)
        if problem:
            outcome.problems.append(problem)
        named = named_limit(stop)
        if outcome.alone is None:
            declared.update(facts.declared & BUDGETS)
            stopped.update({named} if named in BUDGETS else facts.reached if named is None and len(facts.reached) == 1
                           else ())
        if not problem and expectation.limits is not None and named is not None and named not in expectation.limits \
                and not (expectation.limits & facts.reached):
            missed = sorted(expectation.limits & facts.declared)
            ran = [f"'{alone[c]}'" for c in missed if c in alone]
            notes.append(f"{outcome.stub} was stopped by {FENCES.get(named, named)} before "
                         f"{' or '.join(FENCES[c] for c in missed)} was reached: that fence was not exercised"
                         + (f" there; {' and '.join(ran)} exercised it with the other ceilings lifted" if ran else ""))
    unexercised = sorted(declared - stopped)
    if unlifted and unexercised:
        fences = [FENCES[c] for c in unexercised]
        many = len(fences) > 1
        notes.append(f"{', '.join(fences[:-1]) + ' and ' if many else ''}{fences[-1]} stopped no probe: block one "
                     f"did not exercise {'them' if many else 'it'} on {'their' if many else 'its'} own — {unlifted}")
    return notes


def _judge_capped(outcome: StubOutcome, row: dict[str, Any], notes: list[str]) -> None:
    """A probe run with its ceiling alone that the model's cap ended: a failure when the ceiling was reached (or
    is not declared), a note when it never was (a ceiling beyond what the probe spends in that many calls)."""
    fence = FENCES[outcome.alone]
    said = f"expected {outcome.expected}; the fence never stopped the loop after {outcome.capped} calls"
    if row[outcome.alone] is None:
        outcome.problems.append(f"{said}, and the run declares no {fence}")
    elif row[outcome.alone]:
        outcome.problems.append(f"{said}, though {fence} was reached: that fence never fired")
    else:
        notes.append(f"{outcome.stub}: {outcome.capped} calls did not reach {fence}, so it was not exercised — "
                     "lower it for block one, or raise cap=")


# each ceiling: what was spent by the check after the last call, and the limit it is held to
_REACHED = {"steps": ("p.steps", "r.max_steps"), "tokens": ("p.tokens", "r.max_tokens"),
            "prompt_tokens": ("p.prompt", "r.max_prompt_tokens"),
            "completion_tokens": ("p.completion", "r.max_completion_tokens"),
            "cost_micros": ("p.cost", "r.max_cost_micros"), "wall_seconds": ("c.wall", "r.max_wall_seconds")}
