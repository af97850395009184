"""mini-swe-agent 2.4.6 read as mini means it (issue 57), held against what the stub billed.

tests/fixtures/clients/mini_swe_agent: 34 trajectories the real mini-swe-agent 2.4.6 wrote (its test models, its
``mini`` CLI through LiteLLM against a local stub of the OpenAI and Anthropic APIs, its SWE-bench runner; see its
README.md). The truth comes from outside reconcile, in plain Python: ``truth.json`` (per trajectory, from the file
and the stub's log: every billed call with its cost and buckets, every command and what became of it, the exit) and
``stub_log.jsonl`` (what the stub billed, call by call: the provider's own usage). Reconcile is read only through its
commands: ``runs --json --no-fold-subagents``, ``show RUN --json`` (and ``--step N``), ``cost --by run --json``,
``check --json``, ``ingest --json``.

How mini's record is read (the fixture's README says what 2.x writes):

- **A run** is one file, named by it — except where mini gives the name to many runs (the CLI's default
  ``last_mini_run.traj.json``, the SWE-bench runner's ``<instance>/<instance>.traj.json``): there the name takes a
  digest of the run's opening (its configuration and its messages up to its first model call), so two such files are
  two runs, the same file read again is the same run, and a file that grew is the same run with more steps.
- **Model calls** are every billed call: each assistant message (a Responses-API response object), and each format
  error's refused reply, kept on the user message that answers it (``extra.response``, ``extra.cost``): a model step
  with that error (``invalid_output``), its usage and the harness's cost.
- **Tool calls** are the commands each call asked for (tool calls; in text mode the parsed actions), and their
  results each command's observation; the submitting command is the final answer, not a call, and its "action was
  not executed" placeholder is no result; a command the reply asked for after the submit was not run.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from pathlib import Path

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest.driver import ingest

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

FIXTURE = ROOT / "tests" / "fixtures" / "clients" / "mini_swe_agent"
TRUTH = json.loads((FIXTURE / "truth.json").read_text(encoding="utf-8"))["runs"]
STUB = [json.loads(line) for line in (FIXTURE / "stub_log.jsonl").read_text(encoding="utf-8").splitlines() if line]
BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")
STATUS = {"Submitted": "succeeded", "LimitsExceeded": "budget_exceeded", "TimeExceeded": "timed_out",
          "RepeatedFormatError": "failed"}
PROVIDER = {"openai_chat": "openai", "openai_responses": "openai", "anthropic_messages": "anthropic", None: None}
PLACEHOLDER = "action was not executed"


# --- what truth.json and the stub's log say, in plain Python -------------------------------------------------------

def billed(key: str) -> list[dict]:
    """The calls the stub answered for this trajectory, in order (none for the test models)."""
    return sorted((entry for entry in STUB if entry["run"] == key), key=lambda entry: entry["call"])


def buckets(entry: dict) -> dict:
    """The provider's usage as five disjoint buckets and the reasoning part of the output (None: not reported).

    OpenAI (Chat Completions, Responses): the cached tokens are inside the prompt, OpenAI bills no cache writes; a
    usage without prompt_tokens_details does not say what was cached. Anthropic: input, cache reads and the two
    cache-write lifetimes are apart; no thinking was asked for.
    """
    u = entry["usage"]
    if entry["endpoint"] == "anthropic_messages":
        return {"input_uncached": u["input_tokens"], "cache_read": u["cache_read_input_tokens"],
                "cache_write_5m": u["cache_creation"]["ephemeral_5m_input_tokens"],
                "cache_write_1h": u["cache_creation"]["ephemeral_1h_input_tokens"], "output_tokens": u["output_tokens"],
                "reasoning_tokens": 0}
    if entry["endpoint"] == "openai_responses":
        cached = u["input_tokens_details"]["cached_tokens"]
        return {"input_uncached": u["input_tokens"] - cached, "cache_read": cached, "cache_write_5m": 0,
                "cache_write_1h": 0, "output_tokens": u["output_tokens"],
                "reasoning_tokens": u["output_tokens_details"]["reasoning_tokens"]}
    details = u.get("prompt_tokens_details")
    cached = None if details is None else details["cached_tokens"]
    return {"input_uncached": None if cached is None else u["prompt_tokens"] - cached, "cache_read": cached,
            "cache_write_5m": None if cached is None else 0, "cache_write_1h": None if cached is None else 0,
            "output_tokens": u["completion_tokens"],
            "reasoning_tokens": (u.get("completion_tokens_details") or {}).get("reasoning_tokens")}


def prompt(entry: dict) -> int:
    """The whole prompt of a call (its context)."""
    u = entry["usage"]
    if entry["endpoint"] == "anthropic_messages":
        return u["input_tokens"] + u["cache_read_input_tokens"] + u["cache_creation_input_tokens"]
    return u["input_tokens"] if entry["endpoint"] == "openai_responses" else u["prompt_tokens"]


def commands_of(run: dict, call: int) -> list[dict]:
    """The commands a call asked for that are tool calls: every one but the one that submitted."""
    return [c for c in run["commands"] if c["call"] == call and not c["submitted"]]


def results_of(run: dict) -> list[dict]:
    """The commands with a result of their own: an observation that is not the submit's placeholder."""
    return [c for c in run["commands"] if not c["submitted"] and c["observation_message_index"] is not None]


