"""Inspect AI logs (.json and .eval): one run per sample run (loaded once wherever seen), unknown usage kept unknown,
the tool catalogue and the model_usage ledger read."""

from __future__ import annotations

import copy
import json
import math
import shutil
import zipfile
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.formats.inspect_ai import FORMAT
from reconcile.ingest.driver import ingest
from reconcile.engine import DuckDBEngine

INSPECT = ROOT / "tests" / "fixtures" / "realdata" / "inspect-ai"
LOGS = sorted(p for p in INSPECT.iterdir() if p.suffix in (".json", ".eval"))
BROWSER = INSPECT / "tests__analysis__test_logs__2025-05-12T20-27-36-04-00_browser.json"
MMLU = INSPECT / "tests__analysis__test_logs_choices__mmlu-summary-choices.eval"
DEDUP = INSPECT / "tests__log__test_eval_log__log_message_deduplication.eval"
OLD = INSPECT / "tests__scorer__logs__2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval"
BROWSER_RUN = "ATYFNjyWUz4mZ5Dgj6yd4f"  # the browser sample's uuid


def samples(path: Path) -> tuple[dict, list[dict]]:
    """Written here with the standard library: the log's header and its samples."""
    if path.suffix == ".json":
        log = json.loads(path.read_text(encoding="utf-8"))
        return log, log.get("samples") or []
    with zipfile.ZipFile(path) as archive:
        header = json.loads(archive.read("header.json"))
        return header, [json.loads(archive.read(n)) for n in archive.namelist() if n.startswith("samples/")]


def run_id(header: dict, path: Path, sample: dict) -> str:
    """The sample run's own id, else the eval's identity with sample id and epoch (as the docstring says)."""
    if sample.get("uuid"):
        return sample["uuid"]
    ev = header["eval"]
    key = ev.get("eval_id") or "/".join(x for x in (ev.get("run_id"), ev.get("task_id")) if x) or path.stem
    return f"{key}/{sample['id']}/epoch {sample['epoch']}"


def model_events(events: list[dict]):
    for event in events:
        if event.get("event") == "model":
            yield event
        yield from model_events(event.get("events") or [])


def as_eval(log: dict, path: Path) -> Path:
    """An .eval archive of a .json log, laid out as Inspect writes one (header without samples, one member each)."""
    header = {k: v for k, v in log.items() if k != "samples"}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("_journal/start.json", json.dumps({"version": log["version"], "eval": log["eval"]}))
        for sample in log.get("samples") or []:
            archive.writestr(f"samples/{sample['id']}_epoch_{sample['epoch']}.json", json.dumps(sample))
        archive.writestr("header.json", json.dumps(header))
    return path


def as_json(path: Path, out: Path) -> Path:
    header, found = samples(path)
    out.write_text(json.dumps({**header, "samples": found}), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def inspect(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("inspect") / "inspect.duckdb")
    report = ingest(con, [INSPECT])
    yield con, report
    con.close()


def test_every_log_loads_one_record_per_sample(inspect):
    con, report = inspect
    assert sorted(f.format for f in report.files) == ["inspect_ai"] * 6
    assert all(f.rejected == 0 and f.skipped == 0 for f in report.files)
    expected = sorted(run_id(*samples(p)[:1], p, s) for p in LOGS for s in samples(p)[1])
    assert [r for (r,) in con.execute("select run_id from runs order by run_id").fetchall()] == expected
    assert len(expected) == 19


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[-32:])
def test_tokens_per_sample_equal_the_sample_s_model_usage(inspect, path):
    """Before inspect 0.3.184 OpenAI's input_tokens include the cache reads: ours are disjoint, so uncached + read = input.

    Where the log leaves the reads out (inspect 0.3.58), the whole input is known (the context) and its split is not.
    """
    con, _ = inspect
    header, found = samples(path)
    for sample in found:
        usage = sample.get("model_usage") or {}
        got = con.execute("""select sum(input_uncached + cache_read), sum(cache_read), sum(output_tokens),
                                    sum(context_tokens), count(*) filter (where input_uncached is null),
                                    count(*) filter (where cache_read is null), count(*)
                             from steps where run_id = ? and kind = 'model'""", [run_id(header, path, sample)]).fetchall()[0]
        if not usage:  # the test double "hardcoded/hardcoded" records none: unknown, not 0
            assert got[:4] == (None, None, None, None) and got[4] == got[5] == got[6] > 0
            continue
        inputs = sum(u["input_tokens"] for u in usage.values())
        assert got[2] == sum(u["output_tokens"] for u in usage.values())
        assert got[3] == inputs  # the context: all input, which input_tokens was then
        if all("input_tokens_cache_read" in u for u in usage.values()):
            assert got[:2] == (inputs, sum(u["input_tokens_cache_read"] for u in usage.values()))
            assert got[4] == got[5] == 0
        else:  # the reads are not recorded: neither they nor the uncached rest are known
            assert got[:2] == (None, None) and got[4] == got[5] == got[6]


