"""Fleet signals: the rates and percentiles seed 003's failure matrix says to watch, night by night.

A check judges each run; a signal watches the fleet ("the operator alerts on the rate rather than the
instance"). Each signal (``signal_files``) is aggregated per window (a night, noon to noon; a day; an
hour; a week) and key, and set beside its **baseline**: the median of the same figure over the
``baseline`` windows just before (seven nights back, not the last seven with data; only those with at least the
threshold's ``min_count`` observations). It
**crosses** when its threshold holds (``signal_files.Threshold``).

Observations are aggregated in one statement a signal; what runs in Python is one row a window and key.
"""

from __future__ import annotations

import statistics
from collections import deque
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo
from typing import Any

from reconcile.checks import kept_signals
from reconcile.checks.signal_files import AGGREGATES, Signal, Threshold
from reconcile.engine import Engine
from reconcile.errors import BadInput
from reconcile.when import Window, bucket, night_sql, use_zone

WINDOWS = ("night", "day", "hour", "week")
BASELINE_WINDOWS = 7  # "the median of the last seven"
_NAMED = {"night": "nights", "day": "days", "hour": "hours", "week": "weeks"}
_SPAN = {"night": timedelta(days=1), "day": timedelta(days=1), "hour": timedelta(hours=1), "week": timedelta(weeks=1)}


def window_start(name: str, by: str) -> datetime:
    """A window's name (as ``window_sql`` gives it) as a moment to count windows by (its zone's wall clock)."""
    if by == "week":
        year, week = name.split("-W")
        return datetime.fromisocalendar(int(year), int(week), 1)
    return datetime.strptime(name, "%Y-%m-%d %H:00" if by == "hour" else "%Y-%m-%d")


@dataclass(frozen=True)
class Reading:
    """One signal, one window, one key: its value beside its baseline, and whether it crossed."""

    signal: str
    window: str
    key: str
    value: float | None
    count: int
    baseline: float | None
    baseline_windows: int
    crossed: bool
    judged: bool
    why: str
    unit: str
    detail: str | None = None  # the window's most common detail where the value is not 0 (a new shape)
    detail_before: str | None = None  # the most common detail of the window before (the shape it replaced)
    beside: dict[str, Any] | None = None  # the ``beside`` signal's reading of this window and key

    @property
    def change(self) -> float | None:
        """The value against its baseline (0.5: half as much again); None without a baseline, or from zero."""
        if self.value is None or not self.baseline:
            return None
        return self.value / self.baseline - 1

    def as_row(self, signal: Signal) -> dict[str, Any]:
        scale = 1e-6 if self.unit == "dollars" else 1  # observed in micro-dollars, given in dollars
        return {"signal": self.signal, "window": self.window, "key_kind": signal.key, "key": self.key,
                "value": None if self.value is None else self.value * scale, "shown": shown(self.value, self.unit), "unit": self.unit, "count": self.count,
                "baseline": None if self.baseline is None else self.baseline * scale, "baseline_shown": shown(self.baseline, self.unit),
                "baseline_windows": self.baseline_windows, "change": self.change, "crossed": self.crossed,
                "judged": self.judged, "why": self.why, "threshold": signal.threshold.describe(),
                "failure": signal.failure, "remedy": signal.remedy, "detail": self.detail,
                "detail_before": self.detail_before, "beside": self.beside}


def window_sql(expression: str, by: str) -> str:
    """SQL naming the window ``expression`` (a timestamptz) falls in; names sort as the windows do."""
    if by not in WINDOWS:
        raise BadInput(f"--by {by!r}: group signals by {', '.join(WINDOWS)}")
    return night_sql(expression) if by == "night" else bucket(expression, by)


def _observations(engine: Engine, signal: Signal, where: str = "true") -> str:
    """SQL: ``obs(t, key, value, detail)``, the signal's dated observations where ``where`` holds (over ``o``)."""
    detail = 'o."detail"::varchar' if "detail" in engine.columns(signal.sql) else "null::varchar"
    return (f"""obs as (select o."at" as t, o."key"::varchar as key, o."value"::double as value, {detail} as detail
                        from ({signal.sql}) as o where o."at" is not null and o."value" is not null and ({where}))""")


# what a reading is made of, per group: observations, the aggregate, the most common detail where the value is not 0
# (a new shape), and the most common detail of all
_READING = "count(*) as n, {aggregate} as value, mode(detail) filter (where value <> 0) as hit, mode(detail) as usual"


