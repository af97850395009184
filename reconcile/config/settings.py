"""Settings the checks read: their defaults, their types, and how checks see them.

Values come from configuration (``reconcile.config``: ``reconcile.toml``, ``--set``). Before
running checks the runner sets one DuckDB variable per setting (its global value; checks read
``getvariable('KEY')``) and, for the settings that may differ by run — by the run's own record,
its agent or its source format — creates the temp table ``run_settings(run_id, …)``. A variable
is folded to a constant when the query is planned; a regular expression's pattern read per row
is compiled per row (4.3 s against 0.1 s over a million steps), so checks compare a run's pattern
with the global one and use the variable when they are equal.
"""

from __future__ import annotations

import re

import duckdb

from reconcile.engine import Engine
from reconcile.errors import BadInput
from reconcile.formats.journal_spec import DETECTORS, WINDOW
from reconcile.sql_text import string_literal, typed_literal
from reconcile.store.fences import NAMES as FENCE_NAMES

# A tool result that starts the way failures start: a traceback, an "Error:"-style prefix (also
# "ValueError:", "fatal:"), Claude Code's <tool_use_error> or "Exit code N", an HTTP status line,
# or a JSON body whose first key is "error" or whose status is 4xx/5xx. Anchored at the start:
# the word "error" inside source code, a log or a summary is not a failure.
TOOL_ERROR_PATTERN = (r'(?is)^\s*(?:traceback \(most recent call last\)|<tool_use_error>|exit code [1-9]'
                      r'|(?:[a-z_.]*(?:error|exception)|fatal)\s*:|http/\d(?:\.\d)?\s+[45]\d\d\b'
                      r'|\{\s*"error"\s*:|\{.*?"(?:status|status_?code|statusCode)"\s*:\s*"?[45]\d\d\b)')

# A failed model call whose error says the provider or the network failed (seed 003's transport and
# rate-limit classes: HTTP 429, 5xx, Anthropic's 529 "overloaded"), when the step records no error_class.
# Retrying those on the same context is correct; any other failure is treated as an invalid output.
TRANSPORT_ERROR_PATTERN = (r'(?i)\b(?:429|5\d\d)\b|overloaded|rate[ _-]?limit|too many requests|timed? ?out'
                           r'|connection (?:reset|refused|error)|service unavailable|bad gateway')
DETECTOR_CHOICES = ("none", "results_in_a_row", "calls_anywhere", "calls_window")

# key: (default, type, about). None: no default (unknown until configured).
DEFAULTS: dict[str, tuple[str | None, str, str]] = {
    "result_bound_tokens": (None, "count", "largest tool result (tokens) allowed into the context unbounded, when "
                                           "the run does not say; no default: a harness's bound is its own policy"),
    "tool_error_pattern": (TOOL_ERROR_PATTERN, "regex", "a tool result with status ok matching this (RE2) looks "
                                                        "like an error"),
    "loop_detector": (None, "detector", "the loop detector of runs that declare none: results_in_a_row, "
                                        "calls_anywhere, calls_window (docs/replay.md) or none; no default: a "
                                        "harness's detector is its own policy"),
    "loop_limit": (None, "count", "the detector's threshold when the run gives none (default: the detector's own — "
                                  "2 results in a row, 3 anywhere, 3 in the window)"),
    "loop_window": ("6", "count", "how many of the last tool calls calls_window looks at"),
    "fence": ("default", "fence", "the rules a run's fence follows when the journal does not say: default (every "
                                  "ceiling reached at >=), seed000, seed001 or seed003 (the wall clock reached only "
                                  "past the deadline) — which ceiling each checks first, and its stop reasons' words"),
    "fence_grace_seconds": ("1", "number", "how long after its deadline, with nothing journalled, a run may take to "
                                           "stop before its wall clock counts as having fired late"),
    "transport_error_pattern": (TRANSPORT_ERROR_PATTERN, "regex", "a failed model call whose error matches this "
                                                                  "(RE2), with no error_class, failed in transport"),
    "cost_rise_threshold": ("0.20", "share", "cost per model request may rise this much week over week before it is flagged"),
    "usage_tolerance_tokens": ("0", "count", "provider and journal token counts may differ by this many tokens in a bucket"),
    "cost_tolerance_share": ("0.001", "share", "billed and priced dollars may differ by this share of the bill (day × model)"),
    "cost_tolerance_usd": ("0.001", "number", "... or by this many dollars, whichever is larger"),
}
RUN_SCOPED = ("result_bound_tokens", "tool_error_pattern", "loop_detector", "loop_limit", "loop_window", "fence")
# RE2 constructs Java reads differently or refuses (a pattern setting runs in DuckDB and in Spark): the
# construct (not escaped by a backslash before it), what it is, what Java does, the portable spelling
_UNESCAPED = r"(?<!\\)(?:\\\\)*"
_NOT_PORTABLE_REGEX = [
    (re.compile(_UNESCAPED + r"\(\?P[<=>]"), ("a (?P<name>…) named group", "refuse", "(?:…), a group without a name")),
    (re.compile(_UNESCAPED + r"\(\?[a-zA-TV-Z]*U[a-zA-Z]*[:)]"),  # the first U ends the first run: linear
     ("the U flag (ungreedy)", "read as Unicode character classes", "a lazy quantifier such as .*?")),
    (re.compile(_UNESCAPED + r"\\C"), ("\\C (any byte)", "refuse", ". (any character)")),
    (re.compile(r"\[:\^?[a-z]+:\]"), ("a POSIX class such as [[:alpha:]]", "read as a set of letters",
                                   "\\p{Alpha} or a range such as [A-Za-z]")),
]

