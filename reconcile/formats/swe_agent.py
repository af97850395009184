"""SWE-agent trajectories (``*.traj``: ``{trajectory, history, info, …}``).

One file is one run (run id = the file name, which SWE-agent makes the instance id). Each
trajectory entry is one model step (its ``thought``/``response``) asking for one command (its
``action``, the tool named by the command's first word, arguments ``{"command": …}``) and one
tool step (its ``observation``): the entry itself pairs the call with its result. The last
entry's ``submit`` is the final answer, not a tool call; its output is ``info.submission``. A file
with only ``history`` (function-calling demonstrations) is read the same way from its assistant
``action`` messages and the tool message after each. Records: one per entry.

``info.model_stats`` is the harness ledger (``api_calls`` → steps, ``tokens_sent`` → input
tokens, ``tokens_received`` → output tokens, ``instance_cost`` → cost); all-zero stats
(demonstrations) are no ledger. Trajectories record no per-step token usage, no timestamps and
no tool outcome status (an observation is whatever the command printed): those stay NULL — except
in a run whose ``model_stats`` record 0 tokens sent, 0 received and a cost of 0. SWE-agent adds
every query of a real model to those counts (the provider's usage in 0.x, LiteLLM's
``token_counter`` since 1.0: never 0 for a prompt), so only its stand-ins for a model leave them at
0 — a person typing the turns (``human``, ``human_thought``: how demonstrations are made) or a
replay of earlier actions (``replay``, which counts ``api_calls`` and nothing else). No provider was
called: each turn of such a run used 0 tokens and cost $0 (counts that are never negative and add
up to 0 are each 0). Any other run's stats are totals that give no turn its share.

``info.exit_status`` is the raw stop reason, mapped by ``docs/status.md``. A trajectory without
one (``demo__function_calling_simple.traj``: only ``history``) says nothing of how it ended, so
its status is inferred (``runs.status_inferred``): ``succeeded`` when its last action is
``submit`` — the agent handed in its patch, and what ``submit`` printed is the final output —
else ``running`` (no end record).
"""

from __future__ import annotations

from typing import ClassVar

from reconcile.formats.base import TranscriptFormat

# A real gpt-4 run (exit_status submitted, real model_stats) in tests/fixtures/realdata/swe-agent.
_REAL_RUN = ("test_data__gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1__"
             "swe-agent__test-repo-i1.traj")


class SweAgent(TranscriptFormat):
    name = "swe_agent"
    description = "SWE-agent trajectory (.traj: {trajectory, history, info})"
    input = "document"
    shape_sql = "json_type(j, '$.trajectory') = 'ARRAY' or json_type(j, '$.history') = 'ARRAY'"
    expected = 'a SWE-agent trajectory ({"trajectory": [...], "info": {...}})'
    facts: ClassVar[dict[str, str]] = {
        "result_size": "each entry's observation", "ledger": "info.model_stats",
        "thread": "one conversation per trajectory", "call_ids": "each trajectory entry holds its action and its observation",
        "run_status": "info.exit_status; without it inferred (submitted: succeeded, else running)",
    }
    examples: ClassVar[dict[str, str]] = {
        "result_size": f"swe-agent/{_REAL_RUN}", "ledger": f"swe-agent/{_REAL_RUN}", "thread": f"swe-agent/{_REAL_RUN}",
        "call_ids": f"swe-agent/{_REAL_RUN}", "run_status": f"swe-agent/{_REAL_RUN}",
    }

    def sniff(self, values: list[object], text: str) -> bool:
        first = values[0] if values else None
        if isinstance(first, dict):
            return isinstance(first.get("trajectory"), list) or (
                isinstance(first.get("history"), list)
                and all(isinstance(h, dict) and "role" in h for h in first["history"][:3]))
        head = text.lstrip()[:2000]
        return not values and head.startswith("{") and ('"trajectory"' in head or '"environment"' in head)


FORMAT = SweAgent()
