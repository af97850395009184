"""Write the native journal (format v1) from a Python harness.

    from reconcile.journal import Journal
    with Journal("night.jsonl") as journal:
        run = journal.start_run(agent="triage", model="claude-sonnet-4-5",
                                limits={"max_steps": 12}, tools=[{"name": "read_file"}])
        step = run.model_step(usage={"input_uncached": 900, "output": 120}, ms=840,
                              tool_calls=[("read_file", {"path": "a.py"})])
        run.tool_step(step.calls[0], result="...", ms=12)
        run.end("model_finished", final_output="done")

Every line is written and flushed as it happens, so a crash leaves a valid prefix. Argument
hashes and idempotency keys are derived exactly as the store derives them
(``reconcile.store.canonical``). The format is documented in ``docs/journal-format.md`` and its JSON
Schema ships as ``reconcile/schema/journal-v1.schema.json``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any

from reconcile.store.canonical import args_hash, canonical_json, idempotency_key, sha256_text
from reconcile.formats.journal_spec import DETECTORS, EVENTS, OUTCOMES, TOOL_STATUSES, USAGE_BUCKETS, record_problem

__all__ = ["Journal", "JournalError", "RunJournal", "ToolCall", "ModelStep", "DETECTORS", "EVENTS", "OUTCOMES",
           "TOOL_STATUSES", "USAGE_BUCKETS", "estimate_tokens"]

FORMAT_VERSION = 1
TEXT_PREVIEW_CHARS = 4000
RESULT_PREVIEW_CHARS = 1000


class JournalError(ValueError):
    """A record the loader would reject: refused when it is written, with the loader's reason."""