_SQL_TYPES = {"count": "bigint", "share": "double", "number": "double", "regex": "varchar", "detector": "varchar",
              "fence": "varchar"}
RENAMED = {"stall_window": "loop_window", "stall_repeats": "loop_limit (with loop_detector = \"calls_window\")"}
_MAX_COUNT = 2**62


def validate_setting(key: str, value, where: str) -> str:
    """The setting's value as text, after checking its key and type; errors name ``where``."""
    if key in RENAMED:
        raise BadInput(f"{where}: the setting {key!r} is now {RENAMED[key]}: a run is judged by the loop detector "
                       "it declares, or the one loop_detector names (see docs/configuration.md)")
    if key not in DEFAULTS:
        raise BadInput(f"{where}: no such setting {key!r}. Settings: {', '.join(DEFAULTS)}")
    kind = DEFAULTS[key][1]
    if kind in ("detector", "fence"):
        choices = DETECTOR_CHOICES if kind == "detector" else FENCE_NAMES
        if value not in choices:
            raise BadInput(f"{where}: {key} = {value!r}; expected one of {', '.join(choices)}")
        return value
    text = str(value).strip() if not isinstance(value, bool) else ""
    if kind == "regex":
        if not isinstance(value, str) or not value:
            raise BadInput(f"{where}: {key} = {value!r}; expected a regular expression (RE2) as a string")
        try:
            duckdb.connect().execute("select regexp_matches('', ?)", [value]).fetchall()
        except duckdb.Error as exc:
            raise BadInput(f"{where}: {key} = {value!r} is not a valid RE2 regular expression ({exc})") from exc
        for construct, portable in _NOT_PORTABLE_REGEX:
            if construct.search(value):
                raise BadInput(f"{where}: {key} = {value!r} uses {portable[0]}, which Spark's Java regular expressions "
                               f"{portable[1]}; a pattern must mean the same in DuckDB (RE2) and Spark: write "
                               f"{portable[2]} (docs/scale-out.md lists the common subset)")
        return value
    try:
        number = int(text) if kind == "count" else float(text)
    except ValueError:
        number = None
    if number is None or isinstance(value, bool) or number < 0 or (kind == "count" and number > _MAX_COUNT) \
            or (kind == "share" and number > 1000) or number != number:
        expected = {"count": "a whole number ≥ 0", "share": "a share such as 0.2", "number": "a number ≥ 0"}[kind]
        raise BadInput(f"{where}: {key} = {value!r}; expected {expected}")
    return str(number)


def _literal(value, kind: str) -> str:
    if value is not None and (kind in ("regex", "detector", "fence") or not isinstance(value, (int, float))
                              and kind not in ("count", "share", "number")):
        return string_literal(value)
    return typed_literal(value, _SQL_TYPES[kind])


def variable_statements(config) -> list[str]:
    """``set variable`` for every setting, at its global value (NULL when it has none)."""
    return [f"set variable {key} = {_literal(config.setting(key).value, kind)}" for key, (_, kind, _) in DEFAULTS.items()]


