"""Recognising a file's format from its content, not its name."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from . import claude_code, native
from .lines import read_head
from .result import FileCounts

Sniffer = Callable[[list[object]], bool]
Loader = Callable[[duckdb.DuckDBPyConnection, Path, str], FileCounts]


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    sniff: Sniffer  # gets the JSON values parsed from the head of the file (first lines, or the document)
    load: Loader  # runs inside the file's transaction
    reads_lines: bool = True  # the file is read into temp table _lines before the transaction


def _looks_native(values: list[object]) -> bool:
    first = values[0] if values else None
    return isinstance(first, dict) and "v" in first and first.get("type") in ("run_start", "step", "run_end")


_CLAUDE_CODE_TYPES = {"user", "assistant", "summary", "system", "progress", "file-history-snapshot", "queue-operation"}


def _looks_claude_code(values: list[object]) -> bool:
    return any(isinstance(v, dict) and v.get("type") in _CLAUDE_CODE_TYPES
               and ("sessionId" in v or v.get("type") in ("summary", "file-history-snapshot")) for v in values)


FORMATS: dict[str, Format] = {
    native.FORMAT: Format(native.FORMAT, "reconcile native journal v1 (JSON Lines of run_start / step / run_end)",
                          _looks_native, native.load_native),
    claude_code.FORMAT: Format(claude_code.FORMAT, "Claude Code session transcript (JSON Lines with sessionId)",
                               _looks_claude_code, claude_code.load_claude_code),
}


def detect(path: Path) -> tuple[Format | None, str]:
    """The format of ``path`` and, when none matches, a short description of what was found."""
    head = read_head(path)
    values = _parse_head(head)
    for fmt in FORMATS.values():
        if values and fmt.sniff(values):
            return fmt, fmt.description
    return None, _describe(head, values)


def _parse_head(head: bytes) -> list[object]:
    text = head.decode("utf-8", errors="replace")
    stripped = text.lstrip()
    values: list[object] = []
    if not stripped:
        return values
    try:  # a whole small JSON document
        return [json.loads(stripped)]
    except json.JSONDecodeError:
        pass
    for line in text.splitlines()[:5]:  # JSON Lines: the first few complete lines
        if line.strip():
            try:
                values.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return values


def _describe(head: bytes, values: list[object]) -> str:
    if not head.strip():
        return "an empty file"
    if b"\x00" in head[:1024]:
        return "binary data"
    if values and isinstance(values[0], dict):
        keys = ", ".join(list(values[0])[:6])
        return f"JSON whose first object has keys {keys}"
    if values and isinstance(values[0], list):
        return "a JSON array"
    first = head.decode("utf-8", errors="replace").strip().splitlines()[0][:60]
    return f"text that is not JSON (starts {first!r})"
