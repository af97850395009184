"""OpenHands event streams (a JSON array of events, as the replay files record them).

One file is one run (run id = the file name). Records: one per event.

- An agent *action* carrying ``tool_call_metadata.model_response`` came from a model call: the
  response (by its id — one response may carry several tool calls) is a model step with that
  response's usage, and the action is a tool call (``tool_call_id``, ``function_name``, ``args``).
  The ``finish`` action is the final answer, not a tool call.
- An agent ``message`` action without metadata is a model step without usage.
- An *observation* answering an action (``cause`` = the action's id, same ``tool_call_id``) is
  a tool step; an ``error`` observation has status ``error``.
- User messages and other events (state changes, system events) are skipped (counted).

``llm_metrics.accumulated_cost`` (the harness's running total, when recorded) is the run's
ledger cost. Usage is LiteLLM's: ``prompt_tokens`` includes cache reads and cache writes, so uncached input
is ``prompt_tokens`` − ``cache_read_input_tokens`` (or ``prompt_tokens_details.cached_tokens``)
− ``cache_creation_input_tokens``. Timestamps without an offset are read as UTC. Status is
inferred: ``succeeded`` with a ``finish`` action, ``failed`` when the agent state turned to
error, otherwise ``running``.
"""

from __future__ import annotations

from typing import ClassVar

from .base import TranscriptFormat


class OpenHands(TranscriptFormat):
    name = "openhands"
    description = "OpenHands event stream (a JSON array of actions and observations)"
    input = "document"
    shape_sql = "json_type(j) = 'ARRAY'"
    expected = "an OpenHands event stream (a JSON array of events)"
    facts: ClassVar[dict[str, str]] = {
        "usage": "tool_call_metadata.model_response.usage", "timestamps": "timestamp on every event",
        "tool_status": "error observations", "result_size": "each observation's content",
        "context_size": "prompt_tokens of each response", "thread": "one conversation per stream",
        "call_ids": "tool_call_id and cause", "run_status": "inferred from finish and agent state",
        "ledger": "llm_metrics.accumulated_cost (its cost only), when the stream records it",
    }
    inferred = frozenset({"run_status"})

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, list):
            event = first[0] if first else None
            return isinstance(event, dict) and "source" in event and ("action" in event or "observation" in event)
        head = text.lstrip()[:2000]
        return not values and head.startswith("[") and '"source"' in head and ('"action"' in head or '"observation"' in head)


FORMAT = OpenHands()
