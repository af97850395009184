"""Every real run, fact by fact, against the raw files (issue 57).

tests/oracle_costs_a.py and tests/oracle_costs_b.py read each real corpus in plain Python, from the raw files and the
documented rules only (never reconcile's SQL): model calls, tool calls and results, the five token buckets, status,
final answer, start and wall time, model and provider. Here each is held against what reconcile says of the run
(``runs --json`` and the documented views, through ``reconcile sql``). Where the oracle and reconcile read a file
differently and reconcile's reading was judged right after re-reading the transcript, ``JUDGED`` says why.
"""

from __future__ import annotations

from datetime import datetime, timezone
from decimal import Decimal

import pytest

from conftest import ROOT
import oracle_costs_a
import oracle_costs_b
from run_identity import keyed_like_reconcile

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

REAL = ROOT / "tests" / "fixtures" / "realdata"
FOLDERS = [*oracle_costs_a.READERS, *oracle_costs_b.READERS]
BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")

# (run id, fact) -> why reconcile's reading stands where the oracle reads the file otherwise
_MARSHMALLOW_DEMO = ("demo__replay__marshmallow-code__marshmallow-1867__function_calling_replace__install-1__"
                     "marshmallow-code__marshmallow-1867")
_SWE_AGENT_0X = ("test_data__gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1__swe-agent"
                 "__test-repo-i1", "test_data__gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__"
                 "install-1__pydicom__pydicom-1458")
_TRANSPORT = ("its last call failed in transport (litellm's {}) and the file records no response: whether the provider "
              "billed it is not recorded, so the run's token totals are unknown (its cost: at least the answered calls')")
JUDGED: dict[tuple[str, str], str] = {
    ("deepseek_reasoner_dev__pvlib__pvlib-python-1154@31365700", "status"): "litellm.Timeout is the model call timing out in transport, which ended the run (failed); "
                      "mini-swe-agent 1.x keeps no wall clock, so no time limit stopped it",
    **{("deepseek_reasoner_dev__pvlib__pvlib-python-1154@31365700", b): _TRANSPORT.format("Timeout") for b in BUCKETS},
    **{("deepseek_reasoner_dev__pvlib__pvlib-python-1606@791f4fcd", b): _TRANSPORT.format("InternalServerError: SSL EOF") for b in BUCKETS},
    ("0ab84937-9fe7-4284-986a-33c832af0b6a", "started_at"): "the session's header records startTime 12:52:52.759, when "
        "the session opened; its first message (an info line) came 10 s later",
    ("0ab84937-9fe7-4284-986a-33c832af0b6a", "wall_seconds"): "from the header's startTime (see started_at)",
    ("019c8a53-a0dd-7130-bcd7-95445d84846a", "wall_seconds"): "abandoned: a task started and never ended, so the run has "
        "no end and no wall time (docs/status.md); the oracle measured to the last line heard",
    ("019c8a70-dda7-7f33-98ea-f30553347322", "wall_seconds"): "abandoned, as 019c8a53",
    ("20251118_gemini-3-pro-74pct__django__django-11163@4f27343f", "provider"): "the API that billed the calls is "
        "OpenRouter's (model_type OpenRouterModel; usage.cost is OpenRouter's charge); Google made the model",
    ("20251118_gemini-3-pro-74pct__django__django-16255@301b7f29", "provider"): "as django-11163: OpenRouter billed",
    # Inspect AI
    ("5XJAqKPKGtzrXUZ3UhthJM", "calls"): "samples/0_epoch_1.json holds 6 answered model events of hardcoded/hardcoded, a "
        "custom ModelAPI (not one Inspect ships): 6 model steps; that they cost nothing the file does not say",
    **{("5XJAqKPKGtzrXUZ3UhthJM", b): "no model event's output has a usage key and the sample's model_usage is {} "
       "(Inspect adds a call there only when it reports usage): not recorded, so unknown, not 0" for b in BUCKETS},
    ("nnS4q9qsuCrCzsBcQLnBLA/dPiJifoWeEQBrfWsAopzWr/5/epoch 1", "wall_seconds"): "inspect 0.3.58 records no sample "
        "times; the call began 15:17:00.972302 and lasted output.time 0.6147 s, but the sample's state and step-end "
        "events follow at 15:17:01.589615: the sample ran until its last event",
    # SWE-agent
    ("demo__ctf__misc__networking_1", "calls"): "info.model_stats all 0 (api_calls, tokens, cost): a demonstration a "
        "person typed; its 4 turns stay steps (the tool calls are theirs), each 0 tokens and $0",
    (_MARSHMALLOW_DEMO, "calls"): "ReplayModel counts each replayed action as an api_call (11) and nothing else (0 "
        "tokens, $0): 11 turns, each a step of 0 tokens and $0",
    ("demo__function_calling_simple", "calls"): "only history, no info: 5 assistant turns with OpenAI-style tool-call "
        "ids and nothing saying no model made them: 5 steps of unknown usage",
    **{("demo__function_calling_simple", b): "no info at all: nothing records the usage of its 5 turns (the oracle's "
       "own note: 'nothing recorded about model calls'), so unknown, not 0" for b in BUCKETS},
    **{(run, fact): "SWE-agent 0.x names no model in the file (gpt4 is a shortcut in the run directory's name): "
       "unknown" for run in _SWE_AGENT_0X for fact in ("model", "provider")},
    **{(run, b): "only run totals are recorded (model_stats), read as the ledger and held against the oracle's "
       "input and output below; the cached share needs the unrecorded model" for run in _SWE_AGENT_0X
       for b in ("cache_read", "cache_write_5m", "cache_write_1h")},
    **{(run, "provider"): "replay_config names the bare model gpt-4o (api_base null): where it was served is not "
       "recorded" for run in (_MARSHMALLOW_DEMO, "test_data__gpt4__swe-agent-test-repo__default_from_url__t-0.00__p-0."
                              "95__c-3.00__install-1__6e44b9__sweagenttestrepo-1c2844")},
    # Langfuse
    ("7a38edd8123db47ad8dcb8aa4c5e3926", "tool_calls"): "the evaluator's chat declares final_result among "
        "model_request_parameters.output_tools (output_mode 'tool': 'The final response which ends this "
        "conversation'), not function_tools, and no TOOL observation runs it: the structured answer, not a call",
    ("7a38edd8123db47ad8dcb8aa4c5e3926", "final_answer"): "the answer is final_result's arguments {quality, feedback}, "
        "the object the root span run_joke_generator records as its output's evaluation",
    ("0298935e31d66d7de9487cac935d7d99", "provider"): "the generation's attributes are llm.model_name (a Vertex "
        "resource path), llm.invocation_parameters, llm.token_count.*: none names a provider; the oracle read the "
        "model's name",
    ("1b72c51fabed12ae7df83bfd4a09f545", "provider"): "the generation's metadata holds only resourceAttributes and "
        "scope, the trace's only email, resourceAttributes and scope: nothing names a provider",
    ("a287bb31e317433610d8827617471140", "provider"): "the litellm generation records llm.model_name, "
        "llm.invocation_parameters and llm.token_count.*, no llm.provider, llm.system or gen_ai.system",
    # OpenHands
    **{(run, "provider"): "every model_response names a bare model (claude-3-5-sonnet-20241022, gpt-4o-2024-08-06; "
       "no LiteLLM route), and no event carries an llm_config or llm_metrics: not recorded"
       for run in ("basic", "basic_gui_mode", "wrong_initial_state", "basic_interactions")},
}


