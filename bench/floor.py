"""Benchmark: the least a strict native ingest must do, stage by stage, beside DuckDB's bare typed load.

    farm-bench -n 3 --vs "python bench/floor.py bare FILE DB" -- python bench/floor.py write FILE DB

Each STAGE runs every stage before it in one fresh process and store, so a pairing with ``bare``
gives the ratio a pipeline that stopped there would have. None of these stages examines a line,
de-duplicates, pairs a call, or accounts for anything: they are the guarantees the issue asks to
keep, at their cheapest, with nothing else.

- ``bare``: the reference, a typed ``read_json`` into a file-backed table (``bench/run.py``'s).
- ``text``: the lines as text with their numbers (a reject names its line and keeps its text).
- ``parse``: one typed parse of every line (``json_transform`` to the journal's declared fields),
  kept for staging — the one parse the issue allows.
- ``guard``: the one text scan that proves the lenient parse read every declared field strictly
  (``reconcile.ingest.guard``) and finds DuckDB's non-JSON extensions.
- ``write``: the step lines' typed values straight into the store's own ``steps`` table (no
  intermediate copy), in one transaction.
- ``hash``: the file's SHA-256 and line count (re-ingesting the same file changes nothing).
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.ingest import TYPED_COLUMNS  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.ingest.guard import guard_pattern  # noqa: E402
from reconcile.ingest.validate import BLANK_LINE, lenient_pattern, structure_sql  # noqa: E402
from reconcile.formats.journal_spec import FIELDS  # noqa: E402
from reconcile.sql_text import string_literal  # noqa: E402

STAGES = ("bare", "text", "parse", "guard", "write", "hash")
TEXT = ("select row_number() over () as line_no, line from read_csv(?, columns={'line': 'VARCHAR'}, delim=chr(1), "
        "quote='', escape='', header=false, auto_detect=false, strict_mode=false)")
# The step lines' typed values, named as the steps table names them.
STEP_VALUES = """select j.run_id, j.idx::integer, j.kind, j.ts::timestamptz, round(j.ms)::bigint, j.model,
    j.usage.input_uncached::bigint, j.usage.cache_read::bigint, j.usage.cache_write_5m::bigint,
    j.usage.cache_write_1h::bigint, j.usage.output::bigint, j.finish_reason, j.final::boolean, j.text,
    j.call_id, j.tool, j.status, j.result_tokens::bigint, j.result_hash, line_no::integer
from _typed where j.type = 'step'"""
STEP_COLUMNS = ("run_id, idx, kind, started_at, ms, model, input_uncached, cache_read, cache_write_5m, cache_write_1h, "
                "output_tokens, finish_reason, is_final, output_text, call_id, tool_name, tool_status, result_tokens, "
                "result_hash, source_line")


def run(stage: str, path: str, db: str) -> None:
    for stale in (db, db + ".wal"):
        if os.path.exists(stale):
            os.remove(stale)
    if stage == "bare":
        con = duckdb.connect(db)
        con.execute("create table t as select * from read_json(?, format='newline_delimited', columns=?)",
                    [path, TYPED_COLUMNS])
        return
    upto = STAGES.index(stage)
    con = store.connect(db)  # the store's own schema: its steps table is the one written
    con.execute("begin")
    con.execute("create temp table _lines as " + TEXT, [path])
    if upto >= STAGES.index("parse"):
        con.execute(f"""create temp table _typed as
            select line_no, case when regexp_full_match(line, {string_literal(BLANK_LINE)}) then null
                                 else try(json_transform(line, {structure_sql(FIELDS)})) end as j
            from _lines""")
    if upto >= STAGES.index("guard"):
        scan = string_literal(guard_pattern(FIELDS) + "|" + lenient_pattern())
        con.execute(f"create temp table _flagged as select line_no from _lines where regexp_matches(line, {scan})")
    if upto >= STAGES.index("write"):
        con.execute(f"insert into steps ({STEP_COLUMNS}) {STEP_VALUES}")
    con.execute("commit")
    if upto >= STAGES.index("hash"):
        digest, lines = hashlib.sha256(), 0
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
                lines += chunk.count(b"\n")


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in STAGES:
        sys.exit(f"usage: floor.py {{{'|'.join(STAGES)}}} FILE DB")
    run(*sys.argv[1:])
