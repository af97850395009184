"""Configuration: the store path, check settings, check severities, per format and per agent.

Policy — a result bound, an error pattern, how loud a check is — is configuration, never a fact
about someone else's harness. It is read from, in order: ``--config FILE`` (or
``$RECONCILE_CONFIG``), else ``./reconcile.toml``, else ``[tool.reconcile]`` in
``./pyproject.toml``::

    db = "night.duckdb"                      # the store, when --db and $RECONCILE_DB are not given

    [settings]                               # check settings for every run
    tool_error_pattern = '(?i)^\\s*error:'

    [checks.cost_per_request_stable]         # one check: enabled, severity, dbt-style thresholds
    enabled = false
    [checks.tool_errors_flagged]
    severity = "error"                       # error | warn
    warn_if = "!= 0"                         # on the number of findings
    error_if = "> 5"

    [signals.provider_error_rate]            # a fleet signal: its threshold (queries/signals/*.sql)
    alert_if = { above = 0.02, rise = 1.0, min_count = 50 }

    [ingest]                                 # the window a recorded timestamp must fall in
    earliest = "2000-01-01"                  # (these are the defaults; older archives set earlier)
    latest = "2100-01-01"
    abandoned_after_hours = 24               # no end record, silent this long (no wall-clock budget): abandoned

    [formats.claude_code.settings]           # only for runs of one source format …
    result_bound_tokens = 30000
    [agents.coder.settings]                  # … or of one agent (the most specific wins)
    stall_repeats = 4
    [agents.coder.checks.stalled_runs_detected]
    enabled = false                          # the check does not judge coder's runs

A run-scoped setting resolves, most specific first: the run's own record (its
``result_bound_tokens``), the agent's configuration, the format's configuration, the global
configuration, the format's documented default (``TranscriptFormat.policy``, e.g. Claude Code's
own tool-output limits), the built-in default. ``--set KEY=VALUE`` (also ``format.NAME.KEY`` /
``agent.NAME.KEY``) wins over the file at its scope.
"""

from __future__ import annotations

import copy
import os
import re
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from reconcile.config.settings import DEFAULTS, validate_setting
from reconcile.store.status import ABANDONED_AFTER_SECONDS
from reconcile.errors import BadInput
from reconcile.ingest.ranges import EARLIEST, LATEST

CONFIG_FILE = "reconcile.toml"
SEVERITIES = ("error", "warn")
_CONDITION = re.compile(r"^\s*(==|=|!=|<>|>=|<=|>|<)\s*(\d+)\s*$")
_TOP_KEYS = {"db", "ingest", "settings", "checks", "signals", "formats", "agents"}
_CHECK_KEYS = {"enabled", "severity", "warn_if", "error_if"}
_SCOPE_KEYS = {"settings", "checks"}


@dataclass(frozen=True)
class Value:
    value: Any
    origin: str  # where it came from, for ``reconcile config``


@dataclass(frozen=True)
class Condition:
    """A dbt-style threshold on a check's finding count, e.g. ``> 10``."""

    text: str

    def holds(self, count: int) -> bool:
        op, number = _CONDITION.match(self.text).groups()
        n = int(number)
        return {"==": count == n, "=": count == n, "!=": count != n, "<>": count != n, ">=": count >= n,
                "<=": count <= n, ">": count > n, "<": count < n}[op]


@dataclass
class CheckPolicy:
    enabled: Value = field(default_factory=lambda: Value(True, "default"))
    severity: Value | None = None  # None: the check file's own severity
    warn_if: Value = field(default_factory=lambda: Value(Condition("!= 0"), "default"))
    error_if: Value = field(default_factory=lambda: Value(Condition("!= 0"), "default"))

    def outcome(self, severity: str, failures: int) -> str:
        """``error``, ``warn`` or ``pass`` for a check of ``severity`` that found ``failures`` rows."""
        if severity == "error" and self.error_if.value.holds(failures):
            return "error"
        return "warn" if self.warn_if.value.holds(failures) else "pass"