def status_of(command: dict) -> str:
    if command["placeholder_observation"]:
        return "not_run"  # asked for after the submit: mini never ran it
    if command["timed_out"]:
        return "timeout"
    return "ok" if command["returncode"] == 0 else "error"


def _when(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# --- reconcile, read through its commands ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("mini_swe_agent") / "mini.duckdb"
    with store.connect(path) as con:
        ingest(con, [FIXTURE])
    return path


_READ: dict[tuple, object] = {}  # what a command printed for the module's store, which no test changes


def _json(cli, *args):
    if args not in _READ:
        _READ[args] = cli(*args).json()
    return _READ[args]


def shown_run(cli, db: Path, key: str) -> tuple[dict, dict]:
    """(its row of ``runs --json``, ``show --json``) of the run read from the fixture file ``key``."""
    stem = Path(key).name.removesuffix(".traj.json")
    for row in _json(cli, "runs", "--json", "--no-fold-subagents", "--db", db):
        if row["run_id"] == stem or row["run_id"].startswith(stem + "@"):
            shown = _json(cli, "show", row["run_id"], "--json", "--db", db)
            if shown["run"]["source_file"] == str(FIXTURE / key):
                return row, shown
    raise AssertionError(f"no run read from {key}")


def steps_of(cli, db: Path, run_id: str, kind: str) -> list[dict]:
    steps = _json(cli, "show", run_id, "--json", "--db", db)["steps"]
    return [_json(cli, "show", run_id, "--step", s["idx"], "--json", "--db", db) for s in steps if s["kind"] == kind]


def test_the_truth_is_what_the_stub_billed():
    """truth.json agrees with the stub's log: every LiteLLM call (format errors included) is one the stub answered,
    in order, with the buckets of the usage it returned; and LiteLLM's Claude usage adds the cache into the prompt."""
    assert len(TRUTH) == 34 and len(STUB) == sum(len(run["calls"]) for run in TRUTH.values() if run["driver"] != "api")
    for key, run in TRUTH.items():
        entries = billed(key)
        assert len(entries) == (0 if run["driver"] == "api" else run["n_calls"]), key
        for call, entry in zip(run["calls"], entries):
            assert call["provider_response_id"] == entry["id"] and call["response_model"] == entry["model"], key
            want = buckets(entry)
            got = {"input_uncached": call["buckets"]["input_uncached"], "cache_read": call["buckets"]["cache_read"],
                   "output_tokens": call["buckets"]["output"]}
            assert {k: v for k, v in got.items() if want[k] is not None} == \
                {k: want[k] for k in got if want[k] is not None}, key
        document = json.loads((FIXTURE / key).read_text(encoding="utf-8"))
        recorded = [m["extra"]["response"]["usage"] for m in document["messages"]
                    if isinstance(m.get("extra"), dict) and isinstance(m["extra"].get("response"), dict)]
        for usage, entry in zip(recorded, (e for e in entries if e["endpoint"] == "anthropic_messages")):
            assert usage["prompt_tokens"] == prompt(entry)  # LiteLLM: input + cache read + cache write


@pytest.mark.parametrize("key", sorted(TRUTH))
def test_each_trajectory_s_run(cli, db, key):
    """Status and stop reason, start and wall time, model and provider, model calls, tokens, the final answer."""
    truth = TRUTH[key]
    row, shown = shown_run(cli, db, key)
    run = shown["run"]
    assert row["status"] == STATUS[truth["exit_status"]] and row["stop_reason"] == truth["exit_status"]
    assert _when(row["started_at"]) == _when(truth["start_time_iso"])  # every run has one: the --since windows see it
    assert row["wall_seconds"] == pytest.approx(truth["end_time"] - truth["start_time"])
    answered = next((c["response_model"] for c in truth["calls"] if c.get("response_model")), None)
    assert row["model"] == (answered or truth["model_name"].split("/", 1)[-1])  # the dated model, else the config's
    assert run["provider"] == PROVIDER[truth["endpoint"]]
    assert row["steps"] == truth["n_calls"]  # every billed call, the format errors' too
    entries = billed(key)
    assert row["total_tokens"] == (sum(prompt(e) + buckets(e)["output_tokens"] for e in entries) if entries else None)
    submitted = truth["exit_status"] == "Submitted"
    assert run["has_final_answer"] is submitted
    assert run["final_output"] == (truth["submission"] if submitted else None)
    assert run["tool_results"] == len(results_of(truth))
    limits = truth["limits"]
    assert run["max_steps"] == (limits["step_limit"] or None)
    assert run["max_cost_usd"] == (limits["cost_limit"] or None)
    assert run["max_wall_seconds"] == (limits["wall_time_limit_seconds"] or None)
    assert run["tool_timeout_seconds"] == limits["command_timeout_seconds"]
    assert run["ledger_cost_usd"] == pytest.approx(truth["instance_cost"], abs=5e-7)


@pytest.mark.parametrize("key", sorted(TRUTH))
def test_each_billed_call_is_a_model_step_with_its_own_usage_and_cost(cli, db, key):
    """In order: the recorded response, the stub's usage as disjoint buckets (the whole prompt its context), the
    harness's cost; a format error's refused reply is a call too, with its error; only the submitting step is final."""
    truth = TRUTH[key]
    row, _ = shown_run(cli, db, key)
    steps = steps_of(cli, db, row["run_id"], "model")
    assert len(steps) == len(truth["calls"]) == truth["n_calls"]
    entries = billed(key) or [None] * len(steps)
    for number, (step, call, entry) in enumerate(zip(steps, truth["calls"], entries, strict=True)):
        assert step.get("harness_cost_usd") == pytest.approx(call["cost"], abs=5e-7)
        assert (step.get("error_class") == "invalid_output") is call["format_error"]
        assert step.get("is_final", False) is (truth["exit_status"] == "Submitted" and number == len(steps) - 1)
        if entry is None:  # the test models: a scripted cost, no usage
            assert {b: step.get(b) for b in BUCKETS} == dict.fromkeys(BUCKETS)
            continue
        assert step.get("response_id") == call["response_id"] and step.get("model") == entry["model"]
        want = buckets(entry)
        assert {b: step.get(b) for b in (*BUCKETS, "reasoning_tokens")} == want, number
        assert step.get("context_tokens") == prompt(entry)


@pytest.mark.parametrize("key", sorted(TRUTH))
def test_each_command_is_a_call_and_its_result_says_what_ran(cli, db, key):
    """The commands each call asked for (the submit apart), and each result: what ran, its exit code or timeout."""
    truth = TRUTH[key]
    row, _ = shown_run(cli, db, key)
    steps = steps_of(cli, db, row["run_id"], "model")
    for call, step in zip(truth["calls"], steps, strict=True):
        asked = sorted(step.get("tool_calls") or [], key=lambda q: q["call_id"])  # show lists them by call id
        want = sorted(commands_of(truth, call["call"]), key=lambda c: str(c["tool_call_id"]))
        assert [json.loads(q["args_json"])["command"] for q in asked] == [c["command"] for c in want], call["call"]
        if truth["mode"] != "text":
            assert [q["call_id"] for q in asked] == [c["tool_call_id"] for c in want]
    tools = steps_of(cli, db, row["run_id"], "tool")
    results = results_of(truth)
    assert len(tools) == len(results)
    for tool, command in zip(tools, results):
        assert json.loads(tool["args_json"])["command"] == command["command"]
        if truth["mode"] != "text":
            assert tool["call_id"] == command["tool_call_id"]
        assert tool.get("tool_status") == status_of(command), command["command"]
        if command["placeholder_observation"]:
            continue
        preview = tool["result_preview"]
        if preview.lstrip().startswith("{"):  # mini.yaml's observation: JSON
            assert json.loads(preview)["returncode"] == command["returncode"]
            assert json.loads(preview)["output"] == command["output"]
        else:  # mini_textbased.yaml's and swebench.yaml's: <returncode>N</returncode> <output>…</output>
            assert f"<returncode>{command['returncode']}</returncode>" in preview and command["output"] in preview
        if command["timed_out"]:
            assert tool.get("error") == command["exception_info"]


def test_cost_by_run_carries_the_calls_buckets_and_the_cost_runs_and_show_give(cli, db):
    """cost --by run: every billed call and the stub's buckets; its figure is runs' and show's (reconcile's prices
    where exact — within a micro-dollar of what LiteLLM charged —, else the harness's ledger, which show names)."""
    groups = {g["key"]: g for g in cli("cost", "--by", "run", "--json", "--db", db).json()["groups"]}
    assert len(groups) == len(TRUTH)
    for key, truth in TRUTH.items():
        row, shown = shown_run(cli, db, key)
        group, entries = groups[row["run_id"]], billed(key)
        assert group["model_calls"] == truth["n_calls"], key
        for bucket in BUCKETS:
            values = [buckets(e)[bucket] for e in entries]
            want = None if not entries or None in values else sum(values)
            assert group[bucket] == want, (key, bucket)
        charged = sum(c["cost"] for c in truth["calls"])
        assert group["cost_usd"] == row["cost_usd"] == pytest.approx(charged, abs=1e-6), key
        run = shown["run"]
        if run["cost_usd"] is not None:  # reconcile's prices are exact: show, runs and cost give them
            assert run["cost_usd"] == row["cost_usd"], key
        else:  # no usage (the test models) or an unknown cached share: the harness's figure, named by show
            text = cli("show", row["run_id"], "--db", db).out
            assert f"runs and cost report the harness's ${row['cost_usd']:.4f}" in " ".join(text.split()), key


def test_two_runs_under_one_file_name_are_two_runs(cli, db):
    """mini writes every CLI run to last_mini_run.traj.json: run_a and run_b are two runs, each loaded."""
    report = cli("ingest", FIXTURE, "--json", "--db", db).json()  # again: nothing changed, nothing reloaded
    assert report["totals"]["rejected"] == 0
    runs = [r["run_id"] for r in cli("runs", "--json", "--no-fold-subagents", "--db", db).json()]
    same = sorted(r for r in runs if r.startswith("last_mini_run@"))
    assert len(same) == 2 and len(runs) == len(TRUTH)
    sources = {cli("show", r, "--json", "--db", db).json()["run"]["source_file"] for r in same}
    assert sources == {str(FIXTURE / "cli" / "same_name" / name / "last_mini_run.traj.json")
                       for name in ("run_a", "run_b")}


def _copy(source: Path, target: Path, change=None) -> Path:
    document = json.loads(source.read_text(encoding="utf-8"))
    if change:
        change(document)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(document), encoding="utf-8")
    return target


