"""DuckDB's SQL, as the checks and views are written, rendered for Spark SQL.

Checks are written once, in DuckDB's dialect. For Spark a statement is rendered in three steps:
settings become literals (``getvariable('stall_window')`` → its value), the shared macros are
expanded (``canonical_status(x)`` → its CASE), and sqlglot transpiles the result in strict mode
(an unsupported construct is an error, never a silent approximation). Before generating, a few
constructs sqlglot would translate *wrongly* are rewritten to what means the same in Spark:

- ``format('{} of {}', a, b)`` would become printf-style ``format_string`` with ``{}`` left in:
  it becomes ``concat('', a, ' of ', b)`` with each argument cast to a string;
- ``list(x order by x)`` / ``list(distinct x order by x)`` would lose the order: it becomes
  ``array_sort(collect_list(x))`` / ``array_sort(collect_set(x))``; ordering by anything else is
  refused (``lint`` names the portable spelling);
- ``to_milliseconds(n)`` (an interval) becomes ``make_dt_interval(0, 0, 0, n / 1000)``;
- ``regexp_full_match(s, p)`` becomes ``s rlike '^(?:p)$'``;
- a list index (DuckDB counts from 1) becomes ``element_at``; ``quantile_cont`` (exact) becomes
  ``percentile`` (exact), not an approximate percentile; ``timezone(zone, ts)`` becomes
  ``from_utc_timestamp``; ``hugeint`` becomes ``decimal(38, 0)``.

``lint`` lists the DuckDB constructs a shipped check must not use because no rewrite keeps their
meaning; ``tests/test_portability.py`` runs it over every shipped check.
"""

from __future__ import annotations

import functools
import re

import sqlglot
from sqlglot import exp
from sqlglot.errors import ErrorLevel, SqlglotError

from reconcile.errors import ReconcileError
from reconcile.store.status import MACROS


class NotPortable(ReconcileError):
    """A statement that cannot be rendered for Spark with its meaning kept."""


def render(sql: str, variables: dict[str, str] | None = None) -> str:
    """``sql`` (DuckDB) as Spark SQL, with ``variables`` (name → SQL literal) in place of getvariable."""
    values = {} if variables is None else variables
    try:
        trees = sqlglot.parse(sql, read="duckdb")
        out = []
        for tree in trees:
            if tree is None:
                continue
            tree = tree.transform(lambda node: _variable(node, values))
            tree = _until_stable(_until_stable(tree, _expand_macros), _rewrite)
            out.append(tree.sql(dialect="spark", unsupported_level=ErrorLevel.RAISE))
    except SqlglotError as exc:
        raise NotPortable(f"cannot render for Spark: {exc}") from exc
    return ";\n".join(out)


def _variable(node: exp.Expression, variables: dict[str, str]) -> exp.Expression:
    """``getvariable('name')`` as the value set for it (a DuckDB literal, parsed as one)."""
    if not (isinstance(node, exp.Anonymous) and node.name.lower() == "getvariable"):
        return node
    argument = node.expressions[0] if len(node.expressions) == 1 else None
    if not (isinstance(argument, exp.Literal) and argument.is_string):
        raise NotPortable("getvariable() with an argument that is not a variable's name")
    if argument.this.lower() not in variables:
        raise NotPortable(f"getvariable('{argument.this}') has no value to render for Spark")
    return exp.Paren(this=sqlglot.parse_one(variables[argument.this.lower()], read="duckdb"))


def _until_stable(tree: exp.Expression, rule) -> exp.Expression:
    """Apply ``rule`` until nothing changes: sqlglot does not look inside a node a rule has just replaced."""
    for _ in range(20):
        changed = tree.transform(rule)
        if changed == tree:
            return changed
        tree = changed
    raise NotPortable("rendering for Spark did not settle")


@functools.cache
def _macro(name: str) -> tuple[tuple[str, ...], exp.Expression]:
    parameters, body = MACROS[name]
    return parameters, sqlglot.parse_one(body, read="duckdb")


