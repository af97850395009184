"""Terminal tables that read at a glance (issue 28): ids, dates and money never wrap; compact by default,
``--wide`` for every column; a table too wide for the terminal runs past its edge."""

from __future__ import annotations

import io
import uuid
from datetime import datetime, timezone

import pytest

from reconcile.cli.render import LiteralConsole, sheet_table
from reconcile.sheets import Column, Sheet

RUN_IDS = [str(uuid.UUID(int=i * 0x1234567890ABCDEF1234567890ABCDEF)) for i in range(1, 4)]
SWE_ID = "test_data__gpt4__swe-agent__test-repo__default_from_url__t-0.00__p-0.95__c-3.00__install-1__repo-i1"


def _sheet() -> Sheet:
    columns = [Column("run_id", "run"), Column("started_at", "started", "time"),
               Column("cost_micros", "cost", "money"), Column("detail", "what happened"),
               Column("retries", "retries", "count"), Column("note", "note"),
               Column("task_class", "task class", wide=True)]
    rows = [{"run_id": run, "started_at": datetime(2026, 11, 28, 22, i, tzinfo=timezone.utc),
             "cost_micros": 1_234_567 * (i + 1), "detail": "the model asked for the same file again and again " * 2,
             "retries": 0, "note": None, "task_class": "fix_bug"} for i, run in enumerate([*RUN_IDS, SWE_ID])]
    return Sheet(columns, rows, title="Runs")


def _printed(sheet: Sheet, width: int, wide: bool = False) -> list[str]:
    out = LiteralConsole(width=width, file=io.StringIO(), record=True)
    out.print(sheet_table(sheet, wide))
    return out.export_text().splitlines()


@pytest.mark.parametrize("width", [60, 100, 250])
def test_ids_dates_and_money_are_never_split_over_lines(width):
    lines = _printed(_sheet(), width)
    for whole in [*RUN_IDS, SWE_ID, "2026-11-28 22:00:00", "$1.23", "$4.94"]:
        assert any(whole in line for line in lines), (whole, width)
    table_lines = [line for line in lines if line.startswith(("│", "┃"))]
    # the header in two lines at most; prose folds between words, never narrower than 24 characters
    assert len(table_lines) <= 2 + 4 * 5
    if width == 60:  # too wide for the terminal: it runs past the edge rather than cut a value
        assert max(len(line) for line in lines) > 60
    assert not any("…" in line for line in lines)  # nothing truncated


def test_compact_leaves_out_wide_and_empty_columns_and_says_so():
    lines = _printed(_sheet(), 250)
    header = next(line for line in lines if "run" in line and line.startswith("┃"))
    assert "task class" not in header and "retries" not in header and "note" not in header
    assert "cost" in header and "started" in header
    assert lines[-1] == "not shown: retries, note, task class (--wide shows every column)"
    wide = "\n".join(_printed(_sheet(), 400, wide=True))
    assert "retries" in wide and "fix_bug" in wide and "not shown" not in wide  # the header "task class" in two lines


def test_unknown_money_reads_unknown_never_blank():
    sheet = Sheet([Column("run_id", "run"), Column("cost_micros", "cost", "money")],
                  [{"run_id": "a1", "cost_micros": None}, {"run_id": "b2", "cost_micros": 0}])
    assert sheet.cells() == [["a1", "unknown"], ["b2", "$0.00"]]


def test_runs_is_compact_by_default_and_wide_on_request(cli, night_db):
    compact = cli("runs", "-n", "3", "--db", night_db)
    assert compact.code == 0
    assert "bug_triage" not in compact.out and "not shown: subagents, task class" in compact.out
    wide = cli("runs", "-n", "3", "--wide", "--db", night_db)
    assert "bug_triage" in wide.out and "not shown" not in wide.out
    # the exports always carry every column
    assert "task_class" in cli("runs", "-n", "3", "--csv", "--db", night_db).out.splitlines()[0]


def test_cost_shows_the_columns_read_first(cli, night_db):
    def header_words(*args):  # a header may break between its words over two lines: compare the words
        return set(cli("cost", *args, "--db", night_db).out.split("┡")[0].replace("┃", " ").split())

    compact, wide = header_words(), header_words("--wide")
    assert {"model", "runs", "calls", "cost", "uncached", "hit", "tool", "descriptions"} <= compact
    assert not {"records", "description", "least"} & compact
    assert {"records", "description", "least", "most"} <= wide  # plain words (issue 61), every column
    assert not {"ours", "harness-reported", "tok"} & wide


def test_check_shows_a_check_s_first_findings_and_says_how_to_list_them_all(capsys):
    from types import SimpleNamespace

    from reconcile.cli.check_cmd import SHOWN_FINDINGS, print_report

    findings = [SimpleNamespace(run_id=f"run-{i:03d}", step=i, detail=f"detail {i}") for i in range(SHOWN_FINDINGS + 7)]
    result = SimpleNamespace(name="tool_calls_paired", failures=len(findings), outcome="error", severity="error",
                             invariant="every call has a result", remedy="pair them", findings=findings, not_judged=[],
                             thresholds="")
    print_report(SimpleNamespace(results=[result], disabled=[], runs=40, kept=0, findings_to=None))
    out = capsys.readouterr().out
    shown = [f"run-{i:03d}" for i in range(len(findings)) if f"run-{i:03d}" in out]
    assert shown == [f"run-{i:03d}" for i in range(SHOWN_FINDINGS)]  # the first ones, in order, and no more
    assert "… and 7 more of this check's findings: reconcile check --only tool_calls_paired --csv" in out
    assert f"{len(findings)} violations" in out and "32 error finding(s)" in out  # the counts stay whole
