"""Running checks: wrap each file's SQL, count its rows, say which runs it could not judge.

A check judges only the runs that record the facts its header ``needs`` (see ``reconcile.store.facts``)
and that the configuration has not switched it off for; findings on other runs are not kept, and
those runs are counted per check in ``not_judged`` with the reason ("the claude_code format
records no tool catalogue"). Configuration also sets each check's severity and its dbt-style
``warn_if`` / ``error_if`` thresholds, which decide its outcome: ``error``, ``warn`` or ``pass``.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import duckdb

from reconcile.errors import BadInput, InternalError, did_you_mean
from reconcile.sql_text import string_literal
from reconcile.store import frozen_views
from reconcile.checks import kept
from reconcile.analyses.replay import fence
from reconcile.checks.loader import Check, CheckDefinitionError
from reconcile.checks.unjudged import UNJUDGED_BUCKETS, judgement_table, unjudged_runs
from reconcile.config.settings import create_loop_firings, create_run_settings, set_variables
from reconcile.config import Config
from reconcile.engine import Engine

REQUIRED_COLUMNS = ("run_id", "step", "detail")


@dataclass
class Finding:
    check: str
    severity: str
    run_id: str | None
    step: int | None
    detail: str
    file: str | None = None  # the file the run was read from, and the line (or record) of its step: where to look
    line: int | None = None


@dataclass
class NotJudged:
    count: int
    unit: str  # run | bucket
    source: str  # the source format (runs) or provider (buckets)
    reason: str

    def text(self) -> str:
        reason = self.reason.replace("these runs", "this run") if self.count == 1 else self.reason
        return f"{self.count} {self.source} {self.unit}{'s' if self.count != 1 else ''}: {reason}"

    @property
    def format_lacks(self) -> bool:
        """True when the runs' format records no such fact at all (not a setting left out, not these runs' gap)."""
        return self.unit == "run" and self.reason.startswith(f"the {self.source} format records no ")


@dataclass
class CheckResult:
    name: str
    severity: str
    invariant: str
    remedy: str
    source: str
    needs: tuple[str, ...] = ()
    findings: list[Finding] = field(default_factory=list)
    not_judged: list[NotJudged] = field(default_factory=list)
    outcome: str = "pass"  # error | warn | pass
    thresholds: str = ""  # the warn_if / error_if that decided the outcome, when configured
    kept: int = 0  # runs in scope whose verdict was kept from an earlier check (checks.kept), not judged again
    found: int | None = None  # how many findings, when they were written as a dataset and only the first came back
    cites: str = ""  # the design note the rule comes from (the check's header), for a report's footnote

    @property
    def failures(self) -> int:
        return len(self.findings) if self.found is None else self.found

    @property
    def not_judged_runs(self) -> int:
        return sum(n.count for n in self.not_judged if n.unit == "run")

    def not_judged_text(self) -> str:
        return "; ".join(n.text() for n in self.not_judged)


@dataclass
class CheckReport:
    checked_at: datetime
    results: list[CheckResult]
    disabled: list[tuple[str, str]] = field(default_factory=list)  # (check, where it was switched off)
    runs: int = 0  # the runs in scope
    kept: int = 0  # verdicts (a check on a run) kept from an earlier check, not reached again
    findings_to: Path | None = None  # where every finding was written (then ``findings`` holds each check's first)

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]

    @property
    def has_errors(self) -> bool:
        return any(r.outcome == "error" for r in self.results)

    def to_json(self) -> dict:
        return {"runs": self.runs,
                "checks": [{"name": r.name, "severity": r.severity, "outcome": r.outcome, "failures": r.failures,
                            "needs": list(r.needs), "not_judged": sum(n.count for n in r.not_judged),
                            "not_judged_why": [asdict(n) for n in r.not_judged]} for r in self.results],
                "disabled": [{"name": name, "by": by} for name, by in self.disabled],
                **({"findings_to": str(self.findings_to)} if self.findings_to else {}),
                "findings": [asdict(f) for f in self.findings]}


@dataclass
class Scope:
    """Which runs' findings to report. A check still reads all data (history matters to some)."""

    since: datetime | None = None
    until: datetime | None = None
    agent: str | None = None
    # where a finding that names no run (a provider bucket, placed by its ``at``) falls, when not since/until:
    # a night runs noon to noon, and the daily bucket its evening falls in starts at midnight
    at_since: datetime | None = None
    at_until: datetime | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.since, self.until, self.agent))


