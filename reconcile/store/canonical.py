"""Canonical JSON, hashes and idempotency keys — one definition for writer and store.

Canonical JSON: object keys sorted by code point, no insignificant whitespace, strings escaped
as JSON requires (non-ASCII kept as UTF-8), numbers formatted stably: an integral number below
2**53 in magnitude is written as an integer (``3.0`` → ``3``, ``-0.0`` → ``0``), other floats as
their shortest round-trip form (``0.1``, ``1e+20``), and integers outside the 64-bit range as
floats. The Python encoder here (used by ``reconcile.journal``) and the SQL canonicalizer (used
by ingest, set-based over ``json_tree``) produce the same bytes; a property test holds them to it.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

import duckdb

from reconcile.sql_text import insert_rows

_EXACT_INT_LIMIT = 2**53
_SEP = "\x1f"  # unit separator: cannot occur in a run id, tool name or hex hash by accident


def canonical_json(value: Any) -> str:
    """The canonical JSON text of a JSON-compatible Python value."""
    return "".join(_encode(value))


def _encode(value: Any):
    if value is None:
        yield "null"
    elif value is True:
        yield "true"
    elif value is False:
        yield "false"
    elif isinstance(value, int):
        yield str(value) if -(2**63) <= value < 2**64 else _float_text(float(value))
    elif isinstance(value, float):
        yield _float_text(value)
    elif isinstance(value, str):
        yield _string_text(value)
    elif isinstance(value, dict):
        yield "{"
        for position, key in enumerate(sorted(value)):
            if not isinstance(key, str):
                raise TypeError(f"JSON object keys must be strings, got {key!r}")
            yield ("," if position else "") + _string_text(key) + ":"
            yield from _encode(value[key])
        yield "}"
    elif isinstance(value, (list, tuple)):
        yield "["
        for position, item in enumerate(value):
            if position:
                yield ","
            yield from _encode(item)
        yield "]"
    else:
        raise TypeError(f"not JSON-compatible: {type(value).__name__} {value!r}")


# Control characters without a short escape are written \u00XX with upper-case hex, as DuckDB's
# to_json writes them (json.dumps writes lower case).
_CONTROL_ESCAPES = {chr(c): f"\\u{c:04X}" for c in range(0x20)} | {
    "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r", '"': '\\"', "\\": "\\\\"}
_ESCAPE_TABLE = str.maketrans(_CONTROL_ESCAPES)


def _string_text(text: str) -> str:
    return '"' + text.translate(_ESCAPE_TABLE) + '"'


def _float_text(number: float) -> str:
    if math.isnan(number) or math.isinf(number):
        raise ValueError(f"JSON has no representation for {number!r}")
    if number.is_integer() and abs(number) < _EXACT_INT_LIMIT:
        return str(int(number))
    return repr(number)


def sha256_text(text: str) -> str:
    """Hex SHA-256 of a string's UTF-8 bytes (DuckDB's ``sha256(varchar)`` gives the same)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def args_hash(args: Any) -> str:
    """Hash of a tool call's arguments, independent of key order and whitespace."""
    return sha256_text(canonical_json(args))


def idempotency_key(run_id: str, step_idx: int, tool_name: str, args_digest: str) -> str:
    """The key a harness passes to side-effecting tools: run + asking step + tool + args hash."""
    return sha256_text(_SEP.join([run_id, str(step_idx), tool_name, args_digest]))


def idempotency_key_sql(run_id: str, step_idx: str, tool_name: str, digest: str) -> str:
    """SQL expression computing ``idempotency_key`` from column expressions."""
    return f"sha256(concat_ws(chr(31), {run_id}, cast({step_idx} as varchar), {tool_name}, {digest}))"


_SCALAR_SQL = """case t.type
    when 'NULL' then 'null'
    when 'BOOLEAN' then t.atom::varchar
    when 'VARCHAR' then to_json(t.atom ->> '$')
    when 'BIGINT' then t.atom::bigint::varchar
    when 'UBIGINT' then t.atom::ubigint::varchar
    when 'DOUBLE' then case
        when t.atom::double = trunc(t.atom::double) and abs(t.atom::double) < 9007199254740992
        then t.atom::double::bigint::varchar
        else t.atom::double::varchar end
    end"""

_CONTAINER_SQL = """case p.type
    when 'OBJECT' then '{' || coalesce(string_agg(to_json(ch.key) || ':' || ch.canon, ',' order by ch.key), '') || '}'
    else '[' || coalesce(string_agg(ch.canon, ',' order by ch.id), '') || ']'
    end"""


MAX_DEPTH = 512  # JSON nested deeper than this is refused (serde_json stops at 128, Python near 1,000)
_BULK_BYTES = 16 * 1024  # json_tree's cost grows with the square of a value's size: larger ones go one by one
_BULK_CONTAINERS = 64  # and so does the bottom-up assembly with nesting depth
_LARGE_SLICE_BYTES = 64 * 1024 * 1024  # large values canonicalised in Python per fetch


