"""The HTML reports: self-contained, escaped, redacted, and `reconcile morning` made for cron."""

from __future__ import annotations

import json
import os
import re
import shutil
from datetime import datetime

import pytest

from conftest import ROOT, SAMPLE_RUNS
from journals import StepClock
from reconcile.cli import main
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
    assert tiles[0] == tiles[1] and [t[0] for t in tiles[0]][:2] == ["Billed by the providers", "Explained by the journals"]
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


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_report_commands(cli, night, tmp_path):
    db = night[0] / "night.duckdb"
    assert cli("report", "finance", "--out", tmp_path / "f.html", "--since", "2026-11-29", "--db", db).code == ExitCode.OK
    assert "<svg" in (tmp_path / "f.html").read_text()
    assert cli("report", "morning", "--out", tmp_path / "m.html", "--db", db).code == ExitCode.OK
    every = int(re.search(r"Errors</a><b>(\d+)", (tmp_path / "m.html").read_text())[1])
    assert cli("report", "morning", "--out", tmp_path / "late.html", "--since", "2026-11-29T03:00Z", "--db", db).code == 0
    late = int(re.search(r"Errors</a><b>(\d+)", (tmp_path / "late.html").read_text())[1])
    assert 0 < late < every  # --since/--until choose the runs the checks report, as in reconcile check
    assert cli("morning", SAMPLE_RUNS, "--out", tmp_path / "o", "--exit-zero", "--db", tmp_path / "x.duckdb").code == 0


def test_notebook_api(night):
    import reconcile
    rc = reconcile.connect(night[0] / "night.duckdb")
    assert rc.runs().height == 301 and rc.steps("8f3a").height > 12
    assert set(rc.costs("agent")["key"]) >= {"coder", "triage"} and "total" not in set(rc.costs("agent")["key"])
    budgets = rc.budgets()
    assert budgets.filter((budgets["key"] == "triage") & (budgets["ceiling"] == "max_steps"))["recommended"][0] == 8
    assert rc.findings().height > 0 and rc.sql("select count(*) as n from runs")["n"][0] == 301
    rc.close()


def _finance_reads_in_finance_words(page, width: int) -> None:
    """Issue 50: the finance report as its reader sees it in a browser: plain names, cents, no placeholders, chart
    text as selectable text with legends whole, and tables that fit a laptop screen without scrolling sideways."""
    text = page.locator("body").inner_text()
    assert "None" not in text and "catalogue tax" not in text.lower() and "harness − ours" not in text
    assert not re.search(r"\b\w+=-", text)  # no "steps=-" placeholder for a limit nobody set
    assert "The journals, priced" not in text  # one figure for the journals
    tables = page.locator("table").all_inner_texts()
    # money in the tables to the cent; an amount below a cent to its first digit ($0.006), never shown as $0.01
    assert not [t for t in tables if re.search(r"\$(?!0\.00[1-9]\b)\d+\.\d{3}", t)]
    assert page.locator("svg text").count() > 0  # chart text is text: it can be selected and copied
    assert not [t for t in page.locator("svg text").all_text_contents() if "…" in t]  # no legend or label cut short
    if width >= 1400:  # every table fits 1,400 px, but for the hostile run's 95-character task class (its own box)
        sideways = page.evaluate("[...document.querySelectorAll('.scroll')].filter(e => e.scrollWidth > e.clientWidth + 1"
                                 " && !e.innerText.includes('onerror=alert')).map(e => e.innerText.slice(0, 60))")
        assert sideways == []


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
SPOTTER = ROOT / "tests" / "fixtures" / "realdata" / "spotter-real-sessions" / "projects"
# (width, media, first-screen height): a laptop screen, a phone, and an A4 page at 96 dpi as the browser prints it
VIEWS = [(1400, "screen", 900), (400, "screen", 900), (794, "print", 1123)]
# The finance tables whose money column (the first header naming dollars) ends past the screen's right edge
MONEY_OFF_SCREEN = """[...document.querySelectorAll('table')].map(t => {
    const money = [...t.querySelectorAll('th')].find(th => /spend|per completed task|\\$/.test(th.innerText));
    return money && money.getBoundingClientRect().right > window.innerWidth ? t.innerText.slice(0, 60) : null;
}).filter(x => x)"""
DOC_SHOTS = ROOT / "docs" / "img"  # the screenshots docs/reports.md shows: rewritten with RECONCILE_DOC_SCREENSHOTS=1

