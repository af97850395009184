"""The HTML reports: self-contained, escaped, redacted, and `reconcile morning` made for cron."""

from __future__ import annotations

import json
import os
import re
import shutil

import pytest

from conftest import ROOT, SAMPLE_RUNS
from journals import StepClock
from reconcile.errors import ExitCode
from reconcile.journal import Journal

ARTIFACTS = ROOT / "test-artifacts"
HOSTILE = '<script>alert("x")</script> <img src=x onerror=alert(1)> <a href="javascript:alert(2)">go</a>'
SECRET = "sk-ant-api03-Zq8mX3kLp9Rt2Vw5Yb7Nc4Hd6Jf1Gs0"


@pytest.fixture(scope="module")
def night(tmp_path_factory):
    """The sample night plus one hostile run, through `reconcile morning`, twice."""
    from reconcile.cli import main
    base = tmp_path_factory.mktemp("morning")
    folder = base / "night"
    shutil.copytree(SAMPLE_RUNS, folder)
    with Journal(folder / "hostile.jsonl", clock=StepClock()) as journal:
        run = journal.start_run("evil<script>", agent="red-team", model="claude-sonnet-4-5", provider="anthropic",
                                task_class=HOSTILE)
        step = run.model_step(usage={"input_uncached": 100, "output": 10},
                              tool_calls=[("fetch", {"url": "javascript:alert(3)", "password": "hunter22", "key": SECRET})])
        run.tool_step(step.calls[0], status="error", result=HOSTILE + f" Authorization: Bearer {SECRET}",
                      error=f"{HOSTILE} api_key={SECRET}")  # the morning report shows step errors
        run.end("tool_error", final_output=HOSTILE)
    codes = [main(["morning", str(folder), "--out", str(base / f"out{n}"), "--db", str(base / "night.duckdb")])
             for n in (1, 2)]
    return base, codes


def test_morning_exits_like_check_and_is_safe_to_run_twice(night):
    base, codes = night
    assert codes == [ExitCode.FINDINGS, ExitCode.FINDINGS]
    first, second = (json.loads((base / f"out{n}" / "findings.json").read_text()) for n in (1, 2))
    assert first == second and first["findings"]
    tiles = [re.findall(r'class="tile">([^<]+)<b>([^<]+)</b>', (base / f"out{n}" / "finance.html").read_text())
             for n in (1, 2)]
    assert tiles[0] == tiles[1] and ("Total spend", tiles[0][0][1]) == tiles[0][0]  # the same totals both times
    assert (base / "out1" / "findings.xml").read_text().startswith("<?xml")
    planted = json.loads((SAMPLE_RUNS / "planted.json").read_text())
    assert len([f for f in first["findings"] if f["run_id"] != "evil<script>"]) == len(planted)


@pytest.mark.parametrize("name", ["finance.html", "morning.html"])
def test_reports_are_self_contained(night, name):
    html = (night[0] / "out1" / name).read_text()
    assert re.search(r"https?://", html) is None  # no URL of any kind: nothing to fetch, nothing to leak
    for forbidden in ("<script", "<link", "@import", "<iframe", "<object"):
        assert forbidden not in html, forbidden
    assert re.search(r"url\((?!#)", html) is None  # only the charts' own #fragment references
    assert re.search(r"<[^>]*\s(src|href)=\"(?!#)", html) is None  # no tag loads or links anything outside
    assert "Content-Security-Policy" in html and "@media print" in html


def test_finance_report_has_charts_and_the_figures(night):
    html = (night[0] / "out1" / "finance.html").read_text()
    assert html.count("<svg") >= 3 and html.count("<path") > 30
    for heading in ("Spend per day", "By model, agent and task class", "Cost per completed task",
                    "What the providers billed", "The ten costliest runs", "How these numbers are made"):
        assert heading in html, heading
    assert "genai-prices" in html and "acme-distill-7b" in html
    assert re.search(r"snapshot of prices up to \d{4}-\d{2}-\d{2}", html)  # the price list and its date


def test_morning_report_links_findings_to_their_runs(night):
    html = (night[0] / "out1" / "morning.html").read_text()
    links = set(re.findall(r'href="#(run-[^"]+)"', html))
    anchors = set(re.findall(r'id="(run-[^"]+)"', html))
    assert links and links <= anchors
    assert "run-8f3a" in anchors and "final_answer_not_overwritten" in html and "Budget recommendations" in html


@pytest.mark.parametrize("name", ["finance.html", "morning.html"])
def test_hostile_transcripts_are_inert_and_secrets_redacted(night, name):
    html = (night[0] / "out1" / name).read_text()
    assert "<script" not in html and "<img" not in html and 'href="javascript:' not in html
    assert SECRET not in html and "hunter22" not in html
    if name == "morning.html":
        assert "&lt;script&gt;" in html and "[redacted]" in html


def test_report_commands(cli, night, tmp_path):
    db = night[0] / "night.duckdb"
    assert cli("report", "finance", "--out", tmp_path / "f.html", "--since", "2026-11-29", "--db", db).code == ExitCode.OK
    assert "<svg" in (tmp_path / "f.html").read_text()
    assert cli("report", "morning", "--out", tmp_path / "m.html", "--db", db).code == ExitCode.OK
    assert cli("morning", SAMPLE_RUNS, "--out", tmp_path / "o", "--exit-zero", "--db", tmp_path / "x.duckdb").code == 0


def test_notebook_api(night):
    import reconcile
    rc = reconcile.connect(night[0] / "night.duckdb")
    assert rc.runs().height == 301 and rc.steps("8f3a").height > 12
    assert set(rc.costs("agent")["key"]) >= {"coder", "triage", "total"}
    assert rc.budgets().filter(rc.budgets()["key"] == "triage")["recommended_steps"][0] == 8
    assert rc.findings().height > 0 and rc.sql("select count(*) as n from runs")["n"][0] == 301
    rc.close()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(not CHROMIUM and not os.environ.get("CI"), reason="Debian's chromium is not installed here")
@pytest.mark.parametrize("name", ["finance.html", "morning.html"])
def test_reports_render_in_headless_chromium_offline(night, name):
    from playwright.sync_api import sync_playwright

    assert CHROMIUM, ".ci/run installs Debian's chromium for this test"
    path = night[0] / "out1" / name
    requests, errors, dialogs = [], [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        context = browser.new_context(offline=True, viewport={"width": 1200, "height": 1600})
        page = context.new_page()
        page.on("request", lambda request: requests.append(request.url))
        page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
        page.goto(path.as_uri())
        page.wait_for_load_state("load")
        charts = page.locator("svg")
        boxes = [charts.nth(i).bounding_box() for i in range(charts.count())]
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / name.replace(".html", ".png")), full_page=True)
        browser.close()
    assert requests == [path.as_uri()]  # nothing but the file itself
    assert errors == [] and dialogs == []  # no console error, and the hostile payloads ran nothing
    if name == "finance.html":
        assert len(boxes) >= 3 and all(box and box["width"] > 300 and box["height"] > 100 for box in boxes)
