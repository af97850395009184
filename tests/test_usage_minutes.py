"""The match with the providers' usage adds each run's journal calls up by the minute they answered in
(``journal_usage_minutes``, kept in a store): the same rows as adding the calls one by one, and the calls one by one
where a provider's window does not start and end on a whole minute.

The second test's figures are recomputed in plain Python from the journal's calls (``journal_usage``, one row a
call) and the provider's rows, with the matching rule docs/usage.md states.
"""

from __future__ import annotations

import shutil
from collections import Counter, defaultdict

from reconcile import store
from reconcile.store.views import view_query

BUCKETS = ("input_uncached", "cache_read", "cache_write_5m", "cache_write_1h", "output_tokens")
ALIGNED = "(select whole_minutes from aligned)"


def _rows(con, sql: str) -> list[str]:
    """Every row of ``sql`` with its calls' tokens by run (not in the order the runs were listed), sorted."""
    cursor = con.execute(f"select * from ({sql})")
    names = [d[0] for d in cursor.description]
    rows = []
    for row in cursor.fetchall():
        record = dict(zip(names, row))
        by_run = Counter()
        for entry in record.pop("run_tokens") or []:
            by_run[entry["run_id"]] += entry["tokens"]
        rows.append(repr(sorted(record.items(), key=str)) + repr(sorted(by_run.items())))
    return sorted(rows)


def test_minutes_give_the_rows_the_calls_give(night_db, tmp_path):
    db = tmp_path / "night.duckdb"
    shutil.copy(night_db, db)
    query = view_query("usage_reconciliation")
    assert query.count(ALIGNED) == 2
    with store.connect(db) as con:
        calls = con.execute("select count(*) from journal_usage").fetchall()[0][0]
        minutes = con.execute("select count(*) from journal_usage_minutes").fetchall()[0][0]
        windows = con.execute("select bucket_start, bucket_end from provider_usage").fetchall()
        # the sample's windows are whole minutes: the sums are what is read, and fewer rows than the calls
        assert windows and all(t.second == 0 and t.microsecond == 0 for w in windows for t in w)
        assert minutes < calls
        assert _rows(con, "select * from usage_reconciliation") == _rows(con, query.replace(ALIGNED, "false"))


def _matches(call: dict, row: dict) -> bool:
    """docs/usage.md's rule: same provider, answered within the window, the model the same or one the other's
    dated name, each dimension the row names the same."""
    if call["provider"] != row["provider"] or not row["bucket_start"] <= call["responded_at"] < row["bucket_end"]:
        return False
    if row["model"] is not None and call["model"] is not None:
        a, b = row["model"], call["model"]
        if not (a == b or a.startswith(b + "-") or b.startswith(a + "-")):
            return False
    elif row["model"] is not None:
        return False
    return all(row[d] is None or row[d] == call[d] for d in ("api_key_id", "workspace_id", "project_id"))


def _fetch(con, sql: str) -> list[dict]:
    cursor = con.execute(sql)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


def test_a_window_off_the_minute_is_matched_call_by_call(night_db, tmp_path):
    db = tmp_path / "night.duckdb"
    shutil.copy(night_db, db)
    with store.connect(db) as con:
        calls = _fetch(con, "select * from journal_usage")
        rows = _fetch(con, "select * from provider_usage")
        # a window cut short at a call's own time, within its minute: the call falls outside the window, the start
        # of its minute inside, so adding the minute up would count it
        row, call = next((r, c) for r in rows for c in calls
                         if _matches(c, r) and (c["responded_at"].second or c["responded_at"].microsecond)
                         and c["responded_at"].replace(second=0, microsecond=0) > r["bucket_start"])
        con.execute("update usage_buckets set bucket_end = $cut where provider = $provider "
                    "and bucket_start = $start and bucket_end = $end",
                    {"cut": call["responded_at"], "provider": row["provider"], "start": row["bucket_start"],
                     "end": row["bucket_end"]})
        rows = _fetch(con, "select * from provider_usage")
        got = {r["usage_row"]: r for r in _fetch(con, "select * from usage_reconciliation where usage_row is not null")}
    assert any(r["bucket_end"] == call["responded_at"] for r in rows)
    for row in rows:
        mine = [c for c in calls if _matches(c, row)]
        expected = {b: sum(c[b] for c in mine) for b in BUCKETS}
        runs = defaultdict(int)
        for c in mine:
            runs[c["run_id"]] += sum(c[b] for b in BUCKETS)
        seen = got[row["usage_row"]]
        assert {b: seen[f"journal_{b}"] for b in BUCKETS} == expected, row["usage_row"]
        assert seen["journal_calls"] == len(mine)
        by_run = defaultdict(int)
        for entry in seen["run_tokens"] or []:
            by_run[entry["run_id"]] += entry["tokens"]
        assert dict(by_run) == dict(runs)
