"""Kept judgements: a check's verdict on a run, kept and reused while nothing it depends on has changed.

A check whose header says ``judges: each run`` promises that what it finds on a run depends only on
that run's agent tree (the topmost ancestor in the store and every run under it): the tree's rows, the
configuration, the price list and the check's own SQL. So its verdict on a run is kept in the store
under two keys:

- the check's: its SQL, reconcile's code (every module and SQL file of the installed package, so an
  upgrade re-judges), the whole configuration, and the price list's sources and versions (a changed
  ``reconcile.toml`` or price file re-judges every run);
- the run's: the content of every run of its tree (``kept_totals.CONTENT``: the number of the landing that
  last wrote its rows, which a tail read leaves alone for the runs of a file it did not touch; else its file's
  name and SHA-256), its runs' statuses (a run with no end record turns abandoned with time alone), and
  today's date when a step of the tree has no time of its own (it is priced at today's prices, which can
  change).

A later check reuses the verdicts whose two keys still match and judges only the other runs, with the
tables it reads cut down to those runs' trees (``restricted``): a morning that adds a tenth of the runs
judges a tenth. Checks that judge the store (a bill against the journals, a week against the weeks
before) always run whole. ``tests/test_kept_judgements.py`` holds a kept verdict to the fresh one.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


from reconcile.sql_text import identifier, string_literal
from reconcile.store import FROZEN_VIEWS, cached_rows, freeze_query, kept_totals
from reconcile.store.views import views_fingerprint
from reconcile.engine import Engine

_NOT_SHADOWED = ("findings", "check_runs", "kept_judgements", "kept_findings",  # what the checks write, not read
                 "kept_run_keys", "kept_run_prices", "run_loads",  # the kept totals' keys: no check reads them
                 "signal_minutes", "kept_signal_runs", "fence_peaks")  # kept for the signals and budgets


def usable(engine: Engine) -> bool:
    """Whether ``engine`` reads a store that can keep verdicts (another engine judges every run each time)."""
    if not engine.capabilities.transactions:
        return False
    return engine.rows("select count(*) from duckdb_tables() where schema_name = 'main' "
                       "and table_name = 'kept_judgements'")[0][0] == 1


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of the installed package's code and SQL: what turns a run's rows into a verdict besides the check."""
    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(p for p in package.rglob("*") if p.suffix in (".py", ".sql", ".toml") and p.is_file()):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _config_fingerprint(config) -> str:
    parts = (sorted((k, repr(v.value)) for k, v in config.settings.items()),
             sorted((repr(scope), sorted((k, repr(v.value)) for k, v in values.items()))
                    for scope, values in config.scoped.items()),
             sorted((name, repr(policy)) for name, policy in config.checks.items()),
             sorted((repr(scope), sorted((k, repr(v.value)) for k, v in values.items()))
                    for scope, values in config.scoped_disabled.items()),
             repr(config.window))
    return repr(parts)


