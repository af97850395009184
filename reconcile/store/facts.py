"""The facts a transcript format may record, and how to tell per run whether one is known.

A format declares which of these it records (``reconcile.formats.base.TranscriptFormat.facts``);
what it does not record lands as NULL and stays unknown. A check names the facts it needs in its
header (``-- needs: ledger, limits``): it judges only the runs that record them, and the runs it
could not judge are counted, with the reason, in ``not_judged`` (see ``checks/runner.py``).

The ``run_facts`` view (``store/sql/views/run_facts.sql``) holds one row per run and one boolean
column per run fact, in the order listed here: true when the run's data (or, for facts no column
shows, its format's declaration) says the fact is known.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fact:
    name: str
    what: str  # completes "records no …"
    subject: str = "run"  # run (a column of run_facts) | bucket (a provider's usage or cost row)


FACTS: dict[str, Fact] = {f.name: f for f in [
    Fact("usage", "token usage per model call"),
    Fact("timestamps", "start and end times"),
    Fact("tool_status", "outcome status of each tool call"),
    Fact("result_size", "size of each tool result"),
    Fact("bounded", "mark of the tool results the harness cut"),
    Fact("result_bound", "bound on tool results (the largest result let into the context)"),
    Fact("limits", "budgets (step, token, wall-clock or spend ceilings)"),
    Fact("loop_detector", "loop detector (which of the seeds' detectors the harness runs, and its limit)"),
    Fact("retry_limit", "retry limit (limits.max_retries)"),
    Fact("fallback_route", "fallback model for rate-limited calls (fallback_model)"),
    Fact("ledger", "harness ledger (the harness's own counters)"),
    Fact("catalogue", "tool catalogue (which tools exist)"),
    Fact("side_effects", "mark of the tools that change the world (side_effect in its tool catalogue)"),
    Fact("context_size", "context size of each model call"),
    Fact("thread", "conversation threads (which model calls continue one conversation)"),
    Fact("call_ids", "link between a tool result and the call that asked for it"),
    Fact("input_hash", "hash of each model call's input"),
    Fact("run_status", "outcome of its own: reconcile infers how the run ended from the transcript"),
    # last of the run facts: a run lacking another fact a check needs is reported for that one (it ranks first)
    Fact("buckets", "complete token usage of each model call (a cache or output count is left out)"),
    Fact("journals", "journal of the billed provider (nothing to match the bill against)", subject="bucket"),
]}
RUN_FACT_NAMES = [name for name, fact in FACTS.items() if fact.subject == "run"]


def parse_needs(text: str, where: str) -> tuple[str, ...]:
    """The facts a check's ``-- needs:`` header names; an unknown one is an error naming ``where``."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in FACTS]
    if unknown:
        from reconcile.errors import BadInput

        raise BadInput(f"{where}: unknown fact {unknown[0]!r} in 'needs'; facts are {', '.join(FACTS)}")
    return names
