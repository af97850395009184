"""Typed-field validation generated as SQL: one CASE expression names a line's first problem.

A field spec says where a field lives, what JSON type it must have, and on which lines it is
required. The generated expression yields NULL for a good line, else a reason such as
``field "usage.output" is "zzz"; expected a non-negative integer`` — which goes to ``rejects``.
"""

from __future__ import annotations

from dataclasses import dataclass

_TYPE_TESTS = {
    "int": ("json_type({j}, '{p}') in ('BIGINT', 'UBIGINT')", "an integer"),
    "count": ("json_type({j}, '{p}') in ('BIGINT', 'UBIGINT') and try_cast({j} ->> '{p}' as hugeint) >= 0",
              "a non-negative integer"),
    "number": ("json_type({j}, '{p}') in ('BIGINT', 'UBIGINT', 'DOUBLE') and try_cast({j} ->> '{p}' as double) >= 0",
               "a non-negative number"),
    "str": ("json_type({j}, '{p}') = 'VARCHAR'", "a string"),
    "bool": ("json_type({j}, '{p}') = 'BOOLEAN'", "true or false"),
    "ts": ("json_type({j}, '{p}') = 'VARCHAR' and try_cast({j} ->> '{p}' as timestamptz) is not null",
           "an RFC 3339 timestamp such as 2026-11-28T01:02:03.123Z"),
    "object": ("json_type({j}, '{p}') = 'OBJECT'", "an object"),
    "array": ("json_type({j}, '{p}') = 'ARRAY'", "an array"),
    "any": ("true", "any JSON value"),
}


@dataclass(frozen=True)
class Field:
    path: str  # dotted, e.g. "usage.output"
    kind: str  # a key of _TYPE_TESTS
    required_when: str | None = None  # SQL condition (over {j}) under which the field must be present
    one_of: tuple[str, ...] = ()  # allowed string values


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def reason_sql(fields: list[Field], j: str = "j") -> str:
    """A CASE expression over JSON column ``j`` giving the first failing field's reason, or NULL."""
    branches = []
    for field in fields:
        path = "$." + field.path
        present = f"coalesce(json_type({j}, '{path}'), 'NULL') <> 'NULL'"
        test, expected = _TYPE_TESTS[field.kind]
        test = test.format(j=j, p=path)
        shown = f"left(json_extract({j}, '{path}')::varchar, 80)"
        if field.required_when:
            condition = field.required_when.format(j=j)
            branches.append(
                f"when ({condition}) and not {present} then 'missing field \"{field.path}\"' "
                f"|| ' on a ' || coalesce({j} ->> 'type', '?') || ' line'"
            )
        branches.append(
            f"when {present} and not ({test}) then 'field \"{field.path}\" is ' || {shown} "
            f"|| '; expected {expected}'"
        )
        if field.one_of:
            allowed = ", ".join(_sql_literal(v) for v in field.one_of)
            branches.append(
                f"when {present} and ({j} ->> '{path}') not in ({allowed}) then 'field \"{field.path}\" is ' "
                f"|| {shown} || '; expected one of {', '.join(field.one_of)}'"
            )
    return "case " + "\n ".join(branches) + " end"
