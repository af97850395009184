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
− ``cache_creation_input_tokens``. A count the response leaves out is unknown (NULL; the prompt's
split is then unknown and so is the call's cost), except what is never billed (``zero_buckets``):
cache writes of OpenAI and Gemini models, and 1-hour cache writes. A negative count, or cache
counts that exceed the prompt holding them, rejects the event that carries them. Timestamps
without an offset are read as UTC. The provider is not recorded: a response names a bare model
(``claude-3-5-sonnet-20241022``), and the LiteLLM route (``anthropic/…``) is OpenHands' configuration,
not the stream's.

Status: the run's own outcome is its last ``agent_state_changed`` (``extras.agent_state``, kept as
``harness_status``; the state's ``reason`` is the stop reason): ``finished`` and
``awaiting_user_input`` (the agent ended its turn with a message — how a GUI or interactive session
ends) are ``succeeded``; ``error`` is ``failed`` — ``budget_exceeded`` when its reason says the
iteration or budget ceiling was reached; ``stopped`` (by the user) is ``cancelled``; ``rejected``
(the agent declined the task) is ``failed``; ``loading``, ``init``, ``running``, ``paused``,
``rate_limited`` and the confirmation states are ``running``. A stream with no state change (the
replays of headless runs) is inferred: ``succeeded`` with a ``finish`` action, else ``running``
(``status_inferred``).
"""

from __future__ import annotations

from typing import ClassVar


from reconcile.formats.base import TranscriptFormat
from reconcile.ingest.billing import NO_CACHE_WRITES_WHY


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
        "call_ids": "tool_call_id and cause",
        "run_status": "the last agent_state_changed (finished, awaiting_user_input, error, stopped, …); inferred from "
                      "the finish action where the stream has none",
        "ledger": "llm_metrics.accumulated_cost (its cost only), when the stream records it",
    }
    # run_status is read (agent_state_changed) and inferred only for streams without one: runs.status_inferred says which
    examples: ClassVar[dict[str, str]] = {
        "usage": "openhands/basic.json", "timestamps": "openhands/basic.json",
        "tool_status": "openhands/basic_gui_mode.json", "result_size": "openhands/basic_gui_mode.json",
        "context_size": "openhands/basic.json", "thread": "openhands/basic_gui_mode.json",
        "call_ids": "openhands/basic_gui_mode.json", "run_status": "openhands/basic_gui_mode.json",
        "ledger": "(no real file in the shared corpora records it: the replay streams carry no llm_metrics; newer "
                  "streams put llm_metrics.accumulated_cost on their events)",
    }
    zero_buckets: ClassVar[dict[str, str]] = {
        "cache_write_5m": NO_CACHE_WRITES_WHY,
        "cache_write_1h": "OpenHands marks the prompt parts it caches cache_control {'type': 'ephemeral'} with no ttl "
                          "(openhands/core/message.py): Anthropic's 5-minute cache; it never writes the 1-hour one",
    }

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, list):
            event = first[0] if first else None
            return isinstance(event, dict) and "source" in event and ("action" in event or "observation" in event)
        head = text.lstrip()[:2000]
        return not values and head.startswith("[") and '"source"' in head and ('"action"' in head or '"observation"' in head)


FORMAT = OpenHands()
