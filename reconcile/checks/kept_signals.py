"""Kept signal sums: a signal's observations summed by run, key and minute, kept as the runs load.

A reading (a night, a day, an hour, a week, or the watch's sliding window) of a ``rate`` or ``mean`` signal is the
count of its observations and their sum; both add up over minutes, and every window a reading takes starts and
ends on a whole minute of every time zone. So a signal whose header promises ``kept: by run`` (each observation is
one run's, read from that run's rows alone, and named by a ``run_id`` column) is kept in ``signal_minutes``: per
signal, run, key and minute, the observations' count and sum. A run's sums are written again when its kept run
totals are (``store/kept_totals.py``: ``kept_run_keys.revision``, which changes when its file's content or the
prices of its calls do), so a reading reads sums of the minutes it spans, never the steps, and the work of keeping
them follows what was loaded.

A signal that does not promise it (a percentile, a signal reading the kept verdicts or comparing runs with each
other, a team's own signal file without the header) is read from the steps each time, as before, and
``not_kept`` says why. An engine that keeps nothing (an export read back, Spark) reads every signal that way.
The watch's sliding window read from sums starts at the first whole minute inside it.
"""

from __future__ import annotations

import hashlib

from reconcile.checks.signal_files import KEPT_BY_RUN, Signal
from reconcile.engine import Engine
from reconcile.sql_text import identifier, string_literal
from reconcile.store import cached_rows, kept_totals

KEPT_AGGREGATES = ("rate", "mean")  # a mean of means would not be theirs: a count and a sum add up, a percentile does not
TABLES = {
    "signal_minutes": "signal varchar not null, digest varchar not null, run_id varchar not null, key varchar, "
                      "minute timestamptz not null, n bigint not null, total double not null",
    "kept_signal_runs": "signal varchar not null, digest varchar not null, run_id varchar not null, revision bigint",
}


def digest(signal: Signal) -> str:
    return hashlib.sha256(signal.sql.encode()).hexdigest()[:16]


def not_kept(engine: Engine, signal: Signal) -> str | None:
    """Why ``signal`` is read from the steps each time (None: it is kept)."""
    if not usable(engine):
        return "this engine keeps nothing (an export read back, Spark)"
    if signal.kept != KEPT_BY_RUN:
        return "its header does not promise 'kept: by run'"
    if signal.aggregate not in KEPT_AGGREGATES:
        return f"a {signal.aggregate} does not add up over minutes"
    columns = engine.columns(signal.sql)
    if "run_id" not in columns:
        return "it names no run_id"
    if "detail" in columns:
        return "its details' most common one does not add up over minutes"
    return None


def usable(engine: Engine) -> bool:
    """Whether ``engine`` reads a store that keeps run totals (DuckDB, a store rather than an export)."""
    return kept_totals.kept_in(engine)


def kept_digests(engine: Engine, signals: list[Signal]) -> dict[str, str]:
    """The kept signals' digests by name, for a reader that has just called ``prepare`` (nothing is checked again)."""
    return {s.name: digest(s) for s in signals if s.enabled and not_kept(engine, s) is None}


