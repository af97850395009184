"""No bare partial sum anywhere (issue 56): every command's money, on a store of runs exact, bounded and unbounded.

The store mixes the sample night (one run on an in-house model no price list has) with real corpora whose runs are
exact (Claude Code), a range (pydantic-ai's cache writes of unknown lifetime, under our prices) or "at least" (a
Codex session with an unpriced model alias and web searches of no listed price). Each command's figure for a group
of runs is checked against its members' own figures, read from ``cost --by run`` of the same source: exact only
where every member is, its floor the members' floors added, its ceiling theirs where every member has one.
"""

from __future__ import annotations

import re
import shutil
from decimal import Decimal

import pytest

from conftest import ROOT

MICRO = Decimal("0.000001")
SOURCES = ("auto", "ours", "harness")


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    from reconcile import store
    from reconcile.ingest.driver import ingest

    folder = tmp_path_factory.mktemp("mixed")
    shutil.copytree(ROOT / "sample_runs" / "2026-11-28", folder / "night")
    shutil.copytree(ROOT / "tests" / "fixtures" / "frameworks" / "pydantic_ai" / "hex", folder / "pydantic_ai")
    for corpus in ("codex-cli", "inspect-ai", "claude-code-viewer"):
        shutil.copytree(ROOT / "tests" / "fixtures" / "realdata" / corpus, folder / corpus)
    db = folder / "mixed.duckdb"
    with store.connect(db) as con:
        ingest(con, [folder / name for name in ("night", "pydantic_ai", "codex-cli", "inspect-ai", "claude-code-viewer")])
    return db


def _d(value) -> Decimal | None:
    return None if value is None else Decimal(str(value)).quantize(MICRO)


def _consistent(row: dict, stem: str = "cost") -> str | None:
    """A row's money by the one rule: exact means its bounds are the figure; not exact means a floor is given."""
    exact, low, high = (_d(row.get(f"{stem}_usd")), _d(row.get(f"{stem}_low_usd")), _d(row.get(f"{stem}_high_usd")))
    if exact is not None and (low != exact or high != exact):
        return f"{stem} {exact} beside bounds {low} .. {high}"
    if exact is None and low is None:
        return f"{stem}: neither a figure nor a floor"
    if high is not None and low is not None and high < low:
        return f"{stem}: ceiling {high} below floor {low}"
    return None


def _added(members: list[dict], slack: Decimal) -> tuple[Decimal | None, Decimal, Decimal | None]:
    exact = [_d(m["cost_usd"]) for m in members]
    highs = [_d(m["cost_high_usd"]) for m in members]
    return (None if None in exact else sum(exact, Decimal(0)), sum((_d(m["cost_low_usd"]) for m in members), Decimal(0)),
            None if None in highs else sum(highs, Decimal(0)))


def _agrees(row: dict, members: list[dict]) -> bool:
    exact, low, high = _added(members, MICRO)
    slack = MICRO * max(len(members), 1)
    got = (_d(row["cost_usd"]), _d(row["cost_low_usd"]), _d(row["cost_high_usd"]))
    if (exact is None) != (got[0] is None) or (high is None) != (got[2] is None):
        return False
    close = lambda a, b: a is None or abs(a - b) <= slack  # noqa: E731
    return close(exact, got[0]) and abs(low - got[1]) <= slack and close(high, got[2])


def test_the_store_holds_every_kind_of_figure(mixed, cli):
    runs = cli("cost", "--by", "run", "--cost-source", "ours", "--json", "--db", mixed).json()["groups"]
    kinds = {("exact" if r["cost_usd"] is not None else "range" if r["cost_high_usd"] is not None else "at least")
             for r in runs}
    assert kinds == {"exact", "range", "at least"}


