"""The morning report is about one night: a store of many months shows that night's runs, findings and bill.

The store holds the sample night and a copy of it shifted 140 days back (run ids renamed, the providers'
exports shifted with it). Every count the report shows is checked against a count made here, in plain
Python, from the raw files.
"""

from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLE_RUNS

SHIFT = timedelta(days=140)
NIGHT = "2026-11-28"  # the sample's night; the copy is the night of 2026-07-11
NIGHT_START, NIGHT_END = (datetime(2026, 11, 28, 12, tzinfo=timezone.utc), datetime(2026, 11, 29, 12, tzinfo=timezone.utc))
ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$")
RENAMED = {"run_id", "call_id", "idempotency_key", "request_id", "response_id"}


def _shifted(value, key: str = ""):
    """A journal or export value moved SHIFT back in time, its ids renamed (old-…)."""
    if isinstance(value, dict):
        return {k: _shifted(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shifted(v, key) for v in value]
    if isinstance(value, str) and ISO.match(value):
        moment = datetime.fromisoformat(value.replace("Z", "+00:00")) - SHIFT
        return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    if isinstance(value, str) and key in RENAMED:
        return "old-" + value
    if isinstance(value, int) and key in ("start_time", "end_time"):  # OpenAI's buckets: epoch seconds
        return value - int(SHIFT.total_seconds())
    return value


def _copy_shifted(source: Path, target: Path) -> None:
    for path in source.rglob("*"):
        if path.suffix not in (".jsonl", ".json") or path.name.startswith("planted"):
            continue
        out = target / path.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        if path.suffix == ".jsonl":
            out.write_text("".join(json.dumps(_shifted(json.loads(line))) + "\n" for line in path.open()))
        else:
            out.write_text(json.dumps(_shifted(json.loads(path.read_text()))))


def _runs_in_night(folder: Path, since: datetime, until: datetime) -> int:
    """Runs whose run_start falls in [since, until), counted in the raw journals."""
    count = 0
    for path in folder.rglob("*.jsonl"):
        for line in path.open():
            record = json.loads(line)
            if record["type"] == "run_start":
                count += since <= datetime.fromisoformat(record["ts"].replace("Z", "+00:00")) < until
    return count


def _billed(folder: Path, since: datetime, until: datetime) -> Decimal:
    """What the providers' cost exports bill for the buckets overlapping [since, until), from the raw exports."""
    total = Decimal(0)
    for page in json.loads((folder / "anthropic_cost_report.json").read_text())["data"]:
        start, end = (datetime.fromisoformat(page[k].replace("Z", "+00:00")) for k in ("starting_at", "ending_at"))
        if start < until and end > since:
            total += sum(Decimal(r["amount"]) for r in page["results"]) / 100  # Anthropic's amounts are in cents
    for page in json.loads((folder / "openai_costs.json").read_text())["data"]:
        start, end = (datetime.fromtimestamp(page[k], timezone.utc) for k in ("start_time", "end_time"))
        if start < until and end > since:
            total += sum(Decimal(str(r["amount"]["value"])) for r in page["results"])
    return total


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory):
    """The sample night and its copy 140 days earlier, through `reconcile morning`."""
    from reconcile.cli import main

    base = tmp_path_factory.mktemp("two-nights")
    folder = base / "runs"
    shutil.copytree(SAMPLE_RUNS / NIGHT, folder / NIGHT)
    shutil.copytree(SAMPLE_RUNS / "provider", folder / "provider")
    _copy_shifted(SAMPLE_RUNS / NIGHT, folder / "old")
    _copy_shifted(SAMPLE_RUNS / "provider", folder / "old-provider")
    code = main(["morning", str(folder), "--out", str(base / "out"), "--db", str(base / "s.duckdb"), "--tz", "UTC"])
    return base, folder, code


def _tiles(html: str) -> dict[str, str]:
    glance = html[html.index('<section id="glance"'):html.index("</section>")]
    return dict(re.findall(r'class="tile[^"]*">(?:<a href="#[^"]+">)?([^<]+)(?:</a>)?<b>([^<]+)</b>', glance))


