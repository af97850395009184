"""mini-swe-agent trajectories (``<instance>/<instance>.traj.json``, formats mini-swe-agent-1 and -1.1).

One file is one run, named by the file (mini-swe-agent names it after the instance). Records:
one per message. Each ``assistant`` message is a model step whose usage is the provider's raw
response (``extra.response.usage``): ``prompt_tokens`` (of which ``prompt_tokens_details.
cached_tokens`` were cache reads), ``completion_tokens`` (of which ``completion_tokens_details.
reasoning_tokens`` were reasoning); no cache writes are reported (0). Its own cost, as the harness
recorded it, is ``extra.cost`` (1.1) or ``extra.response.usage.cost`` (OpenRouter, 1).

- **1** (mini 1.x): the action is the ```` ```bash ```` block of the assistant's text (a call
  to ``bash`` with ``{"command": …}``); the ``user`` message after it is its observation.
- **1.1** (mini 2.x): OpenAI-style ``tool_calls``; ``tool`` messages answer them by
  ``tool_call_id``; a final ``exit`` message.

The agent submits by running ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT …``: that step is its
final answer, not a tool call (as SWE-agent's ``submit``), and the output it prints is the
submission (``info.submission``), not an observation.

``info.model_stats.instance_cost`` is the harness's own total (the ledger's cost); its
``api_calls`` counts failed attempts too, so it is not a step count and is not compared with the
steps. ``info.exit_status`` (Submitted, LimitsExceeded, Timeout, an exception's name) is the raw
stop reason, mapped by ``docs/status.md``; ``info.submission`` is the final output.
"""

from __future__ import annotations

import re
from typing import ClassVar

from .base import TranscriptFormat


# What the agent echoes to submit (mini-swe-agent 1.x and 2.x; MINI_SWE_AGENT_FINAL_OUTPUT in early 1.x).
SUBMIT_PATTERN = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT"
_OPENS_WITH_INFO = re.compile(r'\s*\{\s*"info"\s*:\s*\{\s*"(model_stats|exit_status|submission|mini_version|config)"')


class MiniSweAgent(TranscriptFormat):
    name = "mini_swe_agent"
    description = "mini-swe-agent trajectory (.traj.json: {info, messages, trajectory_format})"
    input = "document"
    shape_sql = "json_type(j, '$.messages') = 'ARRAY' and json_type(j, '$.info') = 'OBJECT'"
    expected = 'a mini-swe-agent trajectory ({"info": {...}, "messages": [...], "trajectory_format": …})'
    facts: ClassVar[dict[str, str]] = {
        "usage": "extra.response.usage of each assistant message", "timestamps": "the response's created time",
        "result_size": "each observation's text", "call_ids": "tool_call_id (1.1); one call per message (1)",
        "ledger": "info.model_stats.instance_cost", "thread": "one conversation per trajectory",
        "run_status": "info.exit_status",
    }

    def sql_values(self) -> dict[str, str]:
        return {"submit_pattern": SUBMIT_PATTERN}

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, dict):
            return str(first.get("trajectory_format", "")).startswith("mini-swe-agent") or (
                isinstance(first.get("messages"), list) and isinstance(first.get("info"), dict)
                and "model_stats" in first["info"] and "exit_status" in first["info"])
        # a long trajectory is cut in the head: it opens with its "info" (exit status, submission, model stats)
        return not values and _OPENS_WITH_INFO.match(text) is not None and (
            '"model_stats"' in text or '"exit_status"' in text or '"mini_version"' in text)


FORMAT = MiniSweAgent()
