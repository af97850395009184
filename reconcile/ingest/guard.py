"""The guard of the typed read: one text scan that flags every line the lenient typed parse may misread.

DuckDB's typed parse (``json_transform``) is one parse and it is lenient: ``"7"`` is read as the
integer 7, ``2.5`` as 2, ``5`` as the string ``'5'``, an object where an integer belongs as NULL,
and a line that is an array as an object holding nothing. Proving each field's JSON type by path
(``json_type`` over every field's path) parses every line a second time and cost twice the typed
parse. The guard proves the same from the text, in one regular-expression scan, because JSON's
grammar makes it possible:

- a key is a string followed by ``:``, and inside a string every ``"`` is escaped, so
  ``"idx"`` then ``:`` occurs in a line's text exactly where an object has the key ``idx``
  (or a longer key ends in ``\\"idx``: a false alarm, never a miss);
- a value's first character says its JSON type: ``"`` a string, ``{`` an object, ``[`` an array,
  ``t``/``f`` a boolean, ``n`` null, ``-`` or a digit a number; an integer has no fraction, no
  exponent, and — to be a 64-bit one — fewer than 19 digits (longer ones are flagged and judged
  exactly);
- the only other spelling of a declared key (letters, digits, ``_``) is with ``\\u`` escapes,
  and a key holding one is flagged too.

So a line is flagged when a declared key, at any depth, is followed by a character its kind does not
admit. A false alarm (the key inside an ``any`` value, say) costs only the exact examination of that
line; a line the guard passes has the JSON type of every declared field its kind admits, wherever the
field sits. What the text cannot say is judged on the typed parse: presence, an array item that is
not an object (its struct holds none of its keys), ranges, windows and allowed values.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reconcile.ingest.validate import Field

_WS = "[ \\t\\r\\n]*"
# What may follow a key's ":" (and its white space: never in these classes, or the white space itself would
# match) where the value is of a type the kind does not admit. "n" starts null, which every kind admits.
_NOT_A_64_BIT_INTEGER = "[^-0-9n \\t\\r\\n]|-?[0-9]+[.eE]|-?[0-9]{19}"
_NOT_A_NUMBER = "[^-0-9n \\t\\r\\n]"
_BAD_START = {
    "int": _NOT_A_64_BIT_INTEGER, "count": _NOT_A_64_BIT_INTEGER, "index": _NOT_A_64_BIT_INTEGER,
    "ms": _NOT_A_NUMBER, "seconds": _NOT_A_NUMBER, "str": '[^"n \\t\\r\\n]', "ts": '[^"n \\t\\r\\n]',
    "bool": "[^tfn \\t\\r\\n]", "object": "[^{n \\t\\r\\n]", "array": "[^\\[n \\t\\r\\n]",
}
# A key spelled with a \u escape: from the escape to the string's closing quote, then ":".
_ESCAPED_KEY = '\\\\u[^"]*"' + _WS + ":"
_NOT_AN_OBJECT = "^" + _WS + "[^ \\t\\r\\n{]"


def typed_path(path: str, root: str = "j") -> str:
    """The typed parse's value at a dotted ``path``: ``j."usage"."output"``."""
    return root + "".join(f'."{part}"' for part in path.split("."))


def _literal(key: str) -> str:
    """``key`` as an RE2 pattern that matches it literally (a key is data, never a pattern)."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else f"\\x{{{ord(ch):x}}}" for ch in key)


def guard_pattern(fields: list[Field]) -> str:
    """An RE2 pattern found in a (parsed) line's text wherever a declared field may have a type its kind refuses."""
    kinds: dict[str, set[str]] = defaultdict(set)
    for field in fields:
        kinds[field.path.split(".")[-1]].add(field.kind)
        for key, kind in field.items:
            kinds[key].add(kind)
    by_start: dict[str, list[str]] = defaultdict(list)
    for key, admitted in sorted(kinds.items()):
        bad = sorted({_BAD_START[kind] for kind in admitted if kind != "any"})
        if bad:  # a key of two kinds is flagged by either's refusals (a false alarm at worst)
            by_start["|".join(bad)].append(_literal(key))
    parts = [f'"(?:{"|".join(keys)})"{_WS}:{_WS}(?:{bad})' for bad, keys in sorted(by_start.items())]
    return "|".join([_NOT_AN_OBJECT, _ESCAPED_KEY, *parts])


def missing_sql(fields: list[Field], root: str = "j") -> str:
    """True where a field required on this line is absent (or null) in the typed parse ``root``."""
    paths = {f.path for f in fields}
    line_type = typed_path("type", root) if "type" in paths else "null"
    kind = typed_path("kind", root) if "kind" in paths else "null"
    tests = [f"(coalesce({f.required_when.format(type=line_type, kind=kind)}, false) and {typed_path(f.path, root)} is null)"
             for f in fields if f.required_when]
    return " or ".join(tests) or "false"


def not_object_items_sql(fields: list[Field], root: str = "j") -> str:
    """True where an item of an array of objects may not be an object: it is null, or holds none of its keys.

    The typed parse reads a number, a string or an array item as a struct of NULLs, the same as ``{}``;
    either is examined exactly (which names a non-object, and passes an object on to staging's rules).
    """
    tests = []
    for field in fields:
        if field.items:
            empty = " and ".join(f'x."{key}" is null' for key, _ in field.items)
            tests.append(f"coalesce(list_bool_or(list_transform({typed_path(field.path, root)}, "
                         f"lambda x: x is null or ({empty}))), false)")
    return " or ".join(tests) or "false"
