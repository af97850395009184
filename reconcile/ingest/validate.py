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

from reconcile.ingest.ranges import COUNT, EARLIEST, INDEX, LATEST, MILLISECONDS, SECONDS, TIMESTAMP_SHAPE, WINDOW_TEXT, range_test, window_test
from reconcile.sql_text import string_literal
from reconcile.ingest.guard import guard_pattern, missing_sql, not_object_items_sql, typed_path

def _integer(v: str, t: str) -> str:
    return f"{t} in ('BIGINT', 'UBIGINT')"


def _number(v: str, t: str) -> str:
    return f"{t} in ('BIGINT', 'UBIGINT', 'DOUBLE')"


def _ranged(json_test, cast: str, rng):
    """A number of the JSON types ``json_test`` allows whose value, cast, is within ``rng``."""
    def test(v: str, t: str) -> str:
        value = f"try_cast({v} ->> '$' as {cast})"
        return f"{json_test(v, t)} and coalesce({range_test(value, rng)}, false)"

    return test


def _timestamp(v: str, t: str) -> str:
    return (f"{t} = 'VARCHAR' and regexp_full_match({v} ->> '$', {string_literal(TIMESTAMP_SHAPE)}) and coalesce("
            + window_test(f"try_cast({v} ->> '$' as timestamptz)") + ", false)")


def _json_type(name: str):
    return lambda v, t: f"{t} = '{name}'"


# kind: (SQL test of the extracted value v and its JSON type t, what the message says, struct type)
_TYPE_TESTS = {
    # Integers are parsed as HUGEINT so none overflows to NULL (any JSON integer fits); staging narrows them.
    "int": (_integer, "an integer", "HUGEINT"),
    "count": (_ranged(_integer, "hugeint", COUNT), COUNT.expected(), "HUGEINT"),
    "index": (_ranged(_integer, "hugeint", INDEX), INDEX.expected(), "HUGEINT"),
    "ms": (_ranged(_number, "double", MILLISECONDS), MILLISECONDS.expected(), "DOUBLE"),
    "seconds": (_ranged(_number, "double", SECONDS), SECONDS.expected(), "DOUBLE"),
    "str": (_json_type("VARCHAR"), "a string", "VARCHAR"),
    "bool": (_json_type("BOOLEAN"), "true or false", "BOOLEAN"),
    "ts": (_timestamp, "an RFC 3339 timestamp such as 2026-11-28T01:02:03.123Z " + WINDOW_TEXT, "VARCHAR"),
    "object": (_json_type("OBJECT"), "an object", "JSON"),
    "array": (_json_type("ARRAY"), "an array", "JSON"),
    "any": (lambda v, t: "true", "any JSON value", "JSON"),
}


def expected_text(kind: str) -> str:
    """What a field of ``kind`` must be, as a reject says it (the timestamp window as the default one)."""
    if kind == "ts":
        return f"an RFC 3339 timestamp such as 2026-11-28T01:02:03.123Z from {EARLIEST} up to {LATEST} UTC"
    return _TYPE_TESTS[kind][1]


@dataclass(frozen=True)
class Field:
    path: str  # dotted, e.g. "usage.output"
    kind: str  # a key of _TYPE_TESTS
    required_when: str | None = None  # SQL over {type} and {kind} (the line's type and step kind)
    one_of: tuple[str, ...] = ()  # allowed string values
    items: tuple[tuple[str, str], ...] = ()  # for arrays of objects: (key, kind), each item tested and read into a struct


def paths_sql(fields: list[Field]) -> str:
    """The list of JSON paths to extract, in field order."""
    return "[" + ", ".join(string_literal("$." + f.path) for f in fields) + "]"


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
        branches.append(f"when {present} and not ({test(value, json_type)}) then 'field \"{field.path}\" is ' "
                        f"|| {shown} || '; expected {expected}'")
        if field.items:
            branches.append(_items_branch(field, value, json_type))
        if field.one_of:
            allowed = ", ".join(string_literal(v) for v in field.one_of)
            branches.append(f"when {present} and ({value} ->> '$') not in ({allowed}) then 'field \"{field.path}\" "
                            f"is ' || {shown} || '; expected one of {', '.join(field.one_of)}'")
    return "case " + "\n ".join(branches) + " end"