def select_checks(checks: list[Check], only: list[str] | None) -> list[Check]:
    if not only:
        return checks
    known = {c.name: c for c in checks}
    missing = [name for name in only if name not in known]
    if missing:
        raise BadInput(f"--only {missing[0]}: no such check.{did_you_mean(missing[0], known)} "
                       f"Checks: {', '.join(known)}")
    return [known[name] for name in only]


def run_checks(engine: Engine, checks: list[Check], scope: Scope | None = None,
               settings: dict[str, str] | None = None, config=None, record: bool = True,
               keep: bool | None = None, findings_to: Path | None = None) -> CheckReport:
    """Run ``checks`` under ``config`` (``settings``: extra ``--set`` pairs); keep the results when ``record``.

    ``record`` writes ``check_runs`` and ``findings`` (a read-only store cannot: ``reconcile check``
    prints, ``reconcile morning`` keeps). ``keep`` (default: as ``record``) keeps each run's verdicts for
    the next check to reuse (``kept``) without recording the findings as a check run. ``findings_to``: each
    check's findings are written by the engine into that folder's Parquet table (``checks.written``), and
    only their count and the first ``SHOWN`` come back; every run is judged afresh then (no verdict kept).
    """
    config = config or Config()
    if settings:
        config = config.with_overrides([f"{k}={v}" for k, v in settings.items()])
    scope = scope or Scope()
    checked_at = datetime.now(timezone.utc)
    set_variables(engine, config)
    create_run_settings(engine, config)
    walked = any("fence_as_run" in check.sql for check in checks)
    firings = any("loop_firings" in check.sql for check in checks)
    _scope_table(engine, scope)
    enabled, disabled = [], []
    for check in checks:
        policy = config.policy(check.name)
        if policy.enabled.value:
            enabled.append(check)
        else:
            disabled.append((check.name, policy.enabled.origin))
    per_run = [c for c in enabled if c.judges == "each run"] if kept.usable(engine) and findings_to is None else []
    results: dict[str, CheckResult] = {}
    runs = engine.rows("select count(*) from _scope")[0][0]
    if per_run:
        kept.prepare(engine, per_run, config)
    judged = kept.to_judge(engine) if per_run else "all"  # of the runs: "all", "part" or "none" to judge afresh
    if firings:  # each detector replayed over the runs in scope (what each is judged on) and the trees judged afresh
        create_loop_firings(engine, "run_settings" if judged == "all" else
                            "(select * from run_settings where run_id in (select run_id from _scope) "
                            "or run_id in (select run_id from _universe))")
    judgement_table(engine, firings)
    fresh = []  # (check, run, step, detail) reached now, to keep
    # Each check reads the priced steps: price them once for all (frozen_views) when every run is judged.
    # When only some are, the few checks that judge the store read the views live, and the rest read them
    # priced once over the trees they judge afresh (kept.restricted); when none is, those run no SQL at all.
    # The fence walk of each run under its own limits (its loop detector one of them): of every run when a check
    # that judges the store reads it or every run is judged, else of the trees judged afresh alone (below).
    whole_walk = walked and (judged == "all" or any(c not in per_run for c in enabled if "fence_as_run" in c.sql))
    with (frozen_views(engine) if judged == "all" else contextlib.nullcontext()):
        if whole_walk:
            fence.as_run(engine, config)
        for check in enabled:
            if check not in per_run:
                results[check.name] = _run_one(engine, check, scope.active, config, written_to=findings_to)
        todo, earlier = (kept.todo_counts(engine), kept.kept_findings(engine)) if per_run else ({}, {})
        with (kept.restricted(engine) if judged == "part" else contextlib.nullcontext()):
            if walked and judged == "part" and not whole_walk:
                fence.as_run(engine, config)  # over the restricted tables: a night added walks that night
            for check in per_run:
                results[check.name], reached = _run_kept(engine, check, scope.active, config, todo.get(check.name, 0),
                                                         earlier.get(check.name, []), runs)
                fresh += [(check.name, f.run_id, f.step, f.detail) for f in reached]
    if per_run and (record if keep is None else keep):
        kept.keep(engine, fresh)
        kept.forget_gone(engine)
    ordered = [results[check.name] for check in enabled]
    if record:
        _record(engine, checked_at, ordered)
    locate(engine, [f for r in ordered for f in r.findings])
    return CheckReport(checked_at, ordered, disabled, runs, kept=sum(r.kept for r in ordered), findings_to=findings_to)


LOCATED = 10_000  # findings given their file and line (a store's worth of findings beyond it would cost a long query)