# Measured in the page: the cells whose text runs over more than one line (a word, id, date or amount broken; running
# text, .prose, may wrap between words but never inside one), and where each tile row's tiles sit.
LAYOUT = """() => {
  const lines = (range) => {  // boxes that overlap vertically share a line (a colour dot beside its status word)
    let count = 0, bottom = -Infinity;
    const boxes = [...range.getClientRects()].filter(r => r.width > 0 && r.height > 0).sort((a, b) => a.top - b.top);
    for (const box of boxes) {
      if (box.top >= bottom - 1) { count += 1; bottom = box.bottom; } else { bottom = Math.max(bottom, box.bottom); }
    }
    return count;
  };
  const text = (el) => el.textContent.trim().replace(/\\s+/g, " ").slice(0, 60);
  const split = [];
  for (const cell of document.querySelectorAll("th, td, .tile b, caption")) {
    const range = document.createRange();
    if (!cell.classList.contains("prose")) {
      range.selectNodeContents(cell);
      if (lines(range) > 1) split.push(text(cell));
      continue;
    }
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const word of node.textContent.matchAll(/\\S+/g)) {
        range.setStart(node, word.index); range.setEnd(node, word.index + word[0].length);
        if (lines(range) > 1) split.push(word[0]);
      }
    }
  }
  const rows = [...document.querySelectorAll(".tiles")].map(row => [...row.children].map(tile => {
    const box = tile.getBoundingClientRect();
    return {top: Math.round(box.top), left: box.left, right: box.right};
  }));
  return {split, rows, width: document.documentElement.clientWidth};
}"""


@pytest.fixture(scope="module")
def claude_code_night(tmp_path_factory):
    """A real Claude Code corpus (two sessions with subagents) through `reconcile morning`."""
    from reconcile.cli import main
    base = tmp_path_factory.mktemp("claude-code")
    assert main(["morning", str(SPOTTER), "--out", str(base / "out"), "--db", str(base / "cc.duckdb"), "--exit-zero"]) == 0
    return base / "out"


