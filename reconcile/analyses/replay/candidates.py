"""Candidate limits for ``reconcile replay``: from ``--set``, ``--detector``, a limits file, or ``budgets``.

A candidate is a set of limits, for every group or per group (an agent, a task class or a model:
``--by``). Where it says nothing of a limit, each run keeps its own (``base="own"``: the limits and
loop detector its journal records, else the configured detector) — so ``--set max_steps=16`` asks
what that one change would have done. ``base="none"`` replays the candidate alone.

Settings (the names ``budgets --emit`` writes): ``max_steps``, ``max_tokens``, ``max_prompt_tokens``,
``max_completion_tokens`` (whole numbers), ``max_wall_seconds`` (seconds), ``max_cost_usd`` (dollars)
or ``max_cost_micros``, ``loop_detector`` (``results_in_a_row`` seed 000, ``calls_anywhere`` seed 001,
``calls_window`` seed 003, or ``none``), ``loop_limit``, ``loop_window``, and ``wrap_up`` (true: the
harness takes seed 001's tool-free wrap-up turn after a stop, priced as the call it replaces).
"""

from __future__ import annotations

import ast
import math
import re
import tomllib
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from reconcile.errors import BadInput
from reconcile.formats.journal_spec import DETECTORS

SETTINGS = ("max_steps", "max_tokens", "max_prompt_tokens", "max_completion_tokens", "max_wall_seconds",
            "max_cost_micros", "loop_detector", "loop_limit", "loop_window", "wrap_up")
ALIASES = {"max_cost_usd": "max_cost_micros", "max_seconds": "max_wall_seconds", "max_cost": "max_cost_micros"}
DETECTOR_CHOICES = (*DETECTORS, "none")
_MAX_COUNT = 2**62
_GROUPED = re.compile(r"^#.*\bgroups by (agent|task_class|model)\b")
_LABEL = re.compile(r"^([A-Za-z][\w.-]{0,39}):(.*)$")


@dataclass(frozen=True)
class Candidate:
    """Limits to replay: ``limits[None]`` applies to every group, ``limits[key]`` to one group (it wins)."""

    name: str
    limits: dict[str | None, dict[str, Any]] = field(default_factory=dict)
    base: str = "own"
    origin: str = "--set"
    by: str | None = None  # what a limits file's group keys are (its header says), if it says

    def describe(self) -> str:
        """The candidate in a line, as a user would type it."""
        parts = []
        for key, values in self.limits.items():
            text = ", ".join(_shown(name, value) for name, value in values.items())
            parts.append(text if key is None else f"{key}: {text}")
        said = "; ".join(parts) or "each run's own limits"
        return said + ("" if self.base == "own" else " (nothing else)")


def as_run() -> Candidate:
    """Each run's own limits and detector: replayed, it must find the stop each harness wrote."""
    return Candidate("as run", {}, "own", "the journals")


def setting(name: str, raw: Any, where: str) -> tuple[str, Any]:
    """One setting, checked and converted: counts to int, seconds to float, dollars to micro-dollars."""
    key = ALIASES.get(name, name)
    if key not in SETTINGS:
        raise BadInput(f"{where}: no such limit {name!r}. Limits: {', '.join(SETTINGS[:-1])}, max_cost_usd, "
                       "wrap_up")
    if key == "loop_detector":
        if raw not in DETECTOR_CHOICES:
            raise BadInput(f"{where}: loop_detector = {raw!r}; expected one of {', '.join(DETECTOR_CHOICES)}")
        return key, raw
    if key == "wrap_up":
        text = str(raw).strip().lower()
        if raw is True or text in ("true", "yes", "1", "on"):
            return key, True
        if raw is False or text in ("false", "no", "0", "off"):
            return key, False
        raise BadInput(f"{where}: wrap_up = {raw!r}; expected true or false")
    if isinstance(raw, bool):
        raise BadInput(f"{where}: {name} = {raw!r}; expected a number")
    try:
        number = Decimal(str(raw).strip().replace("_", "").lstrip("$"))
    except InvalidOperation:
        number = None
    if number is None or not number.is_finite() or number < 0:
        raise BadInput(f"{where}: {name} = {raw!r}; expected a number ≥ 0")
    if name in ("max_cost_usd", "max_cost"):
        number *= 1_000_000
    if key == "max_wall_seconds":
        return key, float(number)
    if number != number.to_integral_value() or number > _MAX_COUNT:
        raise BadInput(f"{where}: {name} = {raw!r}; expected a whole number"
                       + (" of micro-dollars" if key == "max_cost_micros" else ""))
    return key, int(number)


def _shown(name: str, value: Any) -> str:
    """``name=value`` as ``--set`` takes it (spend in dollars)."""
    if name == "max_cost_micros":
        return "max_cost_usd=" + format((Decimal(value) / 1_000_000).normalize(), "f")
    return f"{name}={str(value).lower() if isinstance(value, bool) else value}"


