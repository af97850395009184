"""mini-swe-agent trajectories (``<instance>/<instance>.traj.json``, formats mini-swe-agent-1 and -1.1).

One file is one run, named by the file (mini-swe-agent names it after the instance). Records:
one per message.

- **1** (mini 1.x): the action is the ```` ```bash ```` block of the assistant's text (a call
  to ``bash`` with ``{"command": …}``); the ``user`` message after it is its observation.
- **1.1** (mini 2.x): OpenAI-style ``tool_calls``; ``tool`` messages answer them by
  ``tool_call_id``; a final ``exit`` message.

The agent submits by running ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT …``: that step is its
final answer, not a tool call (as SWE-agent's ``submit``), and the output it prints is the
submission (``info.submission``), not an observation.

**Usage.** Each ``assistant`` message is a model step whose usage is the provider's raw response
(``extra.response.usage``, OpenAI-style as LiteLLM and OpenRouter give it): ``prompt_tokens`` is
the whole input (``context_tokens``), of which ``prompt_tokens_details.cached_tokens`` (DeepSeek:
``prompt_cache_hit_tokens``) were cache reads and a reported write count
(``cache_creation_input_tokens`` from LiteLLM's Anthropic usage, ``prompt_tokens_details.
cache_write_tokens`` from OpenRouter) cache writes; the rest is uncached (DeepSeek:
``prompt_cache_miss_tokens``). A usage without ``prompt_tokens_details`` (nor DeepSeek's keys)
does not split its input: uncached input, cache reads and cache writes are then NULL (unknown).
Cache writes not reported are 0 only where the provider bills none — see ``zero_buckets``: the
real runs here are Gemini 3 Pro through OpenRouter (implicit caching) and DeepSeek (disk cache),
both with ``set_cache_control`` unset. ``completion_tokens`` is the output, of which
``completion_tokens_details.reasoning_tokens`` were reasoning. Its own cost, as the harness
recorded it, is ``extra.cost`` (1.1) or ``extra.response.usage.cost`` (OpenRouter, 1).

**Tool outcomes.** Every observation starts ``<returncode>N</returncode>`` (1.1 also has
``extra.returncode``): 0 is ``ok``, anything else ``error``. A command killed at its timeout is a
``timeout`` (1: the timeout template "The last command … timed out and has been killed"; 1.1:
``TimeoutExpired`` in ``extra.exception_info``).

**Limits.** ``info.config.agent.step_limit`` (model calls) and ``cost_limit`` (dollars) are the
run's budgets, 0 meaning none; ``info.config.environment.timeout`` is each command's timeout.

**Ledger and status.** ``info.model_stats.instance_cost`` is the harness's own total (the ledger's
cost); its ``api_calls`` counts failed attempts too, so it is not a step count and is not
compared with the steps. ``info.exit_status`` (1.1: also the ``exit`` message's
``extra.exit_status``) — Submitted, LimitsExceeded, Timeout, an exception's name — is the raw
stop reason, mapped by ``docs/status.md`` — except ``Timeout``, litellm's exception for a model call that
timed out in transport (mini-swe-agent keeps no wall clock), which is ``failed``, not ``timed_out``;
``info.submission`` is the final output. A trajectory
with no exit status says nothing of how it ended: its status is inferred
(``runs.status_inferred``) — ``succeeded`` when the agent's last message submits, else
``running``.
"""

from __future__ import annotations

import re
from typing import ClassVar

from reconcile.formats.base import TranscriptFormat


# What the agent echoes to submit (mini-swe-agent 1.x and 2.x; MINI_SWE_AGENT_FINAL_OUTPUT in early 1.x).
SUBMIT_PATTERN = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT|MINI_SWE_AGENT_FINAL_OUTPUT"
# Real runs in tests/fixtures/realdata/mini-swe-agent: 1.1 (DeepSeek, tool calls) and 1 (Gemini via OpenRouter).
_V2 = "v2_mini-swe-agent-1.1/deepseek_reasoner_dev__sqlfluff__sqlfluff-2419.traj.json"
_V1 = "v1_mini-swe-agent-1/20251118_gemini-3-pro-74pct__django__django-16255.traj.json"
_OPENS_WITH_INFO = re.compile(r'\s*\{\s*"info"\s*:\s*\{\s*"(model_stats|exit_status|submission|mini_version|config)"')


class MiniSweAgent(TranscriptFormat):
    name = "mini_swe_agent"
    description = "mini-swe-agent trajectory (.traj.json: {info, messages, trajectory_format})"
    input = "document"
    shape_sql = "json_type(j, '$.messages') = 'ARRAY' and json_type(j, '$.info') = 'OBJECT'"
    expected = 'a mini-swe-agent trajectory ({"info": {...}, "messages": [...], "trajectory_format": …})'
    facts: ClassVar[dict[str, str]] = {
        "usage": "extra.response.usage of each assistant message", "timestamps": "the response's created time",
        "tool_status": "<returncode>N</returncode> of each observation (1.1: extra.returncode)",
        "result_size": "each observation's text", "call_ids": "tool_call_id (1.1); one call per message (1)",
        "limits": "info.config.agent.step_limit and cost_limit", "ledger": "info.model_stats.instance_cost",
        "context_size": "prompt_tokens of each response", "thread": "one conversation per trajectory",
        "run_status": "info.exit_status (1.1: the exit message); without it inferred (submitted: succeeded, else running)",
    }
    examples: ClassVar[dict[str, str]] = {
        **{fact: f"mini-swe-agent/{_V2}" for fact in ("usage", "timestamps", "tool_status", "result_size", "call_ids",
                                                       "limits", "ledger", "context_size", "thread", "run_status")},
        "call_ids": f"mini-swe-agent/{_V1}",
    }
    zero_buckets: ClassVar[dict[str, str]] = {
        "cache_write_5m": "where the usage reports its cache reads but no write count and the run set no "
                          "config.model.set_cache_control: mini-swe-agent then marks no cache breakpoints, so only the "
                          "provider's automatic prompt cache ran (OpenAI, DeepSeek, Gemini's implicit cache), which bills "
                          "reads and no writes",
        "cache_write_1h": "wherever cache writes are known: mini-swe-agent's cache breakpoints are {\"type\": \"ephemeral\"} "
                          "with no ttl (5-minute), so it never writes a 1-hour cache",
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
