"""Which runs a check cannot judge, and why: the facts each run records (``_facts``), and the SQL of the runs in scope a
check does not judge (a fact it needs missing, or the check switched off for the run's format or agent), with the
provider rows a check of the journals has nothing to match with. ``checks.runner`` reports them beside the findings.
"""

from __future__ import annotations

from reconcile.checks.loader import Check
from reconcile.engine import Engine
from reconcile.sql_text import string_literal
from reconcile.store.facts import FACTS


# Facts configuration can supply for a run that does not record them: known as configuration resolves them.
_RESOLVED = {"result_bound": "rs.result_bound_tokens is not null",
             "loop_detector": "rs.loop_detector is not null and coalesce(lf.evidence_complete, true)"}


def judgement_table(engine: Engine, firings: bool) -> None:
    """``_facts``: for each run in scope, which facts are known (a bound or a detector as configuration resolves it)."""
    resolved = dict(_RESOLVED) if firings else {**_RESOLVED, "loop_detector": "rs.loop_detector is not null"}
    known = ", ".join(f"{resolved[name]} as {name}" if name in resolved else f"f.{name}"
                      for name, fact in FACTS.items() if fact.subject == "run")
    replay = "left join loop_firings lf using (run_id)" if firings else ""
    engine.run(
        f"""create or replace temp table _facts as
        select f.run_id, f.source_format, f.agent, rs.loop_detector as detector, {known}
        from run_facts f join run_settings rs using (run_id) {replay}
        where f.run_id in (select run_id from _scope)"""
    )


def _why(fact: str) -> str:
    """SQL for the reason a run of format ``source_format`` lacks ``fact``."""
    what = string_literal(FACTS[fact].what)[1:-1]  # spliced inside the literals below
    if fact == "result_bound":
        return (f"'no {what}: the run, the configuration and the format''s documented defaults give none '"
                "|| '(set result_bound_tokens in reconcile.toml)'")
    if fact == "loop_detector":
        return ("case when detector is null then 'no loop detector: the run declares none and the configuration names "
                "none (set loop_detector in reconcile.toml, or declare it on run_start)' else 'these runs record no "
                "hash of each tool result, which the ' || detector || ' detector compares' end")
    if fact == "run_status":  # a format that infers every run's outcome, or one whose runs lack theirs
        return (f"case when coalesce((select inferred from format_facts ff where ff.format = source_format "
                f"and ff.fact = 'run_status'), false) then 'the ' || source_format || ' format records no {what}' "
                f"else 'these runs recorded no {what}' end")
    if fact == "buckets":  # judged from the data: the format records usage, some call of the run leaves a bucket out
        return ("'a model call''s usage leaves a token bucket unknown (a cache or output count the record does not "
                "carry): the token sums are unknown'")
    return (f"case when coalesce((select recorded from format_facts ff where ff.format = source_format "
            f"and ff.fact = '{fact}'), false) then 'these runs recorded no {what}' "
            f"else 'the ' || source_format || ' format records no {what}' end")


def unjudged_runs(check: Check, config) -> str:
    """SQL: the runs in scope this check does not judge (run_id, source_format, reason), each once, with the
    reason of the first fact it lacks (a check switched off for it first)."""
    branches = []
    for fact in check.needs:
        if FACTS[fact].subject != "run":
            continue
        branches.append(f"select run_id, source_format, {_why(fact)} "
                        f"as reason, {list(FACTS).index(fact)} as rank from _facts where not {fact}")
    for kind, name, value in config.disabled_for(check.name):
        column = "source_format" if kind == "format" else "agent"
        reason = string_literal(f"switched off for {kind} {name} ({value.origin})")
        branches.append(f"select run_id, source_format, {reason} as reason, "
                        f"-1 as rank from _facts where {column} = {string_literal(name)}")
    if not branches:
        return "select run_id, source_format, null::varchar as reason from _facts where false"
    return (f"select run_id, arg_min(source_format, rank) as source_format, arg_min(reason, rank) as reason "
            f"from ({' union all '.join(branches)}) as lacking group by run_id")


# Provider rows with no journal of that provider in the store: there is nothing to match them with.
UNJUDGED_BUCKETS = """select provider, count(*) as n from (select provider from provider_usage union all
                                                        select provider from billed_costs) as p
    where p.provider is not null and not exists (select 1 from journal_usage_minutes j where j.provider = p.provider)
    group by provider"""
