"""Declared ranges: what a recorded number or timestamp may be, for every format.

A value outside its range is a reject naming the field and the value — never a NULL, a 0 or an
overflow. Line formats test their fields as they read them (``validate``); every format's
staged values are tested once more in the landing (``guard_sql``), so a value a document
format's staging carried through (a usage count of 2^63, a duration of 1e308 ms, a timestamp in
year 12026) rejects its record instead of being stored changed.

The bounds are generous on purpose: they catch what cannot be real, not what is merely large.

- counts (tokens, bytes, micro-dollars): integers from 0 to 10^15 — exact in every JSON reader
  (below 2^53), and sums of millions of them still fit a 64-bit integer;
- indexes and small counts stored as 32-bit integers (step index, step limits, ledger steps):
  0 to 2^31 - 1;
- durations: 0 to 10^12 ms (about 31 years) as recorded; a duration derived from two timestamps
  may be negative (clocks disagree) but no larger; limits in seconds: 0 to 10^9;
- timestamps: from 2000-01-01 (inclusive) to 2100-01-01 (exclusive), UTC — configurable as
  ``[ingest] earliest`` / ``latest`` in reconcile.toml, for archives older than that.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import duckdb

from reconcile.ingest.billing import NO_CACHE_WRITES_MACRO

COUNT_MAX = 10**15
INDEX_MAX = 2**31 - 1
MS_MAX = 10**12
SECONDS_MAX = 10**9
EARLIEST = date(2000, 1, 1)
LATEST = date(2100, 1, 1)


@dataclass(frozen=True)
class Range:
    low: int
    high: int
    integral: bool
    shown: str  # how the message states it

    def expected(self) -> str:
        return f"{'an integer' if self.integral else 'a number'} from {self.low} to {self.shown}"


COUNT = Range(0, COUNT_MAX, True, "10^15")
INDEX = Range(0, INDEX_MAX, True, str(INDEX_MAX))
MILLISECONDS = Range(0, MS_MAX, False, "10^12 (ms)")
# A staged duration is often derived from two timestamps, and clocks disagree: a negative one is a
# fact about the transcript (checks may judge it), not a value out of range.
STAGED_MILLISECONDS = Range(-MS_MAX, MS_MAX, False, "10^12 (ms)")
SECONDS = Range(0, SECONDS_MAX, False, "10^9 (seconds)")

# Every numeric column a format may stage, by staged table.
_COUNTS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens", "reasoning_tokens",
           "context_tokens", "harness_cost_micros", "result_tokens", "result_bytes", "tokens_before", "tokens_after")
COLUMNS: dict[str, dict[str, Range]] = {
    "_stage_steps": {"idx": INDEX, "source_line": INDEX, "attempt": INDEX, "ms": STAGED_MILLISECONDS,
                     **{name: COUNT for name in _COUNTS}},
    "_stage_runs": {**{name: INDEX for name in ("source_line", "max_steps", "max_repeats", "result_bound_tokens",
                                                "catalogue_tokens", "ledger_steps", "ledger_tool_results", "max_retries",
                                                "loop_limit", "loop_window")},
                    **{name: COUNT for name in ("max_tokens", "max_prompt_tokens", "max_completion_tokens",
                                                "max_cost_micros", "ledger_input_tokens", "ledger_tokens",
                                                "ledger_output_tokens", "ledger_cost_micros")},
                    "max_wall_seconds": SECONDS, "tool_timeout_seconds": SECONDS},
    "_stage_calls": {"step_idx": INDEX, "call_position": INDEX},
    "_stage_tools": {"schema_tokens": INDEX},
}
TIMESTAMPS = {"_stage_steps": ("started_at",), "_stage_runs": ("started_at", "ended_at")}


def set_window(con: duckdb.DuckDBPyConnection, earliest: date = EARLIEST, latest: date = LATEST) -> None:
    """Make ``[earliest, latest)`` the timestamp window of this connection's loads."""
    if earliest >= latest:
        from reconcile.errors import BadInput

        raise BadInput(f"[ingest] earliest {earliest} is not before latest {latest}: give a window such as "
                       f"earliest = {EARLIEST.isoformat()!r}, latest = {LATEST.isoformat()!r}")
    con.execute("set variable reconcile_earliest = ?::timestamptz", [earliest.isoformat()])
    con.execute("set variable reconcile_latest = ?::timestamptz", [latest.isoformat()])


