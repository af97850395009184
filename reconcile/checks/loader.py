"""Loading checks: one ``.sql`` file per invariant, with a strict ``--`` comment header.

    -- name: steps_equal_tool_results
    -- invariant: every run has as many tool results as tool calls its model steps asked for
    -- severity: error
    -- remedy: look for a tool call whose result was never journalled
    -- needs: call_ids

The header is the leading block of ``--`` lines. The first four keys are required; ``needs``
(the facts the check needs to judge a run, see ``reconcile.store.facts``) and ``judges`` (``each run``
when what it finds on a run depends on that run's agent tree alone, so a verdict can be kept until
the tree changes, see ``checks.kept``; else ``the store``, the default) are optional; no other key
is allowed, and ``name`` must match the file name — each mistake is an error naming the file
and line. The body is plain DuckDB SQL over the documented views and tables returning one row per
violation with at least the columns ``run_id``, ``step`` and ``detail`` (and, for a finding that
names no run, optionally ``at``: the time it is about, so ``--since``/``--until`` can place it).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from pathlib import Path

from reconcile.errors import BadInput
from reconcile.store.facts import parse_needs
from reconcile.resources import queries_dir

HEADER_KEYS = ("name", "invariant", "severity", "remedy")
OPTIONAL_KEYS = ("needs", "judges", "cites")  # cites: the design note a rule comes from (a footnote)
JUDGES = ("each run", "the store")  # what one finding depends on: the run's agent tree, or anything in the store
SEVERITIES = ("error", "warn")
# The value is stripped in Python: "\s*(.*?)\s*$" tries the trailing spaces from each character, quadratic in a
# long run of spaces inside the value.
_HEADER_LINE = re.compile(r"^--\s*([A-Za-z_][\w-]*)\s*:(.*)$")


class CheckDefinitionError(BadInput):
    """A check file whose header or body cannot be used."""


@dataclass(frozen=True)
class Check:
    name: str
    invariant: str
    severity: str
    remedy: str
    sql: str
    path: Path
    builtin: bool
    needs: tuple[str, ...] = ()
    judges: str = "the store"  # "each run": a run's findings depend on its agent tree alone, so they can be kept
    cites: str = ""  # where the rule comes from ("seed 003, failure matrix"): a report's footnote, never its prose


def read_header(path: Path, required: tuple[str, ...], optional: tuple[str, ...], what: str = "check",
                error: type[BadInput] | None = None) -> tuple[dict[str, str], list[str], int]:
    """The leading ``--`` block of a SQL file as {key: value}, its lines, and where its body starts.

    Each required key must be there, no key outside ``required`` and ``optional`` may be, none twice;
    each mistake is an error naming the file and line.
    """
    error = error or CheckDefinitionError
    lines = path.read_text(encoding="utf-8").splitlines()
    header: dict[str, str] = {}
    body_start = len(lines)
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped.startswith("--"):
            body_start = number - 1
            break
        match = _HEADER_LINE.match(stripped)
        if not match:
            if stripped.strip("- ") and header:  # a continuation of the previous value
                last = list(header)[-1]
                header[last] += " " + stripped.lstrip("- ").strip()
            continue
        key, value = match.group(1).lower(), match.group(2).strip()
        if key not in required + optional:
            raise error(f"{path}:{number}: unknown header key {key!r}; a {what} header has "
                        f"{', '.join(required)} and optionally {', '.join(optional)}")
        if key in header:
            raise error(f"{path}:{number}: {key!r} given twice")
        header[key] = value
    for key in required:
        if not header.get(key):
            raise error(f"{path}:{body_start or 1}: the header has no {key!r}; add a line "
                        f"'-- {key}: …' to the comment block at the top")
    if header["name"] != path.stem:
        raise error(f"{path}:1: the {what} is named {header['name']!r} but the file is "
                    f"{path.name}; name the file {header['name']}.sql")
    return header, lines, body_start


def parse_check(path: Path, builtin: bool = False) -> Check:
    """Read one check file, validating its header strictly."""
    header, lines, body_start = read_header(path, HEADER_KEYS, OPTIONAL_KEYS)
    if header["severity"] not in SEVERITIES:
        line = next(i for i, l in enumerate(lines, 1) if re.match(r"^--\s*severity\s*:", l.strip(), re.I))
        raise CheckDefinitionError(f"{path}:{line}: severity {header['severity']!r} is not one of "
                                   f"{', '.join(SEVERITIES)}")
    sql = "\n".join(lines[body_start:]).strip().rstrip(";").strip()
    if not sql:
        raise CheckDefinitionError(f"{path}:{body_start + 1}: the check has no SQL after its header")
    needs = parse_needs(header.get("needs", ""), str(path))
    judges = header.get("judges", "the store")
    if judges not in JUDGES:
        line = next(n for n, text in enumerate(lines, 1) if _HEADER_LINE.match(text.strip()) and "judges" in text)
        raise CheckDefinitionError(f"{path}:{line}: judges {judges!r} is not one of {', '.join(JUDGES)} (\"each run\": "
                                   "what the check finds on a run depends only on that run's agent tree)")
    return Check(header["name"], header["invariant"], header["severity"], header["remedy"], sql, path, builtin, needs,
                 judges, header.get("cites", ""))


def load_checks(extra_dirs: list[Path] | None = None) -> list[Check]:
    """The built-in checks, then every ``*.sql`` in ``extra_dirs``, sorted by name."""
    return list(load_sql_files(queries_dir(), extra_dirs, parse_check, "check", CheckDefinitionError).values())


def load_sql_files(builtin: Path, extra_dirs: list[Path] | None, parse, what: str,
                   error: type[BadInput]) -> dict[str, Any]:
    """Every ``*.sql`` of ``builtin``, then of each of ``extra_dirs`` (``--{what}s-dir``), parsed, by name in order;
    a second file of one name is an error naming both."""
    found: dict[str, Any] = {}
    for folder, shipped in [(builtin, True)] + [(Path(d), False) for d in extra_dirs or []]:
        if not folder.is_dir():
            raise BadInput(f"--{what}s-dir {folder}: no such folder")
        for path in sorted(folder.glob("*.sql")):
            item = parse(path, shipped)
            if item.name in found:
                raise error(f"{path}:1: a {what} named {item.name!r} already exists in "
                            f"{found[item.name].path}; give yours another name")
            found[item.name] = item
    return dict(sorted(found.items()))
