"""Issue 27: characters that reorder or hide text show as escapes; exports carry values exactly.

A transcript's right-to-left override (U+202E), zero-width space or tag character is printed as
``\\u202e`` in the terminal and in both HTML reports (chart labels included), never raw; ``sql
--json`` and ``--csv`` carry every type DuckDB returns, a BLOB as DuckDB's own text for it.
"""

from __future__ import annotations

import csv
import io
import re
from decimal import Decimal

import duckdb
import pytest

from journals import StepClock
from reconcile.cli.render import blob_text, iso_duration, to_jsonable
from reconcile.display import HIDDEN_RANGES
from reconcile.errors import ExitCode
from reconcile.journal import Journal

RLO, ZWSP, LRI, PDI, BOM, TAG = "\u202e", "\u200b", "\u2066", "\u2069", "\ufeff", "\U000e0041"
AGENT = f"evil{RLO}tnega"
TASK = f"task{ZWSP}class{BOM}"
ERROR = f"boom {LRI}fdp.exe{PDI} {TAG}"
# Any character literal() escapes, raw, in a report is a failure (tab and newline are layout).
RAW_HIDDEN = re.compile(f"[{HIDDEN_RANGES}]")


@pytest.fixture
def hidden_db(tmp_path):
    path = tmp_path / "hidden.jsonl"
    with Journal(path, clock=StepClock()) as journal:
        for number in range(2):
            run = journal.start_run(f"run{number}{RLO}", agent=AGENT, task_class=TASK, model="claude-sonnet-4-5",
                                    provider="anthropic", tools=[{"name": "read_file"}], catalogue_tokens=10)
            calls = [("read_file", {"path": f"a{RLO}.py"}), ("read_file", {"path": "b.py"})][: number + 1]
            step = run.model_step(model="claude-sonnet-4-5", ms=10, usage={"input_uncached": 100, "output": 10},
                                  tool_calls=calls, finish_reason="tool_use")
            run.tool_step(step.calls[0], status="error", result=ERROR, ms=3, error=ERROR)  # run1's second: no result
            run.end("tool_error", final_output=ERROR)
    return path


def test_both_html_reports_show_hidden_characters_as_escapes(cli, tmp_path, hidden_db):
    db = tmp_path / "store.duckdb"
    assert cli("ingest", hidden_db, "--db", db).code == ExitCode.OK
    finance = cli("report", "finance", "--out", tmp_path / "finance.html", "--db", db)
    morning = cli("report", "morning", "--out", tmp_path / "morning.html", "--db", db)
    assert finance.code == ExitCode.OK and morning.code == ExitCode.OK, (finance.err, morning.err)
    for name, shown in (("finance.html", ["evil\\u202etnega", "task\\u200bclass\\ufeff"]),
                        ("morning.html", ["run1\\u202e", "boom \\u2066fdp.exe\\u2069 \\U000e0041"])):
        html = (tmp_path / name).read_text(encoding="utf-8")
        raw = sorted({f"U+{ord(c):04X}" for c in RAW_HIDDEN.findall(html)})
        assert raw == [], (name, raw)
        for text in shown:
            assert text in html, (name, text)


def test_chart_labels_are_literal():
    from reconcile.reports.charts import bar_chart

    plain = bar_chart(["abc"], {"x": [1.0]}, "t")
    hidden = bar_chart([f"a{RLO}bc"], {"x": [1.0]}, "t")
    assert not RAW_HIDDEN.search(hidden)
    assert hidden != plain  # the label is drawn with its escape, six characters more, not as "abc"


def test_terminal_output_escapes_them_and_json_keeps_them(cli, tmp_path, hidden_db):
    db = tmp_path / "store.duckdb"
    cli("ingest", hidden_db, "--db", db)
    query = "select run_id, agent, task_class from runs order by run_id"
    table = cli("sql", query, "--db", db).out
    assert "run0\\u202e" in table and "task\\u200bclass\\ufeff" in table and not RAW_HIDDEN.search(table)
    runs = cli("runs", "--db", db).out
    assert "evil\\u202etnega" in runs and not RAW_HIDDEN.search(runs)
    # Exports are data: the characters exactly as recorded.
    assert cli("sql", query, "--json", "--db", db).json()[0] == {"run_id": f"run0{RLO}", "agent": AGENT,
                                                                   "task_class": TASK}
    rows = list(csv.reader(io.StringIO(cli("sql", query, "--csv", "--db", db).out)))
    assert rows[1] == [f"run0{RLO}", AGENT, TASK]