def test_calls_tools_status_and_time(inspect):
    con, _ = inspect
    steps = con.execute("""select kind, tool_name, tool_status, call_id from step_view
                           where run_id = ? order by idx""", [BROWSER_RUN]).fetchall()
    assert [s[0] for s in steps] == ["model", "tool"] * 4 + ["model"]
    assert steps[1][1:] == ("web_browser_go", "ok", "call_35FTpd6shR9efioDgeEBZ33s")
    run = con.execute("""select status, status_inferred, stop_reason, task_class, model, provider, wall_seconds,
                                working_seconds from run_view where run_id = ?""", [BROWSER_RUN]).fetchall()[0]
    # the run's model as its calls name it (output.model), so a run and its steps name one model; the provider is the
    # model string's first part, as Inspect records it
    assert run == ("succeeded", False, None, "browser", "gpt-4o-mini-2024-07-18", "openai", 18.517, 18.36)  # total, working
    priced = con.execute("select count(*) from step_view where kind = 'model' and unpriced and input_tokens > 0").fetchall()[0][0]
    assert priced == 0


def test_the_sample_s_own_start_and_end_are_its_times(inspect):
    """Since late 2025 a sample records started_at and completed_at."""
    con, _ = inspect
    header, (sample,) = samples(MMLU)
    got = con.execute("select started_at, ended_at from run_view where run_id = ?", [sample["uuid"]]).fetchall()[0]
    assert got == (datetime.fromisoformat(sample["started_at"]), datetime.fromisoformat(sample["completed_at"]))


def test_a_log_without_call_end_times_ends_at_its_last_event(inspect):
    """inspect 0.3.58 records neither total_time nor a call's completion: the end is the last event the log shows."""
    con, _ = inspect
    header, found = samples(OLD)
    for sample in found:
        assert sample.get("total_time") is None and sample.get("started_at") is None
        first_call = min(datetime.fromisoformat(e["timestamp"]) for e in model_events(sample["events"]))
        call_ends = [datetime.fromisoformat(e["timestamp"]) + timedelta(seconds=e["output"]["time"])
                     for e in model_events(sample["events"])]
        last = max(datetime.fromisoformat(e["timestamp"]) for e in sample["events"])
        assert last > max(call_ends)  # the solver's state and step-end events follow the call: the sample still ran
        got = con.execute("select started_at, ended_at from runs where run_id = ?",
                          [run_id(header, OLD, sample)]).fetchall()[0]
        assert got == (first_call, last)


def test_a_model_graded_scorer_s_calls_are_billed_but_not_the_agent_s(inspect):
    """security-guide: model_graded_fact grades each answer with a model call inside the scorer's span. It is paid for
    (a model step, in the cost) but is no part of the agent's conversation: labelled, off the main thread, and the
    final answer is the agent's, not the grader's verdict."""
    con, _ = inspect
    path = INSPECT / "tests__analysis__test_logs__2025-05-12T20-28-26-04-00_security-guide.json"
    header, found = samples(path)
    for sample in found:
        spans = {e["id"]: e for e in sample["events"] if e["event"] == "span_begin"}
        calls = [e for e in sample["events"] if e["event"] == "model"]
        graded = [spans[e["span_id"]]["type"] == "scorer" for e in calls]
        assert graded == [False, True]
        got = con.execute("""select agent_label, is_final, output_text from steps where run_id = ? and kind = 'model'
                             order by idx""", [sample["uuid"]]).fetchall()
        assert [(label, final) for label, final, _ in got] == [(None, True), ("scorer", False)]
        answer = calls[0]["output"]["choices"][0]["message"]["content"]
        answer = sample["attachments"].get(answer.removeprefix("attachment://"), answer)
        assert con.execute("select final_output from runs where run_id = ?", [sample["uuid"]]).fetchall() == [(answer,)]
        assert got[0][2] == answer