def test_the_id_stays_with_the_run_and_a_file_rewritten_by_another_run_is_replaced(cli, tmp_path):
    """Re-ingesting: the same id. A trajectory mini saved mid-run and saved again longer: the same run, with its new
    steps. The file rewritten by another run (mini's default output): that run replaces it."""
    run_a = FIXTURE / "cli" / "same_name" / "run_a" / "last_mini_run.traj.json"
    run_b = FIXTURE / "cli" / "same_name" / "run_b" / "last_mini_run.traj.json"
    target, db = tmp_path / "mini" / "last_mini_run.traj.json", tmp_path / "m.duckdb"

    def ids() -> dict[str, int]:
        return {r["run_id"]: r["steps"] for r in cli("runs", "--json", "--no-fold-subagents", "--db", db).json()}

    _copy(run_a, target, lambda d: d.__setitem__("messages", d["messages"][:4]))  # saved after its first step
    assert cli("ingest", target.parent, "--db", db).code == 0
    first = ids()
    assert list(first.values()) == [1]
    _copy(run_a, target)
    assert cli("ingest", target.parent, "--db", db).code == 0
    assert ids() == {next(iter(first)): TRUTH["cli/same_name/run_a/last_mini_run.traj.json"]["n_calls"]}
    assert cli("ingest", target.parent, "--db", db).code == 0 and list(ids()) == list(first)
    _copy(run_b, target)
    assert cli("ingest", target.parent, "--db", db).code == 0
    after = ids()
    assert len(after) == 1 and set(after) != set(first)