@pytest.mark.parametrize("source", SOURCES)
def test_cost_groups_and_total_are_their_runs_by_the_one_rule(mixed, cli, source):
    per_run = {r["key"]: r for r in cli("cost", "--by", "run", "--cost-source", source, "--json", "--db", mixed).json()
               ["groups"]}
    listed = {r["run_id"]: r for r in cli("runs", "--no-fold-subagents", "--json", "--db", mixed).json()}
    roots = {r["run_id"]: r["root_run_id"]
             for r in cli("sql", "select run_id, root_run_id from run_view", "--json", "--db", mixed).json()}
    wrong = [f"run {k}: {why}" for k, r in per_run.items() if (why := _consistent(r))]
    for by, key in (("agent", lambda run_id: listed[run_id]["agent"] or "(none)"),
                    ("task_class", lambda run_id: listed[run_id]["task_class"] or "(none)"),
                    ("tree", lambda run_id: roots[run_id])):
        report = cli("cost", "--by", by, "--cost-source", source, "--json", "--db", mixed).json()
        members: dict[str, list] = {}
        for run_id, row in per_run.items():
            members.setdefault(key(run_id), []).append(row)
        for group in report["groups"]:
            if why := _consistent(group):
                wrong.append(f"--by {by} {group['key']}: {why}")
            if not _agrees(group, members[group["key"]]):
                wrong.append(f"--by {by} {group['key']}: {group['cost_usd']} [{group['cost_low_usd']}, "
                             f"{group['cost_high_usd']}] vs its runs {_added(members[group['key']], MICRO)}")
        if not _agrees(report["total"], list(per_run.values())):
            wrong.append(f"--by {by} total: {report['total']['cost_usd']} vs {_added(list(per_run.values()), MICRO)}")
        for task in report["cost_per_completed_task"]:
            if why := _consistent(task):
                wrong.append(f"per task {task['agent']} {task['model']}: {why}")
    assert not wrong, "\n".join(wrong)


def test_runs_summary_and_show_never_print_a_known_part_alone(mixed, cli):
    per_run = {r["key"]: r for r in cli("cost", "--by", "run", "--json", "--db", mixed).json()["groups"]}
    wrong = []
    for row in cli("runs", "--no-fold-subagents", "--json", "--db", mixed).json():
        if (why := _consistent(row)) or not _agrees(row, [per_run[row["run_id"]]]):
            wrong.append(f"runs {row['run_id']}: {why or row}")
    # a folded session: its parts added by the rule
    children: dict[str, list] = {}
    listed = {r["run_id"]: r for r in cli("runs", "--no-fold-subagents", "--json", "--db", mixed).json()}
    parents = {r["run_id"]: r["parent_run_id"]
               for r in cli("sql", "select run_id, parent_run_id from runs where source_format = 'claude_code'",
                            "--json", "--db", mixed).json()}
    for run_id in listed:
        children.setdefault(parents.get(run_id) or run_id, []).append(per_run[run_id])
    for row in cli("runs", "--json", "--db", mixed).json():
        if not _agrees(row, children[row["run_id"]]):
            wrong.append(f"runs (folded) {row['run_id']}: {row['cost_usd']} vs {_added(children[row['run_id']], MICRO)}")
    summary = cli("summary", "--json", "--db", mixed).json()
    for agent in summary["by_agent"]:
        if why := _consistent(agent):
            wrong.append(f"summary {agent['agent']}: {why}")
        if agent["cost_usd"] is None and not agent["runs_not_exact"]:
            wrong.append(f"summary {agent['agent']}: no exact cost, yet no run said not exact")
    text = cli("summary", "--db", mixed).out
    assert "at least $" in text  # the night's agent with the in-house model
    for run_id in ("019c8a59-e9dd-71f0-9ae3-4079fe9726a9", "01996135-afde-7911-97f0-d863511eca56"):
        shown = cli("show", run_id, "--db", mixed).out
        cost_line = next(line for line in shown.splitlines() if re.search(r"\bcost\b", line))
        assert "at least $" in cost_line or "unknown" in cost_line, cost_line
    assert not wrong, "\n".join(wrong)