Clock = Callable[[], datetime]


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def _timestamp(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError("journal timestamps must be timezone-aware (UTC)")
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def estimate_tokens(text: str) -> int:
    """Rough token count (UTF-8 bytes / 4, rounded up) for when the harness has no tokenizer."""
    return -(-len(text.encode("utf-8")) // 4)


@dataclass(frozen=True)
class ToolCall:
    """A tool call a model step asked for, with the hashes the store will derive too."""

    call_id: str
    name: str
    args: Any
    args_hash: str
    idempotency_key: str


@dataclass
class ModelStep:
    idx: int
    calls: list[ToolCall] = field(default_factory=list)


class Journal:
    """An append-only JSON Lines journal file; one file may hold many runs."""

    def __init__(self, target: str | Path | IO[str], clock: Clock = _utc_now):
        self._owns = not hasattr(target, "write")
        self._file: IO[str] = open(target, "a", encoding="utf-8") if self._owns else target  # type: ignore[arg-type]
        self.clock = clock

    def write(self, record: Mapping[str, Any]) -> None:
        """Append one record as a line and flush it; a record ingest would reject raises ``JournalError``
        (nothing is written), so a harness hears of a bad field when it writes it."""
        problem = record_problem(json.loads(json.dumps(record)))  # judged as the loader will see it
        if problem:
            raise JournalError(f"{record.get('type', 'record')} of run {record.get('run_id')!r}: {problem}")
        self._file.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()

    def start_run(self, run_id: str | None = None, *, agent: str, tools: Iterable[Mapping[str, Any]] = (),
                  limits: Mapping[str, Any] | None = None, loop_detector: str | Mapping[str, Any] | None = None,
                  ts: datetime | None = None, **fields: Any) -> RunJournal:
        """Write the run_start line. ``loop_detector``: the harness's loop detector, a name of ``DETECTORS``
        or ``{"kind": …, "limit": N, "window": N}``. ``fields``: task_class, model, provider, api_key_id,
        workspace_id, project_id, catalogue_tokens, predicted_stop_reason, labels, parent_run_id (the run
        that started this sub-agent), fallback_model."""
        run = RunJournal(self, run_id or uuid.uuid4().hex, {t["name"]: t for t in tools})
        record = {"v": FORMAT_VERSION, "type": "run_start", "run_id": run.run_id,
                  "ts": _timestamp(ts or self.clock()), "agent": agent, "limits": dict(limits or {}),
                  "tools": [_tool_entry(t) for t in run.tools.values()]}
        if loop_detector is not None:
            record["loop_detector"] = ({"kind": loop_detector} if isinstance(loop_detector, str)
                                       else dict(loop_detector))
        record.update({k: v for k, v in fields.items() if v is not None})
        self.write(record)
        return run

    def close(self) -> None:
        if self._owns:
            self._file.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _tool_entry(tool: Mapping[str, Any]) -> dict[str, Any]:
    entry = {"name": tool["name"], "side_effect": bool(tool.get("side_effect", False)),
             "allow_repeat": bool(tool.get("allow_repeat", False))}
    if tool.get("schema_tokens") is not None:
        entry["schema_tokens"] = tool["schema_tokens"]
    return entry


class RunJournal:
    """The lines of one run. Step indexes are assigned in order, starting at 0."""

    def __init__(self, journal: Journal, run_id: str, tools: dict[str, Mapping[str, Any]]):
        self.journal = journal
        self.run_id = run_id
        self.tools = tools
        self.next_idx = 0

    def _step(self, kind: str, ms: float | None, ts: datetime | None, extra: dict[str, Any],
              idx: int | None = None) -> int:
        new = idx is None
        idx = self.next_idx if new else idx
        record = {"v": FORMAT_VERSION, "type": "step", "run_id": self.run_id, "idx": idx, "kind": kind,
                  "ts": _timestamp(ts or self.journal.clock())}
        if ms is not None:  # a started record has no duration yet
            record["ms"] = int(round(ms))
        record.update({k: v for k, v in extra.items() if v is not None})
        self.journal.write(record)
        if new:  # a refused record takes no index
            self.next_idx += 1
        return idx

    def model_step(self, *, usage: Mapping[str, int], ms: float | None = None, model: str | None = None,
                   tool_calls: Iterable[tuple[str, Any]] = (), text: str | None = None, final: bool = False,
                   input_messages: Any = None, ts: datetime | None = None, **fields: Any) -> ModelStep:
        """Write a model step. ``usage`` uses the disjoint buckets of ``USAGE_BUCKETS``;
        ``fields``: provider, request_id, response_id, finish_reason, context_tokens, input_hash,
        attempt, error, error_class (transport, rate_limit or invalid_output), cost_micros, agent_label."""
        unknown = set(usage) - set(USAGE_BUCKETS)
        if unknown:
            raise ValueError(f"unknown usage buckets {sorted(unknown)}; use {USAGE_BUCKETS}")
        idx = self.next_idx
        calls = []
        for position, (name, args) in enumerate(tool_calls):
            digest = args_hash(args)
            calls.append(ToolCall(f"{self.run_id}-{idx}-{position}", name, args, digest,
                                  idempotency_key(self.run_id, idx, name, digest)))
        extra: dict[str, Any] = {"model": model, "usage": dict(usage), "final": final}
        if text is not None:
            key = "text" if len(text) <= TEXT_PREVIEW_CHARS else "text_preview"
            extra[key] = text[:TEXT_PREVIEW_CHARS]
            extra["text_sha256"] = sha256_text(text)
        if input_messages is not None and "input_hash" not in fields:
            extra["input_hash"] = sha256_text(canonical_json(input_messages))
        if calls:
            extra["tool_calls"] = [{"call_id": c.call_id, "name": c.name, "args": c.args} for c in calls]
        extra.update(fields)
        self._step("model", ms, ts, extra)
        return ModelStep(idx, calls)

    def tool_started(self, call: ToolCall, *, ts: datetime | None = None, **fields: Any) -> int:
        """Write that a tool call is about to run — keyed, before its side effect — and return its step index.

        The protocol for a call that changes the world: persist this record, call the outside world,
        then record the outcome with ``tool_step(call, started=idx, …)``. If the process dies in
        between, the journal shows the call in flight (status ``started``, no outcome): the work list
        of ``no_stuck_side_effects``, with the idempotency key to look it up by.
        """
        return self._step("tool", None, ts, {**self._call_fields(call), "status": "started", **fields})

    def _call_fields(self, call: ToolCall) -> dict[str, Any]:
        return {"call_id": call.call_id, "tool": call.name, "args_hash": call.args_hash,
                "idempotency_key": call.idempotency_key,
                "side_effect": bool(self.tools.get(call.name, {}).get("side_effect", False))}

    def tool_step(self, call: ToolCall, *, status: str = "ok", result: str | None = None, ms: float | None = None,
                  result_tokens: int | None = None, bounded: bool = False, error: str | None = None,
                  ts: datetime | None = None, started: int | None = None, **fields: Any) -> int:
        """Write the outcome of a tool call; ``started``: the index ``tool_started`` returned, which this completes."""
        if status not in OUTCOMES:
            raise ValueError(f"tool status {status!r} is not an outcome; use one of {OUTCOMES} "
                             "(a call about to run is recorded with tool_started)")
        extra: dict[str, Any] = {**self._call_fields(call), "status": status, "bounded": bounded, "error": error}
        if result is not None:
            extra["result_bytes"] = len(result.encode("utf-8"))
            extra["result_tokens"] = result_tokens if result_tokens is not None else estimate_tokens(result)
            extra["result_hash"] = sha256_text(result)
            extra["result_preview"] = result[:RESULT_PREVIEW_CHARS]
        elif result_tokens is not None:
            extra["result_tokens"] = result_tokens
        extra.update(fields)
        return self._step("tool", ms, ts, extra, idx=started)

    def event(self, event: str, *, ms: float | None = 0, ts: datetime | None = None, **fields: Any) -> int:
        """Write an event step; ``fields``: tokens_before, tokens_after, detail."""
        if event not in EVENTS:
            raise ValueError(f"event {event!r} is not one of {EVENTS}")
        return self._step("event", ms, ts, {"event": event, **fields})

    def end(self, stop_reason: str | None = None, *, final_output: str | None = None,
            ledger: Mapping[str, Any] | None = None, status: str | None = None, ts: datetime | None = None) -> None:
        """Write the run_end line: the raw stop reason, the harness's own status word if it has one
        (``complete``, ``incomplete``, ``budget_exceeded`` …; at least one of the two), and its counters."""
        record = {"v": FORMAT_VERSION, "type": "run_end", "run_id": self.run_id,
                  "ts": _timestamp(ts or self.journal.clock()), "stop_reason": stop_reason,
                  "status": status, "final_output": final_output, "ledger": dict(ledger) if ledger else None}
        self.journal.write({k: v for k, v in record.items() if v is not None})