# --- unknown stays NULL: every optional usage key deleted in turn, from a real record ------------------------------

ANTHROPIC = "anthropic/claude-3-5-sonnet-20241022"
DELETED = {  # key -> columns that become unknown, by provider (older log: OpenAI's input_tokens held the reads)
    "input_tokens": {"openai": ("input_uncached", "context_tokens"), "anthropic": ("input_uncached", "context_tokens")},
    "input_tokens_cache_read": {"openai": ("cache_read", "input_uncached"), "anthropic": ("cache_read", "context_tokens")},
    "input_tokens_cache_write": {"openai": (), "anthropic": ("cache_write_5m", "context_tokens")},
    "output_tokens": {"openai": ("output_tokens",), "anthropic": ("output_tokens",)},
    "reasoning_tokens": {"openai": ("reasoning_tokens",), "anthropic": ("reasoning_tokens",)},
    "total_cost": {"openai": ("harness_cost_micros",), "anthropic": ("harness_cost_micros",)},
}
COLUMNS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens", "reasoning_tokens",
           "context_tokens", "harness_cost_micros")


def _variant(provider: str, deleted: str | None) -> dict:
    """The real browser log, every usage key present (write and cost added), then ``deleted`` taken out of every call."""
    log = json.loads(BROWSER.read_text())
    sample = log["samples"][0]
    sample["uuid"] = f"{provider}-{deleted or 'none'}"
    for event in model_events(sample["events"]):
        usage = event["output"]["usage"]
        usage.setdefault("input_tokens_cache_write", 64 if provider == "anthropic" else 0)
        usage["total_cost"] = 0.000125
        if provider == "anthropic":
            event["model"] = ANTHROPIC
        if deleted:
            usage.pop(deleted)
    return log


def _newer() -> dict:
    log = json.loads(BROWSER.read_text())
    log["eval"]["packages"]["inspect_ai"] = "0.3.190"
    log["samples"][0].update(uuid="newer", limit={"type": "token", "limit": 15000})
    return log


def _cached() -> tuple[dict, dict, dict]:
    """A call Inspect replayed from its response cache: as Inspect counts it, not in the sample's model_usage."""
    log = json.loads(BROWSER.read_text())
    sample = log["samples"][0]
    sample["uuid"] = "cached"
    replayed = list(model_events(sample["events"]))[1]
    replayed["cache"] = "read"
    kept = sample["model_usage"]["openai/gpt-4o-mini"]
    for key in ("input_tokens", "output_tokens", "total_tokens", "input_tokens_cache_read"):
        kept[key] -= replayed["output"]["usage"][key]
    return log, replayed, kept


def _early() -> dict:
    log = json.loads(BROWSER.read_text())
    sample = log["samples"][0]
    sample["uuid"] = "early"
    sample["transcript"] = {"events": sample.pop("events"), "content": {}}
    return log


@pytest.fixture(scope="module")
def variants(tmp_path_factory):
    """Copies of the real browser log, each changed one way and given its own uuid, ingested together once."""
    folder = tmp_path_factory.mktemp("variants")
    for provider in ("openai", "anthropic"):
        for key in [None, *DELETED]:
            (folder / f"{provider}-{key or 'none'}.json").write_text(json.dumps(_variant(provider, key)))
    (folder / "newer.json").write_text(json.dumps(_newer()))
    (folder / "cached.json").write_text(json.dumps(_cached()[0]))
    (folder / "early.json").write_text(json.dumps(_early()))
    con = store.connect(folder / "d.duckdb")
    report = ingest(con, [folder])
    assert report.totals["rejected"] == 0 and report.totals["skipped"] == 0
    yield con
    con.close()


