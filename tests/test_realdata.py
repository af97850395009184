"""Every real corpus in tests/fixtures/realdata: ingested, every check run, findings exactly as justified.

Each folder (copied from ../shared/realdata with its SOURCE.txt) has an expectation file,
``tests/realdata_expected/<folder>.toml``: the runs by format, every finding the checks report —
each with a ``why`` that quotes the transcript, because a finding on real data must be a real
defect its owner would accept — and what each check could not judge. A finding that is not a
real defect is fixed in the check or the loader, never added here.
"""

from __future__ import annotations

import tomllib

import pytest

from conftest import ROOT
from reconcile import store
from reconcile.checks import load_checks, run_checks
from reconcile.analyses.coverage import require_runs
from reconcile.errors import ExitCode, NoRuns
from reconcile.ingest.driver import ingest
from reconcile.engine import DuckDBEngine

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

REAL = ROOT / "tests" / "fixtures" / "realdata"
EXPECTED = ROOT / "tests" / "realdata_expected"
SHARED = ROOT.parent / "shared" / "realdata"
FOLDERS = sorted(p.name for p in REAL.iterdir() if p.is_dir())
CLAUDE_CODE = ["claude-code-viewer", "spotter-real-sessions"]


def expectation(folder: str) -> dict:
    return tomllib.loads((EXPECTED / f"{folder}.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def corpora(tmp_path_factory):
    """Each corpus ingested once into its own store, and its checks run once."""
    loaded = {}
    for folder in FOLDERS:
        con = store.connect(tmp_path_factory.mktemp(folder) / "real.duckdb")
        report = ingest(con, [REAL / folder])
        runs = dict(con.execute("select source_format, count(*) from runs group by all").fetchall())
        checks = run_checks(DuckDBEngine(con), load_checks(), record=False) if runs else None
        loaded[folder] = (con, report, runs, checks)
    yield loaded
    for con, *_ in loaded.values():
        con.close()


def test_every_shared_corpus_is_copied_with_its_source_note():
    if SHARED.is_dir():  # a clean clone in CI may not have the shared folder beside it
        assert sorted(p.name for p in SHARED.iterdir() if p.is_dir()) == FOLDERS
    for folder in FOLDERS:
        assert (REAL / folder / "SOURCE.txt").is_file() or folder == "ccusage-reference"
        assert (EXPECTED / f"{folder}.toml").is_file(), f"no expectation file for {folder}"


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_runs_each_corpus_yields(corpora, folder):
    con, report, runs, _ = corpora[folder]
    expected = expectation(folder)
    assert runs == expected.get("runs", {}), folder
    assert report.totals["rejected"] == expected.get("rejected", 0)
    if not runs:  # nothing reconcile reads yet: checking it is an error, never a pass
        assert expected["why_no_runs"]
        with pytest.raises(NoRuns):
            require_runs(DuckDBEngine(con), None, folder)


@pytest.mark.parametrize("folder", FOLDERS)
def test_findings_are_exactly_the_justified_real_defects(corpora, folder):
    *_, checks = corpora[folder]
    expected = expectation(folder)
    if checks is None:
        assert not expected.get("finding")
        return
    listed = expected.get("finding", [])
    for finding in listed:
        assert finding.get("why", "").strip() and finding.get("quote", "").strip(), finding
    got = sorted((f.check, f.run_id or "", -1 if f.step is None else f.step) for f in checks.findings)
    assert got == sorted((f["check"], f.get("run_id", ""), f.get("step", -1)) for f in listed)


@pytest.mark.parametrize("folder", FOLDERS)
def test_what_each_check_could_not_judge(corpora, folder):
    *_, checks = corpora[folder]
    if checks is None:
        return
    got = {r.name: [n.text() for n in r.not_judged] for r in checks.results if r.not_judged}
    assert got == expectation(folder).get("not_judged", {})


@pytest.mark.parametrize("folder", CLAUDE_CODE)
def test_morning_on_a_claude_code_corpus_exits_zero(cli, folder, tmp_path):
    result = cli("morning", REAL / folder, "--out", tmp_path / "out", "--db", tmp_path / "cc.duckdb")
    assert result.code == ExitCode.OK, result.out + result.err
    assert "0 error finding(s)" in result.out and "could not judge every run: reconcile check -v says why" in result.out
    assert (tmp_path / "out" / "morning.html").read_text().count("not judged for") >= 1


@pytest.mark.parametrize("folder", FOLDERS)
def test_no_fleet_signal_crosses_on_real_sessions(corpora, folder):
    """Real sessions of different people months apart are no fleet: no signal may page anyone over them (a
    reading's baseline is the seven nights before it, not the last seven with data)."""
    from datetime import datetime, timezone

    from reconcile.checks.signal_files import load_signals
    from reconcile.checks.signals import crossed, readings
    from reconcile.when import Window

    con, _, runs, _ = corpora[folder]
    if not runs:
        return
    found = readings(DuckDBEngine(con), load_signals(), "night", Window(since=datetime(2000, 1, 1, tzinfo=timezone.utc)))
    dated = con.execute("select count(*) from runs where started_at is not null").fetchall()[0][0]
    assert bool(found) == bool(dated), folder  # read wherever a run has a time (SWE-agent's record none)
    assert [(s.name, r.window, r.key, r.why) for s, r in crossed(found)] == []