def observed(engine: Engine, signal: Signal, by: str, kept: dict[str, str] | None = None,
             since: datetime | None = None) -> list[tuple]:
    """(window, key, observations, aggregate, detail, any detail) of ``signal``, every window the store holds (from
    ``since`` on, where given), in window order; the details are NULL unless the signal's rows carry one. A signal
    in ``kept`` (name: digest, as ``kept_signals.prepare`` gives) is read from its kept sums by minute, not from the
    steps. ``since`` does not bound a signal with details: the detail before is that of the window before, however
    long ago."""
    params = {"since": since} if since is not None else None
    if kept and signal.name in kept:
        return engine.rows(
            f"""select {window_sql('minute', by)} as win, coalesce(key, '(none)') as key, sum(n)::bigint as n,
                       sum(total) / sum(n) as value, null::varchar as hit, null::varchar as usual
                from {kept_signals.minutes(signal.name, kept[signal.name])}
                where {'minute >= $since' if params else 'true'} group by all order by win, key""", params)
    if params and "detail" in engine.columns(signal.sql):
        params = None
    return engine.rows(
        f"""with {_observations(engine, signal, 'o."at" >= $since' if params else 'true')}
            select {window_sql('t', by)} as win, coalesce(key, '(none)') as key,
                   {_READING.format(aggregate=AGGREGATES[signal.aggregate])}
            from obs group by all order by win, key""", params)


def earliest_needed(first: str, by: str, baseline: int, zone: str) -> datetime | None:
    """A moment before every observation the readings from window ``first`` on can use: the baseline's windows and
    one more, with a day to spare (None: ``first`` is unbounded)."""
    if not first:
        return None
    start = window_start(first, by).replace(tzinfo=ZoneInfo(zone))
    return start - (baseline + 2) * _SPAN[by] - timedelta(days=1)


def judge(threshold: Threshold, value: float | None, count: int, baseline: float | None) -> tuple[bool, bool, str]:
    """(crossed, judged, why): every bound given must hold (see ``Threshold``)."""
    if value is None or count < threshold.min_count:
        return False, False, f"too few observations to judge ({count} < {threshold.min_count})"
    held, missed = [], []
    for name, bound in (("above", threshold.above), ("below", threshold.below)):
        if bound is not None:
            ok = value > bound if name == "above" else value < bound
            (held if ok else missed).append(f"{name} {bound:g}")
    if threshold.rise is not None:
        if baseline is None:
            if threshold.above is None and threshold.below is None:
                return False, False, "no baseline yet (no earlier window with enough observations)"
        else:
            ok = value > baseline * (1 + threshold.rise)  # strictly, as above: a figure exactly at it has not crossed
            (held if ok else missed).append(f"{1 + threshold.rise:g}x the baseline")
    if missed:
        return False, True, "within its threshold (not " + ", ".join(missed) + ")"
    return True, True, "crossed: " + " and ".join(held)


def readings(engine: Engine, signals: list[Signal], by: str = "night", window: Window | None = None,
             baseline: int = BASELINE_WINDOWS, zone: str = "UTC") -> list[tuple[Signal, Reading]]:
    """Each enabled signal's readings in the windows ``window`` holds (the latest window of the store when
    it is open on both ends), each beside the median of the ``baseline`` windows before it."""
    if not 1 <= baseline <= 366:
        raise BadInput(f"--baseline {baseline}: give how many earlier windows the baseline takes, 1 to 366")
    use_zone(engine, zone)
    window = window or Window(zone=zone)
    first, last = _shown_windows(engine, window, by)
    found: list[tuple[Signal, Reading]] = []
    if first is None:
        return found
    skipped = set(needing_verdicts(engine, signals))
    kept = kept_signals.prepare(engine, signals)
    for signal in (s for s in signals if s.enabled and s.name not in skipped):
        history: dict[str, deque[tuple[datetime, float]]] = {}  # key -> (start, value) of the windows with enough
        usual: dict[str, str | None] = {}  # key -> the most common detail of its latest window
        for win, key, count, value, hit, common in observed(engine, signal, by, kept,
                                                            earliest_needed(first, by, baseline, zone)):
            # the windows of the span just before (seven nights, not the last seven with data: a night months
            # ago, other work and other people, says nothing of tonight); windows come in order, so the older
            # ones leave for good
            start = window_start(win, by)
            kept = history.setdefault(key, deque())
            while kept and kept[0][0] < start - baseline * _SPAN[by]:
                kept.popleft()
            earlier = [v for _, v in kept]
            base = statistics.median(earlier) if earlier else None
            if first <= win <= last:
                crossed, judged, why = judge(signal.threshold, value, count, base)
                found.append((signal, Reading(signal.name, win, key, value, count, base, len(earlier), crossed,
                                              judged, why, signal.unit, hit, usual.get(key))))
            if value is not None and count >= signal.threshold.min_count:
                kept.append((start, value))
            usual[key] = common
    return _with_beside(found)


def _with_beside(found: list[tuple[Signal, Reading]]) -> list[tuple[Signal, Reading]]:
    """Each reading of a signal that names a ``beside`` signal, with that signal's reading of its window and key."""
    index = {(s.name, r.window, r.key): r for s, r in found}
    done = []
    for signal, reading in found:
        other = index.get((signal.beside, reading.window, reading.key)) if signal.beside else None
        if other is not None:
            reading = replace(reading, beside={"signal": other.signal, "value": other.value,
                                               "shown": shown(other.value, other.unit), "crossed": other.crossed})
        done.append((signal, reading))
    return done


def needing_verdicts(engine: Engine, signals: list[Signal]) -> list[str]:
    """The signals that read the verdicts ``reconcile check`` keeps, where ``engine`` holds none (an export, Spark)."""
    from reconcile.checks.kept import usable

    wanting = [s.name for s in signals if s.enabled and "kept_judgements" in s.sql]
    return wanting if wanting and not usable(engine) else []


