"""Time as people say it: ``--since yesterday --until today --tz Europe/Paris --by week``.

A moment is an ISO date or time, ``today``, ``yesterday``, ``now``, or an age — ``12h``, ``7d``,
``2w`` — counted back from now (``7d`` is seven times 24 hours, as in a dashboard's "last 7
days"). A date, ``today`` and ``yesterday`` are midnights in the chosen zone; as ``--until`` they
mean the end of that day, so ``--since yesterday --until yesterday`` is one whole day. A time
without an offset is in the chosen zone too. The zone defaults to the machine's local zone
(``$TZ``, else ``/etc/localtime``), and every report says which zone it grouped days in.

Stored timestamps stay UTC; only the grouping (``--by day|week|month``) and the reading of
``--since/--until`` use the zone. Weeks start on Monday (ISO 8601).
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones


from reconcile.engine import Engine
from reconcile.errors import BadInput

TIME_GROUPS = ("day", "week", "month")
_AGE = re.compile(r"(\d{1,5})([hdw])")
_UNIT = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}
_EXAMPLES = "2026-11-28, 2026-11-28T22:00:00Z, today, yesterday, now, 12h, 7d or 2w"


@dataclass(frozen=True)
class Window:
    """Runs started in [since, until) (UTC moments; None is open), grouped by days of ``zone``."""

    since: datetime | None = None
    until: datetime | None = None
    zone: str = "UTC"

    @property
    def params(self) -> dict[str, datetime | None]:
        """``$since`` and ``$until`` for :data:`RUNS_IN_WINDOW`."""
        return {"since": self.since, "until": self.until}

    def describe(self) -> str:
        shown = [f"from {_shown(self.since, self.zone)}" if self.since else "",
                 f"until {_shown(self.until, self.zone)}" if self.until else ""]
        return " ".join(part for part in shown if part) or "all time"


# A run (``r``) started in the window: the SQL every analysis filters by, with ``Window.params``.
RUNS_IN_WINDOW = "($since is null or r.started_at >= $since) and ($until is null or r.started_at < $until)"


def _shown(moment: datetime, zone: str) -> str:
    return moment.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M")


_UTC_ALIASES = {"etc/utc", "etc/uct", "etc/zulu", "etc/universal", "uct", "zulu", "universal", "utc", "etc/gmt",
                "gmt", "etc/greenwich", "greenwich"}


def local_zone() -> str:
    """The machine's zone as an IANA name: ``$TZ`` when it names one, else ``/etc/localtime``, else UTC."""
    return _plain(_machine_zone())


def _plain(name: str) -> str:
    """UTC's many names (Etc/UTC, Zulu, …) as UTC, so a report says what a reader expects."""
    return "UTC" if name.lower() in _UTC_ALIASES else name


def _machine_zone() -> str:
    named = os.environ.get("TZ", "").lstrip(":")
    if named and _is_zone(named):
        return named
    try:
        target = str(Path("/etc/localtime").resolve())
    except OSError:
        target = ""
    if "zoneinfo/" in target and _is_zone(name := target.split("zoneinfo/", 1)[1]):
        return name
    try:
        named = Path("/etc/timezone").read_text(encoding="utf-8").strip()
    except OSError:
        named = ""
    return named if named and _is_zone(named) else "UTC"


def _is_zone(name: str) -> bool:
    if name.startswith("/") or ".." in name:
        return False
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def resolve_zone(name: str | None) -> str:
    """``name`` checked (None: the local zone); an unknown zone is refused with examples."""
    if name is None or name == "local":
        return local_zone()
    if name.upper() == "UTC":
        return "UTC"
    if not _is_zone(name):
        close = difflib.get_close_matches(name, sorted(available_timezones()), n=3, cutoff=0.6)
        raise BadInput(f"--tz {name!r} is not a time zone; give an IANA name such as Europe/Paris, America/New_York "
                       f"or UTC{' (close: ' + ', '.join(close) + ')' if close else ''}")
    return _plain(name)


def parse_when(text: str | None, zone: str = "UTC", end: bool = False, now: datetime | None = None,
               option: str = "--since") -> datetime | None:
    """The UTC moment ``text`` names in ``zone``; a whole day as ``end`` means that day's end."""
    if text is None:
        return None
    tz = ZoneInfo(zone)
    now = (now or datetime.now(timezone.utc)).astimezone(tz)
    word = text.strip().lower()
    if word in ("today", "yesterday"):
        return _midnight(now.date() - timedelta(days=word == "yesterday") + timedelta(days=end), tz)
    if word == "now":
        return now.astimezone(timezone.utc)
    if match := _AGE.fullmatch(word):
        count, unit = int(match.group(1)), match.group(2)
        return (now - count * _UNIT[unit]).astimezone(timezone.utc)
    try:
        if len(word) == 10:
            return _midnight(date.fromisoformat(word) + timedelta(days=end), tz)
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00").replace("z", "+00:00"))
    except (ValueError, OverflowError) as exc:
        raise BadInput(f"{option} {text!r} is not a date or time; use {_EXAMPLES}") from exc
    return (moment if moment.tzinfo else moment.replace(tzinfo=tz)).astimezone(timezone.utc)


def _midnight(day: date, tz: ZoneInfo) -> datetime:
    return datetime.combine(day, time(), tz).astimezone(timezone.utc)


def window(since: str | None, until: str | None, zone: str | None = None, now: datetime | None = None) -> Window:
    """The window ``--since/--until/--tz`` name; an empty or reversed window is refused."""
    name = resolve_zone(zone)
    start = parse_when(since, name, now=now, option="--since")
    stop = parse_when(until, name, end=True, now=now, option="--until")
    if start and stop and stop <= start:
        raise BadInput(f"--until {until!r} is not after --since {since!r}: the window holds no time. "
                       "Swap them, or widen the window.")
    return Window(start, stop, name)


def use_zone(engine: Engine, zone: str) -> None:
    """Make ``zone`` the one :func:`bucket` groups in on ``engine`` (stored times stay UTC)."""
    engine.run("set variable reconcile_tz = ?", [zone])


def local_sql(expression: str) -> str:
    """SQL for ``expression`` (a timestamptz) as wall-clock time in the zone :func:`use_zone` set (UTC unset)."""
    return f"timezone(coalesce(getvariable('reconcile_tz'), 'UTC'), {expression})"


def night_sql(expression: str) -> str:
    """SQL naming the night a timestamptz falls in: noon to noon in the zone :func:`use_zone` set, named by its
    evening's date (a loop from 22:00 to 06:00 is one night, not two days)."""
    return f"strftime({local_sql(expression)} - interval 12 hour, '%Y-%m-%d')"


def night_bounds(night: str, zone: str) -> tuple[datetime, datetime]:
    """The night ``night_sql`` names ``night`` (its evening's date): from that day's noon to the next day's, in ``zone``."""
    tz, evening = ZoneInfo(zone), date.fromisoformat(night)
    return (datetime.combine(evening, time(12), tz).astimezone(timezone.utc),
            datetime.combine(evening + timedelta(days=1), time(12), tz).astimezone(timezone.utc))


_FORMATS = {"day": "strftime({t}, '%Y-%m-%d')", "week": "strftime(date_trunc('week', {t}), '%G-W%V')",
            "month": "strftime({t}, '%Y-%m')", "hour": "strftime({t}, '%Y-%m-%d %H:00')"}


def bucket(expression: str, by: str) -> str:
    """SQL naming the day (2026-11-28), ISO week (2026-W48), month (2026-11) or hour ``expression`` falls in."""
    return _FORMATS[by].format(t=local_sql(expression))