@dataclass
class Config:
    path: Path | None = None
    db: Value | None = None
    settings: dict[str, Value] = field(default_factory=dict)  # global
    scoped: dict[tuple[str, str], dict[str, Value]] = field(default_factory=dict)  # ("format"|"agent", name)
    checks: dict[str, CheckPolicy] = field(default_factory=dict)
    # [signals.NAME]: enabled, alert_if (a table: above, below, rise, min_count), validated with the signals
    signals: dict[str, dict[str, Any]] = field(default_factory=dict)
    scoped_disabled: dict[tuple[str, str], dict[str, Value]] = field(default_factory=dict)  # scope -> check -> Value
    window: tuple[date, date] = (EARLIEST, LATEST)  # [ingest] earliest, latest
    abandoned_after: float = ABANDONED_AFTER_SECONDS  # [ingest] abandoned_after_hours, in seconds

    def policy(self, check: str) -> CheckPolicy:
        return self.checks.get(check) or CheckPolicy()

    def setting(self, key: str) -> Value:
        """A global setting: configured, else the built-in default."""
        return self.settings.get(key) or Value(DEFAULTS[key][0], "built-in default")

    def resolve(self, key: str, agent: str | None, fmt) -> Value:
        """A run-scoped setting for one (agent, format): the most specific value (see the module doc)."""
        for scope in (("agent", agent), ("format", getattr(fmt, "name", fmt))):
            if scope[1] is not None and key in self.scoped.get(scope, {}):
                return self.scoped[scope][key]
        if key in self.settings:
            return self.settings[key]
        documented = getattr(fmt, "policy", {}).get(key)
        if documented is not None:
            return Value(documented[0], f"{fmt.name}'s documented default: {documented[1]}")
        return self.setting(key)

    def disabled_for(self, check: str) -> list[tuple[str, str, Value]]:
        """The (kind, name) scopes a check is switched off for."""
        return [(kind, name, checks[check]) for (kind, name), checks in self.scoped_disabled.items()
                if check in checks and checks[check].value is False]

    def with_overrides(self, pairs: list[str]) -> Config:
        """A copy with ``--set KEY=VALUE`` / ``format.NAME.KEY=VALUE`` / ``agent.NAME.KEY=VALUE`` applied."""
        self = copy.deepcopy(self)  # the caller's configuration is left as it was
        for pair in pairs:
            key, sep, value = pair.partition("=")
            if not sep or not key.strip():
                raise BadInput(f"--set {pair!r}: expected KEY=VALUE, e.g. --set result_bound_tokens=4000")
            key = key.strip()
            kind, _, rest = key.partition(".")
            name, _, setting = rest.rpartition(".")  # an agent's name may itself contain dots
            if kind in ("format", "agent") and name and setting:
                self.scoped.setdefault((kind, name), {})[setting] = Value(
                    validate_setting(setting, value, f"--set {pair}"), f"--set {key}")
            elif "." not in key:
                self.settings[key] = Value(validate_setting(key, value, f"--set {pair}"), f"--set {key}")
            else:
                raise BadInput(f"--set {pair!r}: expected KEY=VALUE, format.NAME.KEY=VALUE or agent.NAME.KEY=VALUE")
        return self


def find_config(explicit: Path | None = None, folder: Path | None = None) -> tuple[Path | None, dict]:
    """The configuration file to read and its table: ``--config``, ``reconcile.toml``, ``pyproject.toml``."""
    explicit = explicit or (Path(os.environ["RECONCILE_CONFIG"]) if os.environ.get("RECONCILE_CONFIG") else None)
    if explicit is not None:
        if not explicit.is_file():
            raise BadInput(f"--config {explicit}: no such file. Give a reconcile.toml, or leave --config out.")
        data = _read_toml(explicit)
        return explicit, (data.get("tool", {}).get("reconcile", {}) if explicit.name == "pyproject.toml" else data)
    folder = folder or Path.cwd()
    own = folder / CONFIG_FILE
    if own.is_file():
        return own, _read_toml(own)
    pyproject = folder / "pyproject.toml"
    if pyproject.is_file():
        table = _read_toml(pyproject).get("tool", {}).get("reconcile")
        if isinstance(table, dict):
            return pyproject, table
    return None, {}


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise BadInput(f"{path}: not valid TOML ({exc}). Fix the file, or point --config at another.") from exc