def prepare(engine: Engine, checks, config) -> None:
    """``_check_keys(check_name, check_key)``, ``_run_keys(run_id, root_run_id, run_key)`` and
    ``_todo_checks(check_name, run_id)``: the runs in scope each check must judge afresh."""
    # ordered: a DISTINCT aggregate's order is the hash table's, and a key must read the same every time
    prices = engine.rows("select coalesce(string_agg(distinct source || '@' || source_version, ',' "
                         "order by source || '@' || source_version), '') "
                         "from prices")[0][0]
    # the views' fingerprint as well as the code's, and what the store says each format records (plug-ins too)
    facts = repr(engine.rows("select format, fact, recorded, how, inferred from format_facts order by all"))
    common = "\x1e".join([code_fingerprint(), views_fingerprint(), _config_fingerprint(config), prices, facts])
    keys = {c.name: hashlib.sha256(f"{common}\x1e{c.sql}".encode()).hexdigest() for c in checks}
    # A tree's key: its runs' contents (a growing journal's earlier runs keep theirs: a watch's round judges the runs
    # its lines touched) and statuses (a run with no end record turns abandoned with time alone, its rows unchanged).
    # A run of unknown content (a file the store has no digest of) makes it unknown (NULL: judged every time).
    # "now()::date" is the day step_view prices an undated step at.
    # The keys read the runs, their landings, files and steps' times: made once for a store as it is (the morning's
    # two passes, the night's and the earlier runs', ask the same), again when a run, its status or a file changed.
    state = engine.rows("""select (select count(*) || ':' || coalesce(sum(hash(run_id, status, source_file)), 0) from runs)
                                  || '/' || (select coalesce(sum(hash(run_id, load)), 0) from run_loads)
                                  || '/' || (select coalesce(sum(hash(path, sha256)), 0) from ingested_files)
                                  || '/' || now()::date::varchar""")[0][0]
    made = engine.rows("select count(*) from duckdb_tables() where temporary and table_name = '_run_keys_state'")[0][0]
    if made and engine.rows("select state from _run_keys_state")[0][0] == state:
        _todo(engine, keys)
        return
    engine.run(
        """create or replace temp table _run_keys as
        with roots as (select * from run_roots),
        content as ({content}),
        trees as (select t.root_run_id,
                         case when bool_and(c.content_key is not null) then
                              sha256(string_agg(r.run_id || chr(31) || c.content_key || chr(31) || r.status, chr(30)
                                                order by r.run_id))
                         end as tree_key
                  from runs r join roots t using (run_id) join content c using (run_id) group by t.root_run_id),
        undated as (select distinct t.root_run_id from {undated} u join roots t using (run_id))
        select t.run_id, t.root_run_id,
               k.tree_key || case when u.root_run_id is not null then '@' || now()::date::varchar else '' end as run_key
        from roots t join trees k using (root_run_id) left join undated u using (root_run_id)""".format(
            content=kept_totals.CONTENT,
            # a run with a step of no time at all: kept with its totals where they are (a store), else from the steps
            undated="(select run_id from kept_run_keys where priced_on is not null)" if kept_totals.kept_in(engine) else
                    "(select distinct s.run_id from steps s join runs r using (run_id) "
                    "where coalesce(s.started_at, r.started_at) is null)")
    )
    engine.run("create or replace temp table _run_keys_state as select ? as state", [state])
    _todo(engine, keys)


def _todo(engine: Engine, keys: dict[str, str]) -> None:
    engine.run("create or replace temp table _check_keys as select unnest($names) as check_name, "
               "unnest($keys) as check_key", {"names": list(keys), "keys": list(keys.values())})
    engine.run(
        """create or replace temp table _todo_checks as
        select c.check_name, s.run_id
        from _check_keys c cross join _scope s join _run_keys k using (run_id)
        where k.run_key is null or not exists (
            select 1 from kept_judgements j where j.check_name = c.check_name and j.check_key = c.check_key
                and j.run_id = s.run_id and j.run_key = k.run_key)"""
    )


def todo_condition(check_name: str) -> str:
    """SQL: the finding's run is one ``check_name`` judges afresh, or it names none (which the runner refuses
    from such a check)."""
    return (f"(run_id is null or run_id in (select run_id from _todo_checks where check_name = "
            f"{string_literal(check_name)}))")


def todo_counts(engine: Engine) -> dict[str, int]:
    """How many runs in scope each check judges afresh."""
    return dict(engine.rows("select check_name, count(*) from _todo_checks group by all"))


def to_judge(engine: Engine) -> str:
    """``_universe``: the runs of every tree that holds a run to judge afresh; whether the checks should read
    "all" the store's runs, "none" or a "part" of them (``restricted``). Above half, cutting the tables down
    costs more than it saves: they are read whole, and only the verdicts to reach are kept."""
    engine.run("""create or replace temp table _universe as
                   select run_id from _run_keys where root_run_id in (
                       select k.root_run_id from _run_keys k where k.run_id in (select run_id from _todo_checks))""")
    universe, everything = engine.rows("select (select count(*) from _universe), (select count(*) from runs)")[0]
    return "none" if not universe else "all" if 2 * universe > everything else "part"


