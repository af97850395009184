"""SWE-agent trajectories: the harness's exit status (or reconcile's inference without one), ledger, pairing."""

from __future__ import annotations

import json
import shutil

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest.driver import ingest

REAL = ROOT / "tests" / "fixtures" / "realdata"
SWE = REAL / "swe-agent"
DEMO = "demo__function_calling_simple"  # only "history": no info, no exit_status
GPT4 = "test_data__gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1__swe-agent__test-repo-i1"


def planted(folder, source: str, name: str, change) -> None:
    """A copy of a real trajectory under another name, changed by ``change(document)``."""
    data = json.loads((SWE / f"{source}.traj").read_text(encoding="utf-8"))
    change(data)
    (folder / f"{name}.traj").write_text(json.dumps(data), encoding="utf-8")


def no_exit_status(data) -> None:
    del data["info"]["exit_status"]


def cut_before_submit(data) -> None:  # the run stopped mid-work: no exit status, no submit
    del data["info"]["exit_status"], data["info"]["submission"]
    data["trajectory"] = data["trajectory"][:-1]
    data["history"] = data["history"][:-2]


def a_cost_of_0_5(data) -> None:  # 0 tokens counted, yet $0.50 spent (a human model's cost_per_call): not all 0
    data["info"]["model_stats"]["instance_cost"] = 0.5


@pytest.fixture(scope="module")
def swe(tmp_path_factory):
    folder = tmp_path_factory.mktemp("swe") / "trajectories"
    shutil.copytree(SWE, folder)
    planted(folder, GPT4, "planted__no_exit_status", no_exit_status)
    planted(folder, GPT4, "planted__cut_short", cut_before_submit)
    planted(folder, "demo__ctf__misc__networking_1", "planted__no_tokens_but_a_cost", a_cost_of_0_5)
    con = store.connect(tmp_path_factory.mktemp("swe_db") / "swe.duckdb")
    report = ingest(con, [folder])
    yield con, report
    con.close()


def run(con, run_id: str) -> dict:
    cursor = con.execute("select r.*, f.run_status as status_known from runs r join run_facts f using (run_id) "
                         "where run_id = ?", [run_id])
    names = [d[0] for d in cursor.description]
    return dict(zip(names, cursor.fetchall()[0]))


def test_every_trajectory_loads_without_a_reject(swe):
    _, report = swe
    loaded = [f for f in report.files if f.format == "swe_agent"]
    assert len(loaded) == 9 and all(f.rejected == 0 and f.loaded > 0 for f in loaded)


def test_an_exit_status_is_the_harness_s_own_word(swe):
    con, _ = swe
    gpt4 = run(con, GPT4)
    assert (gpt4["status"], gpt4["stop_reason"], gpt4["status_inferred"], gpt4["status_known"]) == \
        ("succeeded", "submitted", False, True)


def test_without_an_exit_status_the_status_is_inferred_from_the_last_action(swe):
    con, _ = swe
    demo = run(con, DEMO)  # real: its last action is submit, and the tool message after it holds the patch
    assert (demo["status"], demo["stop_reason"], demo["status_inferred"], demo["status_known"]) == \
        ("succeeded", None, True, False)
    assert demo["final_output"].lstrip().startswith("diff --git a/tests/missing_colon.py")
    same = run(con, "planted__no_exit_status")  # the real gpt-4 run with its exit_status removed
    assert (same["status"], same["status_inferred"], same["final_output"]) == ("succeeded", True, gpt4_submission())
    cut = run(con, "planted__cut_short")  # no submit, no exit status: no end record
    assert (cut["status"], cut["status_inferred"], cut["ended_at"], cut["final_output"]) == ("running", True, None, None)


def gpt4_submission() -> str:
    return json.loads((SWE / f"{GPT4}.traj").read_text(encoding="utf-8"))["info"]["submission"]


def test_model_stats_are_the_ledger_and_all_zero_stats_are_none(swe):
    con, _ = swe
    stats = json.loads((SWE / f"{GPT4}.traj").read_text(encoding="utf-8"))["info"]["model_stats"]
    ledger = con.execute("select ledger_steps, ledger_input_tokens, ledger_output_tokens, ledger_cost_micros from runs "
                         "where run_id = ?", [GPT4]).fetchall()[0]
    assert ledger == (stats["api_calls"], stats["tokens_sent"], stats["tokens_received"],
                      round(stats["instance_cost"] * 1e6))
    ctf = con.execute("select ledger_steps, ledger_cost_micros from runs where run_id = 'demo__ctf__misc__networking_1'")
    assert ctf.fetchall() == [(None, None)]  # a demonstration's model_stats are all zero: no ledger