def load_config(explicit: Path | None = None, folder: Path | None = None, overrides: list[str] | None = None) -> Config:
    """Read and validate the configuration (an unknown key is an error naming the file and key)."""
    path, data = find_config(explicit, folder)
    config = Config(path=path)
    where = str(path) if path else ""
    table = "[tool.reconcile]" if path is not None and path.name == "pyproject.toml" else ""
    _only(data, _TOP_KEYS, where, table or "the top level")
    if "db" in data:
        if not isinstance(data["db"], str) or not data["db"].strip():
            raise BadInput(f"{where}: db = {data['db']!r}; expected the store's path as a string")
        config.db = Value((path.parent / data["db"]) if not Path(data["db"]).is_absolute() else Path(data["db"]),
                          f"{where} (db)")
    ingest_table = _table(data.get("ingest", {}), where, f"{table}[ingest]")
    config.abandoned_after = _abandoned_after(ingest_table, where)
    config.window = _window({k: v for k, v in ingest_table.items() if k != "abandoned_after_hours"}, where)
    config.settings = _settings(data.get("settings", {}), where, f"{table}[settings]")
    for name, body in _table(data.get("checks", {}), where, "[checks]").items():
        config.checks[name] = _check_policy(_table(body, where, f"[checks.{name}]"), where, f"[checks.{name}]")
    for name, body in _table(data.get("signals", {}), where, "[signals]").items():
        body = _table(body, where, f"[signals.{name}]")
        _only(body, {"enabled", "alert_if"}, where, f"[signals.{name}]")
        if not isinstance(body.get("enabled", True), bool):
            raise BadInput(f"{where}: [signals.{name}] enabled = {body['enabled']!r}; expected true or false")
        if "alert_if" in body:
            _table(body["alert_if"], where, f"[signals.{name}] alert_if")
        config.signals[name] = dict(body)
    for kind, plural in (("format", "formats"), ("agent", "agents")):
        for name, body in _table(data.get(plural, {}), where, f"[{plural}]").items():
            label = f"[{plural}.{name}]"
            body = _table(body, where, label)
            _only(body, _SCOPE_KEYS, where, label)
            config.scoped[(kind, name)] = _settings(body.get("settings", {}), where, f"{label}.settings")
            for check, rules in _table(body.get("checks", {}), where, f"{label}.checks").items():
                rules = _table(rules, where, f"{label}.checks.{check}")
                _only(rules, {"enabled"}, where, f"{label}.checks.{check}")
                if "enabled" in rules:
                    if not isinstance(rules["enabled"], bool):
                        raise BadInput(f"{where}: {label}.checks.{check}.enabled = {rules['enabled']!r}; expected true or false")
                    config.scoped_disabled.setdefault((kind, name), {})[check] = Value(
                        rules["enabled"], f"{where} {label}.checks.{check}")
    return config.with_overrides(overrides or [])


def _abandoned_after(body: dict, where: str) -> float:
    """``[ingest] abandoned_after_hours``: how long a run with no end record and no wall-clock budget of its own may
    be silent before it is ``abandoned``, in seconds (a number of hours above 0; 24 by default)."""
    raw = body.get("abandoned_after_hours", ABANDONED_AFTER_SECONDS / 3600)
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not 0 < raw <= 24 * 366:
        raise BadInput(f"{where}: [ingest] abandoned_after_hours = {raw!r}; expected a number of hours above 0 "
                       "(and within a year), e.g. 24")
    return float(raw) * 3600


def _window(body: dict, where: str) -> tuple[date, date]:
    _only(body, {"earliest", "latest"}, where, "[ingest]")
    bounds = []
    for key, default in (("earliest", EARLIEST), ("latest", LATEST)):
        raw = body.get(key, default)
        try:
            value = raw if isinstance(raw, date) and not isinstance(raw, datetime) else date.fromisoformat(str(raw))
        except ValueError:
            raise BadInput(f"{where}: [ingest] {key} = {raw!r}; expected a date such as {default.isoformat()}") from None
        bounds.append(value)
    if not bounds[0] < bounds[1]:
        raise BadInput(f"{where}: [ingest] earliest {bounds[0]} is not before latest {bounds[1]}")
    return bounds[0], bounds[1]


