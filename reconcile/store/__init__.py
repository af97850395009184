"""Opening the canonical store: path resolution, migrations, views, UTC."""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from reconcile import notices
from reconcile.engine import Engine
from reconcile.errors import StoreBusy, BadInput, StoreError
from reconcile.store.migrations import MIGRATIONS, applied_migrations, apply_migrations
from reconcile.store import kept_totals
from reconcile.store.views import STEP_ROWS, create_views, views_current

DEFAULT_DB = "reconcile.duckdb"


def default_db_path() -> Path:
    """``$RECONCILE_DB`` if set, else ``./reconcile.duckdb``."""
    return Path(os.environ.get("RECONCILE_DB") or DEFAULT_DB)


def db_path(given: str | Path | None = None, config=None) -> Path:
    """The store a command uses: ``--db`` (or ``$RECONCILE_DB``), else the configuration's ``db``, else the default."""
    if given is not None:
        return Path(given)
    if config is not None and config.db is not None:
        return Path(config.db.value)
    return default_db_path()


# Extensions are never fetched or loaded behind the user's back, by any connection; a read-only
# one also cannot touch the file system or the network, or change these settings afterwards.
EVERY_CONNECTION = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
# Run on every connection before anything else. DuckDB's progress bar (a connection's setting, not one
# a config can give) is off: it draws on standard output once a statement passes two seconds, in the
# middle of a --json or --csv answer (`cost --json` over a 10 M-step store did not parse).
SESSION_SETTINGS = "set TimeZone = 'UTC'; set enable_progress_bar = false"
_READ_ONLY = {**EVERY_CONNECTION, "enable_external_access": False}
# DuckDB would take 80 % of the machine; a bounded limit makes large loads spill to disk instead.
DEFAULT_MEMORY_LIMIT = "2GB"
_MEMORY = re.compile(r"\d+(\.\d+)?\s*(B|KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)


def memory_limit() -> str:
    """DuckDB's memory limit for every connection: ``RECONCILE_MEMORY_LIMIT`` (e.g. ``4GB``), else 2 GB."""
    value = os.environ.get("RECONCILE_MEMORY_LIMIT", DEFAULT_MEMORY_LIMIT).strip()
    if not _MEMORY.fullmatch(value):
        raise BadInput(f"RECONCILE_MEMORY_LIMIT={value!r} is not an amount of memory; write it like 2GB or 512MB.")
    return value
DUCKDB_MAGIC = b"DUCK"  # at byte 8 of every DuckDB database file


def connect(path: str | Path | None = None, read_only: bool = False, create: bool = True,
            wait: float | None = None, keep_totals: bool = True) -> duckdb.DuckDBPyConnection:
    """Open the store at ``path``, upgrading it as needed; ``":memory:"`` works too.

    Only a read-write open with ``create`` makes a new store (``ingest`` and ``morning``): every
    other command refuses a path where there is none, so a typo in ``--db`` is an error, never an
    empty store that "passes". A path that is not a DuckDB store (a journal, a CSV, an empty
    file), a store written by a newer reconcile, a corrupt or locked store: each is refused with
    what it is and what to do. A read-only open first upgrades the file through a short
    read-write open, so read-only commands work on a store written by an older version.
    ``wait``: how long to wait for a store another process holds (default ``lock_timeout()``).
    ``keep_totals``: bring the kept run totals up to date (``kept_totals``); off for a store nobody reads them
    from (a distributed ingest's shard, which is exported and merged).
    """
    target = str(path if path is not None else default_db_path())
    memory = target == ":memory:"
    if not memory:
        _check_file(target, read_only or not create)
    con = _open(target, read_only and not memory, wait)
    if read_only and not memory and _needs_upgrade(con):  # (the one open, in the common case of a current store)
        con.close()
        connect(target, wait=wait).close()
        con = _open(target, True, wait)
    con.execute(SESSION_SETTINGS)
    if read_only and not memory:
        con.execute("set lock_configuration = true")
    _refuse_newer(con, target)
    if not read_only or memory:
        if apply_migrations(con) or not views_current(con):  # (re-creating them costs a command 0.15 s)
            create_views(con)
        if keep_totals:
            kept_totals.refresh(con)  # what an earlier writer left stale (a killed ingest, a new day's undated calls)
    elif keep_totals:
        kept_totals.cover(con)  # the same, for this reader only
    return con


def _check_file(target: str, must_exist: bool) -> None:
    path = Path(target)
    if not path.exists():
        if must_exist:
            raise StoreError(f"No store at {target}: nothing has been loaded there. Create it by loading runs: "
                             f"reconcile ingest PATH --db {target} (or check --db and $RECONCILE_DB for a typo)")
        return
    if path.is_dir():
        raise StoreError(f"--db {target} is a folder, not a store. Give a file, e.g. --db {path / 'reconcile.duckdb'}")
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
    except OSError as exc:
        raise StoreError(f"Cannot read the store {target}: {exc.strerror}. Check its permissions.") from exc
    if head[8:12] != DUCKDB_MAGIC:
        what = "an empty file" if not head else "not a DuckDB database (it starts " + repr(head[:12])[1:] + ")"
        raise StoreError(f"--db {target} is {what}, so not a reconcile store; reconcile will not write over it. "
                         "Give the store's path, or a new file name to create one.")


def _held_by_another(exc: duckdb.Error) -> bool:
    """DuckDB's file lock, held by another process (not "block", which damaged files mention)."""
    text = str(exc).lower()
    return "could not set lock" in text or "conflicting lock" in text


def _open_failure(target: str, exc: duckdb.Error, waited: float | None = None) -> str:
    text = str(exc)
    if _held_by_another(exc):
        after = f" (waited {waited:.0f} s)" if waited else ""
        return (f"The store {target} is in use by another process{after}: DuckDB allows one writer, and no reader "
                "while it writes. Wait for it to finish (or raise RECONCILE_LOCK_TIMEOUT), then run this again. "
                f"({text.splitlines()[0]})")
    return (f"Cannot open the store {target}: it is damaged or not a store this DuckDB can read "
            f"({text.splitlines()[0]}). Restore it from a copy, or ingest again into a new --db.")


def _refuse_newer(con: duckdb.DuckDBPyConnection, target: str) -> None:
    """A store written by a newer reconcile is never rewritten by an older one."""
    has_table = con.execute("select count(*) from information_schema.tables where table_name = '_migrations'").fetchall()
    if not has_table[0][0]:
        return
    known = {m.name for m in MIGRATIONS}
    newer = sorted(row[0] for row in con.execute("select name from _migrations").fetchall() if row[0] not in known)
    if newer:
        con.close()
        raise StoreError(f"The store {target} was written by a newer reconcile (its schema has {newer[0]}, which this "
                         "version does not know): upgrade reconcile (pip install -U reconcile) to read it.")


DEFAULT_LOCK_TIMEOUT = 30.0


def lock_timeout() -> float:
    """How long an open waits for a store another process holds: ``RECONCILE_LOCK_TIMEOUT`` seconds, else 30."""
    text = os.environ.get("RECONCILE_LOCK_TIMEOUT", str(DEFAULT_LOCK_TIMEOUT)).strip()
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86_400:
        raise BadInput(f"RECONCILE_LOCK_TIMEOUT={text!r} is not a number of seconds from 0 to 86400; write it like 30.")
    return value


def _open_waiting(target: str, read_only: bool, config: dict, wait: float | None = None) -> duckdb.DuckDBPyConnection:
    """Open ``target``; while another process holds it (DuckDB: one writer, or any number of readers), wait.

    A writer waits for readers (a notebook) and for another writer, a reader for a writer, up to
    ``lock_timeout()``; ``notices.on_wait`` is told once. Then the error says what held it and for how long.
    """
    started, told, limit = time.monotonic(), False, lock_timeout() if wait is None else wait
    while True:
        try:
            return duckdb.connect(target, read_only=read_only, config=config)
        except duckdb.Error as exc:
            waited = time.monotonic() - started
            if not _held_by_another(exc) or waited >= limit:
                failure = StoreBusy if _held_by_another(exc) else StoreError
                raise failure(_open_failure(target, exc, waited if waited >= limit > 0 else None)) from exc
            if not told and notices.on_wait is not None:
                notices.on_wait(f"the store {target} is in use by another process; waiting up to {limit:g} s for it "
                        "(RECONCILE_LOCK_TIMEOUT)")
                told = True
            time.sleep(0.25)


def _open(target: str, read_only: bool, wait: float | None = None) -> duckdb.DuckDBPyConnection:
    return _open_waiting(target, read_only=read_only, config={**(_READ_ONLY if read_only else EVERY_CONNECTION),
                                                              "memory_limit": memory_limit()}, wait=wait)


def _needs_upgrade(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether a store opened read-only lacks a migration or has views of another version."""
    has_table = con.execute(
        "select count(*) from information_schema.tables where table_name = '_migrations'"
    ).fetchall()[0][0]
    if not has_table:
        return True
    done = {row[0] for row in con.execute("select name from _migrations").fetchall()}
    if any(m.name not in done for m in MIGRATIONS):
        return True
    return not views_current(con)


FROZEN_VIEWS = ("step_view", "run_view", "run_costs")  # in dependency order: the later read the earlier


def freeze_query(name: str) -> str:
    """The rows a frozen view is materialised from: the view's own, except that the steps come unsorted.

    Sorting every step is most of the cost of freezing them, and no reader of the frozen rows relies on
    their order: each asks for the one it needs.
    """
    return STEP_ROWS if name == "step_view" else f"select * from main.{name}"


@contextmanager
def frozen_views(engine: Engine, steps: bool = True, refresh: bool = False) -> Iterator[None]:
    """Within the block, the priced views are computed once, not once a query.

    Without ``steps`` only the runs' views are (``run_view``, ``run_costs``: read from the kept totals in a
    store), for a reader that asks nothing of ``step_view`` of the whole store: pricing every step of the history
    would cost more than all its questions. With ``refresh`` (a command that has just loaded runs without keeping
    their totals: the morning) the kept run totals are brought up to date first — from the steps frozen here, so
    that they are priced once for both, or without ``steps`` over the stale runs' steps alone — and the runs'
    views are frozen over them.

    ``step_view`` prices every step by joining the price tables; a report or the checks ask it
    dozens of questions. Each view is materialised as a temporary table of the same name, which
    this connection finds before the view (the temp schema comes first), so every query — and
    every view built on it — reads the same rows, priced once. Re-entrant: an inner block reuses
    the outer one's tables, and freezes the steps where the outer froze the runs' views alone. Nothing is written to the store; a large table spills to DuckDB's
    temp directory under the memory limit. An engine where a temp table does not hide a view (Spark)
    freezes the views in its own way when it binds them: a no-op.
    """
    if not engine.capabilities.temp_tables_hide_views:
        yield
        return
    present = {row[0] for row in engine.rows(
        "select table_name from duckdb_tables() where temporary and table_name in (select unnest(?))",
        [list(FROZEN_VIEWS)])}
    # an enclosing block's are reused; one that froze the runs' views alone leaves the steps to freeze here
    missing = [name for name in (FROZEN_VIEWS if steps else FROZEN_VIEWS[1:]) if name not in present]
    if not missing:
        if refresh:
            kept_totals.refresh(engine.connection)
        yield
        return
    made = []
    # without the steps, the stale runs alone are priced, over their own steps, and kept priced for the block
    with (kept_current(engine) if refresh and not steps else contextlib.nullcontext()):
        try:
            if refresh and not steps and kept_totals.cached_whole(engine.connection):
                # most of the store was stale (a night in a fresh store): the steps it priced whole are frozen for
                # the block, as a block with the steps would freeze them, and every reader reads them priced once
                engine.run(f"alter table temp.{kept_totals.CACHE['step_view']} rename to step_view")
                made.append("step_view")
            for name in missing:  # (the steps priced once already where a refresh above kept them all)
                rows = cached_rows(engine, name, "runs") if name == "step_view" else freeze_query(name)
                engine.run(f"create temp table {name} as {rows}")
                made.append(name)
                if name == "step_view" and refresh:
                    kept_totals.refresh(engine.connection)  # reads the steps just frozen
            yield
        finally:
            _drop_made(engine, made)


@contextmanager
def kept_current(engine: Engine) -> Iterator[None]:
    """Bring the kept totals up to date (a command that loaded runs without keeping them: the watch's round), and
    within the block keep the runs that were stale priced for the parts that read them again (``cached_rows``)."""
    kept_totals.refresh(engine.connection, cache=True)
    try:
        yield
    finally:
        try:
            kept_totals.drop_cache(engine.connection)
        except duckdb.Error:
            pass  # the connection failed: its temp tables go with it


def cached_rows(engine: Engine, name: str, runs: str) -> str:
    """SQL: the rows of ``name`` (``steps``, ``runs``, ``tool_calls`` or ``step_view`` priced) of the runs in the table
    ``runs``, from what the morning keeps priced of its night where it holds them all (``kept_totals.cached``)."""
    return kept_totals.cached(engine.connection, name, runs)


def _drop_made(engine: Engine, made: list[str]) -> None:
    """Drop the temporary tables a block made, the last made first."""
    for name in reversed(made):
        try:
            engine.run(f"drop table if exists temp.{name}")
        except duckdb.Error:
            pass  # the connection failed: its temp tables go with it


@contextmanager
def priced_runs(engine: Engine, runs: str, params: list | dict | None = None) -> Iterator[None]:
    """Within the block ``step_view`` holds the steps of the runs the query ``runs`` selects (a ``run_id`` column;
    with ``params``) alone, priced once: a reader of a few runs' steps (a report's findings, a night's replay) pays
    for those, not for every step of the history, which DuckDB would price to filter the view's rows afterwards. Read nothing else inside: ``steps``, ``runs`` and ``tool_calls`` hold those
    runs alone too. A no-op where the steps are frozen already (an enclosing ``frozen_views``), where a temporary
    table cannot hide a view (Spark), and for most of the store (copying it would cost more than reading it)."""
    if not engine.capabilities.temp_tables_hide_views or engine.rows(
            "select count(*) from duckdb_tables() where temporary and table_name in (select unnest(?))",
            [["step_view", *kept_totals.SOURCES]])[0][0]:
        yield
        return
    made = []
    try:
        engine.run(f"create or replace temp table _priced_runs as select distinct run_id from ({runs}) as chosen",
                   params or [])
        made.append("_priced_runs")
        if 2 * engine.rows("select count(*) from _priced_runs")[0][0] > engine.rows("select count(*) from runs")[0][0]:
            yield
            return
        for name in kept_totals.SOURCES:
            engine.run(f"create temp table {name} as {cached_rows(engine, name, '_priced_runs')}")
            made.append(name)
        engine.run(f"create temp table step_view as {cached_rows(engine, 'step_view', '_priced_runs')}")
        made.append("step_view")
        yield
    finally:
        _drop_made(engine, made)


def rebuild_kept(con: duckdb.DuckDBPyConnection) -> int:
    """Drop the kept run totals and write every run's again (``kept_totals.rebuild``); the runs written."""
    return kept_totals.rebuild(con)


def records(con: duckdb.DuckDBPyConnection, sql: str, params: list | dict | None = None) -> list[dict]:
    """Rows of a query as dicts keyed by column name."""
    cursor = con.execute(sql, params or [])
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


__all__ = ["connect", "db_path", "records", "rebuild_kept", "default_db_path", "applied_migrations", "DEFAULT_DB"]
