"""Signal definitions: one ``.sql`` file a signal, its header saying what it measures and when it alerts.

    -- name: provider_error_rate
    -- measures: the share of model calls the provider refused, by model
    -- aggregate: rate
    -- key: model
    -- unit: share
    -- alert_if: above 0.05, rise 1.0, min_count 20
    -- failure: provider 529 mid-run
    -- remedy: look at the provider's status page for that model …

The body returns one row an observation: ``at`` (when it happened), ``key`` (what it is about: a model,
a tool, an agent, a task class) and ``value`` (for ``rate``, 1 where the thing counted happened and 0
where it did not); optionally ``detail`` (a reading then names its window's most common detail where the
value is not 0, and the most common one of the window before: a tool's result shape before and after).
``kept: by run`` promises that each observation is one run's, read from that run's rows alone, and named
by a ``run_id`` column: a ``rate`` or ``mean`` signal that promises it is kept summed by run, key and minute
as the runs load (``checks/kept_signals.py``), and read from those sums. ``beside: OTHER`` shows signal OTHER's reading of the same window and key beside each reading. The signal is the observations of a window (a night, a day, an hour) aggregated by
key: ``rate`` or ``mean`` (their mean), ``p50``/``p99`` (that percentile). An observation with no time
falls in no window and is not counted.

``alert_if`` is the default threshold; ``[signals.NAME]`` in ``reconcile.toml`` replaces it (see
``Threshold``). Built-in signals live in ``queries/signals/``; a team adds its own with
``--signals-dir``, as checks are added with ``--checks-dir``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from reconcile.checks.loader import load_sql_files, read_header
from reconcile.errors import BadInput
from reconcile.resources import queries_dir

AGGREGATES = {"rate": "avg(value)", "mean": "avg(value)", "p50": "quantile_cont(value, 0.5)",
              "p99": "quantile_cont(value, 0.99)"}
UNITS = ("share", "tokens", "dollars", "ratio", "count", "seconds")
REQUIRED = ("name", "measures", "aggregate", "key", "unit", "alert_if", "remedy")
OPTIONAL = ("failure", "beside", "detail", "kept")
KEPT_BY_RUN = "by run"  # ``-- kept: by run``: each observation is one run's (its ``run_id`` column), read from its rows
BOUNDS = ("above", "below", "rise")
DEFAULT_MIN_COUNT = 20
_TERM = re.compile(r"^\s*([a-z_]+)\s+(-?[0-9]+(?:\.[0-9]+)?)\s*$")


class SignalDefinitionError(BadInput):
    """A signal file, or a signal's configuration, that cannot be used."""


@dataclass(frozen=True)
class Threshold:
    """When a signal's value crosses: every bound given holds, on at least ``min_count`` observations.

    ``above``/``below``: the value is over/under this figure; ``rise``: the value is more than
    (1 + rise) times its baseline (``1.0``: more than doubled; from a baseline of 0, anything above 0).
    Every comparison is strict: a figure exactly at its bound has not crossed. Requiring every bound keeps a tiny rate that
    doubles (0.1 % to 0.2 %) from paging anyone when ``above`` is given too. Without a baseline (no
    earlier window with enough observations), ``rise`` cannot be judged: the absolute bounds decide
    alone, and a signal with only ``rise`` is not judged.
    """

    above: float | None = None
    below: float | None = None
    rise: float | None = None
    min_count: int = DEFAULT_MIN_COUNT

    def describe(self) -> str:
        parts = [f"{b} {getattr(self, b):g}" for b in BOUNDS if getattr(self, b) is not None]
        return ", ".join(parts + [f"min_count {self.min_count}"])


@dataclass(frozen=True)
class Signal:
    name: str
    measures: str
    aggregate: str
    key: str
    unit: str
    threshold: Threshold
    remedy: str
    failure: str
    sql: str
    path: Path
    builtin: bool
    enabled: bool = True
    beside: str = ""  # another signal whose reading (same window, same key) is shown beside this one's
    kept: str = ""  # "by run": its observations may be kept summed by run, key and minute (checks/kept_signals.py)


def parse_threshold(text: str, where: str) -> Threshold:
    """``above 0.05, rise 1.0, min_count 20`` as a Threshold (each term once; at least one bound)."""
    values: dict[str, float] = {}
    for term in (t for t in text.split(",") if t.strip()):
        match = _TERM.match(term)
        if not match or match.group(1) not in (*BOUNDS, "min_count"):
            raise SignalDefinitionError(f"{where}: alert_if term {term.strip()!r} is not 'above N', 'below N', "
                                        "'rise N' or 'min_count N', e.g. 'above 0.05, rise 1.0, min_count 20'")
        if match.group(1) in values:
            raise SignalDefinitionError(f"{where}: alert_if gives {match.group(1)!r} twice")
        values[match.group(1)] = float(match.group(2))
    return threshold_from(values, where)