def _expand_macros(node: exp.Expression) -> exp.Expression:
    """A call of a store macro (``canonical_status(x)``) as its body, each parameter replaced by its argument."""
    if not (isinstance(node, exp.Anonymous) and node.name.lower() in MACROS):
        return node
    parameters, body = _macro(node.name.lower())
    if len(node.expressions) != len(parameters):
        raise NotPortable(f"{node.name}() takes {len(parameters)} argument(s), given {len(node.expressions)}")
    arguments = dict(zip(parameters, node.expressions))
    return body.copy().transform(lambda n: arguments[n.name].copy() if isinstance(n, exp.Column) and not n.table
                                 and n.name in arguments else n)


# DuckDB's date_diff counts the unit's boundaries crossed (the difference of the truncated times); Spark's
# DATEDIFF counts whole units elapsed: 0.9 ms to 1.1 ms is 1 ms in DuckDB, 0 in Spark. The epoch counts,
# each truncated, give DuckDB's answer in both.
_EPOCH_COUNT = {"MICROSECOND": "unix_micros", "MILLISECOND": "unix_millis", "SECOND": "unix_seconds"}


def _null_guarded(call: exp.Expression, arguments: list[exp.Expression]) -> exp.Expression:
    """``call``, or NULL when any of ``arguments`` is: Spark's format_string writes 'null' for a NULL argument
    where DuckDB's printf gives NULL (so '$' || … stays NULL, and coalesce(…, 'unknown') says unknown)."""
    if not arguments:
        return call
    condition = exp.or_(*(exp.Is(this=a.copy(), expression=exp.Null()) for a in arguments))
    return exp.Case(ifs=[exp.If(this=condition, true=exp.Null())], default=call)


def _rewrite(node: exp.Expression) -> exp.Expression:
    if isinstance(node, exp.DataType) and node.this in (exp.DataType.Type.INT128, exp.DataType.Type.UINT128):
        return exp.DataType.build("decimal(38, 0)", dialect="spark")  # Spark has no 128-bit integer
    if isinstance(node, exp.DateDiff) and node.args.get("date_part_boundary") and node.unit is not None \
            and node.unit.name.upper() in _EPOCH_COUNT:
        count = _EPOCH_COUNT[node.unit.name.upper()]
        return exp.Paren(this=exp.Sub(this=exp.func(count, node.this.copy()),
                                      expression=exp.func(count, node.expression.copy())))
    if isinstance(node, exp.Anonymous):
        name = node.name.lower()
        if name == "printf" and node.expressions:
            template, *values = node.expressions
            return _null_guarded(exp.func("format_string", template.copy(), *(v.copy() for v in values)), values)
        if name == "to_milliseconds":
            return exp.func("make_dt_interval", exp.Literal.number(0), exp.Literal.number(0), exp.Literal.number(0),
                            exp.Div(this=node.expressions[0].copy(), expression=exp.Literal.number(1000)))
        if name == "timezone" and len(node.expressions) == 2:  # DuckDB: an instant's wall time in a zone
            return exp.func("from_utc_timestamp", node.expressions[1].copy(), node.expressions[0].copy())
    if isinstance(node, exp.RegexpFullMatch):
        return _full_match(node.this, node.expression)
    if isinstance(node, exp.Format):
        return _format(node)
    if isinstance(node, exp.Bracket) and len(node.expressions) == 1:  # DuckDB lists count from 1, Spark's from 0
        index = node.expressions[0]
        if index.is_int:  # sqlglot already moved a literal index to 0-based, an expression it left as written
            if index.to_py() < 0:
                raise NotPortable("a negative list index (from the end): write it as list[len(list) - n + 1]")
            index = exp.Literal.number(index.to_py() + 1)
        return exp.func("element_at", node.this.copy(), index.copy())
    if isinstance(node, exp.WithinGroup) and isinstance(node.this, exp.PercentileCont):
        order = node.expression.expressions
        if len(order) != 1 or order[0].args.get("desc"):
            raise NotPortable("percentile_cont(q) within group (order by x desc): write quantile_cont(x, q)")
        return exp.func("percentile", order[0].this.copy(), node.this.this.copy())
    if isinstance(node, exp.PercentileCont) and node.expression is not None:
        # DuckDB's quantile_cont is exact (linear between the nearest ranks), as Spark's percentile is; sqlglot
        # would write percentile_cont, which Spark reads only with WITHIN GROUP, or an approximate percentile
        return exp.func("percentile", node.this.copy(), node.expression.copy())
    if isinstance(node, exp.Filter) and isinstance(node.this, exp.ArrayAgg):  # the filter goes inside the sort
        return _ordered_list(node.this, node.expression)
    if isinstance(node, exp.ArrayAgg):
        return _ordered_list(node)
    return node