def run_settings_statements(engine: Engine, config) -> list[str]:
    """The statements that create ``run_settings``: each run's value of every run-scoped setting."""
    from reconcile.formats import FORMATS

    rows = []
    for agent, source_format in engine.rows("select distinct agent, source_format from runs order by all"):
        fmt = FORMATS.get(source_format, source_format)
        values = [config.resolve(key, agent, fmt) for key in RUN_SCOPED]
        cells = [_literal(agent, "regex"), _literal(source_format, "regex"),
                 *(_literal(v.value, DEFAULTS[key][1]) for key, v in zip(RUN_SCOPED, values)),
                 _literal(values[0].origin, "regex"), _literal(values[2].origin, "regex")]
        rows.append("(" + ", ".join(cells) + ")")
    names = ", ".join(["agent", "source_format", *RUN_SCOPED, "result_bound_source", "loop_detector_source"])
    empty = ", ".join(["null::varchar", "null::varchar", *(f"null::{_SQL_TYPES[DEFAULTS[k][1]]}" for k in RUN_SCOPED),
                       "null::varchar", "null::varchar"])
    combos = (f"select * from (values {', '.join(rows)}) t({names})" if rows
              else f"select * from (select {empty}) t({names}) limit 0")
    # a run's own record wins: its result bound, the loop detector it declares (limits.max_repeats alone is
    # seed 000's results-in-a-row fence, as the journal format documents it), then configuration
    detector = ("coalesce(r.loop_detector, case when r.max_repeats is not null then 'results_in_a_row' end, "
                "nullif(c.loop_detector, 'none'))")
    seed_limit = " ".join(f"when '{kind}' then {limit}" for kind, limit in DETECTORS.items())
    return [
        f"create or replace temp table _combo_settings as {combos}",
        f"""create or replace temp table run_settings as
        select r.run_id, r.agent, r.source_format,
               coalesce(r.result_bound_tokens, c.result_bound_tokens) as result_bound_tokens,
               case when r.result_bound_tokens is not null then 'the run''s own limits.result_bound_tokens'
                    when c.result_bound_tokens is not null then c.result_bound_source end as result_bound_source,
               c.tool_error_pattern,
               {detector} as loop_detector,
               case when r.loop_detector is not null then 'the run''s own loop_detector'
                    when r.max_repeats is not null then 'the run''s limits.max_repeats (identical results in a row)'
                    when c.loop_detector <> 'none' then c.loop_detector_source end as loop_detector_source,
               coalesce(r.loop_limit, case when {detector} = 'results_in_a_row' then r.max_repeats end,
                        c.loop_limit, case {detector} {seed_limit} end) as loop_limit,
               coalesce(r.loop_window, c.loop_window, {WINDOW}) as loop_window,
               coalesce(r.fence, c.fence) as fence
        from runs r left join _combo_settings c
            on c.agent is not distinct from r.agent and c.source_format = r.source_format""",
        "drop table _combo_settings",
    ]


def set_variables(engine: Engine, config) -> None:
    engine.run_all(variable_statements(config))


def create_run_settings(engine: Engine, config) -> None:
    """``run_settings``: each run's value of every run-scoped setting, and where the bound came from."""
    engine.run_all(run_settings_statements(engine, config))


def loop_firings_sql(detectors: str = "run_settings", into: str = "loop_firings") -> list[str]:
    """The statements that create ``into`` (``loop_firings``): where each run's loop detector fires
    (``loop_firings.sql``), as the table ``detectors`` sets them — ``run_settings`` (each run's own, else the
    configured one) for the checks, a candidate's for ``reconcile replay``. Both names are the project's own."""
    from importlib import resources

    return [f"""create or replace temp table loop_detectors as
        select run_id, loop_detector as detector, loop_limit as lim, loop_window as win
        from {detectors} where loop_detector is not null""",
            f"create or replace temp table {into} as\n"
            + (resources.files("reconcile.config") / "loop_firings.sql").read_text()]


def create_loop_firings(engine: Engine, detectors: str = "run_settings",
                        into: str = "loop_firings") -> None:
    """``loop_firings``: each run with a loop detector, replayed over its transcript (needs ``detectors``)."""
    engine.run_all(loop_firings_sql(detectors, into))
