"""``format_facts`` is written by the ingest (which knows the formats), not by the store's views (issue 30)."""

from __future__ import annotations

from pathlib import Path

from reconcile import store
from reconcile.formats import format_fact_rows, transcript_formats
from reconcile.ingest.driver import ingest, record_format_facts

JOURNAL = Path(__file__).resolve().parent.parent / "sample_runs" / "2026-11-28" / "coder.jsonl"


def test_the_ingest_writes_what_each_format_records_and_only_when_it_changed(tmp_path):
    with store.connect(tmp_path / "s.duckdb") as con:
        assert con.execute("select count(*) from format_facts").fetchall()[0][0] == 0  # a store knows no format
        ingest(con, [JOURNAL])
        held = con.execute("select format, fact, recorded, how, inferred from format_facts order by all").fetchall()
        assert held == sorted(tuple(row) for row in format_fact_rows())
        assert {row[0] for row in held} == {fmt.name for fmt in transcript_formats()}
        native = {fact for fmt, fact, recorded, _, _ in held if fmt == "native" and recorded}
        assert {"usage", "ledger", "limits"} <= native
        assert record_format_facts(con) is False  # the same declarations: nothing written
        con.execute("delete from format_facts where format = 'native' and fact = 'usage'")
        assert record_format_facts(con) is True
        con.execute("delete from format_facts where format = 'native' and fact = 'usage'")
        ingest(con, [JOURNAL])  # an unchanged file: nothing loaded, the declarations written back all the same
        assert con.execute("select count(*) from format_facts where format = 'native' and fact = 'usage'"
                           ).fetchall()[0][0] == 1
