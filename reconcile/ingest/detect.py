"""Recognising a file's format from its content, not its name."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import duckdb

from . import claude_code, langfuse, native, openhands, otel, provider, swe_agent
from .lines import read_head
from .result import FileCounts

Sniffer = Callable[[list[object], str], bool]  # (JSON values parsed from the head, the head as text)
Loader = Callable[[duckdb.DuckDBPyConnection, Path, str], FileCounts]


@dataclass(frozen=True)
class Format:
    name: str
    description: str
    sniff: Sniffer  # sees the JSON values parsed from the file's head (first lines, or the document) and its text
    load: Loader  # runs inside the file's transaction
    reads_lines: bool = True  # the file is read into temp table _lines before the transaction
    load_batch: Callable[[duckdb.DuckDBPyConnection], dict[int, FileCounts]] | None = None  # many files at once


def _looks_native(values: list[object], text: str) -> bool:
    first = values[0] if values else None
    return isinstance(first, dict) and "v" in first and first.get("type") in ("run_start", "step", "run_end")


_CLAUDE_CODE_TYPES = {"user", "assistant", "summary", "system", "progress", "file-history-snapshot", "queue-operation"}


def _looks_claude_code(values: list[object], text: str) -> bool:
    return any(isinstance(v, dict) and v.get("type") in _CLAUDE_CODE_TYPES
               and ("sessionId" in v or v.get("type") in ("summary", "file-history-snapshot")) for v in values)


def _looks_langfuse(values: list[object], text: str) -> bool:
    first = values[0] if values else None
    if isinstance(first, dict):
        return isinstance(first.get("trace"), dict) and isinstance(first.get("observations"), list)
    return not values and text.lstrip().startswith("{") and '"observations"' in text and '"trace"' in text


def _looks_swe_agent(values: list[object], text: str) -> bool:
    first = values[0] if values else None
    if isinstance(first, dict):
        return isinstance(first.get("trajectory"), list) or (
            isinstance(first.get("history"), list) and all(isinstance(h, dict) and "role" in h for h in first["history"][:3]))
    head = text.lstrip()[:2000]
    return not values and head.startswith("{") and ('"trajectory"' in head or '"environment"' in head)


def _looks_openhands(values: list[object], text: str) -> bool:
    first = values[0] if values else None
    if isinstance(first, list):
        event = first[0] if first else None
        return isinstance(event, dict) and "source" in event and ("action" in event or "observation" in event)
    head = text.lstrip()[:2000]
    return not values and head.startswith("[") and '"source"' in head and ('"action"' in head or '"observation"' in head)


def _looks_otel(values: list[object], text: str) -> bool:
    first = values[0] if values else None
    if isinstance(first, dict):
        return isinstance(first.get("resourceSpans"), list)
    return not values and '"resourceSpans"' in text[:2000]


def _provider_sniffer(kind: str) -> Sniffer:
    """A provider export, JSON or CSV, recognised by the fields only that kind has."""
    # Keys, not values: a cost report's token_type *value* can be "uncached_input_tokens".
    json_markers = {
        "openai_usage": (r'"organization\.usage\.completions\.result"', r'"num_model_requests"\s*:'),
        "openai_costs": (r'"organization\.costs\.result"',),
        "anthropic_usage": (r'"uncached_input_tokens"\s*:',),
        "anthropic_costs": (r'"starting_at"\s*:', r'"cost_type"\s*:'),
    }[kind]
    csv_columns = {
        "openai_usage": {"start_time", "input_tokens"}, "openai_costs": {"start_time", "amount_value"},
        "anthropic_usage": {"starting_at", "uncached_input_tokens"}, "anthropic_costs": {"starting_at", "amount"},
    }[kind]

    def sniff(values: list[object], text: str) -> bool:
        head = text.lstrip()
        if head[:1] in ("{", "["):
            if kind == "anthropic_costs":
                return all(re.search(marker, text) for marker in json_markers) and re.search(r'"amount"\s*:', text)
            return any(re.search(marker, text) for marker in json_markers)
        header = {column.strip().strip('"') for column in head.splitlines()[0].split(",")} if head else set()
        return csv_columns <= header and (kind != "anthropic_costs" or "uncached_input_tokens" not in header)

    return sniff


FORMATS: dict[str, Format] = {
    native.FORMAT: Format(native.FORMAT, "reconcile native journal v1 (JSON Lines of run_start / step / run_end)",
                          _looks_native, native.load_native),
    claude_code.FORMAT: Format(claude_code.FORMAT, "Claude Code session transcript (JSON Lines with sessionId)",
                               _looks_claude_code, claude_code.load_claude_code,
                               load_batch=claude_code.load_claude_code_batch),
    langfuse.FORMAT: Format(langfuse.FORMAT, "Langfuse trace export ({trace, observations[]})", _looks_langfuse,
                            langfuse.load_langfuse, reads_lines=False),
    swe_agent.FORMAT: Format(swe_agent.FORMAT, "SWE-agent trajectory (.traj: {trajectory, history, info})",
                             _looks_swe_agent, swe_agent.load_swe_agent, reads_lines=False),
    openhands.FORMAT: Format(openhands.FORMAT, "OpenHands event stream (a JSON array of actions and observations)",
                             _looks_openhands, openhands.load_openhands, reads_lines=False),
    **{kind: Format(kind, f"{kind.replace('_', ' ')} export (JSON pages or CSV)", _provider_sniffer(kind),
                    provider.load_provider_export(kind), reads_lines=False) for kind in provider.KINDS},
    otel.FORMAT: Format(otel.FORMAT, "OpenTelemetry spans as OTLP JSON (resourceSpans; one request or one per line)",
                        _looks_otel, otel.load_otel, reads_lines=False),
}


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