def _stored(con, run: str) -> list[dict]:
    rows = con.execute(f"select {', '.join(COLUMNS)} from steps where run_id = ? and kind = 'model' order by idx",
                       [run]).fetchall()
    assert len(rows) == 5
    return [dict(zip(COLUMNS, row)) for row in rows]


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_with_every_usage_key_present_every_bucket_is_known(variants, provider):
    for step in _stored(variants, f"{provider}-none"):
        assert all(value is not None for value in step.values()), step


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("key", list(DELETED))
def test_a_usage_key_the_record_leaves_out_is_stored_as_unknown_never_0(variants, provider, key):
    unknown = DELETED[key][provider]
    for step in _stored(variants, f"{provider}-{key}"):
        assert [c for c in COLUMNS if step[c] is None] == [c for c in COLUMNS if c in unknown], (key, step)


def test_only_the_declared_zero_buckets_are_0_without_a_record(variants):
    """OpenAI bills no cache writes, and Inspect asks for no 1-hour cache: those two are 0, and declared so."""
    assert set(FORMAT.zero_buckets) == {"cache_write_5m", "cache_write_1h"}
    assert all(why.strip() for why in FORMAT.zero_buckets.values())
    steps = _stored(variants, "openai-input_tokens_cache_write")
    assert {(s["cache_write_5m"], s["cache_write_1h"]) for s in steps} == {(0, 0)}
    # an Anthropic call without the key: its writes are unknown, its 1-hour writes still none
    assert {(s["cache_write_5m"], s["cache_write_1h"]) for s in _stored(variants, "anthropic-input_tokens_cache_write")
            } == {(None, 0)}


def test_a_call_without_usage_is_unknown_in_every_bucket_even_the_zero_ones(inspect):
    """The test model hardcoded/hardcoded answers with no usage at all, and Inspect adds nothing to the sample's
    model_usage ({}): the log records nothing of what the calls billed. Unknown, not 0 -- no provider name means free."""
    con, _ = inspect
    (sample,) = samples(DEDUP)[1]
    calls = list(model_events(sample["events"]))
    assert calls and all("usage" not in e["output"] and "call" not in e for e in calls)
    assert sample["model_usage"] == {} and {e["model"] for e in calls} == {"hardcoded/hardcoded"}
    got = con.execute(f"select count(*), {', '.join(COLUMNS)} from steps where kind = 'model' and run_id = ? group by all",
                      [sample["uuid"]]).fetchall()
    assert got == [(len(calls),) + (None,) * len(COLUMNS)]
    run = con.execute("""select steps, input_tokens, output_tokens, cost_micros, cost_high_micros, ledger_tokens
                         from run_view where run_id = ?""", [sample["uuid"]]).fetchall()
    assert run == [(len(calls), None, None, None, None, None)]


def test_the_newer_meaning_of_input_tokens_is_read_from_the_log_s_version(variants):
    """From inspect 0.3.184 input_tokens excludes cache reads: the same numbers then mean more input."""
    got = variants.execute("""select sum(input_uncached), sum(cache_read) from steps where kind = 'model'
                              and run_id = 'newer'""").fetchall()[0]
    usage = _newer()["samples"][0]["model_usage"]["openai/gpt-4o-mini"]
    assert got == (usage["input_tokens"], usage["input_tokens_cache_read"])  # not input − read
    run = variants.execute("select status, stop_reason, ledger_input_tokens from runs where run_id = 'newer'").fetchall()
    # the ledger's input is all input, in the same meaning: input + reads
    assert run == [("budget_exceeded", "token limit (15000)", usage["input_tokens"] + usage["input_tokens_cache_read"])]


def test_a_call_answered_from_inspect_s_own_cache_cost_nothing(variants):
    """cache: "read" means Inspect replayed a stored response: no provider call was made, none was billed."""
    _, replayed, kept = _cached()
    step = variants.execute(f"""select {', '.join(COLUMNS)} from steps where kind = 'model' and idx = 2
                                and run_id = 'cached'""").fetchall()[0]
    assert step[:6] == (0, 0, 0, 0, 0, 0) and step[7] == 0
    assert step[6] == replayed["output"]["usage"]["input_tokens"]  # the conversation's size at that call is still known
    got = variants.execute("""select input_tokens, output_tokens, total_tokens, ledger_input_tokens, ledger_output_tokens,
                                     ledger_tokens from run_view where run_id = 'cached'""").fetchall()[0]
    assert got[:3] == got[3:] == (kept["input_tokens"], kept["output_tokens"], kept["total_tokens"])


