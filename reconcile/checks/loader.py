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
from pathlib import Path

from reconcile.errors import BadInput
from reconcile.store.facts import parse_needs
from reconcile.resources import queries_dir

HEADER_KEYS = ("name", "invariant", "severity", "remedy")
OPTIONAL_KEYS = ("needs", "judges")
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


def parse_check(path: Path, builtin: bool = False) -> Check:
    """Read one check file, validating its header strictly."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
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
        if key not in HEADER_KEYS + OPTIONAL_KEYS:
            raise CheckDefinitionError(f"{path}:{number}: unknown header key {key!r}; a check header has "
                                       f"{', '.join(HEADER_KEYS)} and optionally {', '.join(OPTIONAL_KEYS)}")
        if key in header:
            raise CheckDefinitionError(f"{path}:{number}: {key!r} given twice")
        header[key] = value
    for key in HEADER_KEYS:
        if not header.get(key):
            raise CheckDefinitionError(f"{path}:{body_start or 1}: the header has no {key!r}; add a line "
                                       f"'-- {key}: …' to the comment block at the top")
    if header["severity"] not in SEVERITIES:
        line = next(i for i, l in enumerate(lines, 1) if re.match(r"^--\s*severity\s*:", l.strip(), re.I))
        raise CheckDefinitionError(f"{path}:{line}: severity {header['severity']!r} is not one of "
                                   f"{', '.join(SEVERITIES)}")
    if header["name"] != path.stem:
        raise CheckDefinitionError(f"{path}:1: the check is named {header['name']!r} but the file is "
                                   f"{path.name}; name the file {header['name']}.sql")
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
                 judges)


def load_checks(extra_dirs: list[Path] | None = None) -> list[Check]:
    """The built-in checks, then every ``*.sql`` in ``extra_dirs``, sorted by name."""
    checks: dict[str, Check] = {}
    sources = [(queries_dir(), True)] + [(Path(d), False) for d in extra_dirs or []]
    for folder, builtin in sources:
        if not folder.is_dir():
            raise BadInput(f"--checks-dir {folder}: no such folder")
        for path in sorted(folder.glob("*.sql")):
            check = parse_check(path, builtin)
            if check.name in checks:
                raise CheckDefinitionError(f"{path}:1: a check named {check.name!r} already exists in "
                                           f"{checks[check.name].path}; give yours another name")
            checks[check.name] = check
    return sorted(checks.values(), key=lambda c: c.name)