def canonicalize_column(con: duckdb.DuckDBPyConnection, source: str, id_col: str, json_col: str, target: str) -> None:
    """Create temp table ``target(doc, canonical, problem)`` with the canonical text of each JSON value.

    Set-based for the values tool arguments almost always are (small, shallow): every value is
    exploded with ``json_tree``; flat ones are assembled in one aggregation, nested ones bottom-up,
    one statement per nesting level. A large or bracket-heavy value — where ``json_tree``'s cost
    would grow with the square of its size, or the assembly with its depth — is encoded by
    ``canonical_json`` instead, one value at a time, so memory stays bounded by the largest value.
    A value nested deeper than ``MAX_DEPTH`` gets no canonical text and a ``problem`` saying so.
    ``source`` must have a unique ``id_col``.
    """
    con.execute(
        f"""create or replace temp table _cj_values as
        select s.{id_col} as doc, s.{json_col} as value,
               strlen(s.{json_col}::varchar) > {_BULK_BYTES}
               -- more containers than that needs twice as many characters: short values skip the count
               or (strlen(s.{json_col}::varchar) > 2 * {_BULK_CONTAINERS}
                   and strlen(s.{json_col}::varchar)  -- brackets counted by removing them (a regex is 50x slower)
                       - strlen(replace(replace(s.{json_col}::varchar, '[', ''), '{{', '')) > {_BULK_CONTAINERS}) as large
        from {source} s where s.{json_col} is not null"""
    )
    con.execute("create or replace temp table _cj_large as select doc from _cj_values where large")
    # The small values in a table of their own: a filter beside json_tree is applied after it (DuckDB plans
    # the lateral join first), and json_tree over one large value costs the square of its size in memory.
    con.execute("create or replace temp table _cj_small as select doc, value from _cj_values where not large")
    con.execute("drop table _cj_values")
    con.execute(
        f"""create or replace temp table _cj_nodes as
        select s.doc, t.id, t.parent, t.key, t.type,
               {_SCALAR_SQL} as canon
        from _cj_small s, json_tree(s.value) t"""
    )
    con.execute("drop table _cj_small")
    con.execute(
        """create or replace temp table _cj_shape as
        select doc, count(*) filter (where type in ('OBJECT', 'ARRAY')) as containers
        from _cj_nodes group by doc"""
    )
    # Flat: the root is the only container (or there is none) — one aggregation finishes it.
    con.execute(
        f"""create or replace temp table {target} as
        select p.doc, {_CONTAINER_SQL} as canonical
        from _cj_nodes p
        join _cj_shape sh on sh.doc = p.doc and sh.containers = 1
        left join _cj_nodes ch on ch.doc = p.doc and ch.parent = p.id
        where p.parent is null
        group by p.doc, p.id, p.type
        union all
        select n.doc, n.canon from _cj_nodes n
        join _cj_shape sh on sh.doc = n.doc and sh.containers = 0
        where n.parent is null"""
    )
    con.execute(
        """create or replace temp table _cj_deep as
        select n.* from _cj_nodes n join _cj_shape sh on sh.doc = n.doc and sh.containers > 1"""
    )
    while True:
        (changed,) = con.execute(
            f"""update _cj_deep set canon = x.c from (
                select p.doc, p.id, {_CONTAINER_SQL} as c
                from _cj_deep p left join _cj_deep ch on ch.doc = p.doc and ch.parent = p.id
                where p.canon is null
                group by p.doc, p.id, p.type
                having count(ch.id) = count(ch.canon)) x
            where _cj_deep.doc = x.doc and _cj_deep.id = x.id"""
        ).fetchall()[0]
        if not changed:
            break
    con.execute(f"insert into {target} select doc, canon from _cj_deep where parent is null")
    con.execute(f"alter table {target} add column problem varchar")
    _canonicalize_large(con, source, id_col, json_col, target)
    con.execute("drop table _cj_nodes; drop table _cj_shape; drop table _cj_deep; drop table _cj_large")


def _canonicalize_large(con: duckdb.DuckDBPyConnection, source: str, id_col: str, json_col: str, target: str) -> None:
    """The rare large or deep values: one at a time, through ``canonical_json`` (the same bytes as the SQL)."""
    # Rare by construction (only values the bulk path would spend quadratic time on). Fetched in slices of
    # at most _LARGE_SLICE_BYTES (or one value, if larger), so memory stays bounded; written back a slice at a time.
    sizes = con.execute(f"""select l.doc, strlen(s.{json_col}::varchar) from _cj_large l
                            join {source} s on s.{id_col} = l.doc order by l.doc""").fetchall()
    slices, current, held = [], [], 0
    for doc, size in sizes:
        if current and held + size > _LARGE_SLICE_BYTES:
            slices.append(current)
            current, held = [], 0
        current.append(doc)
        held += size
    slices += [current] if current else []
    for docs in slices:
        values = con.execute(f"select {id_col}, {json_col}::varchar from {source} where {id_col} in (select unnest(?))",
                             [docs]).fetchall()
        rows = []
        for doc, text in values:
            depth = json_depth(text)
            if depth > MAX_DEPTH:
                rows.append([doc, None, f"nested {depth} levels deep; reconcile reads JSON nested at most {MAX_DEPTH} levels"])
            else:
                rows.append([doc, canonical_json(json.loads(text)), None])
        insert_rows(con, target, rows)


def json_depth(text: str) -> int:
    """How deeply a JSON text nests arrays and objects (brackets inside strings do not count), without recursion.

    Escaped backslashes, then escaped quotes, are removed first (JSON has backslashes only inside
    strings), so a string is plain ``"[^"]*"``: a pattern with an alternation inside the repeat
    (``(?:[^"\\]|\\.)*``) makes Python's regex engine keep state per character — 2.5 GB for a
    20 MB string.
    """
    depth = deepest = 0
    for match in _STRUCTURE.finditer(text.replace("\\\\", "").replace('\\"', "")):
        token = match.group()
        if token in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in "]}":
            depth -= 1
    return deepest


_STRUCTURE = re.compile(r'"[^"]*"|[\[\]{}]')