def test_an_early_log_s_events_under_transcript_are_read(variants):
    """Before inspect 0.3.5x a sample kept its events in "transcript": {"events": [...]}."""
    assert variants.execute("""select count(*) filter (where kind = 'model'), count(*) filter (where kind = 'tool')
                               from steps where run_id = 'early'""").fetchall()[0] == (5, 4)


# --- the catalogue and the ledger ---------------------------------------------------------------------------------

def _schema_tokens(tool: dict, attachments: dict) -> int:
    """UTF-8 bytes of the definition as JSON, with an attachment reference counted at its text's length, / 4."""
    text = json.dumps(tool, separators=(",", ":"), ensure_ascii=False)
    for ref, content in attachments.items():
        text = text.replace(f"attachment://{ref}", json.dumps(content, ensure_ascii=False)[1:-1])
    return math.ceil(len(text.encode()) / 4)


@pytest.mark.parametrize("path", [BROWSER, DEDUP], ids=["browser", "dedup"])
def test_the_catalogue_is_every_tool_the_model_was_offered(inspect, path):
    con, _ = inspect
    header, (sample,) = samples(path)
    offered = {}
    for event in model_events(sample["events"]):
        for tool in event["tools"]:
            size = _schema_tokens(tool, sample.get("attachments") or {})
            offered[tool["name"]] = max(size, offered.get(tool["name"], 0))
    got = dict(con.execute("select name, schema_tokens from run_tools where run_id = ?", [sample["uuid"]]).fetchall())
    assert got == offered and len(got) == (8 if path == BROWSER else 2)
    called = {n for (n,) in con.execute("select tool_name from tool_calls where run_id = ?", [sample["uuid"]]).fetchall()}
    assert called and called <= set(got)
    assert con.execute("select catalogue from run_facts where run_id = ?", [sample["uuid"]]).fetchall() == [(True,)]


def test_an_attachment_s_text_counts_in_its_tool_s_size(inspect):
    """The python tool's description is an attachment reference: sized by the text it stands for."""
    con, _ = inspect
    header, (sample,) = samples(DEDUP)
    python = next(t for t in next(model_events(sample["events"]))["tools"] if t["name"] == "python")
    assert python["description"].startswith("attachment://")
    bare = math.ceil(len(json.dumps(python, separators=(",", ":")).encode()) / 4)
    got = con.execute("select schema_tokens from run_tools where run_id = ? and name = 'python'", [sample["uuid"]]).fetchall()
    assert got[0][0] > bare + 100


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[-32:])
def test_the_ledger_is_the_sample_s_model_usage(inspect, path):
    con, _ = inspect
    header, found = samples(path)
    for sample in found:
        usage = list((sample.get("model_usage") or {}).values())
        got = con.execute("""select ledger_input_tokens, ledger_output_tokens, ledger_tokens, ledger_cost_micros,
                                    input_tokens, output_tokens, total_tokens from run_view where run_id = ?""",
                          [run_id(header, path, sample)]).fetchall()[0]
        if not usage:  # nothing counted: no ledger (not a ledger of 0)
            assert got[:4] == (None, None, None, None)
            continue
        # older logs: OpenAI's input_tokens already held the reads, so it is all input
        assert got[:4] == (sum(u["input_tokens"] for u in usage), sum(u["output_tokens"] for u in usage),
                           sum(u["total_tokens"] for u in usage), None)  # no cost: these logs priced nothing
        assert got[1] == got[5]
        if got[4] is not None:  # where the steps' sums are known, they agree with the harness
            assert (got[0], got[2]) == (got[4], got[6])


def test_the_ledger_check_judges_the_runs_whose_sums_are_known_and_finds_nothing(inspect):
    from reconcile.checks import load_checks, run_checks, select_checks

    con, _ = inspect
    report = run_checks(DuckDBEngine(con), select_checks(load_checks(), ["ledger_matches_transcript"]), record=False)
    assert report.findings == []
    (result,) = report.results
    assert sum(n.count for n in result.not_judged) == 11  # 10 without their reads, 1 with no usage at all