def test_swe_bench_batches_that_name_files_after_the_instance_are_two_runs(cli, tmp_path):
    """Two batches, each with fixture__tinycalc-1/fixture__tinycalc-1.traj.json (another output folder, another
    attempt): two runs. A byte-identical copy of one is that run again, loaded once and said so."""
    source = FIXTURE / "swebench" / "fixture__tinycalc-1" / "fixture__tinycalc-1.traj.json"

    def second_batch(document):
        document["info"]["config"]["agent"]["output_path"] = "/tmp/batch_2/fixture__tinycalc-1/" + source.name
        for message in document["messages"]:
            if isinstance(message.get("extra"), dict) and "timestamp" in message["extra"]:
                message["extra"]["timestamp"] += 3600

    _copy(source, tmp_path / "night" / "batch_1" / "fixture__tinycalc-1" / source.name)
    _copy(source, tmp_path / "night" / "batch_2" / "fixture__tinycalc-1" / source.name, second_batch)
    _copy(source, tmp_path / "night" / "batch_1_copy" / "fixture__tinycalc-1" / source.name)
    db = tmp_path / "s.duckdb"
    report = cli("ingest", tmp_path / "night", "--json", "-v", "--db", db).json()
    assert all(f["status"] == "loaded" for f in report["files"])
    runs = cli("runs", "--json", "--no-fold-subagents", "--db", db).json()
    assert len(runs) == 2 and all(r["run_id"].startswith("fixture__tinycalc-1@") for r in runs)
    copy = next(f for f in report["files"] if "batch_1_copy" in f["path"])
    assert copy["loaded"] == 0 and any("already loaded from" in reason for reason in copy["skipped_by"])