TYPES = ("select 'ab'::blob as ab, '\\x00\\xFF\\x5C\\x22\\x27 ~'::blob as raw, 1.50::decimal(10, 2) as d, "
         "'a3aa6d18-2a7a-4c3e-9f0e-0a3c8d1b2c3d'::uuid as u, interval 3 day + interval 2 hour + interval 500 millisecond as i, "
         "-(interval 1 day) as neg, time '01:02:03.5' as t, date '2026-01-01' as dt, "
         "timestamptz '2026-01-01 01:00:00+00' as tz, [1, 2] as l, {'a': 1, 'b': 'x'::blob} as s, map {'k': 1} as m, "
         "map {'x'::blob: 2} as mb, 170141183460469231731687303715884105727::hugeint as h, "
         "340282366920938463463374607431768211455::uhugeint as big, 'nan'::double as nan, '-inf'::double as ninf, "
         "[1, 2]::integer[2] as arr, 'a'::enum('a', 'b') as en, '\"x\"'::json as j, null as nothing")


def test_sql_json_and_csv_carry_every_type(cli, tmp_path, hidden_db):
    db = tmp_path / "store.duckdb"
    cli("ingest", hidden_db, "--db", db)
    result = cli("sql", "select 'ab'::blob as b", "--json", "--db", db)
    assert result.code == ExitCode.OK and result.json() == [{"b": "ab"}]
    got = cli("sql", TYPES, "--json", "--db", db)
    assert got.code == ExitCode.OK, got.err
    assert got.json() == [{
        "ab": "ab", "raw": "\\x00\\xFF\\x5C\\x22\\x27 ~", "d": "1.50", "u": "a3aa6d18-2a7a-4c3e-9f0e-0a3c8d1b2c3d",
        "i": "P3DT2H0M0.5S", "neg": "-P1DT0H0M0S", "t": "01:02:03.500000", "dt": "2026-01-01",
        "tz": "2026-01-01T01:00:00+00:00", "l": [1, 2], "s": {"a": 1, "b": "x"}, "m": {"k": 1}, "mb": {"x": 2},
        "h": 170141183460469231731687303715884105727, "big": 340282366920938463463374607431768211455,
        "nan": "NaN", "ninf": "-Infinity", "arr": [1, 2], "en": "a", "j": '"x"', "nothing": None}]
    assert "NaN," not in got.out and "Infinity," not in got.out.replace('"-Infinity"', "")  # strict JSON
    rows = list(csv.reader(io.StringIO(cli("sql", TYPES, "--csv", "--db", db).out)))
    cells = dict(zip(rows[0], rows[1]))
    assert cells["raw"] == "\\x00\\xFF\\x5C\\x22\\x27 ~" and cells["u"].startswith("a3aa6d18")
    assert cells["i"] == "P3DT2H0M0.5S" and cells["s"] == '{"a": 1, "b": "x"}' and cells["l"] == "[1, 2]"
    assert cells["big"] == "340282366920938463463374607431768211455" and cells["nothing"] == ""
    text = cli("sql", TYPES, "--db", db)
    assert text.code == ExitCode.OK and "\\x00\\xFF" in text.out and "b'" not in text.out


def test_blob_text_is_duckdbs_and_reads_back():
    con = duckdb.connect()
    every_byte = bytes(range(256))
    assert blob_text(every_byte) == con.execute("select ?::blob::varchar", [every_byte]).fetchall()[0][0]
    assert con.execute("select ?::blob", [blob_text(every_byte)]).fetchall()[0][0] == every_byte


def test_to_jsonable_durations_and_keys():
    from datetime import timedelta

    assert iso_duration(timedelta(seconds=59, microseconds=10)) == "P0DT0H0M59.00001S"
    assert iso_duration(timedelta(days=-1, seconds=3600)) == "-P0DT23H0M0S"
    assert to_jsonable({b"\x01": [float("inf")]}) == {"\\x01": ["Infinity"]}


def test_sql_parquet_takes_integers_past_int64(cli, tmp_path, hidden_db):
    import pyarrow.parquet as pq

    db, out = tmp_path / "store.duckdb", tmp_path / "q.parquet"
    cli("ingest", hidden_db, "--db", db)
    query = ("select 340282366920938463463374607431768211455::uhugeint as big, (2::hugeint ** 70)::hugeint as wide, "
             "'ab'::blob as b, 1 as n")
    assert cli("sql", query, "--parquet", out, "--db", db).code == ExitCode.OK
    assert pq.read_table(out).to_pylist() == [{"big": "340282366920938463463374607431768211455",
                                               "wide": Decimal(2**70), "b": b"ab", "n": 1}]
