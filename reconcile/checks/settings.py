"""Settings the checks read from the ``check_settings`` table, with their defaults.

Checks stay plain SQL: they read ``(select value from check_settings where key = '…')``. The
defaults live in the store (so the files run in any DuckDB client); ``reconcile check --set
KEY=VALUE`` overrides one for a single invocation through a temporary table that shadows it.
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
}


def install_defaults(con: duckdb.DuckDBPyConnection) -> None:
    """Add any default the store does not have yet (a user's own values are kept)."""
    for key, (value, about) in DEFAULTS.items():
        con.execute("insert into check_settings select ?, ?, ? where not exists "
                    "(select 1 from check_settings where key = ?)", [key, value, about, key])


def apply_overrides(con: duckdb.DuckDBPyConnection, overrides: dict[str, str]) -> None:
    """Shadow ``check_settings`` with a temporary copy carrying ``overrides``."""
    unknown = sorted(set(overrides) - set(DEFAULTS))
    if unknown:
        raise BadInput(f"--set {unknown[0]}: no such setting. Settings: {', '.join(DEFAULTS)}")
    con.execute("create or replace temp table check_settings as select * from main.check_settings")
    for key, value in overrides.items():
        con.execute("update temp.check_settings set value = ? where key = ?", [value, key])


def parse_assignments(pairs: list[str]) -> dict[str, str]:
    result = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise BadInput(f"--set {pair!r}: expected KEY=VALUE, e.g. --set result_bound_tokens=4000")
        result[key.strip()] = value
    return result