def test_the_tables_say_at_least_or_a_range_never_a_bare_figure(mixed, cli, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    text = cli("cost", "--by", "agent", "--cost-source", "ours", "--db", mixed).out
    first_table = text.split("Cost per completed task")[0]
    rows = {line.split("│")[1].strip(): line for line in first_table.splitlines() if line.startswith("│")}
    data = {g["key"]: g for g in cli("cost", "--by", "agent", "--cost-source", "ours", "--json", "--db", mixed).json()
            ["groups"]}
    for key, group in data.items():
        line = rows.get(key[:20]) or next((v for k, v in rows.items() if key.startswith(k.rstrip("…"))), "")
        if group["cost_usd"] is None and group["cost_high_usd"] is None and group["cost_low_usd"]:
            assert "at least $" in line, (key, line)
        elif group["cost_usd"] is None and group["cost_high_usd"] is not None:
            assert " to $" in line, (key, line)
    assert "at least $" in rows["total"]
    # the total of the spend on failed and stopped runs: a range or a floor where any such run is not exact
    waste = cli("cost", "--json", "--db", mixed).json()["spend_on_failed_stalled_budget_stopped"]
    assert _consistent(waste) is None


def test_the_reports_say_at_least_where_the_total_is_not_exact(mixed, cli, tmp_path):
    out = tmp_path / "finance.html"
    assert cli("report", "finance", "--out", out, "--db", mixed).code == 0
    html = out.read_text()
    tile = re.search(r'Total spend<b>([^<]+)</b>', html).group(1)
    assert tile.startswith("at least $"), tile
    assert re.search(r"<td class=\"n\">at least \$[0-9.,]+</td>", html)  # a group's row, never its known part alone


def test_the_notebook_frames_carry_the_bounds(mixed):
    import reconcile

    with reconcile.connect(mixed) as rc:
        total = rc.cost_total(source="ours").to_dicts()[0]
        runs = rc.runs().to_dicts()
    assert total["cost_usd"] is None and total["cost_low_usd"] > 0 and total["cost_high_usd"] is None
    assert all(_consistent({k: (float(v) if isinstance(v, Decimal) else v) for k, v in r.items()}) is None for r in runs)


def test_replay_spend_is_exact_or_a_floor(mixed, cli):
    data = cli("replay", "--set", "max_steps=3", "--json", "--db", mixed).json()["candidates"][0]
    unknown = 0
    for group in [*data["groups"], data["total"]]:
        for stem in ("spend", "spend_saved", "spend_lost"):
            exact, low = group.get(f"{stem}_usd"), group.get(f"{stem}_low_usd")
            assert low is not None and (exact is None or _d(exact) == _d(low)), (group["key"], stem, exact, low)
        unknown += group["spend_unknown_runs"]
        assert (group["spend_usd"] is None) == bool(group["spend_unknown_runs"]), group["key"]
    assert unknown  # the Codex session on an unpriced alias: its spend has no exact figure


def test_a_local_model_is_a_warning_until_a_price_file_says_it_costs_nothing(cli, tmp_path):
    """Issue 56: a model no price list has (ollama's) is a warning, never an error (exit 0), its cost "unknown";
    a price file with model "*" prices every model of the provider, here at $0: the cost is exact."""
    from journals import StepClock
    from reconcile.journal import Journal

    path = tmp_path / "local.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        run = journal.start_run("local", agent="laptop", model="llama3.2:3b", provider="ollama")
        run.model_step(usage={"input_uncached": 1200, "output": 300}, ms=800, text="done", final=True)
        run.end("model_finished", status="succeeded", final_output="done")
    db = tmp_path / "local.duckdb"
    assert cli("ingest", path, "--db", db).code == 0
    checked = cli("check", "--only", "models_priced", "--json", "--db", db)
    assert checked.code == 0 and [f["severity"] for f in checked.json()["findings"]] == ["warn"]
    assert cli("cost", "--by", "run", "--json", "--db", db).json()["groups"][0]["cost_usd"] is None
    free = tmp_path / "local.toml"
    free.write_text('[[price]]\nprovider = "ollama"\nmodel = "*"\ninput = 0\noutput = 0\n')
    assert cli("prices", "add", free, "--db", db).code == 0
    group = cli("cost", "--by", "run", "--json", "--db", db).json()["groups"][0]
    assert group["cost_usd"] == 0 and group["cost_complete"]
    assert cli("check", "--only", "models_priced", "--json", "--db", db).json()["findings"] == []