def _items_branch(field: Field, value: str, json_type: str) -> str:
    """``when`` an item of an array of objects is not an object, or one of its keys fails its kind: the first such."""
    tests = []
    for key, kind in field.items:
        item_value, item_type = f"(x -> {string_literal(key)})", f"json_type(x -> {string_literal(key)})"
        test, expected, _ = _TYPE_TESTS[kind]
        tests.append(f"when coalesce({item_type}, 'NULL') <> 'NULL' and not ({test(item_value, item_type)}) "
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
    return string_literal(json.dumps(structure))


# DuckDB's JSON parser (yyjson) accepts what RFC 8259 does not in exactly two ways (measured on DuckDB 2.0.1:
# comments, single quotes, unquoted keys, leading zeros or "+", hex, raw control characters in strings and
# trailing garbage are all refused by json_valid): a trailing comma before "}" or "]", and NaN, Inf or
# Infinity in any case, "-" allowed, as a number. A line using either is not JSON to any other reader.
_TRAILING_COMMA = r",[ \t\r\n]*([}\]])"
_NOT_A_NUMBER = r"(?i)-?(?:nan|infinity|inf)"


_LENIENT_NUMBER = r"(?i)(?:^|[:,\[])[ \t\r\n]*-?(?:nan|inf)"  # where a NaN or an Inf may stand as a value


def lenient_pattern() -> str:
    """An RE2 pattern found wherever a text may use one of DuckDB's lenient JSON extensions (a cheap scan).

    False alarms (``",]"`` or ``": info"`` inside a string) are cleared by :func:`lenient_reason_sql`.
    """
    return f"{_TRAILING_COMMA}|(?i:{_LENIENT_NUMBER.removeprefix('(?i)')})"


def lenient_suspect_sql(text: str) -> str:
    """True where ``text`` may use one of DuckDB's lenient JSON extensions: a cheap scan, no parse.

    The ``contains`` pre-test keeps the costlier pattern off lines with no "nan" or "inf" at all.
    """
    return (f"case when regexp_matches({text}, {string_literal(_TRAILING_COMMA)}) then true "
            f"when contains(lower({text}), 'nan') or contains(lower({text}), 'inf') "
            f"then regexp_matches({text}, {string_literal(_LENIENT_NUMBER)}) else false end")


def lenient_reason_sql(text: str) -> str:
    """For ``text`` that ``json_valid`` accepts: NULL when it is strict (RFC 8259) JSON, else what is not.

    What lies outside its strings holds a trailing comma or a NaN only where the document has one.
    With the escaped backslashes and quotes taken out, every other ``"`` opens or closes a string, so
    the odd pieces of a split on ``"`` are what lies outside (a split is ~2.5x a regexp_replace of the
    strings). The one-item list binds that text once.
    """
    unescaped = f"replace(replace({text}, '\\\\', ''), '\\\"', '')"
    outside = f"array_to_string(list_filter(string_split({unescaped}, '\"'), lambda piece, i: i % 2 = 1), '\"\"')"
    comma, number = string_literal(_TRAILING_COMMA), string_literal(_NOT_A_NUMBER)
    return (f"list_transform([{outside}], lambda b: case "
            f"when regexp_matches(b, {comma}) then 'a trailing comma before \"' || regexp_extract(b, {comma}, 1) "
            "|| '\" (strict JSON allows none)' "
            f"when regexp_matches(b, {number}) "
            f"then regexp_extract(b, {number}) || ' is not a JSON number (strict JSON has no NaN or Infinity)' end)[1]")


# What a blank line may hold: any mix of Unicode white space (a form feed, a vertical tab, a no-break
# space …), not only JSON's four. A line of nothing else carries no record: it is skipped, not rejected.
BLANK_LINE = "[\\t\\n\\x{0b}\\x{0c}\\r \\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}]*"


_LINE_CHECKS = """
case
    when read_error is not null then read_error
    when not json_valid(line) then
        case when line_no = last_line and not newline_at_end
             then 'truncated last line: no newline and not valid JSON (the writer stopped mid-line)'
             else 'not valid JSON' end
    when lenient is not null then 'not valid JSON: ' || lenient
    when json_type(line) <> 'OBJECT' then 'expected a JSON object, got ' || lower(json_type(line))
    {extra}
    else {fields}
end"""

_RANGES = {"count": COUNT, "index": INDEX, "ms": MILLISECONDS, "seconds": SECONDS}


def _value_suspect_sql(fields: list[Field]) -> str:
    """True when a line may break a value rule: out of range, outside the window, not one of the allowed
    strings, or an array item of the wrong type or range.

    Read from the typed parse ``j`` alone. That is sound for lines the guard passes, the only ones it
    decides: their fields have the JSON types their kinds admit, and integers are parsed as HUGEINT,
    so no JSON integer overflows to NULL.
    """
    tests = []
    for number, field in enumerate(fields):
        value = typed_path(field.path)
        if field.kind in _RANGES:
            tests.append((value, f"not coalesce({range_test(value, _RANGES[field.kind])}, false)"))
        elif field.kind == "ts":
            shape = string_literal(TIMESTAMP_SHAPE)
            tests.append((value, f"not coalesce(regexp_full_match({value}, {shape}) and "
                                 f"{window_test(f'try_cast({value} as timestamptz)')}, false)"))
        if field.one_of:
            tests.append((value, f"{value} not in ({', '.join(string_literal(v) for v in field.one_of)})"))
        if field.items:
            tests += [(value, f"not {_item_ranges_ok(field, key, kind)}") for key, kind in field.items if kind in _RANGES]
    # An absent field is no suspect: each test holds only where its value is present.
    return " or ".join(f"coalesce({value} is not null and {test}, false)" for value, test in tests) if tests else "false"


def _item_ranges_ok(field: Field, key: str, kind: str) -> str:
    values = f"list_transform({typed_path(field.path)}, lambda x: x.\"{key}\")"
    return (f"coalesce(list_bool_and(list_transform(list_filter({values}, lambda x: x is not null), "
            f"lambda x: {range_test('x', _RANGES[kind])})), true)")


def check_lines(con: duckdb.DuckDBPyConnection, fields: list[Field], extra_when: str = "",
                extra_suspect: str | None = None) -> int:
    """Create ``_checked(file_no, line_no, line, blank, reason)`` and ``_parsed(file_no, line_no, j)``.

    Returns the line count. ``_lines`` stays: the lines' text, read by line number where a format
    needs it (``_parsed`` holds only the typed struct, so the text is stored once).

    Each line is parsed once, into the typed struct (``j``), and scanned once by one pattern: the
    guard (``guard.guard_pattern``), which flags every line where a declared field may hold a JSON
    type its kind refuses, and the lenient-JSON scan (a trailing comma, a NaN). Presence, array items
    and value rules are tested on ``j``. Only a line flagged by any of them (or not parsed) is
    examined in detail, by the one CASE that names its first problem — so a line is rejected exactly
    when that CASE gives a reason, whatever the fast path.

    ``extra_when`` adds ``when … then …`` branches over ``f`` (extracted values, in field order)
    before the field tests — e.g. a format version check; ``extra_suspect`` (SQL over ``j``) says
    which lines those branches could reject (without it, every line is examined in detail).
    """
    lines = con.execute("select count(*) from _lines").fetchall()[0][0]
    extra = f"or coalesce({extra_suspect}, true)" if extra_suspect else ("or true" if extra_when else "")
    scan = string_literal(guard_pattern(fields) + "|" + lenient_pattern())
    judged_on_j = f"{missing_sql(fields)} or {not_object_items_sql(fields)} or {_value_suspect_sql(fields)}"
    con.execute(
        f"""create or replace temp table _typed as
        select file_no, line_no, read_error, blank, j,
               case when blank then false when read_error is not null or j is null or flagged then true
                    else coalesce({judged_on_j}, true) {extra} end as suspect,
               -- strict JSON, judged exactly only on the lines the scan flagged
               case when flagged and j is not null and {lenient_suspect_sql('line')}
                    then {lenient_reason_sql('line')} end as lenient
        from (select *, case when j is not null then regexp_matches(line, {scan}) end as flagged
              from (select *, case when blank then null
                                   else try(json_transform(line, {structure_sql(fields)})) end as j
                    from (select *, line is null or regexp_full_match(line, {string_literal(BLANK_LINE)}) as blank
                          from _lines)))"""
    )
    checks = _LINE_CHECKS.format(extra=extra_when, fields=reason_sql(fields, "f", "t"))
    # Few lines are suspects: a table of them (its size known) is the small side of the join with the lines' text.
    con.execute("""create or replace temp table _suspects as
                   select file_no, line_no, read_error, lenient, j is null as unparsed from _typed where suspect""")
    con.execute(
        f"""create or replace temp table _examined as
        with chosen as (select s.*, l.line from _suspects s join _lines l using (file_no, line_no))
        select file_no, line_no, {checks} as reason
        from (select *, list_transform(f, lambda v: json_type(v)) as t
              from (select c.* exclude (lenient, unparsed), fl.newline_at_end,
                           (select max(y.line_no) from _typed y where y.file_no = c.file_no) as last_line,
                           case when json_valid(c.line) and json_type(c.line) = 'OBJECT'
                                then json_extract(c.line, {paths_sql(fields)}) end as f,
                           -- a line the typed parse refused was not judged strictly: judge it here
                           case when c.lenient is not null then c.lenient
                                when c.unparsed and json_valid(c.line) and {lenient_suspect_sql('c.line')}
                                then {lenient_reason_sql('c.line')} end as lenient
                    from chosen c join _files fl using (file_no)))"""
    )
    con.execute(
        """create or replace temp table _checked as
        select x.file_no, x.line_no, r.line, x.blank, r.reason
        from _typed x
        left join (select e.file_no, e.line_no, e.reason, l.line from _examined e join _lines l using (file_no, line_no)
                   where e.reason is not null) r using (file_no, line_no)"""
    )
    con.execute(
        """create or replace temp view _parsed as
        select file_no, line_no, j from _typed x
        where not blank and not exists (select 1 from _examined e
                                        where e.file_no = x.file_no and e.line_no = x.line_no and e.reason is not null)"""
    )
    return lines