def from_options(sets: list[str], detectors: list[str], base: str = "own") -> list[Candidate]:
    """Candidates from ``--set [LABEL:]KEY=VALUE`` (a label makes its own candidate) and ``--detector
    NAME[:LIMIT[:WINDOW]]`` (``all``: the three seed detectors). Unlabelled limits go with every detector; one
    detector and unlabelled limits are one candidate."""
    if base not in ("own", "none"):
        raise BadInput(f"--base {base!r}: choose own (each run keeps the limits the candidate does not set) or none")
    shared: dict[str, Any] = {}
    labelled: dict[str, dict[str, Any]] = {}
    for pair in sets:
        match = _LABEL.match(pair)
        label, text = (match.group(1), match.group(2)) if match else (None, pair)
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise BadInput(f"--set {pair!r}: expected KEY=VALUE or LABEL:KEY=VALUE, e.g. max_steps=16")
        key, converted = setting(name.strip(), value.strip(), f"--set {pair!r}")
        (shared if label is None else labelled.setdefault(label, {}))[key] = converted
    named = []
    for text in detectors:
        for one in (DETECTORS if text == "all" else [text]):
            kind, *rest = one.split(":")
            values = dict([setting("loop_detector", kind, f"--detector {text!r}")])
            for name, raw in zip(("loop_limit", "loop_window"), rest):
                values[name] = setting(name, raw, f"--detector {text!r}")[1]
            if len(rest) > 2:
                raise BadInput(f"--detector {text!r}: expected NAME[:LIMIT[:WINDOW]]")
            named.append((one, values))
    candidates = [Candidate(name, {None: {**shared, **values}}, base, "--detector") for name, values in named]
    if shared and not named:
        candidates.append(Candidate("candidate", {None: shared}, base))
    candidates += [Candidate(label, {None: {**shared, **values}}, base) for label, values in labelled.items()]
    return candidates


def from_file(path: Path, base: str = "own") -> Candidate:
    """A limits file as ``budgets --emit`` writes it (toml, yaml or python): a table of limits per group key
    (``*`` for every group), or limits at the top for every group."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput(f"--limits {path}: cannot read it ({exc})") from exc
    where = f"--limits {path}"
    data = _parse(text, path.suffix.lower(), where)
    groups = data.get("budgets", data.get("BUDGETS")) if isinstance(data, dict) else None
    top = {k: v for k, v in data.items() if k not in ("budgets", "BUDGETS")} if isinstance(data, dict) else {}
    if groups is None and not top:
        raise BadInput(f"{where}: no limits found; expected [budgets.\"GROUP\"] tables (as budgets --emit writes) "
                       "or limits such as max_steps = 16")
    limits: dict[str | None, dict[str, Any]] = {}
    if top:
        limits[None] = dict(setting(k, v, f"{where}: {k}") for k, v in top.items())
    for key, values in (groups or {}).items():
        if not isinstance(values, dict):
            raise BadInput(f"{where}: budgets.{key} should be a table of limits, not {values!r}")
        group = None if key == "*" else str(key)
        limits.setdefault(group, {}).update(setting(k, v, f"{where}: {key}.{k}") for k, v in values.items())
    said = _GROUPED.search(text.split("\n", 1)[0])  # budgets --emit names its grouping in its first line
    return Candidate(path.name, limits, base, str(path), said.group(1) if said else None)


def _parse(text: str, suffix: str, where: str) -> Any:
    try:
        if suffix == ".toml":
            return tomllib.loads(text)
        if suffix in (".yaml", ".yml"):
            import yaml  # only for a YAML limits file

            try:
                return yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ValueError(str(exc)) from exc
        if suffix == ".py":
            # the assignments' values as Python literals: the file is read, never run
            return {target.id: ast.literal_eval(node.value) for node in ast.parse(text).body
                    if isinstance(node, ast.Assign) for target in node.targets if isinstance(target, ast.Name)}
    except (tomllib.TOMLDecodeError, SyntaxError, ValueError) as exc:
        raise BadInput(f"{where}: not valid {suffix.lstrip('.')} ({exc})") from exc
    raise BadInput(f"{where}: expected a .toml, .yaml or .py file as budgets --emit writes")


def from_budgets(report: dict[str, Any], every: bool = False) -> Candidate:
    """The ceilings ``budgets`` recommends, per group: replayed so each recommendation carries its consequence.

    A recommendation that would have stopped a succeeded run is not one to apply (``budgets`` says so, and
    ``--emit`` writes it commented out): it is not part of the candidate either, unless ``every``.
    """
    from reconcile.analyses.ceilings import CEILINGS

    limits = {}
    for group in report["groups"]:
        values = {}
        for metric, value in group["recommended"].items():
            if value is None or (isinstance(value, float) and math.isnan(value)):
                continue
            if not every and not group.get("recommendation", {}).get(metric, {}).get("apply", True):
                continue
            values[CEILINGS[metric]] = float(value) if metric == "wall_seconds" else int(value)
        if values:
            limits[group["key"]] = values
    return Candidate("recommended", limits, "own", "reconcile budgets")