def prepare(engine: Engine, signals: list[Signal]) -> dict[str, str]:
    """Bring the kept sums of every keepable enabled signal up to date; returns each kept signal's digest by name.

    A store that may be written keeps them (one transaction); a read-only one puts what it lacks in a temporary
    ``signal_minutes`` read first, as ``kept_totals.cover`` does for the totals.
    """
    kept = kept_digests(engine, signals)
    if not kept:
        return {}
    writable = kept_totals.writable(engine)
    present = engine.rows("select count(*) from duckdb_tables() where schema_name = 'main' and not temporary and "
                          "table_name in (select unnest(?))", [list(TABLES)])[0][0] == len(TABLES)
    if writable and not present:
        for name, columns in TABLES.items():
            engine.run(f"create table if not exists {name} ({columns})")
        present = True
    engine.run("drop table if exists temp.signal_minutes")
    engine.run("create or replace temp table _kept_signals as select unnest($names) as signal, "
               "unnest($digests) as digest", {"names": list(kept), "digests": list(kept.values())})
    kept_runs = "main.kept_signal_runs" if present else "(select null::varchar as signal, null::varchar as digest, " \
                                                        "null::varchar as run_id, null::bigint as revision where false)"
    covered = (f"select run_id from {kept_totals.COVERED}" if engine.rows(
        "select count(*) from duckdb_tables() where temporary and table_name = ?", [kept_totals.COVERED])[0][0]
        else "select null::varchar as run_id where false")  # a reader's runs whose kept rows were stale
    # the (signal, run) pairs whose sums are missing or were made from other rows than the run's kept ones now
    engine.run(f"""create or replace temp table _signal_stale as
        select g.signal, g.digest, k.run_id from _kept_signals g cross join main.kept_run_keys k
        left join {kept_runs} r on r.signal = g.signal and r.digest = g.digest and r.run_id = k.run_id
                               and r.revision = k.revision
        where r.run_id is null or k.run_id in ({covered})""")
    stale = engine.rows("select count(*) from _signal_stale")[0][0]
    if not stale and (not writable or not _gone(engine)):
        return kept
    _compute(engine, [s for s in signals if s.name in kept], kept)
    if writable:
        with engine.transaction():
            for name in TABLES:
                engine.run(f"""delete from main.{name} t where t.signal not in (select signal from _kept_signals)
                    or exists (select 1 from _kept_signals g where g.signal = t.signal and g.digest <> t.digest)
                    or t.run_id not in (select run_id from main.kept_run_keys)
                    or exists (select 1 from _signal_stale x where x.signal = t.signal and x.run_id = t.run_id)""")
            engine.run("insert into main.signal_minutes select * from _fresh_minutes")
            engine.run("""insert into main.kept_signal_runs select x.signal, x.digest, x.run_id, k.revision
                          from _signal_stale x join main.kept_run_keys k using (run_id)""")
    else:
        source = ("select m.* from main.signal_minutes m where not exists (select 1 from _signal_stale x "
                  "where x.signal = m.signal and x.run_id = m.run_id) union all " if present else "")
        engine.run(f"create temp table signal_minutes as {source}select * from _fresh_minutes")
    return kept


def _gone(engine: Engine) -> bool:
    """Whether sums are kept that no reading wants (a signal changed or gone, a run forgotten)."""
    return engine.rows("""select count(*) from main.kept_signal_runs t
                          left join _kept_signals g on g.signal = t.signal and g.digest = t.digest
                          left join main.kept_run_keys k on k.run_id = t.run_id
                          where g.signal is null or k.run_id is null""")[0][0] > 0


def _compute(engine: Engine, signals: list[Signal], kept: dict[str, str]) -> None:
    """``_fresh_minutes``: the stale runs' sums of each signal, from their rows alone (temporary copies of the tables
    the signals read, cut down to those runs, found first)."""
    engine.run("create or replace temp table _signal_runs as select distinct run_id from _signal_stale")
    existing = {row[0] for row in engine.rows("select table_name from duckdb_tables() where temporary")}
    shadowed = [name for name in kept_totals.SOURCES if name not in existing]
    runs = engine.rows("select (select count(*) from _signal_runs), (select count(*) from runs)")[0]
    if 2 * runs[0] >= runs[1]:
        shadowed = []  # most of the store: copying it costs more than reading it whole
    frozen = False
    engine.run(f"create or replace temp table _fresh_minutes ({TABLES['signal_minutes']})")
    try:
        for name in shadowed:  # (the morning's night: from the rows it keeps priced, kept_totals.cached)
            engine.run(f"create temp table {identifier(name)} as {cached_rows(engine, name, '_signal_runs')}")
        if "step_view" not in existing:  # priced once for every signal
            engine.run(f"create temp table step_view as {cached_rows(engine, 'step_view', '_signal_runs')}")
            frozen = True
        for signal in signals:
            engine.run(f"""insert into _fresh_minutes
                select $signal, $digest, run_id, key, minute, n, total from (
                    select o.run_id::varchar as run_id, o."key"::varchar as key, date_trunc('minute', o."at") as minute,
                           count(*) as n, sum(o."value"::double) as total
                    from ({signal.sql}) as o
                    where o."at" is not null and o."value" is not null and o.run_id is not null
                      and o.run_id in (select run_id from _signal_stale where signal = $signal)
                    group by 1, 2, 3)""", {"signal": signal.name, "digest": kept[signal.name]})
    finally:
        if frozen:
            engine.run("drop table if exists temp.step_view")
        for name in shadowed:
            engine.run(f"drop table if exists temp.{identifier(name)}")


def minutes(signal: str, digest_: str) -> str:
    """SQL: the kept sums of one signal (``signal_minutes``: a reader's temporary one first)."""
    return f"(select * from signal_minutes where signal = {string_literal(signal)} and digest = {string_literal(digest_)})"