@pytest.mark.slow  # a browser: CI runs it (pytest -m slow)
@pytest.mark.skipif(not CHROMIUM and not os.environ.get("CI"), reason="Debian's chromium is not installed here")
@pytest.mark.parametrize("corpus", ["sample-night", "claude-code"])
def test_reports_in_headless_chromium_offline_with_screenshots(night, claude_code_night, corpus):
    """Both reports at 1400 px and at print width: nothing fetched, nothing run, the night's state on the first screen.

    Screenshots (first screen and whole page) are written to test-artifacts/ for a person to look at.
    """
    from playwright.sync_api import sync_playwright

    assert CHROMIUM, ".ci/run installs Debian's chromium for this test"
    folder = night[0] / "out1" if corpus == "sample-night" else claude_code_night
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
            "--disable-component-update", "--disable-sync"])
        for name in ("finance", "morning"):
            path = folder / f"{name}.html"
            for width, media, screen in VIEWS:
                requests, errors, dialogs = [], [], []
                context = browser.new_context(offline=True, viewport={"width": width, "height": screen})
                page = context.new_page()
                page.on("request", lambda request: requests.append(request.url))
                page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
                page.on("pageerror", lambda error: errors.append(str(error)))
                page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
                page.emulate_media(media=media)
                page.goto(path.as_uri())
                page.wait_for_load_state("load")
                stem = ARTIFACTS / f"{corpus}-{name}-{width}{'-print' if media == 'print' else ''}"
                page.screenshot(path=f"{stem}.png")
                page.screenshot(path=f"{stem}-full.png", full_page=True)
                if corpus == "sample-night" and media == "screen" and os.environ.get("RECONCILE_DOC_SCREENSHOTS"):
                    page.screenshot(path=DOC_SHOTS / f"{name}-{width}.png")  # the first screen only
                assert requests == [path.as_uri()]  # nothing but the file itself
                assert errors == [] and dialogs == []  # no console error, and the hostile payloads ran nothing
                first = page.locator("#glance" if name == "morning" else "#bill").bounding_box()
                tiles = page.locator(".tiles").first.bounding_box()
                assert first and (width < 794 or first["y"] + first["height"] <= screen), (name, width, first)  # unscrolled
                # on a phone the tiles alone fill the first screen: the table and chart beside them follow
                assert tiles["y"] + tiles["height"] <= screen
                page_width = page.evaluate("document.documentElement.scrollWidth")
                assert page_width <= width, (name, width, page_width)  # nothing runs off the side
                charts = page.locator("svg")
                for i in range(charts.count()):
                    box = charts.nth(i).bounding_box()
                    assert box and box["x"] >= 0 and box["x"] + box["width"] <= width and box["height"] > 40
                if name == "finance":
                    assert charts.count() >= 3
                    _finance_reads_in_finance_words(page, width)
                    if media == "screen":  # issue 61: on a phone each table's money is on screen, its label beside it
                        hidden = page.evaluate(MONEY_OFF_SCREEN)
                        assert hidden == [], (corpus, width, hidden)
                if name == "morning" and media == "screen" and width == 1400:  # issue 61: no table cut on a laptop
                    cut = page.evaluate("[...document.querySelectorAll('.scroll')].filter(e => e.scrollWidth > "
                                        "e.clientWidth + 1 && !e.innerText.includes('onerror=alert'))"
                                        ".map(e => e.innerText.slice(0, 80))")
                    assert cut == [], (corpus, cut)
                if name == "morning" and media == "screen":
                    folded = page.locator("details")
                    assert corpus == "claude-code" or folded.count() >= 3  # long step tables fold
                    # the night's 22 failing checks and 20 runs with errors, each run's steps shown (folded past 12):
                    # the page grows with the errors, and by little else (warnings fold); the fix-first list at the top
                    # and the footnotes naming where each failing rule comes from add about 350 px (issue 50)
                    assert page.evaluate("document.documentElement.scrollHeight") < 13_500 * (2 if width < 794 else 1)
                page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # folded rows too
                layout = page.evaluate(LAYOUT)
                assert layout["split"] == [], (name, width, media, layout["split"][:10])  # no cell over two lines
                for row in layout["rows"]:
                    assert all(0 <= t["left"] and t["right"] <= layout["width"] for t in row), (name, width, row)
                    if width == 1400:  # the tiles of a row sit in one row on a laptop screen
                        assert len({t["top"] for t in row}) == 1, (name, width, row)
                assert page.evaluate("document.documentElement.scrollWidth") <= width  # folded tables scroll inside too
                context.close()
        browser.close()




def test_morning_report_opens_with_the_night_at_a_glance(night):
    html = (night[0] / "out1" / "morning.html").read_text()
    glance = html[html.index('<section id="glance"'):html.index("</section>")]
    assert "the night of 2026-11-28" in html and "Nights run noon to noon, UTC" in html
    tiles = dict(re.findall(r'class="tile[^"]*">(?:<a href="#[^"]+">)?([^<]+)(?:</a>)?<b>([^<]+)</b>', glance))
    assert tiles["Runs"] == "301" and tiles["Spend"].startswith("$") and tiles["Billed"].startswith("$")
    assert tiles["Gap"].startswith(("+$", "-$")) and int(tiles["Errors"]) > 0
    assert re.search(r"the journals explain \$[\d.]+ \([\d.]+%\)", glance)
    money = re.search(r'<p class="note" id="money">(.*?)</p>', glance, re.S)[1]  # the three figures, in one line
    assert all(f"<b>{word}</b>" in money for word in ("spend", "billed")) and "the journals explain" in money
    statuses = dict(re.findall(r"</span>(\w+)</td><td class=\"n\">(\d+)</td>", glance))
    assert sum(map(int, statuses.values())) == 301 and int(statuses["succeeded"]) > 200
    for anchor in ("findings-error", "findings-warn", "not-judged"):  # each count links to its list
        assert f'href="#{anchor}"' in glance and f'id="{anchor}"' in html
    assert "<svg" in glance and "Stop reasons over the last 1 night(s)" not in glance  # drawn as paths, no text


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_the_night_before_is_compared(cli, tmp_path):
    """Two nights: the glance says what changed from the one before."""
    from reconcile.journal import Journal
    (tmp_path / "runs").mkdir()
    for night, (ok, failed) in {"2026-11-27": (3, 1), "2026-11-28": (2, 3)}.items():
        clock = StepClock(start=datetime.fromisoformat(f"{night}T22:00:00+00:00"))
        with Journal(tmp_path / "runs" / f"{night}.jsonl", clock=clock) as journal:
            for n in range(ok + failed):
                run = journal.start_run(f"{night}-{n}", agent="coder", model="claude-sonnet-4-5", provider="anthropic")
                run.model_step(usage={"input_uncached": 1000, "output": 100})
                run.end("model_finished" if n < ok else "tool_error")
    assert cli("morning", tmp_path / "runs", "--out", tmp_path / "out", "--db", tmp_path / "n.duckdb",
               "--exit-zero").code == 0
    html = (tmp_path / "out" / "morning.html").read_text()
    assert "the night of 2026-11-28" in html and 'compared with the night of <span class="nw">2026-11-27</span>' in html
    assert "Runs<b>5</b>+1 on the night before" in html
    assert re.search(r"failed</td><td class=\"n\">3</td><td class=\"n\">60.0%</td><td class=\"n\">1</td>"
                     r"<td class=\"n\">\+2</td>", html)
    assert "No provider export" not in html and "no provider export loaded" in html


