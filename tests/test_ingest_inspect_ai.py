"""Inspect AI logs (.json and .eval): one run per sample and epoch, usage by the log's own version of input_tokens."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.ingest import ingest

INSPECT = ROOT / "tests" / "fixtures" / "realdata" / "inspect-ai"
LOGS = sorted(p for p in INSPECT.iterdir() if p.suffix in (".json", ".eval"))
BROWSER = INSPECT / "tests__analysis__test_logs__2025-05-12T20-27-36-04-00_browser.json"


def samples(path: Path) -> tuple[dict, list[dict]]:
    """Written here with the standard library: the log's header and its samples."""
    if path.suffix == ".json":
        log = json.loads(path.read_text(encoding="utf-8"))
        return log, log.get("samples") or []
    with zipfile.ZipFile(path) as archive:
        header = json.loads(archive.read("header.json"))
        return header, [json.loads(archive.read(n)) for n in archive.namelist() if n.startswith("samples/")]


def run_id(header: dict, path: Path, sample: dict) -> str:
    return f"{header['eval'].get('eval_id') or path.stem}/{sample['id']}/epoch {sample['epoch']}"


@pytest.fixture(scope="module")
def inspect(tmp_path_factory):
    con = store.connect(tmp_path_factory.mktemp("inspect") / "inspect.duckdb")
    report = ingest(con, [INSPECT])
    yield con, report
    con.close()


def test_every_log_loads_one_record_per_sample(inspect):
    con, report = inspect
    assert sorted(f.format for f in report.files) == ["inspect_ai"] * 6
    assert all(f.rejected == 0 for f in report.files)
    expected = sum(len(samples(p)[1]) for p in LOGS)
    assert con.execute("select count(*) from runs").fetchall()[0][0] == expected == 19


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name[-32:])
def test_tokens_per_sample_equal_the_sample_s_model_usage(inspect, path):
    """Before inspect 0.3.184 OpenAI's input_tokens include the cache reads: ours are disjoint, so uncached + read = input."""
    con, _ = inspect
    header, found = samples(path)
    for sample in found:
        usage = sample.get("model_usage") or {}
        got = con.execute("""select sum(input_uncached + cache_read), sum(cache_read), sum(output_tokens)
                             from steps where run_id = ? and kind = 'model'""", [run_id(header, path, sample)]).fetchall()[0]
        if not usage:  # the test double "hardcoded/hardcoded" records none: unknown, not 0
            assert got == (None, None, None)
            continue
        assert got == (sum(u["input_tokens"] for u in usage.values()),
                       sum(u.get("input_tokens_cache_read") or 0 for u in usage.values()),
                       sum(u["output_tokens"] for u in usage.values()))


def test_calls_tools_status_and_time(inspect):
    con, _ = inspect
    steps = con.execute("""select kind, tool_name, tool_status, call_id from step_view
                           where run_id = 'ZB2vu5GNujYaBdPSReCeop/1/epoch 1' order by idx""").fetchall()
    assert [s[0] for s in steps] == ["model", "tool"] * 4 + ["model"]
    assert steps[1][1:] == ("web_browser_go", "ok", "call_35FTpd6shR9efioDgeEBZ33s")
    run = con.execute("""select status, stop_reason, task_class, model, provider, wall_seconds, working_seconds
                         from run_view where run_id = 'ZB2vu5GNujYaBdPSReCeop/1/epoch 1'""").fetchall()[0]
    assert run == ("succeeded", None, "browser", "openai/gpt-4o-mini", "openai", 18.517, 18.36)  # total, working
    priced = con.execute("select count(*) from step_view where kind = 'model' and unpriced and input_tokens > 0").fetchall()[0][0]
    assert priced == 0


def test_the_newer_meaning_of_input_tokens_is_read_from_the_log_s_version(tmp_path):
    """From inspect 0.3.184 input_tokens excludes cache reads: the same numbers then mean more input."""
    log = json.loads(BROWSER.read_text())
    log["eval"]["packages"]["inspect_ai"] = "0.3.190"
    log["samples"][0]["limit"] = {"type": "token", "limit": 15000}
    newer = tmp_path / "newer.json"
    newer.write_text(json.dumps(log))
    con = store.connect(tmp_path / "n.duckdb")
    ingest(con, [newer])
    got = con.execute("""select sum(input_uncached), sum(cache_read) from steps where kind = 'model'""").fetchall()[0]
    usage = log["samples"][0]["model_usage"]["openai/gpt-4o-mini"]
    assert got == (usage["input_tokens"], usage["input_tokens_cache_read"])  # not input − read
    assert con.execute("select status, stop_reason from runs").fetchall()[0] == ("budget_exceeded", "token limit (15000)")
    con.close()


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


def test_an_early_log_s_events_under_transcript_are_read(tmp_path):
    """Before inspect 0.3.5x a sample kept its events in "transcript": {"events": [...]}."""
    log = json.loads(BROWSER.read_text())
    sample = log["samples"][0]
    sample["transcript"] = {"events": sample.pop("events"), "content": {}}
    early = tmp_path / "early.json"
    early.write_text(json.dumps(log))
    con = store.connect(tmp_path / "e.duckdb")
    report = ingest(con, [early])
    assert report.files[0].rejected == 0
    assert con.execute("select count(*) filter (where kind = 'model'), count(*) filter (where kind = 'tool') from steps"
                       ).fetchall()[0] == (5, 4)
    con.close()


def test_an_eval_member_the_standard_library_cannot_inflate_is_a_clear_reject(tmp_path):
    """A member compressed with a method zipfile lacks (93 is zstd) leaves an invalid document: one named reject."""
    archive = tmp_path / "zstd.eval"
    with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_STORED) as out:
        out.writestr("header.json", json.dumps({"version": 2, "eval": {"task": "t"}}))
        out.writestr("samples/1_epoch_1.json", json.dumps({"id": 1, "epoch": 1, "events": []}))
    data = bytearray(archive.read_bytes())
    for signature, offset in ((b"PK\x03\x04", 8), (b"PK\x01\x02", 10)):  # local headers, then the central directory
        start = 0
        while (start := data.find(signature, start)) >= 0:
            if b"samples/" in data[start:start + 80]:
                data[start + offset:start + offset + 2] = (93).to_bytes(2, "little")
            start += 4
    archive.write_bytes(bytes(data))
    con = store.connect(tmp_path / "z.duckdb")
    report = ingest(con, [archive])
    assert report.files[0].format == "inspect_ai" and report.files[0].rejected == 1
    assert con.execute("select reason from rejects").fetchall()[0][0].startswith("not valid JSON")
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