def test_two_runs_saved_under_one_chosen_name_are_two_runs(cli, tmp_path):
    """``mini -o fix.traj.json`` in two folders, each a different run: two runs, never one replacing the other; the
    id is the name with the run's own digest, so the same run under two names is still told apart from any other."""
    one = FIXTURE / "cli" / "toolcall" / "cli_toolcall_submit_openai.traj.json"
    other = FIXTURE / "cli" / "text" / "cli_text_submit_openai.traj.json"
    _copy(one, tmp_path / "night" / "monday" / "fix.traj.json")
    _copy(other, tmp_path / "night" / "tuesday" / "fix.traj.json")
    db = tmp_path / "chosen.duckdb"
    report = cli("ingest", tmp_path / "night", "--json", "--db", db).json()
    assert report["totals"]["rejected"] == 0 and all(f["status"] == "loaded" for f in report["files"])
    runs = cli("runs", "--json", "--no-fold-subagents", "--db", db).json()
    assert len(runs) == 2 and all(r["run_id"].startswith("fix@") for r in runs)
    assert sorted(r["steps"] for r in runs) == sorted(TRUTH[f"cli/{mode}/{name.name}"]["n_calls"]
                                                      for mode, name in (("toolcall", one), ("text", other)))


def test_a_ledger_with_money_and_no_model_call_is_never_a_run_that_cost_nothing(cli, tmp_path):
    """A trajectory whose messages this reader cannot take for model calls (here: the Responses-API turns without
    their "object", the format error gone) while its ledger records $0.00227: the file fails, named, exit 2."""
    def unreadable(document):
        document["messages"] = [{k: v for k, v in m.items() if k != "object"} for m in document["messages"]
                                if not (m.get("role") == "user" and "interrupt_type" in (m.get("extra") or {}))]

    target = _copy(FIXTURE / "cli" / "responses" / "cli_responses_submit_openai.traj.json",
                   tmp_path / "r" / "responses.traj.json", unreadable)
    db = tmp_path / "r.duckdb"
    result = cli("ingest", target, "--json", "--db", db)
    assert result.code == 2
    failed = result.json()["files"][0]
    assert failed["status"] == "failed" and failed["loaded"] == 0
    assert "instance_cost" in " ".join(failed["notes"]) + result.err