# --- identity: the run the harness recorded, loaded once wherever it is seen ---------------------------------------

@pytest.fixture(scope="module")
def identity(tmp_path_factory):
    """One folder holding the same runs several ways, ingested once; files load in path order."""
    root = tmp_path_factory.mktemp("identity")
    log = json.loads(BROWSER.read_text())
    for folder in ("a", "b", "retry", "twin", "old", "anon"):
        (root / folder).mkdir()
    shutil.copy(BROWSER, root / "a" / BROWSER.name)  # the same log in two folders
    shutil.copy(BROWSER, root / "b" / BROWSER.name)
    as_eval(log, root / "twin" / "browser.eval")  # the same eval as .eval and .json (`inspect log convert`)
    shutil.copy(MMLU, root / "twin" / "mmlu.eval")
    as_json(MMLU, root / "twin" / "mmlu.json")
    # eval-retry writes a new eval (new eval_id, run_id) carrying finished samples over as they were (same uuid);
    # a sample it runs again has a new uuid: both attempts were paid for
    retry = copy.deepcopy(log)
    retry["eval"].update(eval_id="RetryEvalId000000000000", run_id="RetryRunId0000000000000")
    (root / "retry" / "retry.json").write_text(json.dumps(retry))
    retry["samples"][0]["uuid"] = "RerunSampleUuid00000000"
    (root / "retry" / "rerun.json").write_text(json.dumps(retry))
    # inspect 0.3.58: no uuid, no eval_id; a copy, and a second task of the same run (same sample ids)
    shutil.copy(OLD, root / "old" / "a.eval")
    shutil.copy(OLD, root / "old" / "copy.eval")
    header, found = samples(OLD)
    other = {**header, "eval": {**header["eval"], "task_id": "AnotherTaskOfTheSameRun"}, "samples": found}
    (root / "old" / "other-task.json").write_text(json.dumps(other))
    bare = {**header, "eval": {k: v for k, v in header["eval"].items() if k not in ("run_id", "task_id", "eval_id")},
            "samples": found[:1]}
    (root / "anon" / "anonymous.json").write_text(json.dumps(bare))
    con = store.connect(root / "s.duckdb")
    report = ingest(con, [root])
    files = {str(Path(f.path).relative_to(root)): f for f in report.files}
    yield con, files
    con.close()


def _ids(con, like: str) -> list[str]:
    return sorted(r for (r,) in con.execute("select run_id from runs where run_id like ?", [like]).fetchall())


def test_the_same_run_in_four_files_is_loaded_once(identity):
    """Two folders, its .eval form and a retry's carried-over copy: one run, its tokens counted once."""
    con, files = identity
    assert _ids(con, "ATYF%") == [BROWSER_RUN]
    assert con.execute("select sum(output_tokens) from steps where run_id = ?", [BROWSER_RUN]).fetchall() == [(281,)]
    assert (files[f"a/{BROWSER.name}"].loaded, files[f"a/{BROWSER.name}"].skipped) == (1, 0)
    for name in (f"b/{BROWSER.name}", "twin/browser.eval", "retry/retry.json"):
        assert (files[name].loaded, files[name].skipped) == (0, 1), name
        assert f"run {BROWSER_RUN} was already loaded from" in files[name].notes[0]
        assert files[name].notes[0].endswith(f"a/{BROWSER.name}")


def test_a_sample_a_retry_ran_again_is_another_run(identity):
    con, files = identity
    assert _ids(con, "Rerun%") == ["RerunSampleUuid00000000"] and files["retry/rerun.json"].loaded == 1


def test_an_eval_archive_and_its_json_export_are_the_same_runs(identity):
    con, files = identity
    assert _ids(con, samples(MMLU)[1][0]["uuid"]) == [samples(MMLU)[1][0]["uuid"]]
    assert (files["twin/mmlu.eval"].loaded, files["twin/mmlu.json"].loaded, files["twin/mmlu.json"].skipped) == (1, 0, 1)