def test_finance_headline_is_the_bill_beside_the_journals(night, cli, tmp_path):
    html = (night[0] / "out1" / "finance.html").read_text()
    head = html[:html.index("<h2>")]
    billed = re.search(r"Billed by the providers<b>\$([\d.,]+)</b>cost export", head)
    explained = re.search(r"Explained by the journals<b>\$([\d.,]+)</b>", head)
    gap = re.search(r"Gap<b>([+-]?)\$([\d.,]+)</b>", head)
    assert billed and explained and gap
    assert abs(float(billed[1]) - float(explained[1]) - float(gap[1] + gap[2])) < 0.011
    assert "The journals, priced" not in head  # one journals figure: the bill's part they explain (issue 50) …
    assert head.index("Billed by the providers") < head.index("priced call by call, comes to")  # … the rest in words
    assert cli("ingest", SAMPLE_RUNS / "2026-11-28", "--db", tmp_path / "j.duckdb").code == 0
    assert cli("report", "finance", "--tz", "America/Los_Angeles", "--by", "week", "--out", tmp_path / "f.html",
               "--db", tmp_path / "j.duckdb").code == 0
    journals_only = (tmp_path / "f.html").read_text()
    assert "No provider export is loaded" in journals_only and "Billed by the providers" not in journals_only
    assert "America/Los_Angeles" in journals_only and "Spend per week" in journals_only and "2026-W48" in journals_only
    assert "µ$" not in journals_only and "spend=$5.00" in journals_only  # limits in dollars for a reader
    assert cli("report", "finance", "--by", "fortnight", "--out", tmp_path / "g.html",
               "--db", tmp_path / "j.duckdb").code == ExitCode.BAD_INPUT


def test_the_morning_report_speaks_plainly_and_cites_in_footnotes(night, tmp_path):
    """Issue 50: no internal vocabulary in the morning report's prose: a design note is named only in a footnote."""
    out = tmp_path / "m.html"
    assert main(["report", "morning", "--db", str(night[0] / "night.duckdb"), "--out", str(out)]) == 0
    html = out.read_text()
    footnotes = html.index('id="sources"')
    body = re.sub(r'<p class="note" id="signals-note">.*?</p>', "", html[:footnotes], flags=re.S)
    assert not re.search(r"(?i)\bseed\b", body), re.findall(r"(?i).{40}\bseed\b.{40}", body)
    assert "fence walks" not in html
    sources = html[footnotes:]
    assert 'id="cite-rate_limits_fall_back"' in sources and "seed 003" in sources  # a planted check cites its note
    assert 'href="#cite-rate_limits_fall_back"' in html[:footnotes]  # linked from the check's heading
    first = html.index('id="fix-first"')
    assert html.index('id="glance"') < first < html.index("<h2>Findings")  # fix first, then the findings
