"""Running checks: wrap each file's SQL, count its rows, keep them in ``findings``."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date, datetime, time, timedelta, timezone

import duckdb

from ..errors import BadInput, InternalError
from .loader import Check, CheckDefinitionError
from ..pricing import resolve as resolve_prices
from .settings import set_variables

REQUIRED_COLUMNS = ("run_id", "step", "detail")


@dataclass
class Finding:
    check: str
    severity: str
    run_id: str | None
    step: int | None
    detail: str


@dataclass
class CheckResult:
    name: str
    severity: str
    invariant: str
    remedy: str
    source: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def failures(self) -> int:
        return len(self.findings)


@dataclass
class CheckReport:
    checked_at: datetime
    results: list[CheckResult]

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.results for f in r.findings]

    @property
    def has_errors(self) -> bool:
        return any(r.severity == "error" and r.failures for r in self.results)

    def to_json(self) -> dict:
        return {"checks": [{"name": r.name, "severity": r.severity, "failures": r.failures} for r in self.results],
                "findings": [asdict(f) for f in self.findings]}


@dataclass
class Scope:
    """Which runs' findings to report. A check still reads all data (history matters to some)."""

    since: datetime | None = None
    until: datetime | None = None
    agent: str | None = None

    @property
    def active(self) -> bool:
        return any(v is not None for v in (self.since, self.until, self.agent))


def parse_moment(text: str | None, end_of_day: bool = False) -> datetime | None:
    """A date (``2026-11-28``) or an ISO timestamp, in UTC. A bare date as ``--until`` means its end."""
    if text is None:
        return None
    try:
        if len(text) == 10:
            day = date.fromisoformat(text)
            moment = datetime.combine(day + timedelta(days=1) if end_of_day else day, time(), timezone.utc)
        else:
            moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError as exc:
        raise BadInput(f"{text!r} is not a date or time; use 2026-11-28 or 2026-11-28T22:00:00Z") from exc
    return moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)


def select_checks(checks: list[Check], only: list[str] | None) -> list[Check]:
    if not only:
        return checks
    known = {c.name: c for c in checks}
    missing = [name for name in only if name not in known]
    if missing:
        raise BadInput(f"--only {missing[0]}: no such check. Checks: {', '.join(known)}")
    return [known[name] for name in only]


def run_checks(con: duckdb.DuckDBPyConnection, checks: list[Check], scope: Scope | None = None,
               settings: dict[str, str] | None = None) -> CheckReport:
    """Run ``checks``; record every check that ran and every finding; return the report."""
    scope = scope or Scope()
    checked_at = datetime.now(timezone.utc)
    resolve_prices(con)  # checks of cost read step_view's prices
    set_variables(con, settings)
    where = ""
    if scope.active:
        con.execute(
            """create or replace temp table _scope as select run_id from runs
               where ($since is null or started_at >= $since) and ($until is null or started_at < $until)
                 and ($agent is null or agent = $agent)""",
            {"since": scope.since, "until": scope.until, "agent": scope.agent},
        )
        con.execute("set variable scope_since = ?", [scope.since])
        con.execute("set variable scope_until = ?", [scope.until])
        # A finding that names no run (a provider bucket, a week) is placed by its ``at`` column when the
        # check returns one; without it, it is reported whatever the scope.
        where = ("where run_id in (select run_id from _scope) or (run_id is null and ({at} is null or "
                 "((getvariable('scope_since') is null or {at} >= getvariable('scope_since')) and "
                 "(getvariable('scope_until') is null or {at} < getvariable('scope_until')))))")
    results = [_run_one(con, check, where) for check in checks]
    con.execute("begin")
    con.executemany("insert into check_runs values (?, ?, ?, ?, ?)",
                    [[checked_at, r.name, r.severity, r.failures, r.source] for r in results])
    rows = [[checked_at, f.check, f.severity, f.run_id, f.step, f.detail] for f in
            (f for r in results for f in r.findings)]
    if rows:
        con.executemany("insert into findings values (?, ?, ?, ?, ?, ?)", rows)
    con.execute("commit")
    return CheckReport(checked_at, results)


def _run_one(con: duckdb.DuckDBPyConnection, check: Check, where: str) -> CheckResult:
    result = CheckResult(check.name, check.severity, check.invariant, check.remedy, str(check.path))
    try:
        columns = [d[0] for d in con.execute(f"select * from (\n{check.sql}\n) limit 0").description]
        at = "\"at\"::timestamptz" if "at" in columns else "null"  # quoted: AT is a keyword
        wrapped = (f"select run_id::varchar, step::integer, detail::varchar from (\n{check.sql}\n) as violations "
                   f"{where.format(at=at)} order by run_id nulls first, step nulls first, detail")
        missing = [c for c in REQUIRED_COLUMNS if c not in columns]
        if missing:
            raise CheckDefinitionError(f"{check.path}: check {check.name} returns columns {columns}; it must return "
                                       f"{', '.join(REQUIRED_COLUMNS)} (missing {', '.join(missing)})")
        rows = con.execute(wrapped).fetchall()
    except duckdb.Error as exc:
        message = f"{check.path}: check {check.name} failed to run: {exc}"
        raise (InternalError(message) if check.builtin else CheckDefinitionError(message)) from exc
    result.findings = [Finding(check.name, check.severity, *row) for row in rows]
    return result
