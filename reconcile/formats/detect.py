"""Recognising a file's format from its content, not its name."""

from __future__ import annotations

import json
from pathlib import Path

from ..ingest.lines import read_head
from . import FORMATS
from .base import Format


def detect(path: Path) -> tuple[Format | None, str]:
    """The format of ``path`` and, when none matches, a short description of what was found."""
    head = read_head(path)
    values = _parse_head(head)
    text = head.decode("utf-8", errors="replace")
    for fmt in FORMATS.values():
        if fmt.sniff(values, text):
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