def test_each_entry_pairs_its_action_with_its_observation_and_records_no_usage(swe):
    con, _ = swe
    unpaired = con.execute("""select count(*) from tool_calls q where not exists (select 1 from steps s
                              where s.run_id = q.run_id and s.call_id = q.call_id and s.kind = 'tool')""").fetchall()
    assert unpaired == [(0,)]
    usage = con.execute(f"""select count(*), count(coalesce(input_uncached, cache_read, cache_write_5m, cache_write_1h,
                                   output_tokens, context_tokens)), count(tool_status)
                            from steps where run_id not in ({', '.join(f"'{r}'" for r in zero_stats())})""").fetchall()[0]
    assert usage[0] > 50 and usage[1:] == (0, 0)  # no usage, no tool outcome: unknown, never 0


def zero_stats() -> list[str]:
    """The real trajectories whose model_stats record 0 tokens sent, 0 received and $0 (read here with json)."""
    found = []
    for path in sorted(SWE.glob("*.traj")):
        stats = (json.loads(path.read_text(encoding="utf-8")).get("info") or {}).get("model_stats") or {}
        if all(k in stats for k in ("tokens_sent", "tokens_received", "instance_cost")) and \
                stats["tokens_sent"] == stats["tokens_received"] == stats["instance_cost"] == 0:
            found.append(path.stem)
    return found


def test_a_run_whose_stats_record_no_tokens_and_no_cost_used_none_on_any_turn(swe):
    """Demonstrations: SWE-agent adds every real model query to model_stats, so 0 tokens both ways and $0 mean its
    stand-ins (a person typing, a replay) made the turns: each turn is still a model step, with 0 in every bucket
    and a cost of $0 -- the tool calls are its. A file without info says nothing: its turns' usage stays unknown."""
    con, _ = swe
    demos = zero_stats()
    assert sorted(demos) == ["demo__ctf__misc__networking_1",
                             "demo__replay__marshmallow-code__marshmallow-1867__function_calling_replace__install-1__"
                             "marshmallow-code__marshmallow-1867"]
    for run_id in demos:
        doc = json.loads((SWE / f"{run_id}.traj").read_text(encoding="utf-8"))
        turns = len(doc["trajectory"])
        got = con.execute("""select count(*), count(*) filter (where input_uncached = 0 and cache_read = 0
                                  and cache_write_5m = 0 and cache_write_1h = 0 and output_tokens = 0
                                  and reasoning_tokens = 0 and cost_micros = 0)
                              from step_view where run_id = ? and kind = 'model'""", [run_id]).fetchall()[0]
        assert got == (turns, turns)
        run = con.execute("""select steps, input_tokens, output_tokens, cost_micros, cost_low_micros, cost_high_micros
                              from run_view where run_id = ?""", [run_id]).fetchall()[0]
        assert run == (turns, 0, 0, 0, 0, 0)
        calls = con.execute("select count(*) from tool_calls where run_id = ?", [run_id]).fetchall()[0][0]
        assert calls == sum(1 for e in doc["trajectory"][:-1] if e["action"].strip())  # the last, submit, answers
    # tokens 0 but a cost: the stats are not all 0, so they say nothing of each turn's share
    assert con.execute("""select count(*) > 0, count(coalesce(input_uncached, cache_read, output_tokens)) from steps
                          where run_id = 'planted__no_tokens_but_a_cost' and kind = 'model'""").fetchall() == [(True, 0)]
    # no info at all (only history): nothing recorded of its calls, so nothing is 0
    assert DEMO not in demos
    history = json.loads((SWE / f"{DEMO}.traj").read_text(encoding="utf-8"))["history"]
    turns = sum(1 for m in history if m["role"] == "assistant" and m.get("action") is not None)
    assert con.execute("""select count(*), count(coalesce(input_uncached, cache_read, output_tokens)) from steps
                          where run_id = ? and kind = 'model'""", [DEMO]).fetchall() == [(turns, 0)]
    assert con.execute("select bool_and(call_ids) from run_facts where source_format = 'swe_agent'").fetchall() == [(True,)]