def threshold_from(values: dict, where: str) -> Threshold:
    """A Threshold from ``{above, below, rise, min_count}`` (a file's header or ``reconcile.toml``)."""
    unknown = sorted(set(values) - {*BOUNDS, "min_count"})
    if unknown:
        raise SignalDefinitionError(f"{where}: unknown alert_if key {unknown[0]!r}; allowed: above, below, rise, "
                                    "min_count")
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or abs(value) > 1e15:
            raise SignalDefinitionError(f"{where}: alert_if {key} = {value!r}; expected a number")
    if not any(key in values for key in BOUNDS):
        raise SignalDefinitionError(f"{where}: alert_if needs at least one of above, below, rise")
    if values.get("rise", 0) < 0:
        raise SignalDefinitionError(f"{where}: alert_if rise {values['rise']:g} is a fall; give the rise as a "
                                    "positive share (1.0: doubled)")
    count = values.get("min_count", DEFAULT_MIN_COUNT)
    if count != int(count) or not 1 <= count <= 1_000_000_000:
        raise SignalDefinitionError(f"{where}: alert_if min_count {count!r}; expected a whole number from 1")
    return Threshold(*(None if values.get(b) is None else float(values[b]) for b in BOUNDS), int(count))


def parse_signal(path: Path, builtin: bool = False) -> Signal:
    """Read one signal file, validating its header strictly."""
    header, lines, body_start = read_header(path, REQUIRED, OPTIONAL, "signal", SignalDefinitionError)
    line_of = {key: next((n for n, text in enumerate(lines, 1) if text.strip().lower().startswith(f"-- {key}")), 1)
               for key in header}
    if header["aggregate"] not in AGGREGATES:
        raise SignalDefinitionError(f"{path}:{line_of['aggregate']}: aggregate {header['aggregate']!r} is not one of "
                                    f"{', '.join(AGGREGATES)}")
    if header["unit"] not in UNITS:
        raise SignalDefinitionError(f"{path}:{line_of['unit']}: unit {header['unit']!r} is not one of {', '.join(UNITS)}")
    threshold = parse_threshold(header["alert_if"], f"{path}:{line_of['alert_if']}")
    if header.get("kept", KEPT_BY_RUN) != KEPT_BY_RUN:
        raise SignalDefinitionError(f"{path}:{line_of['kept']}: kept {header['kept']!r}: the one promise a signal can "
                                    f"make is {KEPT_BY_RUN!r} (each observation is one run's, named by a run_id column)")
    sql = "\n".join(lines[body_start:]).strip().rstrip(";").strip()
    if not sql:
        raise SignalDefinitionError(f"{path}:{body_start + 1}: the signal has no SQL after its header")
    return Signal(header["name"], header["measures"], header["aggregate"], header["key"], header["unit"], threshold,
                  header["remedy"], header.get("failure", ""), sql, path, builtin, beside=header.get("beside", ""),
                  kept=header.get("kept", ""))


def signals_dir() -> Path:
    """The built-in signals (``queries/signals/*.sql``)."""
    return queries_dir() / "signals"


def load_signals(extra_dirs: list[Path] | None = None, config=None) -> list[Signal]:
    """The built-in signals, then every ``*.sql`` in ``extra_dirs``, sorted by name, with ``config``'s thresholds."""
    found: dict[str, Signal] = load_sql_files(signals_dir(), extra_dirs, parse_signal, "signal", SignalDefinitionError)
    for signal in found.values():
        if signal.beside and signal.beside not in found:
            raise SignalDefinitionError(f"{signal.path}: beside {signal.beside!r} names no signal; signals: "
                                        f"{', '.join(found)}")
    configured = getattr(config, "signals", {}) or {}
    unknown = sorted(set(configured) - set(found))
    if unknown:
        where = getattr(config, "path", None) or "the configuration"
        raise SignalDefinitionError(f"{where}: [signals.{unknown[0]}] names no signal; signals: {', '.join(found)}")
    for name, settings in configured.items():
        where = f"{getattr(config, 'path', None) or 'the configuration'} [signals.{name}]"
        given = settings.get("alert_if")
        found[name] = replace(found[name], enabled=settings.get("enabled", True),
                              threshold=threshold_from(given, where) if given is not None else found[name].threshold)
    return sorted(found.values(), key=lambda s: s.name)