# --- The findings ---------------------------------------------------------------------------------------------------

DEFAULT_AGENT_BESIDE = "api/toolcall/api_toolcall_submit_beside_command.traj.json"
TIME_EXCEEDED = "cli/text/cli_text_time_exceeded.traj.json"


def test_every_finding_on_the_fixture_is_explained(cli, db):
    """Each finding, and why.

    True defects — mini's DefaultAgent (the test models' agent and the SWE-bench runner's) records no result for the
    commands of a reply that submits: ``python3 calc.py``, asked for beside the submit, ran (truth: executed, no
    observation) and its output is in no message. tool_calls_paired reports the call without a result, and
    steps_equal_tool_results the final answer that asked for a tool whose result the journal lacks (the same lost
    result; with InteractiveAgent, which writes it, neither is reported).

    Not a defect of the run: budgets_enforced on cli_text_time_exceeded's second call. make_fixture.py rewrote every
    extra.timestamp to a synthetic clock (1.25 s a timestamped event, plus whole seconds of the real gap): by the
    file's times the second call was asked when the first command's result was stamped, 1.25 s after the run's first
    stamp, past wall_time_limit_seconds = 1; mini measured its real clock, under a second there (it checks before
    every query, and stopped before the third, after a 1.5 s command). The check reads the times the file holds,
    rightly; on a real trajectory the same finding would be a fence that let a call through late.
    """
    default_agent, _ = shown_run(cli, db, DEFAULT_AGENT_BESIDE)
    time_exceeded, _ = shown_run(cli, db, TIME_EXCEEDED)
    lost = next(c for c in TRUTH[DEFAULT_AGENT_BESIDE]["commands"] if not c["submitted"] and c["call"] == 1)
    assert lost["executed"] and lost["observation_message_index"] is None
    findings = cli("check", "--json", "--db", db).json()["findings"]
    assert sorted((f["check"], f["run_id"], f["step"]) for f in findings) == sorted([
        ("tool_calls_paired", default_agent["run_id"], 2),
        ("steps_equal_tool_results", default_agent["run_id"], 2),
        ("budgets_enforced", time_exceeded["run_id"], 2),
    ])
    paired = next(f for f in findings if f["check"] == "tool_calls_paired")
    assert lost["tool_call_id"] in paired["detail"]
    fence = next(f for f in findings if f["check"] == "budgets_enforced")
    assert re.search(r"it started 1\.250 s in, with a wall clock of 1 s", fence["detail"])  # the first result's stamp
    assert TRUTH[TIME_EXCEEDED]["limits"]["wall_time_limit_seconds"] == 1 and TRUTH[TIME_EXCEEDED]["n_calls"] == 2


def test_a_command_asked_for_after_the_submit_was_not_run(cli, tmp_path):
    """DefaultAgent's reply [submit, command] (the beside-command run, its two calls swapped): mini stops at the
    submit, so the command never ran and nothing records it — a call of the final answer, not run, not lost."""
    def swapped(document):
        reply = document["messages"][4]
        reply["tool_calls"].reverse()
        reply["extra"]["actions"].reverse()

    source = FIXTURE / DEFAULT_AGENT_BESIDE
    _copy(source, tmp_path / "night" / source.name, swapped)
    db = tmp_path / "s.duckdb"
    assert cli("ingest", tmp_path / "night", "--db", db).code == 0
    run_id = source.name.removesuffix(".traj.json")
    final = cli("show", run_id, "--step", 2, "--json", "--db", db).json()
    assert final["is_final"] and [q["tool_name"] for q in final["tool_calls"]] == ["bash"]
    not_run = cli("show", run_id, "--step", 3, "--json", "--db", db).json()
    assert not_run["kind"] == "tool" and not_run["tool_status"] == "not_run"
    assert not_run["call_id"] == final["tool_calls"][0]["call_id"]
    findings = cli("check", "--json", "--db", db).json()["findings"]
    assert [f for f in findings if f["check"] in ("tool_calls_paired", "steps_equal_tool_results")] == []
