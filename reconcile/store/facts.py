"""The facts a transcript format may record, and how to tell per run whether one is known.

A format declares which of these it records (``reconcile.formats.base.TranscriptFormat.facts``);
what it does not record lands as NULL and stays unknown. A check names the facts it needs in its
header (``-- needs: ledger, limits``): it judges only the runs that record them, and the runs it
could not judge are counted, with the reason, in ``not_judged`` (see ``checks/runner.py``).

The ``run_facts`` view holds one row per run and one boolean column per fact: true when the
run's data (or, for facts no column shows, its format's declaration) says the fact is known. A
per-step fact is known for a run when some step of the kind records it (or the run has no such
step); the checks still judge only the steps whose values are there.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Fact:
    name: str
    what: str  # completes "records no …"
    known_sql: str  # over ``r`` (runs), ``t`` (step totals), ``cat`` (the catalogue) and ``ff_<name>`` (the declaration)
    subject: str = "run"  # run | bucket (a provider's usage or cost row)


def _declared(name: str) -> str:
    return f"coalesce(ff_{name}.recorded, false)"


FACTS: dict[str, Fact] = {f.name: f for f in [
    Fact("usage", "token usage per model call", "coalesce(t.model_steps, 0) = 0 or t.usage_steps > 0"),
    Fact("timestamps", "start and end times", "r.started_at is not null and (r.ended_at is not null or r.status = 'running')"),
    Fact("tool_status", "outcome status of each tool call", "coalesce(t.tool_steps, 0) = 0 or t.status_steps > 0"),
    Fact("result_size", "size of each tool result", "coalesce(t.tool_steps, 0) = 0 or t.sized_steps > 0"),
    Fact("bounded", "mark of the tool results the harness cut", "coalesce(t.tool_steps, 0) = 0 or t.marked_steps > 0"),
    Fact("result_bound", "bound on tool results (the largest result let into the context)",
         "r.result_bound_tokens is not null"),
    Fact("limits", "budgets (step, token, wall-clock or spend ceilings)",
         "coalesce(r.max_steps, r.max_tokens, r.max_prompt_tokens, r.max_completion_tokens, r.max_wall_seconds, "
         "r.max_cost_micros) is not null or coalesce(tree.root_scope = 'tree', false)"),  # a sub-agent of a shared budget
    Fact("loop_detector", "loop detector (which of the seeds' detectors the harness runs, and its limit)",
         "r.loop_detector is not null or r.max_repeats is not null"),
    Fact("retry_limit", "retry limit (limits.max_retries)", "r.max_retries is not null"),
    Fact("fallback_route", "fallback model for rate-limited calls (fallback_model)", "r.fallback_model is not null"),
    Fact("ledger", "harness ledger (the harness's own counters)",
         "coalesce(r.ledger_steps, r.ledger_input_tokens, r.ledger_output_tokens, r.ledger_tokens, r.ledger_cost_micros, "
         "r.ledger_tool_results) is not null"),
    # a run of a format that records catalogues, offered no tool and calling none, has an empty one
    Fact("catalogue", "tool catalogue (which tools exist)",
         "coalesce(cat.catalogued, false) or (coalesce(t.tool_steps, 0) = 0 and " + _declared("catalogue") + ")"),
    Fact("side_effects", "mark of the tools that change the world (side_effect in its tool catalogue)", "coalesce(cat.side_effects_marked, false)"),
    Fact("context_size", "context size of each model call", "coalesce(t.model_steps, 0) = 0 or t.context_steps > 0"),
    Fact("thread", "conversation threads (which model calls continue one conversation)", _declared("thread")),
    Fact("call_ids", "link between a tool result and the call that asked for it", _declared("call_ids")),
    Fact("input_hash", "hash of each model call's input", "coalesce(t.model_steps, 0) = 0 or t.hashed_steps > 0"),
    Fact("run_status", "outcome of its own: reconcile infers how the run ended from the transcript",
         "not coalesce(r.status_inferred, false)"),
    # last of the run facts: a run lacking another fact a check needs is reported for that one (it ranks first)
    Fact("buckets", "complete token usage of each model call (a cache or output count is left out)",
         "coalesce(t.usage_steps, 0) = 0 or t.partial_steps = 0"),
    Fact("journals", "journal of the billed provider (nothing to match the bill against)", "", subject="bucket"),
]}
RUN_FACT_NAMES = [name for name, fact in FACTS.items() if fact.subject == "run"]

# Column facts need a step aggregate; declared facts a join to format_facts.
_DECLARED = [name for name in RUN_FACT_NAMES if "ff_" in FACTS[name].known_sql]

RUN_FACTS_VIEW = f"""
create or replace view run_facts as
with t as (
    select s.run_id,
           count(*) filter (where s.kind = 'model') as model_steps,
           count(*) filter (where s.kind = 'model' and coalesce(s.input_uncached, s.cache_read, s.cache_write_5m,
                            s.cache_write_1h, s.output_tokens) is not null) as usage_steps,
           count(*) filter (where s.kind = 'model' and coalesce(s.input_uncached, s.cache_read, s.cache_write_5m,
                            s.cache_write_1h, s.output_tokens) is not null and (s.input_uncached is null or s.cache_read is null
                            or s.cache_write_5m is null or s.cache_write_1h is null or s.output_tokens is null)) as partial_steps,
           count(*) filter (where s.kind = 'tool') as tool_steps,
           count(*) filter (where s.kind = 'tool' and s.tool_status is not null) as status_steps,
           count(*) filter (where s.kind = 'tool' and s.result_tokens is not null) as sized_steps,
           count(*) filter (where s.kind = 'tool' and s.bounded is not null) as marked_steps,
           count(*) filter (where s.kind = 'model' and s.context_tokens is not null) as context_steps,
           count(*) filter (where s.kind = 'model' and s.input_hash is not null) as hashed_steps
    from steps s group by s.run_id
),
cat as (select run_id, true as catalogued, bool_and(side_effect is not null) as side_effects_marked
        from run_tools group by run_id),
tree as (select v.run_id, t.budget_scope as root_scope from run_view v join runs t on t.run_id = v.root_run_id)
select r.run_id, r.source_format, r.agent,
       {", ".join(f"({FACTS[name].known_sql}) as {name}"
                  for name in RUN_FACT_NAMES)}
from runs r
left join t using (run_id)
left join cat using (run_id)
left join tree using (run_id)
{" ".join(f"left join format_facts ff_{name} on ff_{name}.format = r.source_format and ff_{name}.fact = '{name}'"
          for name in _DECLARED)}
"""


def parse_needs(text: str, where: str) -> tuple[str, ...]:
    """The facts a check's ``-- needs:`` header names; an unknown one is an error naming ``where``."""
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in FACTS]
    if unknown:
        from reconcile.errors import BadInput

        raise BadInput(f"{where}: unknown fact {unknown[0]!r} in 'needs'; facts are {', '.join(FACTS)}")
    return names