@pytest.fixture(scope="module")
def facts(tmp_path_factory):
    from reconcile import store
    from reconcile.ingest.driver import ingest

    db = tmp_path_factory.mktemp("run-truth") / "real.duckdb"
    truth: dict[str, dict] = {}
    with store.connect(db) as con:
        ingest(con, [REAL / name for name in FOLDERS])
        for name in FOLDERS:
            oracle = oracle_costs_a if name in oracle_costs_a.READERS else oracle_costs_b
            truth.update({run_id: {**t, "folder": name} for run_id, t in oracle.truths(REAL / name).items()})
        rows = con.execute("""
            select v.run_id, v.steps - v.refused_steps as billed_calls, v.tool_results, v.status, v.final_output, v.started_at, v.wall_seconds, v.model,
                   v.provider, v.input_uncached, v.cache_read, v.cache_write_5m, v.cache_write_1h, v.output_tokens,
                   v.ledger_input_tokens, v.ledger_output_tokens,
                   (select count(*) from tool_calls q where q.run_id = v.run_id) as tool_calls,
                   (select count(*) from steps s where s.run_id = v.run_id and s.kind = 'tool'
                    and s.tool_status = 'error') as tool_errors
            from run_view v""").fetchall()
        names = [d[0] for d in con.description]
    ours = {row[0]: dict(zip(names, row)) for row in rows}
    return ours, keyed_like_reconcile(truth, set(ours))


def _same(fact: str, ours, theirs) -> bool:
    if fact in ("started_at",):
        if ours is None or theirs is None:
            return ours is None and theirs is None
        theirs = datetime.fromisoformat(str(theirs).replace("Z", "+00:00"))
        return abs((ours.astimezone(timezone.utc) - theirs.astimezone(timezone.utc)).total_seconds()) < 0.002
    if fact == "wall_seconds":
        if ours is None or theirs is None:
            return ours is None and theirs is None
        return abs(Decimal(str(ours)) - Decimal(str(theirs))) < Decimal("0.002")
    if fact == "final_answer":
        return (ours or "").strip()[:200] == (theirs or "").strip()[:200]
    return ours == theirs


FACTS = {"calls": "billed_calls", "tool_calls": "tool_calls", "tool_results": "tool_results", "tool_errors": "tool_errors",
         "status": "status", "final_answer": "final_output", "started_at": "started_at", "wall_seconds": "wall_seconds",
         "model": "model", "provider": "provider", **{b: b for b in BUCKETS}}


@pytest.mark.parametrize("fact", FACTS)
def test_each_real_run_s_fact_is_the_raw_file_s(facts, fact):
    ours, truth = facts
    assert set(ours) == set(truth)
    wrong = []
    for run_id, t in sorted(truth.items()):
        if fact not in t or (run_id, fact) in JUDGED:
            continue
        theirs = t[fact]
        if fact == "tool_errors" and theirs is None:  # the format records no tool outcome: nothing to count
            continue
        got = ours[run_id][FACTS[fact]]
        if got is None and theirs is not None and fact in ("input_uncached", "output_tokens") \
                and ours[run_id]["ledger_input_tokens"] is not None:
            # a format that records run totals only (SWE-agent 0.x's model_stats): they are the run's ledger
            got = ours[run_id]["ledger_output_tokens" if fact == "output_tokens" else "ledger_input_tokens"]
            if fact == "input_uncached" and all(t.get(b) is not None for b in BUCKETS[:4]):
                theirs = sum(t[b] for b in BUCKETS[:4])
        if not _same(fact, got, theirs):
            wrong.append(f"{t['folder']} {run_id}: reconcile {got!r}, the file {theirs!r}")
    assert not wrong, f"{fact}:\n" + "\n".join(wrong)