# RFC 3339 (a date, optionally a time, optionally a zone; an offset's hours at most 23). DuckDB's own
# parser is laxer ("+25:00", "epoch", "infinity"); a value must pass both.
TIMESTAMP_SHAPE = (r"\d{4}-\d{2}-\d{2}([Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?"
                   r"([Zz]|[+-]([01]\d|2[0-3])(:?[0-5]\d)?)?")


def window_test(value: str) -> str:
    """SQL: the timestamptz ``value`` lies in the window (the default one if none was set)."""
    return (f"({value} >= coalesce(getvariable('reconcile_earliest'), TIMESTAMPTZ '{EARLIEST.isoformat()}') "
            f"and {value} < coalesce(getvariable('reconcile_latest'), TIMESTAMPTZ '{LATEST.isoformat()}'))")


def _bound(name: str, default: date) -> str:
    return f"strftime(coalesce(getvariable('{name}'), TIMESTAMPTZ '{default.isoformat()}'), '%Y-%m-%d')"


# Spliced into a quoted SQL message ('...; expected ' ... '): it states the window in force.
WINDOW_TEXT = (f"from ' || {_bound('reconcile_earliest', EARLIEST)} || ' up to ' || {_bound('reconcile_latest', LATEST)} "
               "|| ' UTC ([ingest] earliest and latest in reconcile.toml)")


def range_test(value: str, rng: Range) -> str:
    """SQL: the number ``value`` (any numeric type, or a double that may be NaN or infinite) is in ``rng``."""
    number = f"({value})::double"
    integral = f" and {number} = floor({number})" if rng.integral else ""
    return f"({number} between {rng.low} and {rng.high}{integral})"


def guard_sql(table: str, columns: list[str]) -> str | None:
    """A CASE giving the first out-of-range staged value of a row of ``table`` as a reason, or None if nothing to test."""
    branches = []
    for name in columns:
        rng = COLUMNS.get(table, {}).get(name)
        if rng is not None:
            shown = f"case when isnan(({name})::double) then 'not a number' else ({name})::varchar end"
            branches.append(f"when {name} is not null and not {range_test(name, rng)} then "
                            f"'field \"{name}\" is ' || {shown} || '; expected {rng.expected()}'")
        if name in TIMESTAMPS.get(table, ()):
            branches.append(f"when {name} is not null and not {window_test(name)} then "
                            f"'field \"{name}\" is ' || {name}::varchar || '; expected a timestamp {WINDOW_TEXT}'")
    return "case " + " ".join(branches) + " end" if branches else None


# Staging SQL reads values through these macros, so a file's value reaches the guard as the file
# said it: a missing number stays NULL, anything else keeps its magnitude (or is NaN when it is not
# a number); money in dollars becomes exact micro-dollars (or keeps its magnitude when too large
# for that); a JSON value that should be an array and is not gives no items instead of an error.
STAGING_MACROS = (
    """create or replace temp macro staged_number(text) as
        case when text is null then null else coalesce(try_cast(text as double), 'nan'::double) end""",
    """create or replace temp macro staged_micros(text) as
        case when text is null then null
             else coalesce(round(try_cast(text as decimal(38, 12)) * 1000000)::double, staged_number(text) * 1e6) end""",
    """create or replace temp macro json_list(value) as
        case when json_type(value) = 'ARRAY' then value::json[] else []::json[] end""",
    # a timestamp only when the text has RFC 3339's shape (then DuckDB's parser reads it), else NULL
    f"""create or replace temp macro staged_timestamp(text) as
        case when regexp_full_match(text, '{TIMESTAMP_SHAPE}') then try_cast(text as timestamptz) end""",
    f"create or replace temp macro in_window(ts) as {window_test('ts')}",
    f"create or replace temp macro window_text() as '{WINDOW_TEXT}'",
    NO_CACHE_WRITES_MACRO,  # bills_no_cache_writes(model): see reconcile.ingest.billing
)


def create_staging_macros(con: duckdb.DuckDBPyConnection) -> None:
    for statement in STAGING_MACROS:
        con.execute(statement)
