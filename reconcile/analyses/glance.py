"""The night at a glance: what the first screen of the morning report and the finance headline say.

A *night* runs from noon to noon in the report's zone and is named by its evening's date, so a
loop that starts at 22:00 and ends at 06:00 is one night, not two days. The glance compares the
latest night with the one before it: runs by status, spend, and (when provider exports are
loaded) what the providers billed beside what the journals explain, and the gap.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any


from reconcile.analyses.costs import RUN_SUMS
from reconcile.analyses.usage import COVERAGE_MONEY
from reconcile.store.status import STATUSES
from reconcile.when import Window, night_bounds, night_sql
from reconcile.engine import Engine

RECENT_NIGHTS = 14


def nights(engine: Engine, recent: int = RECENT_NIGHTS, source: str = "auto",
           until: datetime | None = None) -> list[dict[str, Any]]:
    """The most recent nights (of runs started before ``until``), oldest first: runs, runs per status, and spend
    (None when nothing is known)."""
    rows = engine.records(f"""
        select {night_sql('r.started_at')} as night, count(*) as runs,
               {", ".join(f"count(*) filter (where r.status = '{s}') as {s}" for s in STATUSES)},
               {RUN_SUMS.replace(" as cost_", " as spend_")},
               count(*) filter (where r.source_format = 'claude_code' and r.parent_run_id is not null) as subagents
        from runs r join chosen_costs c using (run_id)
        where c.asked = $source and r.started_at is not null and ($until is null or r.started_at < $until)
        group by 1 order by 1 desc limit {int(recent)}""", {"source": source, "until": until})
    return rows[::-1]


def _change(now: int | None, before: int | None) -> int | None:
    return None if now is None or before is None else now - before


def bill_vs_journals(engine: Engine, window: Window | None = None) -> dict[str, Any] | None:
    """What the providers billed for the buckets in ``window`` beside what the journals explain; None without exports.

    ``billed_micros`` is the providers' cost exports when loaded, else their usage exports priced by
    reconcile (``billed_basis`` says which). ``explained_micros``: the billed tokens the journals
    account for, at the same prices; ``gap_micros`` = billed − explained.
    """
    window = window or Window()
    params = {"since": window.since, "until": window.until}
    within = "($since is null or bucket_start >= $since) and ($until is null or bucket_start < $until)"
    usage = engine.records(f"""
        select count(*) as buckets, {COVERAGE_MONEY},
               count(*) filter (where provider_micros is null) as unpriced_buckets,
               min(bucket_start) as first_bucket, max(bucket_start) as last_bucket, max(bucket_end) as buckets_end
        from usage_reconciliation where {within}""", params)[0]
    billed = engine.records(f"""select count(*) as lines, round(sum(amount_usd) * 1000000)::bigint as micros
                              from billed_costs where {within}""", params)[0]
    if not usage["buckets"] and not billed["lines"]:
        return None
    basis = "cost export" if billed["lines"] else "usage export at reconcile's prices"
    total = billed["micros"] if billed["lines"] else usage["provider_micros"]
    explained = usage["explained_micros"]
    low, high = usage["explained_low_micros"], usage["explained_high_micros"]
    # the gap by the one rule: exact where both are, else bounds (the bill less what the journals explain at most,
    # at least); a bill known only as a floor bounds nothing
    return {"billed_micros": total, "billed_low_micros": total if billed["lines"] else usage["provider_low_micros"],
            "billed_high_micros": total, "billed_basis": basis,
            "explained_micros": explained, "explained_low_micros": low, "explained_high_micros": high,
            "phantom_micros": usage["phantom_micros"], "phantom_low_micros": usage["phantom_low_micros"],
            "phantom_high_micros": usage["phantom_high_micros"],
            "gap_micros": None if total is None or explained is None else total - explained,
            "gap_low_micros": None if total is None or high is None else total - high,
            "gap_high_micros": None if total is None else total - low,
            "coverage": explained / total if total and explained is not None else None,
            "unpriced_buckets": usage["unpriced_buckets"], "first_bucket": usage["first_bucket"],
            "last_bucket": usage["last_bucket"], "buckets_end": usage["buckets_end"]}


def latest_night(engine: Engine, since: datetime | None = None,
                 until: datetime | None = None) -> str | None:
    """The latest night with a run started in [since, until), in the zone :func:`use_zone` set; None without one."""
    return engine.rows(f"""select max({night_sql('started_at')}) from runs where started_at is not null
                           and ($since is null or started_at >= $since) and ($until is null or started_at < $until)""",
                       {"since": since, "until": until})[0][0]


def night_buckets(engine: Engine, night: str, zone: str) -> Window | None:
    """The provider buckets of a night: from the first that overlaps it (a daily UTC bucket starts before a night
    that starts at noon) to the night's end; None when no bucket overlaps it."""
    since, until = night_bounds(night, zone)
    first = engine.rows("""select min(bucket_start) from (select bucket_start, bucket_end from usage_buckets
                                                          union all select bucket_start, bucket_end from billed_costs)
                           where bucket_start < $until and bucket_end > $since""",
                        {"since": since, "until": until})[0][0]
    return None if first is None else Window(first, until, zone)


def glance(engine: Engine, checks, source: str = "auto", night: str | None = None,
           zone: str = "UTC") -> dict[str, Any]:
    """A night (the latest, unless named) beside the one before: runs by status, spend, the bill of the provider
    buckets that overlap the night, findings by severity (``checks`` should be that night's)."""
    recent = nights(engine, source=source, until=night_bounds(night, zone)[1] if night else None)
    buckets = night_buckets(engine, night or recent[-1]["night"], zone) if night or recent else None
    latest = recent[-1] if recent else None
    before = recent[-2] if len(recent) > 1 else None
    statuses = [{"status": s, "runs": latest[s], "before": before[s] if before else None,
                 "change": _change(latest[s], before[s] if before else None),
                 "share": latest[s] / latest["runs"] if latest["runs"] else None}
                for s in STATUSES if latest and (latest[s] or (before and before[s]))]
    severities = {"error": 0, "warn": 0}
    for result in checks.results:
        if result.outcome in severities:
            severities[result.outcome] += result.failures
    return {"nights": recent, "latest": latest, "before": before, "statuses": statuses,
            "runs_change": _change(latest["runs"], before["runs"]) if latest and before else None,
            "spend_change": _change(latest["spend_micros"], before["spend_micros"]) if latest and before else None,
            "bill": bill_vs_journals(engine, buckets) if buckets else None, "buckets": buckets, "findings": severities,
            "checks_failing": {o: [r.name for r in checks.results if r.outcome == o] for o in severities},
            "not_judged": sum(1 for r in checks.results if r.not_judged)}
