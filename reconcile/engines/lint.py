"""Portability lint: DuckDB constructs a shipped check or view must not use, with the portable spelling.

Each rule names a construct that sqlglot would carry to Spark with another meaning (or not at
all) and that ``spark_sql.render`` does not rewrite; a statement that does not render at all is a
finding too. ``tests/test_portability.py`` runs this over everything shipped, so a new check that
would give other answers on Spark fails the fast suite, not a cluster job.
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.tokens import TokenType

from reconcile.engines.spark_sql import NotPortable, render


@dataclass(frozen=True)
class Rule:
    construct: str
    portable: str


def _function(name: str):
    return lambda node: isinstance(node, exp.Anonymous) and node.name.lower() == name


RULES: list[tuple[Rule, object]] = [
    (Rule("QUALIFY", "compute the window column in a subquery and filter it outside (sqlglot's rewrite "
                     "repeats columns)"), lambda n: isinstance(n, exp.Qualify)),
    (Rule("PIVOT / UNPIVOT", "a UNION ALL of one SELECT per column"), lambda n: isinstance(n, exp.Pivot)),
    (Rule("day-of-week numbering (dayofweek, isodow, dow)",
          "date_diff('day', DATE '2024-01-01', d) % 7 (0 = Monday in both engines)"),
     lambda n: isinstance(n, (exp.DayOfWeek, exp.DayOfWeekIso))
     or (isinstance(n, exp.Extract) and n.this.name.lower() in ("dow", "isodow", "dayofweek", "weekday"))),
    (Rule("string_agg / group_concat with ORDER BY", "list(x order by y), then array_to_string(…, sep)"),
     lambda n: isinstance(n, exp.GroupConcat) and isinstance(n.this, exp.Order)),
    (Rule("percentile_disc / quantile_disc / approx_quantile", "quantile_cont(x, q): exact in both engines"),
     lambda n: isinstance(n, (exp.PercentileDisc, exp.ApproxQuantile)) or _function("reservoir_quantile")(n)),
    (Rule("NOT IN (subquery)", "not exists (select 1 from … where key = outer.key): to keep NOT IN's NULL rules "
                               "Spark may plan a nested-loop join (minutes, not seconds, at 10^5 rows)"),
     lambda n: isinstance(n, exp.Not) and isinstance(n.this.unnest(), exp.In)
     and n.this.unnest().args.get("query") is not None),
    (Rule("JSON arrows (-> / ->>)", "keep JSON out of checks: read the field into a typed column when loading"),
     lambda n: isinstance(n, (exp.JSONExtract, exp.JSONExtractScalar))),
]

# Spark functions sqlglot's Spark dialect does not name (it reads them back as unknown): a function
# left unknown after rendering is one sqlglot passed through untranslated (DuckDB's list_*, say),
# unless it is one of these.
_SPARK_NAMES = {"format_number", "make_dt_interval", "now", "timestamp_millis", "timestamp_seconds", "unix_micros",
                "unix_millis", "unix_seconds"}


@dataclass(frozen=True)
class Finding:
    where: str
    construct: str
    portable: str

    def __str__(self) -> str:
        return f"{self.where}: {self.construct} does not carry to Spark; portable: {self.portable}"


def lint(sql: str, where: str) -> list[Finding]:
    """What in ``sql`` (DuckDB) would not mean the same on Spark."""
    try:
        trees = [t for t in sqlglot.parse(sql, read="duckdb") if t is not None]
    except SqlglotError as exc:
        return [Finding(where, "SQL sqlglot cannot parse", f"plain SQL ({str(exc).splitlines()[0]})")]
    found = [Finding(where, rule.construct, rule.portable)
             for tree in trees for node in tree.walk() for rule, matches in RULES if matches(node)]
    if _calls(sql, "len"):  # parsed, len() and length() are one node: look at the words as written
        found.append(Finding(where, "len()", "length() for text, array_length() for a list (len() counts a list's "
                                             "items in DuckDB, a string's characters in Spark)"))
    try:
        rendered = render(sql, _NULL_VARIABLES)
    except NotPortable as exc:
        return [*found, Finding(where, "a construct the Spark rendering refuses", str(exc).removeprefix(
            "cannot render for Spark: "))]
    try:
        spark_trees = [t for t in sqlglot.parse(rendered, read="spark") if t is not None]
    except SqlglotError:
        return [*found, Finding(where, "a construct sqlglot writes as SQL Spark does not parse",
                                "a plainer spelling (see docs/scale-out.md)")]
    for tree in spark_trees:
        for node in tree.walk():
            if isinstance(node, exp.Anonymous) and node.name.lower() not in _SPARK_NAMES:
                found.append(Finding(where, f"{node.name}() (sqlglot passes it to Spark untranslated)",
                                     "a function both engines have, or one sqlglot translates"))
    return list(dict.fromkeys(found))


def _calls(sql: str, name: str) -> bool:
    """Whether ``sql`` calls the function ``name`` (a word of the SQL, not inside a string or comment)."""
    tokens = sqlglot.Dialect.get_or_raise("duckdb").tokenize(sql)
    return any(t.text.lower() == name and t.token_type != TokenType.STRING and following.token_type == TokenType.L_PAREN
               for t, following in zip(tokens, tokens[1:]))


class _AnyVariable(dict):
    def __contains__(self, key) -> bool:
        return True

    def __getitem__(self, key) -> str:
        return "null"


_NULL_VARIABLES = _AnyVariable()  # a check's settings render as literals; their values do not matter here