def test_logs_without_sample_uuids_are_told_apart_by_eval_then_run_and_task(identity):
    """A copy of a 0.3.58 log is the same eval; a second task of the same run (its own task id) is another."""
    con, files = identity
    assert len(_ids(con, "nnS4q9qsuCrCzsBcQLnBLA/dPiJifoWeEQBrfWsAopzWr/%")) == 10
    assert len(_ids(con, "nnS4q9qsuCrCzsBcQLnBLA/AnotherTaskOfTheSameRun/%")) == 10
    assert {n: (f.loaded, f.skipped) for n, f in files.items() if n.startswith("old/")} == {
        "old/a.eval": (10, 0), "old/copy.eval": (0, 10), "old/other-task.json": (10, 0)}


def test_the_file_name_names_the_eval_only_when_the_log_records_no_identity(identity):
    con, _ = identity
    assert _ids(con, "anonymous/%") == [f"anonymous/{samples(OLD)[1][0]['id']}/epoch 1"]


# --- the reader's robustness ---------------------------------------------------------------------------------------

def test_an_eval_archive_whose_header_is_cut_short_is_a_clear_reject(tmp_path):
    broken = tmp_path / "broken.eval"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("_journal/start.json", "{}")
        archive.writestr("header.json", '{"version": 2, "eval": {"task": "t"}, "status": "success"')  # cut short
    con = store.connect(tmp_path / "b.duckdb")
    report = ingest(con, [broken])
    assert report.files[0].format == "inspect_ai" and report.files[0].rejected == 1
    assert "not valid JSON" in str(report.files[0].notes) or report.files[0].loaded == 0
    reasons = [reason for (reason,) in con.execute("select reason from rejects").fetchall()]
    assert len(reasons) == 1 and reasons[0].startswith("not valid JSON")  # named, never a crash
    con.close()


def test_an_eval_archive_is_recognised_whatever_time_its_members_carry(tmp_path):
    """The zip header before the first member's name holds its time and CRC; some of those bytes decode as one
    UTF-8 character, which once hid the name from the sniffer (at 20:07, 20:15, … of any day)."""
    from reconcile.formats.detect import detect

    archive = tmp_path / "log.eval"
    missed = []
    for hour in range(24):
        for minute in range(60):
            with zipfile.ZipFile(archive, "w") as out:
                out.writestr(zipfile.ZipInfo("header.json", date_time=(2026, 12, 1, hour, minute, 0)),
                             json.dumps({"version": 2, "eval": {"task": "t"}}))
            if getattr(detect(archive)[0], "name", None) != "inspect_ai":
                missed.append(f"{hour:02}:{minute:02}")
    assert missed == []


def test_the_eval_s_configured_limits_are_the_runs_budgets(tmp_path):
    """No public log configures a limit (its example says so); eval.config's limits are read as budgets, the sample's
    own ceiling first; the limits the store has no column for are kept as declared, in the run's labels."""
    log = json.loads(BROWSER.read_text(encoding="utf-8"))
    log["eval"]["config"] = {**log["eval"].get("config", {}), "token_limit": 50000, "time_limit": 600, "cost_limit": 1.25,
                             "message_limit": 40, "turn_limit": 12, "working_limit": 300}
    path = tmp_path / "limited.json"
    path.write_text(json.dumps(log), encoding="utf-8")
    own = copy.deepcopy(log)
    own["samples"][0].update(uuid="own-limits", token_limit=20000, time_limit=60, message_limit=None)
    (tmp_path / "own.json").write_text(json.dumps(own), encoding="utf-8")
    con = store.connect(tmp_path / "s.duckdb")
    ingest(con, [path, tmp_path / "own.json"])
    got = con.execute("select run_id, max_tokens, max_wall_seconds, max_cost_micros, labels::varchar from runs "
                      "order by run_id = 'own-limits'").fetchall()
    labels = '{"limits":{"message_limit":40,"turn_limit":12,"working_limit":300}}'
    assert got == [(BROWSER_RUN, 50000, 600, 1_250_000, labels), ("own-limits", 20000, 60, 1_250_000, labels)]
    assert FORMAT.examples["limits"].startswith("(no real file")