def _shown_windows(engine: Engine, window: Window, by: str) -> tuple[str | None, str | None]:
    """The names of the first and last window to show: ``window``'s, else the latest the store's runs reach."""
    if window.since is None and window.until is None:
        latest = engine.rows(f"select max({window_sql('started_at', by)}) from runs")[0][0]
        return latest, latest
    until = window.until - timedelta(microseconds=1) if window.until else None  # [since, until): until's own is out
    first, last = engine.rows(f"""select coalesce({window_sql('$since::timestamptz', by)}, ''),
                                         coalesce({window_sql('$until::timestamptz', by)}, '~')""",
                              {"since": window.since, "until": until})[0]
    return first, last


def shown(value: float | None, unit: str) -> str:
    """A signal's figure as people read it: 4.2 %, 12,345 tokens, $0.0123, 0.18."""
    if value is None:
        return ""
    if unit == "share":
        return f"{value * 100:.1f} %"
    if unit == "tokens":
        return f"{value:,.0f} token{'' if round(value) == 1 else 's'}"
    if unit == "dollars":  # observations are micro-dollars
        return f"${value / 1e6:,.4f}"
    if unit == "seconds":
        return f"{value:,.1f} s"
    if unit == "count":
        return f"{value:,.1f}"
    return f"{value:.2f}"


def crossed(found: list[tuple[Signal, Reading]]) -> list[tuple[Signal, Reading]]:
    """The readings that crossed, the largest change first (a reading with no baseline after those with one)."""
    hits = [(s, r) for s, r in found if r.crossed]
    return sorted(hits, key=lambda sr: (sr[1].change is None, -(sr[1].change or 0), sr[0].name, sr[1].key))


def window_word(by: str) -> str:
    return _NAMED[by]


def sliding_readings(engine: Engine, signals: list[Signal], now: datetime, length: timedelta,
                     nights: int = BASELINE_WINDOWS) -> list[tuple[Signal, Reading]]:
    """Each enabled signal over the sliding window ``[now - length, now)``, beside its baseline: the median of the
    same window on each of the ``nights`` nights before (``reconcile watch``: the last hour against that hour of the
    week's nights, those with ``min_count`` observations). ``now`` is a UTC moment."""
    if not timedelta(minutes=1) <= length <= timedelta(days=1):
        raise BadInput(f"--window {length}: give a window from a minute to a day, e.g. 1h or 30m")
    label = f"{(now - length):%Y-%m-%d %H:%M}–{now:%H:%M} UTC"
    skipped = set(needing_verdicts(engine, signals))
    found: list[tuple[Signal, Reading]] = []
    # only the rows of the windows read (the last one and the same on each night before), not the nights between:
    # a night's other hours are most of a big store
    in_windows = " or ".join(f'(o."at" >= $now - to_days({k}) - $length and o."at" < $now - to_days({k}))'
                             for k in range(nights + 1))
    kept = kept_signals.prepare(engine, signals)
    # kept sums by minute: the minutes that start inside each window (the window from its first whole minute)
    in_minutes = in_windows.replace('o."at"', "m.minute")
    for signal in (s for s in signals if s.enabled and s.name not in skipped):
        if signal.name in kept:
            rows = engine.rows(
                f"""with ago as (select unnest(range(0, {nights} + 1)) as k)
                select k, coalesce(key, '(none)') as key, sum(n)::bigint as n, sum(total) / sum(n) as value,
                       null::varchar as hit, null::varchar as usual
                from {kept_signals.minutes(signal.name, kept[signal.name])} m
                join ago on m.minute >= $now - to_days(k::integer) - $length and m.minute < $now - to_days(k::integer)
                where {in_minutes} group by all order by key, k""", {"now": now, "length": length})
        else:
            rows = engine.rows(
                f"""with {_observations(engine, signal, in_windows)}, ago as (select unnest(range(0, {nights} + 1)) as k)
                select k, coalesce(key, '(none)') as key, {_READING.format(aggregate=AGGREGATES[signal.aggregate])}
                from obs join ago on t >= $now - to_days(k::integer) - $length and t < $now - to_days(k::integer)
                group by all order by key, k""", {"now": now, "length": length})
        by_key: dict[str, dict[int, tuple]] = {}
        for k, key, count, value, hit, usual in rows:
            by_key.setdefault(key, {})[k] = (count, value, hit, usual)
        for key, windows in by_key.items():
            if 0 not in windows:
                continue  # nothing of this key in the window: nothing to read
            count, value, hit, _ = windows[0]
            earlier = [windows[k][1] for k in sorted(windows) if k > 0 and windows[k][1] is not None
                       and windows[k][0] >= signal.threshold.min_count]
            before = next((windows[k][3] for k in sorted(windows) if k > 0), None)
            base = statistics.median(earlier) if earlier else None
            crossed_, judged, why = judge(signal.threshold, value, count, base)
            found.append((signal, Reading(signal.name, label, key, value, count, base, len(earlier), crossed_, judged,
                                          why, signal.unit, hit, before)))
    return _with_beside(found)