def test_the_morning_report_counts_only_its_night(two_nights):
    base, folder, code = two_nights
    planted = json.loads((SAMPLE_RUNS / "planted.json").read_text())
    night_runs = _runs_in_night(folder, NIGHT_START, NIGHT_END)
    all_runs = _runs_in_night(folder, datetime.min.replace(tzinfo=timezone.utc), datetime.max.replace(tzinfo=timezone.utc))
    assert night_runs == 300 and all_runs == 600  # the raw files: two nights of 300 runs
    html = (base / "out" / "morning.html").read_text()
    tiles = _tiles(html)
    assert "the night of 2026-11-28" in html and tiles["Runs"] == str(night_runs)
    assert f"{night_runs} run(s) checked, of {all_runs} in the store" in html
    # the findings are the night's: exactly what the generator planted in it, none from July
    findings = json.loads((base / "out" / "findings.json").read_text())["findings"]
    assert sorted(str((f["check"], f["run_id"], f["step"])) for f in findings) == \
        sorted(str((p["check"], p["run_id"], p["step"])) for p in planted)
    assert int(tiles["Errors"]) + int(tiles["Warnings"]) == len(planted)
    assert not any(f["run_id"] and f["run_id"].startswith("old-") for f in findings)
    assert "old-" not in html.split('id="earlier"')[1].split("</p>")[1]  # no July run anywhere past the note
    # the bill is the buckets overlapping the night, not the store's (which holds July's as well)
    billed = _billed(folder / "provider", NIGHT_START, NIGHT_END)
    assert billed and _billed(folder / "old-provider", NIGHT_START, NIGHT_END) == 0
    assert tiles["Billed"] == f"${billed.quantize(Decimal('0.01')):,}"


def test_older_findings_are_counted_and_named(two_nights, cli):
    base, folder, code = two_nights
    html = (base / "out" / "morning.html").read_text()
    note = re.search(r'<p class="note" id="earlier">(.*?)</p>', html, re.S)[1]
    older = int(re.search(r"carry (\d+) finding\(s\)", note)[1])
    planted = json.loads((SAMPLE_RUNS / "planted.json").read_text())
    assert older == len(planted)  # the July copy carries the same planted defects
    assert "The 300 earlier run(s)" in note and "<code>reconcile check --until 2026-11-28T12:00:00Z</code>" in note
    assert 'href="#earlier"' in html  # linked from the top of the page
    listed = cli("check", "--until", "2026-11-28T12:00:00Z", "--json", "--db", base / "s.duckdb").json()["findings"]
    on_runs = [f for f in listed if f["run_id"]]
    assert len(on_runs) == sum(1 for p in planted if p["run_id"]) and all(f["run_id"].startswith("old-") for f in on_runs)
    # the command places a provider bucket's finding by the bucket's start: the night's first daily bucket began at
    # midnight, before the night, so it lists that bucket's findings too, and the note says how many
    shared = int(re.search(r"and the (\d+) provider-bucket finding", note)[1])
    assert len(listed) == older + shared