@contextmanager
def restricted(engine: Engine) -> Iterator[None]:
    """Within the block the tables the checks read hold only ``_universe``'s runs (``to_judge``).

    Each base table with a ``run_id`` is shadowed by a temporary table of the same name (found first,
    as ``store.frozen_views`` relies on), and the priced views are frozen over them. An enclosing
    ``frozen_views`` block's tables (the whole store's, priced) are set aside meanwhile and put back after.
    """
    tables = [row[0] for row in engine.rows(
        """select c.table_name from duckdb_columns() c join duckdb_tables() t
               on t.schema_name = c.schema_name and t.table_name = c.table_name
           where c.schema_name = 'main' and c.column_name = 'run_id' and not t.temporary
             and c.table_name not in (select unnest(?)) order by c.table_name""", [list(_NOT_SHADOWED)])]
    outer = [row[0] for row in engine.rows("select table_name from duckdb_tables() where temporary and "
                                           "table_name in (select unnest(?))", [list(FROZEN_VIEWS)])]
    made, aside = [], []
    try:
        for name in outer:
            engine.run(f"alter table temp.{name} rename to _whole_{name}")
            aside.append(name)
        for table in tables:  # (the morning's night: from the rows it keeps priced, kept_totals.cached)
            rows = (cached_rows(engine, table, "_universe") if table in kept_totals.SOURCES else
                    f"select * from main.{identifier(table)} where run_id in (select run_id from _universe)")
            engine.run(f"create temp table {identifier(table)} as {rows}")
            made.append(table)
        for name in FROZEN_VIEWS:  # in dependency order: each is priced over the shadows and the ones before
            rows = cached_rows(engine, name, "_universe") if name == "step_view" else freeze_query(name)
            engine.run(f"create or replace temp table {name} as {rows}")
        yield
    finally:
        for name in reversed(FROZEN_VIEWS):  # the trees' prices go first: no view must outlive its rows
            engine.run(f"drop table if exists temp.{name}")
        for table in reversed(made):
            engine.run(f"drop table if exists temp.{identifier(table)}")
        for name in aside:
            engine.run(f"alter table temp._whole_{name} rename to {name}")


def kept_findings(engine: Engine) -> dict[str, list[tuple]]:
    """(run_id, step, detail) kept for each check, on the runs in scope it does not judge afresh.

    A kept verdict was reached on the runs the check could judge, and which runs those are follows from
    the same keys (the configuration, the runs' facts): no not-judged run is among them.
    """
    found: dict[str, list[tuple]] = {}
    for name, run_id, step, detail in engine.rows(
            """select f.check_name, f.run_id, f.step, f.detail from kept_findings f
               join _check_keys c on c.check_name = f.check_name and c.check_key = f.check_key
               join _run_keys k on k.run_id = f.run_id and k.run_key = f.run_key
               where f.run_id in (select run_id from _scope)
                 and not exists (select 1 from _todo_checks t where t.check_name = f.check_name and t.run_id = f.run_id)"""
            ):
        found.setdefault(name, []).append((run_id, step, detail))
    return found


def keep(engine: Engine, rows: list[tuple]) -> None:
    """Keep the verdicts just reached, for every check at once and in one transaction: each run judged
    afresh, and what was found on it (``rows``: check name, run id, step, detail)."""
    with engine.transaction():
        for table in ("kept_judgements", "kept_findings"):
            engine.run(f"delete from {table} k using _todo_checks t where k.check_name = t.check_name "
                       "and k.run_id = t.run_id")
        engine.run("""insert into kept_judgements select t.check_name, c.check_key, t.run_id, k.run_key
                      from _todo_checks t join _check_keys c using (check_name) join _run_keys k using (run_id)
                      where k.run_key is not null""")
        engine.run("create or replace temp table _new_findings (check_name varchar, run_id varchar, step integer, "
                   "detail varchar)")
        engine.insert("_new_findings", rows)
        engine.run("""insert into kept_findings select n.check_name, c.check_key, n.run_id, k.run_key, n.step, n.detail
                      from _new_findings n join _check_keys c using (check_name) join _run_keys k using (run_id)
                      where k.run_key is not null""")


def forget_gone(engine: Engine) -> None:
    """Drop the verdicts on runs the store no longer holds."""
    for table in ("kept_judgements", "kept_findings"):
        engine.run(f"delete from {table} where run_id not in (select run_id from runs)")
