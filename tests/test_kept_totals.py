"""Kept run totals equal their definitions, whatever happened to the store before (issue 60, item 4).

``run_totals`` and ``run_model_totals`` are kept in a store (``store/kept_totals.py``) and rewritten only for the
runs whose rows or prices changed. After every step of a random sequence — files added, journals grown line by
line, files removed or rewritten under the same run ids, price files loaded and removed, ingests with nothing
changed — the kept rows must be exactly the definitions' rows over the store as it is, and exactly what
``reconcile rebuild`` writes from scratch. A reader that cannot write sees current totals even where a writer
left them stale (an ingest killed before its last step); a writer brings them up to date.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import pytest

from conftest import ROOT, SAMPLE_RUNS
from reconcile import store
from reconcile.ingest.driver import ingest
from reconcile.prices import pricing
from reconcile.store.views import KEPT, view_query

REAL = ROOT / "tests" / "fixtures" / "realdata"
WHOLE_FILES = {  # copied whole: sessions with sub-agents, rollouts, trajectories with no time of their own
    "claude": REAL / "claude-code-viewer" / "projects",
    "codex": REAL / "codex-cli" / "sessions" / "2026" / "02" / "23",
    "swe": REAL / "swe-agent" / "demo__function_calling_simple.traj",
}
JOURNALS = sorted(SAMPLE_RUNS.glob("*/*.jsonl"))  # written in pieces


def _differences(con) -> dict[str, int]:
    """Rows the kept tables and their definitions over the store hold apart, per table (none: 0)."""
    found = {}
    for name in KEPT:
        definition = f"select * from ({view_query(name)})"
        apart = con.execute(f"select count(*) from ((select * from main.{name} except all {definition}) "
                            f"union all ({definition} except all select * from main.{name}))").fetchall()[0][0]
        found[name] = apart
    return found


def _kept_rows(con) -> dict[str, list]:
    return {name: sorted(map(repr, con.execute(f"select * from main.{name}").fetchall())) for name in KEPT}


def _place(night, name):
    source = WHOLE_FILES[name]
    if source.is_dir():
        shutil.copytree(source, night / name)
    else:
        shutil.copy(source, night / source.name)


def _remove(night, name):
    target = night / name if WHOLE_FILES[name].is_dir() else night / WHOLE_FILES[name].name
    shutil.rmtree(target) if target.is_dir() else target.unlink()


@pytest.mark.slow  # twelve ingests and rebuilds a seed: CI runs it (pytest -m slow)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_totals_equal_their_definitions_and_a_rebuild_after_any_sequence(tmp_path, seed):
    rng = random.Random(seed)
    night = tmp_path / "night"
    night.mkdir()
    lines = {path: path.read_text().splitlines(keepends=True) for path in JOURNALS}
    written = dict.fromkeys(JOURNALS, 0)
    placed: set[str] = set()
    rates = tmp_path / "negotiated.csv"
    db = tmp_path / "kept.duckdb"
    done = []
    rest = ["grow", "grow", "grow", "place", "remove", "rewrite", "unprice", "price", "again"]
    rng.shuffle(rest)
    for step, action in enumerate(["grow", "place", "price", *rest]):  # each kind can apply once its turn comes
        con = store.connect(db)
        try:
            if action == "grow":
                path = rng.choice(JOURNALS)
                upto = min(len(lines[path]), written[path] + rng.randint(5, 200))
                with open(night / path.name, "a") as out:
                    out.writelines(lines[path][written[path]:upto])
                written[path] = upto
            elif action == "place" and len(placed) < len(WHOLE_FILES):
                name = rng.choice(sorted(set(WHOLE_FILES) - placed))
                _place(night, name)
                placed.add(name)
            elif action == "remove" and placed:
                name = rng.choice(sorted(placed))
                _remove(night, name)
                placed.discard(name)
            elif action == "rewrite" and any(written.values()):
                path = rng.choice([p for p in JOURNALS if written[p]])
                text = (night / path.name).read_text()  # the same runs, other token counts
                (night / path.name).write_text(text.replace('"output_tokens":', '"output_tokens":1', 3))
            elif action == "price":
                factor = rng.choice([2, 3, 10])
                rates.write_text("provider,model,from,input,output,cache_read,cache_write_5m,cache_write_1h\n"
                                 f"anthropic,claude-sonnet-4-5,2026-01-01,{3 * factor},{15 * factor},0.3,3.75,6\n"
                                 f"*,gpt-5,2025-01-01,{factor},{8 * factor},0.1,1,1\n")
                pricing.load_overrides(con, rates)
                pricing.resolve(con)
            elif action == "unprice" and con.execute("select count(*) from prices where source = ?",
                                                     [str(rates)]).fetchall()[0][0]:
                pricing.remove_overrides(con, str(rates))
                pricing.resolve(con)
            elif action != "again":
                action = "again"  # nothing of its kind to do yet: an ingest with nothing changed
            done.append(action)
            ingest(con, [night])
            assert con.execute("select count(*) from kept_run_keys").fetchall()[0][0] == \
                con.execute("select count(*) from runs").fetchall()[0][0], done
            assert _differences(con) == dict.fromkeys(KEPT, 0), done
            kept = _kept_rows(con)
        finally:
            con.close()
        copy = tmp_path / f"rebuilt-{step}.duckdb"
        shutil.copy(db, copy)
        with store.connect(copy) as rebuilt:
            assert store.rebuild_kept(rebuilt) == rebuilt.execute("select count(*) from runs").fetchall()[0][0]
            assert _kept_rows(rebuilt) == kept, done
        copy.unlink()
    assert set(done) == {"grow", "place", "remove", "rewrite", "price", "unprice", "again"}, done


def test_a_reader_sees_current_totals_where_a_writer_left_them_stale(tmp_path):
    """A kept total a killed writer left stale (its key no longer the run's) is recomputed for a read-only
    reader in its own temporary table, and written by the next writer."""
    night = tmp_path / "night"
    shutil.copytree(SAMPLE_RUNS, night)
    db = tmp_path / "kept.duckdb"
    with store.connect(db) as con:
        ingest(con, [night])
        truth = con.execute("select run_id, cost_micros, steps from run_view order by run_id").fetchall()
        run = truth[0][0]
        # a stale row, as an ingest killed between its load and its last step leaves one
        con.execute("update run_totals set cost_low_unrounded = 0, model_steps = 0 where run_id = ?", [run])
        con.execute("update kept_run_keys set content_key = 'before' where run_id = ?", [run])
    with store.connect(db, read_only=True) as reader:
        assert reader.execute("select run_id, cost_micros, steps from run_view order by run_id").fetchall() == truth
        catalog = reader.execute("select current_database()").fetchall()[0][0]  # (main: the temporary one first)
        assert reader.execute(f"select model_steps from {catalog}.main.run_totals where run_id = ?", [run]
                              ).fetchall() == [(0,)]  # the store itself untouched: a reader writes nothing
    with store.connect(db) as writer:
        assert _differences(writer) == dict.fromkeys(KEPT, 0)
        assert writer.execute("select run_id, cost_micros, steps from run_view order by run_id").fetchall() == truth


def test_a_run_priced_at_today_is_priced_again_the_next_day(tmp_path):
    """A call with no time of its own is priced at today's prices (step_view): its run's kept totals carry the day,
    and a later day's reader and writer price it again."""
    night = tmp_path / "night"
    night.mkdir()
    shutil.copy(WHOLE_FILES["swe"], night)
    db = tmp_path / "kept.duckdb"
    with store.connect(db) as con:
        ingest(con, [night])
        days = con.execute("select count(*), count(priced_on) from kept_run_keys").fetchall()[0]
        assert days[0] >= 1 and days[1] == days[0]  # every run of it has an undated call
        con.execute("update kept_run_keys set priced_on = priced_on - 1")  # as if written yesterday
    with store.connect(db, read_only=True) as reader:
        assert reader.execute("select count(*) from duckdb_tables() where temporary and table_name = 'run_totals'"
                              ).fetchall() == [(1,)]
    with store.connect(db) as writer:
        assert writer.execute("select count(*) from kept_run_keys where priced_on <> current_date").fetchall() == [(0,)]


def test_budgets_from_kept_peaks_equal_the_walk_of_every_run(tmp_path, monkeypatch):
    """The succeeded runs a recommended ceiling would have stopped are found from each run's kept peaks: the same
    as walking every run's steps again, after a night is added and in a store opened read-only."""
    from reconcile.analyses.budgets import budget_report
    from reconcile.analyses.fence import kept as kept_peaks
    from reconcile.engine import DuckDBEngine

    night = tmp_path / "night"
    night.mkdir()
    journals = sorted(SAMPLE_RUNS.glob("*/*.jsonl"))
    shutil.copy(journals[0], night)
    db = tmp_path / "kept.duckdb"

    def both(con):
        kept = budget_report(DuckDBEngine(con), "agent")
        with monkeypatch.context() as patch:
            patch.setattr(kept_peaks, "usable", lambda engine: False)
            walked = budget_report(DuckDBEngine(con), "agent")
        return kept, walked

    for added in journals[1:]:
        with store.connect(db) as con:
            ingest(con, [night])
            kept, walked = both(con)
            assert kept == walked
            assert con.execute("select count(*) from fence_peaks").fetchall()[0][0] > 0
        shutil.copy(added, night)
    with store.connect(db) as con:
        ingest(con, [night])  # the last journal loaded, its runs not walked yet
    with store.connect(db, read_only=True) as reader:  # walked by the reader, into a temporary table
        kept, walked = both(reader)
        assert kept == walked
        assert reader.execute("select count(*) from temp.fence_peaks").fetchall()[0][0] > 0


@pytest.mark.slow  # three mornings: CI runs it (pytest -m slow)
def test_the_morning_keeps_the_totals_from_the_steps_it_priced_once(tmp_path):
    """``reconcile morning`` loads without keeping totals and keeps them from the steps its reports price: the
    kept rows are their definitions' after it, for a night added too."""
    from reconcile.morning import morning

    night = tmp_path / "night"
    night.mkdir()
    journals = sorted(SAMPLE_RUNS.glob("*/*.jsonl"))
    db = tmp_path / "kept.duckdb"
    for journal in journals:
        shutil.copy(journal, night)
        morning(db, night, [], tmp_path / "out")
        with store.connect(db, read_only=True, keep_totals=False) as con:
            assert _differences(con) == dict.fromkeys(KEPT, 0)
            assert con.execute("select count(*) from kept_run_keys").fetchall() == \
                con.execute("select count(*) from runs").fetchall()


@pytest.mark.slow  # eleven mornings: CI runs it (pytest -m slow)
def test_a_night_added_to_judged_nights_is_judged_as_in_a_fresh_store(tmp_path, monkeypatch):
    """A morning that adds a night to a store of judged nights prices the night's runs once (kept_totals.cached: the
    checks, signals, budgets and replay read them from there) and says what a morning over all the nights in a fresh
    store says of that night: the same checks, findings and runs not judged, the same kept totals. The nights: eight
    of the fleet signals' (tests/signal_nights.py), then the sample night with its planted defects and bills, its
    last journal added last (a fifth of the runs: the rest are copied and priced from the store)."""
    import json

    from signal_nights import write_nights

    from reconcile.morning import morning
    from reconcile.store import kept_totals

    hits = []
    cached = kept_totals.cached

    def spied(con, name, runs):
        sql = cached(con, name, runs)
        hits.append(kept_totals.CACHE[name] in sql)
        return sql

    monkeypatch.setattr(kept_totals, "cached", spied)
    nights = write_nights(tmp_path / "written", plant=False)
    added, alone = tmp_path / "added", tmp_path / "alone"
    added.mkdir()
    alone.mkdir()
    for night in nights:
        shutil.copy(night, added)
        morning(tmp_path / "kept.duckdb", added, [], tmp_path / "out-kept")
        shutil.copy(night, alone)
    journals = sorted((SAMPLE_RUNS / "2026-11-28").glob("*.jsonl"))  # the sample night: two agents' journals, then
    for journal in journals[:-1]:                                      # the last with the night's bills
        shutil.copy(journal, added)
    morning(tmp_path / "kept.duckdb", added, [], tmp_path / "out-kept")
    for journal in journals:
        shutil.copy(journal, alone)
    shutil.copy(journals[-1], added)
    hits.clear()
    bills = [SAMPLE_RUNS / "provider"]
    morning(tmp_path / "kept.duckdb", added, bills, tmp_path / "out-kept")
    assert any(hits)  # the night was read from the rows its morning priced
    morning(tmp_path / "fresh.duckdb", alone, bills, tmp_path / "out-fresh")
    kept, fresh = (json.loads((tmp_path / out / "findings.json").read_text()) for out in ("out-kept", "out-fresh"))
    for finding in kept["findings"] + fresh["findings"]:  # each store read its journals from a folder of its own
        finding["file"] = finding["file"] and Path(finding["file"]).name
    assert kept == fresh
    assert sum(check["failures"] for check in kept["checks"]) > 10
    with store.connect(tmp_path / "kept.duckdb", read_only=True, keep_totals=False) as con:
        assert _differences(con) == dict.fromkeys(KEPT, 0)