def test_report_morning_on_the_store_is_the_same_night(two_nights, cli, tmp_path):
    base, folder, code = two_nights
    assert cli("report", "morning", "--out", tmp_path / "m.html", "--tz", "UTC", "--db", base / "s.duckdb").code == 0
    html = (tmp_path / "m.html").read_text()
    assert _tiles(html) == _tiles((base / "out" / "morning.html").read_text())


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_the_morning_keeps_its_verdicts_on_the_earlier_runs_too(two_nights, tmp_path, monkeypatch):
    """A history no morning judged night by night (here the July copy, ingested with the night) is judged once:
    the morning keeps the verdicts its second pass reached, and the next morning reuses them all."""
    import duckdb

    import reconcile.reports.reporting
    from reconcile.cli import main

    base, folder, code = two_nights
    each_run = sorted(p.stem for p in (ROOT / "queries").glob("*.sql") if "-- judges: each run" in p.read_text())
    assert len(each_run) > 10
    with duckdb.connect(str(base / "s.duckdb"), read_only=True) as con:
        held = dict(con.execute("select check_name, count(distinct run_id) from kept_judgements group by all").fetchall())
    assert held == {name: 600 for name in each_run}  # both nights' runs, not only the night's 300

    db = tmp_path / "again.duckdb"
    shutil.copy(base / "s.duckdb", db)
    passes = []
    judged = reconcile.reports.reporting.run_checks
    monkeypatch.setattr(reconcile.reports.reporting, "run_checks", lambda *a, **k: passes.append(judged(*a, **k)) or passes[-1])
    assert main(["morning", str(folder), "--out", str(tmp_path / "out"), "--db", str(db), "--tz", "UTC"]) == code
    assert [report.kept for report in passes] == [300 * len(each_run)] * 2  # the night, then the runs before it
    earlier = re.compile(r'<p class="note" id="earlier">(.*?)</p>', re.S)
    assert earlier.search((tmp_path / "out" / "morning.html").read_text())[1] == \
        earlier.search((base / "out" / "morning.html").read_text())[1]


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_night_chooses_the_night_to_judge(two_nights, cli, tmp_path):
    """Issue 50: `morning --night DATE` (and `report morning --night`) judge that night, not the latest."""
    base, folder, code = two_nights
    old_night = (NIGHT_START - timedelta(days=140)).date().isoformat()
    planted = json.loads((SAMPLE_RUNS / "planted.json").read_text())
    result = cli("morning", folder, "--out", tmp_path / "old", "--db", base / "s.duckdb", "--tz", "UTC",
                 "--night", old_night, "--exit-zero")
    assert result.code == 0 and f"the night of {old_night}" in result.out
    findings = json.loads((tmp_path / "old" / "findings.json").read_text())["findings"]
    on_runs = [f for f in findings if f["run_id"]]
    assert on_runs and all(f["run_id"].startswith("old-") for f in on_runs)  # July's runs, July's findings
    assert len(on_runs) == sum(1 for p in planted if p["run_id"])
    html = (tmp_path / "old" / "morning.html").read_text()
    assert f"the night of {old_night}" in html and _tiles(html)["Runs"] == "300"
    assert cli("report", "morning", "--night", old_night, "--out", tmp_path / "m.html", "--tz", "UTC",
               "--db", base / "s.duckdb").code == 0
    assert _tiles((tmp_path / "m.html").read_text()) == _tiles(html)
    empty = cli("report", "morning", "--night", "2026-10-01", "--out", tmp_path / "e.html", "--db", base / "s.duckdb")
    assert empty.code == 2 and "no runs on the night of 2026-10-01" in empty.err and NIGHT in empty.err
    both = cli("report", "morning", "--night", NIGHT, "--since", "7d", "--out", tmp_path / "b.html", "--db", base / "s.duckdb")
    assert both.code == 2 and "one or the other" in both.err
    bad = cli("report", "morning", "--night", "last tuesday", "--out", tmp_path / "b.html", "--db", base / "s.duckdb")
    assert bad.code == 2 and "is not a date" in bad.err


def test_show_lists_the_run_s_findings_worst_first(two_nights, cli):
    """Issue 50: `show RUN` lists what the recorded checks found on the run (here: what the generator planted)."""
    base, folder, code = two_nights
    planted = [p for p in json.loads((SAMPLE_RUNS / "planted.json").read_text()) if p["run_id"] == "730b"]
    shown = cli("show", "730b", "--json", "--db", base / "s.duckdb").json()
    assert sorted((f["check"], f["step"]) for f in shown["findings"]) == sorted((p["check"], p["step"]) for p in planted)
    assert [f["severity"] for f in shown["findings"]] == sorted(f["severity"] for f in shown["findings"])  # error first
    text = cli("show", "730b", "--db", base / "s.duckdb").out
    assert "Findings on run 730b" in text and all(p["check"] in text for p in planted)
    clean = cli("show", "cdac", "--db", base / "s.duckdb").out
    assert "Findings: none recorded on this run" in clean


def test_show_keeps_an_error_on_one_line_and_whole_words():
    from reconcile.cli.inspect_cmd import brief

    message = "Traceback (most recent call last):\n  File \"tool.py\", line 3\nConnectionResetError: peer reset " * 3
    shown = brief(message)
    assert "\n" not in shown and len(shown) <= 82 and shown.endswith(" …")
    assert all(word in message.split() for word in shown.removesuffix(" …").split())  # no word cut in two
    assert brief("short\nerror") == "short error" and brief(None) == ""