def _table(value: Any, where: str, label: str) -> dict:
    if not isinstance(value, dict):
        raise BadInput(f"{where}: {label} must be a table, not {type(value).__name__} {value!r}")
    return value


def _only(data: dict, allowed: set[str], where: str, label: str) -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise BadInput(f"{where}: unknown key {unknown[0]!r} in {label}; allowed: {', '.join(sorted(allowed))}")


def _settings(data: Any, where: str, label: str) -> dict[str, Value]:
    data = _table(data, where, label)
    return {key: Value(validate_setting(key, value, f"{where} {label}"), f"{where} {label}") for key, value in data.items()}


def _check_policy(data: dict, where: str, label: str) -> CheckPolicy:
    _only(data, _CHECK_KEYS, where, label)
    policy, origin = CheckPolicy(), f"{where} {label}"
    if "enabled" in data:
        if not isinstance(data["enabled"], bool):
            raise BadInput(f"{where}: {label} enabled = {data['enabled']!r}; expected true or false")
        policy.enabled = Value(data["enabled"], origin)
    if "severity" in data:
        if data["severity"] not in SEVERITIES:
            raise BadInput(f"{where}: {label} severity = {data['severity']!r}; expected one of {', '.join(SEVERITIES)}")
        policy.severity = Value(data["severity"], origin)
    for key in ("warn_if", "error_if"):
        if key in data:
            if not isinstance(data[key], str) or not _CONDITION.match(data[key]):
                raise BadInput(f"{where}: {label} {key} = {data[key]!r}; expected a comparison with a count, "
                               "e.g. \"!= 0\" or \"> 10\"")
            setattr(policy, key, Value(Condition(data[key].strip()), origin))
    return policy


def describe(config: Config, checks, db: Path, db_given: bool) -> list[dict[str, Any]]:
    """Every effective value and where it came from, for ``reconcile config``."""
    from reconcile.formats import transcript_formats

    rows = [{"what": "configuration file", "scope": "", "value": str(config.path) if config.path else "(none)",
             "from": "--config / $RECONCILE_CONFIG / ./reconcile.toml / ./pyproject.toml [tool.reconcile]"}]
    db_from = "--db / $RECONCILE_DB" if db_given else (config.db.origin if config.db else "built-in default")
    rows.append({"what": "db", "scope": "", "value": str(db), "from": db_from})
    for key, (_, _, about) in DEFAULTS.items():
        value = config.setting(key)
        rows.append({"what": f"setting {key}", "scope": "every run", "value": _shown(value.value),
                     "from": value.origin, "about": about})
    for fmt in transcript_formats():
        for key, (value, why) in fmt.policy.items():
            rows.append({"what": f"setting {key}", "scope": f"format {fmt.name} (its documented default)",
                         "value": value, "from": why})
    for (kind, name), values in sorted(config.scoped.items()):
        for key, value in values.items():
            rows.append({"what": f"setting {key}", "scope": f"{kind} {name}", "value": _shown(value.value),
                         "from": value.origin})
    for check in checks:
        policy = config.policy(check.name)
        severity = policy.severity or Value(check.severity, str(check.path))
        parts = {"enabled": policy.enabled, "severity": severity, "warn_if": policy.warn_if, "error_if": policy.error_if}
        for key, value in parts.items():
            shown = value.value.text if isinstance(value.value, Condition) else _shown(value.value)
            rows.append({"what": f"check {check.name} {key}", "scope": "every run", "value": shown, "from": value.origin})
        for kind, name, value in config.disabled_for(check.name):
            rows.append({"what": f"check {check.name} enabled", "scope": f"{kind} {name}", "value": "false",
                         "from": value.origin})
    return rows


def _shown(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
