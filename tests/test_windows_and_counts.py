"""One behaviour for an empty window, and run counts that agree across commands or say why not (issue 28).

The store: real Claude Code sessions with subagents (folded by ``runs``) and real SWE-agent
trajectories, which record no start time (in no bounded window). The expected counts come from the
raw files in plain Python: a run is a transcript file.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reconcile.cli import main
from reconcile.errors import ExitCode

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "realdata"
CLAUDE = FIXTURES / "spotter-real-sessions" / "projects"
SWE = FIXTURES / "swe-agent"
FUTURE = ["--since", "2099-01-01", "--tz", "UTC"]


def _raw_counts() -> dict[str, object]:
    """Runs, sessions and subagents from the files alone: a transcript file is a run."""
    sessions = [p for p in CLAUDE.rglob("*.jsonl") if p.parent.name != "subagents"]
    subagents = [p for p in CLAUDE.rglob("*.jsonl") if p.parent.name == "subagents"]
    trajectories = sorted(p for p in SWE.glob("*.traj"))
    for path in trajectories:  # a trajectory records steps and stats, never when it started
        text = path.read_text()
        assert not re.search(r'"(start|started|created)(_at|_time)?"\s*:', text), path
    return {"sessions": len(sessions), "subagents": len(subagents), "undated": [p.stem for p in trajectories]}


@pytest.fixture(scope="module")
def mixed_db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("mixed") / "mixed.duckdb"
    assert main(["ingest", str(CLAUDE), str(SWE), "--db", str(path)]) == 0
    return path


def test_runs_summary_and_cost_count_the_same_runs_or_say_why(cli, mixed_db):
    raw = _raw_counts()
    total = raw["sessions"] + raw["subagents"] + len(raw["undated"])
    listed = raw["sessions"] + len(raw["undated"])

    runs = cli("runs", "--db", mixed_db)
    assert runs.code == 0
    assert f"{listed} run(s): " in runs.out
    assert f"{raw['subagents']} sub-agent run(s) folded into them ({total} runs in all" in runs.out
    unfolded = cli("runs", "--no-fold-subagents", "--db", mixed_db).out
    assert f"{total} run(s): " in unfolded and "folded" not in unfolded  # one row a run, every subagent its own

    summary = cli("summary", "--db", mixed_db).out.splitlines()[0]
    assert summary.startswith(f"reconcile summary — {total} runs ({listed} as `reconcile runs` lists them, "
                              f"{raw['subagents']} Claude Code sub-agent run(s) folded")
    assert f"{len(raw['undated'])} without a start time" in summary

    cost = cli("cost", "--json", "--db", mixed_db).json()
    assert cost["total"]["runs"] == total
    text = cli("cost", "--db", mixed_db).out
    assert f"{raw['subagents']} of them are Claude Code sub-agent runs, which reconcile runs folds" in text


def test_a_bounded_window_counts_and_names_the_runs_without_a_start_time(cli, mixed_db):
    raw = _raw_counts()
    result = cli("runs", "--since", "2000-01-01", "--tz", "UTC", "--db", mixed_db)
    assert result.code == 0
    assert f"{raw['sessions']} run(s): " in result.out
    line = next(line for line in result.out.splitlines() if "no start time" in line)
    assert line.startswith(f"{len(raw['undated'])} run(s) have no start time and are in no --since/--until window: ")
    named = [stem for stem in raw["undated"] if stem in line]
    assert len(named) == min(5, len(raw["undated"]))  # the first five by id, the rest counted
    assert f"and {len(raw['undated']) - 5} more" in line
    # all time: the same runs are listed, and no such line
    assert "no start time" not in cli("runs", "--db", mixed_db).out


@pytest.mark.parametrize("command", [["runs"], ["cost"], ["cost", "--by", "day"]])
def test_a_listing_command_says_the_window_is_empty_and_exits_0(cli, mixed_db, command):
    result = cli(*command, *FUTURE, "--db", mixed_db)
    assert result.code == ExitCode.OK, result.err
    assert result.out.strip() == _empty_line()
    machine = cli(*command, *FUTURE, "--json", "--db", mixed_db)
    assert machine.code == 0 and machine.err.strip() == _empty_line()
    data = json.loads(machine.out)  # the shape a full answer has, empty
    assert data == [] if command == ["runs"] else (data["groups"] == [] and data["total"]["runs"] == 0)
    table = cli(*command, *FUTURE, "--csv", "--db", mixed_db)
    assert table.code == 0 and len(table.out.splitlines()) == 1  # the header alone


@pytest.mark.parametrize("command", [["check"], ["budgets"], ["replay", "--set", "max_steps=5"],
                                     ["report", "finance", "--out", "f.html"], ["report", "morning", "--out", "m.html"]])
def test_a_judging_command_stops_on_an_empty_window_with_the_same_line(cli, mixed_db, command):
    result = cli(*command, *FUTURE, "--db", mixed_db)
    assert result.code == ExitCode.BAD_INPUT, (result.out, result.err)
    assert _empty_line() in " ".join(result.err.split())


def test_an_empty_store_is_named_as_such(cli, tmp_path):
    from reconcile import store
    path = tmp_path / "empty.duckdb"
    store.connect(path).close()
    assert "holds no runs" in cli("check", "--db", path).err
    listing = cli("runs", "--db", path)
    assert listing.code == 0 and "holds no runs" in listing.out


def _empty_line() -> str:
    """The line, from the raw files: the span of the Claude Code sessions' first timestamps (a sub-agent's file, every
    line a side chain, opens with its parent's hook reminders at the parent's times: it starts at its first own line)."""
    starts = []
    for path in CLAUDE.rglob("*.jsonl"):
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        side = all(r.get("isSidechain") for r in records if "isSidechain" in r)
        stamps = [r["timestamp"] for r in records if r.get("timestamp") and not (side and r.get("isMeta"))]
        starts.append(min(stamps))
    first, last = min(starts), max(starts)
    raw = _raw_counts()
    total = raw["sessions"] + raw["subagents"] + len(raw["undated"])
    return (f"no runs since 2099-01-01 00:00 (UTC); the store spans {first[:10]} {first[11:16]} .. "
            f"{last[:10]} {last[11:16]} ({total} run(s), {len(raw['undated'])} without a start time).")


def test_catalogue_tax_of_a_format_that_records_no_catalogue_is_not_recorded(cli, mixed_db):
    """A Claude Code transcript does not record the tool catalogue sent with a call, so its tax is not
    recorded: null in JSON, "not recorded" in the table, never $0.00."""
    sessions = set()
    for path in CLAUDE.rglob("*.jsonl"):  # the raw files: no tool schemas anywhere, and each one's session id
        text = path.read_text()
        assert '"input_schema"' not in text and '"tools":' not in text, path
        sessions |= {json.loads(line).get("sessionId") for line in text.splitlines() if line.strip()} - {None}
    by_run = cli("cost", "--by", "run", "--json", "--db", mixed_db).json()["groups"]
    claude = [g for g in by_run if any(session in g["key"] for session in sessions)]
    assert claude  # the sessions' runs are there, and not one has a catalogue tax, not even $0
    assert all(g["catalogue_tax_usd"] is None and g["catalogue_tax_tokens"] is None for g in claude)
    row = next(line for line in cli("cost", "--db", mixed_db).out.splitlines() if line.startswith("│ total"))
    assert "not recorded" in row and "$0.00" not in row


def test_every_reporting_heading_names_its_window(cli, night_db):
    """Issue 61: `cost --since` showed part of the night under the all-time heading. Each table says its window."""
    since = ["--since", "2026-11-29", "--tz", "UTC"]
    cost = cli("cost", *since, "--db", night_db).out
    assert "Cost, from 2026-11-29 00:00 (UTC;" in cost
    assert "Cost per completed task, from 2026-11-29 00:00 " in cost
    assert "Ceilings from the succeeded runs, from 2026-11-29 00:00 " in cli("budgets", *since, "--db", night_db).out
    assert "Runs (from 2026-11-29 00:00, UTC)" in cli("runs", *since, "--db", night_db).out
    assert "(from 2026-11-29 00:00, UTC)" in cli("usage", *since, "--db", night_db).out
    assert "Cost, all time (UTC;" in cli("cost", "--tz", "UTC", "--db", night_db).out


def test_the_notebook_lists_the_runs_the_cli_lists(cli, mixed_db):
    """Issue 61: rc.runs() folds Claude Code sub-agents into their sessions, as `runs` does; unfolded on request."""
    import reconcile

    listed = [r["run_id"] for r in cli("runs", "--json", "--db", mixed_db).json()]
    every = [r["run_id"] for r in cli("runs", "--no-fold-subagents", "--json", "--db", mixed_db).json()]
    with reconcile.connect(mixed_db) as rc:
        assert sorted(rc.runs()["run_id"].to_list()) == sorted(listed)
        assert sorted(rc.runs(fold_subagents=False)["run_id"].to_list()) == sorted(every)
    assert len(every) > len(listed)  # the store holds sub-agents: folding changes the rows


def test_usage_on_an_empty_window_says_what_the_store_spans(cli, mixed_db):
    """Issue 61: `usage` on a window with no runs says so in the line every command uses, then why there is no bill."""
    out = " ".join(cli("usage", *FUTURE, "--db", mixed_db).out.split())
    assert _empty_line() in out and "No provider usage or cost export is loaded for this window (from 2099-01-01" in out