def locate(engine: Engine, findings: list[Finding]) -> None:
    """Give each finding on a run the file its run was read from and the line (or record) of its step there: the
    step index is the store's own count, the line is what a user opens. Where the store holds no line (a format that
    keeps none, an engine that cannot look it up), they stay None."""
    wanted = [f for f in findings if f.run_id is not None][:LOCATED]
    if not wanted:
        return
    try:  # lists as parameters: an engine that cannot take them (Spark) leaves the places unknown
        rows = engine.records("""select w.run_id, w.step as idx, r.source_file, coalesce(s.source_line, r.source_line) as line
                                 from (select unnest($runs) as run_id, unnest($steps) as step) w
                                 join runs r on r.run_id = w.run_id
                                 left join steps s on s.run_id = w.run_id and s.idx = w.step""",
                              {"runs": [f.run_id for f in wanted], "steps": [f.step for f in wanted]})
    except (duckdb.Error, NotImplementedError):
        return
    where = {(row["run_id"], row["idx"]): (row["source_file"], row["line"]) for row in rows}
    files = {row["run_id"]: row["source_file"] for row in rows}
    for finding in wanted:
        finding.file = files.get(finding.run_id)
        if finding.step is not None:
            finding.line = (where.get((finding.run_id, finding.step)) or (None, None))[1]


def _scope_table(engine: Engine, scope: Scope) -> None:
    engine.run(
        """create or replace temp table _scope as select run_id from runs
           where ($since is null or started_at >= $since) and ($until is null or started_at < $until)
             and ($agent is null or agent = $agent)""",
        {"since": scope.since, "until": scope.until, "agent": scope.agent},
    )
    engine.run("set variable scope_since = ?", [scope.at_since or scope.since])
    engine.run("set variable scope_until = ?", [scope.at_until or scope.until])


def _one_statement(check: Check, config, findings: str | None, first: int | None = None) -> str:
    """The check's whole answer in one statement (one Spark job, not one per part), rows of (part, rank,
    run_id, step, detail, n): part 0 its findings (the ``findings`` query, which reads ``_unjudged``; none
    when every verdict is kept), part 1 the runs it does not judge (n by format and reason), part 2 the
    provider buckets it cannot match (n by provider; a check of the journals). Each part in the order
    it is reported. With ``first``, part 0 is only the first ``first`` findings and part 3 counts them all."""
    parts = [] if findings is None else [
        f"select 0 as part, 0 as rank, run_id, step, detail, null::bigint as n from ({findings}) as found"]
    if findings is not None and first is not None:
        parts = [f"select * from (select 0 as part, 0 as rank, run_id, step, detail, null::bigint as n from "
                 f"({findings}) as found order by {_FINDING_ORDER} limit {int(first)}) as shown",
                 "select 3 as part, 0 as rank, null::varchar as run_id, null::integer as step, null::varchar as detail, "
                 f"count(*) as n from ({findings}) as counted"]
    parts.append("select 1 as part, -count(*) as rank, source_format as run_id, null::integer as step, "
                 "reason as detail, count(*) as n from _unjudged group by source_format, reason")
    if "journals" in check.needs:
        parts.append("select 2 as part, 0 as rank, provider as run_id, null::integer as step, null::varchar as detail, "
                     f"n from ({UNJUDGED_BUCKETS}) as b")
    return (f"with _unjudged as ({unjudged_runs(check, config)})\n{' union all '.join(parts)}\n"
            f"order by part, rank, {_FINDING_ORDER}")


_FINDING_ORDER = "run_id nulls first, step nulls first, detail"


def _written(engine: Engine, check: Check, config, findings: str, severity: str, folder: Path) -> list[tuple]:
    """The check's findings computed once into a temporary table (on Spark: kept on the executors), written
    from there by the engine into the findings table in ``folder``; back come the answer's parts, part 0 only
    the first ``SHOWN`` findings and part 3 their count."""
    engine.run(f"create or replace temp table _found as with _unjudged as ({unjudged_runs(check, config)})\n"
               f"{findings}")
    engine.write_parquet(f"select {string_literal(check.name)} as \"check\", {string_literal(severity)} as severity, "
                         "run_id, step, detail from _found", folder, f"check-{check.name}")
    rows = engine.rows(_one_statement(check, config, "select run_id, step, detail from _found", first=SHOWN))
    engine.run("drop table if exists _found")
    return rows


# the findings of a check that come back when they are written as a dataset (the first, in the report's order)
SHOWN = 25


