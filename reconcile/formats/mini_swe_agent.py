"""mini-swe-agent trajectories (``<instance>/<instance>.traj.json``, formats mini-swe-agent-1 and -1.1).

One file is one run; records: one per message.

**The run's id.** mini writes no run id (nor a task id or a start time) into a trajectory, so the id is the file's
name without ``.traj.json`` — except where mini gives that name to many runs: the SWE-bench runner names every
trajectory after its instance (``<instance>/<instance>.traj.json``, the same in every batch and every attempt), and
the ``mini`` CLI rewrites its default ``last_mini_run.traj.json`` (``last_*_run`` for mini's other runners) with
every run. Such a name takes ``@`` and the first 8 hex digits of the SHA-256 of the run's opening: where it was
told to write (``info.config.agent.output_path``), its model's configuration (``info.config.model``: a test model's
scripted replies too) and its messages up to and including its first model call (where the provider's response id
and mini's timestamp are) — all of them when it made none. The opening is written once, so re-reading the file, or
reading it again after mini saved it longer (2.x saves after every step), gives the same id; another run rewritten
into the same file has another opening, hence another id, and replaces the file's rows (as any changed file does);
two batches' files of one instance are two runs; a byte-identical copy of a file is the same run, loaded once (the
copy's records say from where). A name chosen for the run (``mini -o``, a renamed file) is kept as it is.

- **1** (mini 1.x): the action is the one ```` ```bash ```` block of the assistant's text (a call to ``bash``
  with ``{"command": …}``; none or several is a format error, and 1.x keeps that reply as an assistant message);
  the ``user`` message after it is its observation.
- **1.1** (mini 2.x; every mode writes 1.1): tool-call mode — OpenAI-style ``tool_calls``, answered by ``tool``
  messages with ``tool_call_id``; text mode — the actions mini parsed from a ```` ```mswea_bash_command ````
  block (``extra.actions``), answered by ``user`` messages (``extra.returncode``); Responses-API mode
  (``litellm_response``) — each assistant turn is the raw response object (``object: "response"``, no role), its
  ``function_call`` items the calls, answered by ``function_call_output`` items. A final ``exit`` message.

**Model calls.** Every billed call is a model step: each assistant message (or response object), and each reply the
harness refused — a format error (2.x) is a ``user`` message carrying the billed response (``extra.response``) and
its cost (``extra.cost``, ``interrupt_type: FormatError``): a model step with that error (``invalid_output``), its
usage and cost, and no call. Three in a row end the run (``RepeatedFormatError``).

The agent submits by running ``echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT …`` (its output's first line is the
sentinel): that command is the final answer, not a tool call (as SWE-agent's ``submit``), and what it printed is the
submission (``info.submission``), not an observation. Only the call that submitted is final: the last model call of
a run that ended ``Submitted`` (a command that merely mentions the sentinel, or prints it after another line, submits
nothing). The commands it asked for beside the submit stay calls: those before it ran (``InteractiveAgent`` writes
their results, ``DefaultAgent`` — the test models' and the SWE-bench runner's — writes none), those after it never
ran (``not_run``). ``InteractiveAgent``'s "action was not executed" placeholder for the submit itself is no result.

**Usage.** The provider's raw response (``extra.response.usage``, OpenAI-style as LiteLLM and OpenRouter give it;
the Responses API's ``usage.input_tokens``/``output_tokens``): ``prompt_tokens`` is the whole input
(``context_tokens``), of which ``prompt_tokens_details.cached_tokens`` (DeepSeek: ``prompt_cache_hit_tokens``) were
cache reads and a reported write count (``cache_creation_input_tokens`` from LiteLLM's Anthropic usage — LiteLLM adds
Claude's cache reads and writes into ``prompt_tokens`` —, ``prompt_tokens_details.cache_write_tokens`` from
OpenRouter; the 1-hour part from ``cache_creation_token_details``) cache writes; the rest is uncached (DeepSeek:
``prompt_cache_miss_tokens``). A usage without ``prompt_tokens_details`` (nor DeepSeek's keys) does not split its
input: uncached input, cache reads and cache writes are then NULL (unknown). Cache writes not reported are 0 only
where the provider bills none — see ``zero_buckets``. ``completion_tokens`` is the output, of which
``completion_tokens_details.reasoning_tokens`` were reasoning. Its own cost, as the harness recorded it, is
``extra.cost`` (1.1) or ``extra.response.usage.cost`` (OpenRouter, 1). The test models record a cost and no usage.

**Time.** ``extra.timestamp`` (2.x), written on each assistant and observation message when it arrived: the run
starts at the first and ends at the last (the exit and format-error messages carry none); 1.x records none, so its
times are the responses' ``created``.

**Model and provider.** The model that answered (``extra.response.model``, a dated snapshot), else the one the
configuration asked for (``info.config.model.model_name`` without LiteLLM's provider prefix); the provider is that
prefix (``openai/gpt-5-mini``), OpenRouter for the OpenRouter model class, none for the test models.

**Tool outcomes.** Every observation carries its exit code (``extra.returncode``; ``<returncode>N</returncode>`` in
the text templates, ``"returncode"`` in mini.yaml's JSON): 0 is ``ok``, anything else ``error``. A command killed at
its timeout is a ``timeout`` (1: the timeout template "The last command … timed out and has been killed"; 1.1:
``TimeoutExpired``).

**Limits.** ``info.config.agent.step_limit`` (model calls), ``cost_limit`` (dollars) and (2.x)
``wall_time_limit_seconds`` are the run's budgets, 0 meaning none; ``info.config.environment.timeout`` is each
command's timeout.

**Ledger and status.** ``info.model_stats.instance_cost`` is the harness's own total (the ledger's cost, the format
errors' included); its ``api_calls`` counts failed attempts too, so it is not a step count and is not compared with
the steps. A trajectory whose ledger shows money while none of its messages is a model call this reader knows is not
read as a run that cost nothing: its records are rejected and the file fails. ``info.exit_status`` (1.1: also the
``exit`` message's ``extra.exit_status``) is the raw stop reason, mapped by ``docs/status.md`` — Submitted
(succeeded), LimitsExceeded (budget_exceeded), an exception's name (RepeatedFormatError …: failed) — and 2.x's
``TimeExceeded`` (its wall-clock limit) is ``timed_out``; 1.x's ``Timeout`` is litellm's exception for a model call
that timed out in transport (1.x keeps no wall clock), which is ``failed``. ``info.submission`` is the final output.
A trajectory with no exit status says nothing of how it ended: its status is inferred (``runs.status_inferred``) —
``succeeded`` when its last call echoes the sentinel, else ``running``.
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
        "usage": "extra.response.usage of each billed call: an assistant message (a Responses-API response), a format "
                 "error's refused reply",
        "timestamps": "extra.timestamp of each message (2.x); else the response's created time",
        "tool_status": "the exit code of each observation (1.1: extra.returncode; <returncode>N</returncode> in its text)",
        "result_size": "each observation's text",
        "call_ids": "tool_call_id (1.1; the Responses API's call_id); one call per message (1, and 1.1's text mode)",
        "limits": "info.config.agent.step_limit, cost_limit and (2.x) wall_time_limit_seconds",
        "ledger": "info.model_stats.instance_cost",
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
