"""Typed-field validation generated as SQL: one CASE expression names a line's first problem.

A field spec says where a field lives, what JSON type it must have, and on which lines it is
required. Each line is parsed once: ``json_extract(line, [every path])`` returns the fields as a
list of small JSON values, and the generated expression tests those (re-parsing the whole line
per test was 50x slower). It yields NULL for a good line, else a reason such as
``field "usage.output" is "zzz"; expected a non-negative integer`` — which goes to ``rejects``.
Good lines are then read once more, into a typed struct (``structure_sql``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import duckdb

from .ranges import COUNT, INDEX, MILLISECONDS, SECONDS, TIMESTAMP_SHAPE, WINDOW_TEXT, range_test, window_test

_INTEGER = "{t} in ('BIGINT', 'UBIGINT')"
_NUMBER = "{t} in ('BIGINT', 'UBIGINT', 'DOUBLE')"


def _ranged(json_types: str, cast: str, rng) -> str:
    return f"{json_types} and coalesce({range_test('try_cast({v} ->> ' + chr(39) + '$' + chr(39) + ' as ' + cast + ')', rng)}, false)"


_TYPE_TESTS = {  # kind: (SQL test over the extracted value {v} and its json type {t}, what the message says, struct type)
    "int": (_INTEGER, "an integer", "BIGINT"),
    "count": (_ranged(_INTEGER, "hugeint", COUNT), COUNT.expected(), "BIGINT"),
    "index": (_ranged(_INTEGER, "hugeint", INDEX), INDEX.expected(), "BIGINT"),
    "ms": (_ranged(_NUMBER, "double", MILLISECONDS), MILLISECONDS.expected(), "DOUBLE"),
    "seconds": (_ranged(_NUMBER, "double", SECONDS), SECONDS.expected(), "DOUBLE"),
    "str": ("{t} = 'VARCHAR'", "a string", "VARCHAR"),
    "bool": ("{t} = 'BOOLEAN'", "true or false", "BOOLEAN"),
    "ts": ("{t} = 'VARCHAR' and regexp_full_match({v} ->> '$', '" + TIMESTAMP_SHAPE.replace("{", "{{").replace("}", "}}") + "') and coalesce("
           + window_test("try_cast({v} ->> '$' as timestamptz)") + ", false)",
           "an RFC 3339 timestamp such as 2026-11-28T01:02:03.123Z " + WINDOW_TEXT, "VARCHAR"),
    "object": ("{t} = 'OBJECT'", "an object", "JSON"),
    "array": ("{t} = 'ARRAY'", "an array", "JSON"),
    "any": ("true", "any JSON value", "JSON"),
}


@dataclass(frozen=True)
class Field:
    path: str  # dotted, e.g. "usage.output"
    kind: str  # a key of _TYPE_TESTS
    required_when: str | None = None  # SQL over {type} and {kind} (the line's type and step kind)
    one_of: tuple[str, ...] = ()  # allowed string values
    items: tuple[tuple[str, str], ...] = ()  # for arrays of objects: (key, kind), each item tested and read into a struct


def _sql_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def paths_sql(fields: list[Field]) -> str:
    """The list of JSON paths to extract, in field order."""
    return "[" + ", ".join(_sql_literal("$." + f.path) for f in fields) + "]"


def reason_sql(fields: list[Field], extracted: str = "f", types: str = "t") -> str:
    """A CASE expression giving the first failing field's reason.

    ``extracted`` is the list of extracted values, ``types`` the list of their ``json_type``s
    (computed once per line: it is the most used test).
    """
    position = {f.path: i + 1 for i, f in enumerate(fields)}
    line_type = f"({extracted}[{position['type']}] ->> '$')" if "type" in position else "null"  # a format may have no line types
    step_kind = f"({extracted}[{position['kind']}] ->> '$')" if "kind" in position else "null"
    branches = []
    for field in fields:
        value = f"{extracted}[{position[field.path]}]"
        json_type = f"{types}[{position[field.path]}]"
        present = f"coalesce({json_type}, 'NULL') <> 'NULL'"
        test, expected, _ = _TYPE_TESTS[field.kind]
        shown = f"left({value}::varchar, 80)"
        if field.required_when:
            condition = field.required_when.format(type=line_type, kind=step_kind)
            where = (f"' on a ' || coalesce({line_type}, '?') || ' line'" if "type" in position else "''")
            branches.append(f"when ({condition}) and not {present} then 'missing field \"{field.path}\"' || {where}")
        branches.append(f"when {present} and not ({test.format(v=value, t=json_type)}) then 'field \"{field.path}\" is ' "
                        f"|| {shown} || '; expected {expected}'")
        if field.items:
            branches.append(_items_branch(field, value, json_type))
        if field.one_of:
            allowed = ", ".join(_sql_literal(v) for v in field.one_of)
            branches.append(f"when {present} and ({value} ->> '$') not in ({allowed}) then 'field \"{field.path}\" "
                            f"is ' || {shown} || '; expected one of {', '.join(field.one_of)}'")
    return "case " + "\n ".join(branches) + " end"


def _items_branch(field: Field, value: str, json_type: str) -> str:
    """``when`` an item of an array of objects is not an object, or one of its keys fails its kind: the first such."""
    tests = []
    for key, kind in field.items:
        item_value, item_type = f"(x -> {_sql_literal(key)})", f"json_type(x -> {_sql_literal(key)})"
        test, expected, _ = _TYPE_TESTS[kind]
        tests.append(f"when coalesce({item_type}, 'NULL') <> 'NULL' and not ({test.format(v=item_value, t=item_type)}) "
                     f"then 'field \"{field.path}[' || i || '].{key}\" is ' || left({item_value}::varchar, 80) "
                     f"|| '; expected {expected}'")
    reasons = (f"list_filter(list_transform(({value})::json[], lambda x, i: case when json_type(x) <> 'OBJECT' then "
               f"'field \"{field.path}[' || i || ']\" is ' || left(x::varchar, 80) || '; expected an object' "
               f"{' '.join(tests)} end), lambda r: r is not null)")
    return f"when {json_type} = 'ARRAY' and len({reasons}) > 0 then {reasons}[1]"


def structure_sql(fields: list[Field]) -> str:
    """A ``json_transform`` structure reading every field, typed, in one parse."""
    structure: dict = {}
    for field in fields:
        *parents, leaf = field.path.split(".")
        node = structure
        for parent in parents:
            if not isinstance(node.get(parent), dict):  # an "object" field with declared children: a struct
                node[parent] = {}
            node = node[parent]
        node.setdefault(leaf, [{key: _TYPE_TESTS[kind][2] for key, kind in field.items}] if field.items
                        else _TYPE_TESTS[field.kind][2])
    return _sql_literal(json.dumps(structure))


_LINE_CHECKS = """
case
    when blank then null
    when read_error is not null then read_error
    when not json_valid(line) then
        case when line_no = last_line and not newline_at_end
             then 'truncated last line: no newline and not valid JSON (the writer stopped mid-line)'
             else 'not valid JSON' end
    when json_type(line) <> 'OBJECT' then 'expected a JSON object, got ' || lower(json_type(line))
    {extra}
    else {fields}
end"""


def check_lines(con: duckdb.DuckDBPyConnection, fields: list[Field], extra_when: str = "") -> int:
    """Create ``_checked(file_no, line_no, line, blank, reason)`` from ``_lines``; return the line count.

    ``extra_when`` adds ``when … then …`` branches over ``f`` (extracted values, in field order)
    before the field tests — e.g. a format version check.
    """
    lines = con.execute("select count(*) from _lines").fetchall()[0][0]
    checks = _LINE_CHECKS.format(extra=extra_when, fields=reason_sql(fields, "f", "t"))
    con.execute(
        f"""create or replace temp table _checked as
        select file_no, line_no, line, blank, ({checks}) as reason
        from (select *, list_transform(f, lambda v: json_type(v)) as t
              from (select l.file_no, l.line_no, l.line, l.read_error, fl.newline_at_end,
                           max(l.line_no) over (partition by l.file_no) as last_line,
                           case when line is null then true when length(line) > 64 then false
                                else trim(line, chr(32) || chr(9) || chr(13)) = '' end as blank,
                           case when json_valid(line) and json_type(line) = 'OBJECT' then json_extract(line, {paths_sql(fields)}) end as f
                    from _lines l join _files fl using (file_no)))"""
    )
    return lines