def _full_match(value: exp.Expression, pattern: exp.Expression) -> exp.Expression:
    if not isinstance(pattern, exp.Literal) or not pattern.is_string:
        raise NotPortable("regexp_full_match with a pattern that is not a literal")
    return exp.RegexpLike(this=value.copy(), expression=exp.Literal.string(f"^(?:{pattern.this})$"))


_PLACEHOLDER = re.compile(r"\{(:\.(\d+)f|:g|:,)?\}")


def _format(node: exp.Expression) -> exp.Expression:
    """``format(template, …)`` as a ``concat`` of its pieces; NULL when an argument is NULL, as in DuckDB."""
    template, values = node.this, list(node.expressions)
    if isinstance(template, exp.Concat) and all(isinstance(e, exp.Literal) and e.is_string for e in template.expressions):
        template = exp.Literal.string("".join(e.this for e in template.expressions))  # 'a ' 'b': one literal
    if not isinstance(template, exp.Literal) or not template.is_string:
        raise NotPortable("format() with a template that is not a literal")
    text, parts, used = template.this, [], 0
    position = 0
    for match in _PLACEHOLDER.finditer(text):
        if match.start() > position:
            parts.append(exp.Literal.string(text[position:match.start()]))
        if used >= len(values):
            raise NotPortable(f"format({text!r}) has more placeholders than arguments")
        value = values[used].copy()
        used += 1
        if match.group(2) is not None:  # {:.4f}
            parts.append(_null_guarded(exp.func("format_string", exp.Literal.string(f"%.{match.group(2)}f"),
                                                exp.cast(value, "double")), [value]))
        elif match.group(1) == ":,":  # a whole number with thousands separators
            parts.append(_null_guarded(exp.func("format_number", value, exp.Literal.number(0)), [value]))
        elif match.group(1) == ":g":  # a plain number without a trailing .0
            parts.append(exp.func("regexp_replace", exp.cast(value, "string"), exp.Literal.string(r"\.0$"),
                                  exp.Literal.string("")))
        else:
            parts.append(exp.cast(value, "string"))
        position = match.end()
    rest = text[position:]
    if "{" in rest or "{" in _PLACEHOLDER.sub("", text) or used != len(values):
        raise NotPortable(f"format({text!r}) uses placeholders other than {{}}, {{:.Nf}}, {{:g}} and {{:,}}")
    if rest:
        parts.append(exp.Literal.string(rest))
    return exp.func("concat", *parts) if parts else exp.Literal.string("")


def _ordered_list(node: exp.ArrayAgg, where: exp.Expression | None = None) -> exp.Expression:
    inner = node.this
    order = None
    if isinstance(inner, exp.Order):
        order, inner = inner, inner.this
    distinct = isinstance(inner, exp.Distinct)
    value = inner.expressions[0] if distinct else inner
    collect = exp.func("collect_set" if distinct else "collect_list", value.copy())
    if where is not None:
        collect = exp.Filter(this=collect, expression=where.copy())
    if order is None:
        return collect
    keys = order.expressions
    if len(keys) != 1 or keys[0].args.get("desc"):
        raise NotPortable("list(x order by …) with several keys or descending: order by one key, ascending")
    if keys[0].this == value:
        return exp.func("array_sort", collect)
    if distinct:
        raise NotPortable("list(distinct x order by y): order by x itself")
    # sort (key, value) pairs, then keep the values: the order DuckDB's list(x order by key) gives
    pairs = exp.func("collect_list", exp.func("named_struct", exp.Literal.string("k"), keys[0].this.copy(),
                                              exp.Literal.string("v"), value.copy()))
    if where is not None:
        pairs = exp.Filter(this=pairs, expression=where.copy())
    return sqlglot.parse_one("transform(array_sort(p), e -> e.v)", read="spark").transform(
        lambda n: pairs if isinstance(n, exp.Column) and n.name == "p" else n)
