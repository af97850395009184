"""Settings the checks read, with their defaults.

Values live in the ``check_settings`` table (defaults added on open; a user may UPDATE them).
Before running checks, ``reconcile check`` copies them — with any ``--set KEY=VALUE`` overrides —
into DuckDB variables, and checks read ``getvariable('KEY')``. A variable is folded to a constant
when the query is planned; a subquery in a regular expression's pattern was compiled per row
(4.3 s against 0.1 s over a million steps). To paste a check into the ``duckdb`` shell, set the
variables first (``docs/checks.md`` lists the lines).
"""

from __future__ import annotations

import duckdb

from ..errors import BadInput

DEFAULTS: dict[str, tuple[str, str]] = {
    "result_bound_tokens": ("2000", "largest tool result (tokens) allowed into the context unbounded, "
                                    "when the run does not say"),
    "tool_error_pattern": (r"(?i)(\b(error|exception|traceback)\b|\"status\"\s*:\s*\"?[45]\d\d\b)",
                           "a tool result with status ok matching this (RE2) looks like an error"),
    "stall_window": ("6", "how many of a run's last tool calls the stall check looks at"),
    "stall_repeats": ("3", "this many identical calls within the window is a stall"),
    "cost_rise_threshold": ("0.20", "cost per model request may rise this much week over week before it is flagged"),
    "usage_tolerance_tokens": ("0", "provider and journal token counts may differ by this many tokens in a bucket"),
    "cost_tolerance_share": ("0.001", "billed and priced dollars may differ by this share of the bill (day × model)"),
    "cost_tolerance_usd": ("0.001", "... or by this many dollars, whichever is larger"),
}


def install_defaults(con: duckdb.DuckDBPyConnection) -> None:
    """Add any default the store does not have yet (a user's own values are kept)."""
    for key, (value, about) in DEFAULTS.items():
        con.execute("insert into check_settings select ?, ?, ? where not exists "
                    "(select 1 from check_settings where key = ?)", [key, value, about, key])


def set_variables(con: duckdb.DuckDBPyConnection, overrides: dict[str, str] | None = None) -> None:
    """Set one DuckDB variable per setting: the override, else the stored value, else the default."""
    overrides = overrides or {}
    unknown = sorted(set(overrides) - set(DEFAULTS))
    if unknown:
        raise BadInput(f"--set {unknown[0]}: no such setting. Settings: {', '.join(DEFAULTS)}")
    stored = dict(con.execute("select key, value from check_settings").fetchall())
    for key, (default, _) in DEFAULTS.items():
        con.execute(f"set variable {key} = ?", [overrides.get(key, stored.get(key, default))])


def parse_assignments(pairs: list[str]) -> dict[str, str]:
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BadInput(f"--set {pair!r}: expected KEY=VALUE, e.g. --set result_bound_tokens=4000")
        result[key.strip()] = value
    return result