def _run_kept(engine: Engine, check: Check, scoped: bool, config, todo: int, earlier: list[tuple],
              runs_in_scope: int) -> tuple[CheckResult, list[Finding]]:
    """A check that judges each run: the ``earlier`` findings kept where the keys hold, the check's SQL on the
    ``todo`` other runs. Returns the result and the findings reached now."""
    result = _run_one(engine, check, scoped, config, kept.todo_condition(check.name), run=todo > 0)
    if any(f.run_id is None for f in result.findings):
        raise CheckDefinitionError(f"{check.path}: check {check.name} says it judges each run, but a row it returned "
                                   "names no run; return each finding's run_id, or remove 'judges: each run'")
    reached = list(result.findings)
    result.kept = runs_in_scope - todo
    result.findings = sorted(result.findings + [Finding(check.name, result.severity, *row) for row in earlier],
                             key=lambda f: (f.run_id is not None, f.run_id or "", f.step is not None, f.step or 0,
                                            f.detail is not None, f.detail or ""))
    result.outcome = config.policy(check.name).outcome(result.severity, result.failures)
    return result, reached


def _in_scope(at: str) -> str:
    """SQL: a finding on a run in scope; one that names no run (a provider bucket, a week) is placed by ``at``
    (its ``at`` column when the check returns one; without it, it is reported whatever the scope)."""
    return (f"run_id in (select run_id from _scope) or (run_id is null and ({at} is null or "
            f"((getvariable('scope_since') is null or {at} >= getvariable('scope_since')) and "
            f"(getvariable('scope_until') is null or {at} < getvariable('scope_until')))))")


def _run_one(engine: Engine, check: Check, scoped: bool, config, only: str | None = None,
             run: bool = True, written_to: Path | None = None) -> CheckResult:
    """Run ``check`` (its findings on runs in scope when ``scoped``, and where the SQL ``only`` holds; written by
    the engine to the findings table in ``written_to`` when given)."""
    policy = config.policy(check.name)
    severity = policy.severity.value if policy.severity else check.severity
    result = CheckResult(check.name, severity, check.invariant, check.remedy, str(check.path), check.needs,
                         cites=getattr(check, "cites", ""))
    try:
        findings = None
        if run:  # else every verdict is kept: the SQL ran, its columns checked, when they were reached
            columns = engine.columns(check.sql)
            missing = [c for c in REQUIRED_COLUMNS if c not in columns]
            if missing:
                raise CheckDefinitionError(f"{check.path}: check {check.name} returns columns {columns}; it must return "
                                           f"{', '.join(REQUIRED_COLUMNS)} (missing {', '.join(missing)})")
            at = "\"at\"::timestamptz" if "at" in columns else "null"  # quoted: AT is a keyword
            # not exists, not "run_id is null or run_id not in (…)": under the OR Spark keeps NOT IN's NULL rules
            # with a nested-loop join (minutes at 10^5 tool calls, docs/scale-out.md)
            conditions = ["not exists (select 1 from _unjudged u where u.run_id = violations.run_id)"]
            if scoped:
                conditions.append(f"({_in_scope(at)})")
            if only:
                conditions.append(only)
            findings = (f"select run_id::varchar as run_id, step::integer as step, detail::varchar as detail "
                        f"from (\n{check.sql}\n) as violations where {' and '.join(conditions)}")
        if written_to is not None and findings is not None:
            rows = _written(engine, check, config, findings, severity, written_to)
        else:
            rows = engine.rows(_one_statement(check, config, findings))
    except duckdb.Error as exc:
        message = f"{check.path}: check {check.name} failed to run: {exc}"
        raise (InternalError(message) if check.builtin else CheckDefinitionError(message)) from exc
    result.findings = [Finding(check.name, severity, run_id, step, detail)
                       for part, _, run_id, step, detail, _ in rows if part == 0]
    result.not_judged = [NotJudged(n, "run", source, reason) for part, _, source, _, reason, n in rows if part == 1]
    result.not_judged += [NotJudged(n, "bucket", provider, f"the store holds no journal of provider {provider} to match "
                                                         "its usage and bill against")
                          for part, _, provider, _, _, n in rows if part == 2]
    if written_to is not None:
        result.found = sum(n for part, *_, n in rows if part == 3)
    result.outcome = policy.outcome(severity, result.failures)
    if policy.warn_if.origin != "default" or policy.error_if.origin != "default":
        result.thresholds = f"warn_if {policy.warn_if.value.text}, error_if {policy.error_if.value.text}"
    return result


def _record(engine: Engine, checked_at: datetime, results: list[CheckResult]) -> None:
    with engine.transaction():
        engine.insert("check_runs", [[checked_at, r.name, r.severity, r.failures, r.source] for r in results])
        engine.insert("findings", [[checked_at, f.check, f.severity, f.run_id, f.step, f.detail]
                                   for r in results for f in r.findings])
