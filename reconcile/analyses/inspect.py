"""Looking at what the store holds: one run, one step, or any read-only SELECT."""

from __future__ import annotations

import re
from typing import Any

import duckdb

from reconcile.errors import QueryError, RunNotFound
from reconcile.engine import Engine

_ALLOWED_STATEMENTS = {"SELECT", "EXPLAIN"}


def _one_tree(engine: Engine, prefix: str) -> dict[str, Any] | None:
    """The session every run starting with ``prefix`` belongs to (its id, or its id then "/"), if it is one."""
    roots = engine.rows("select distinct split_part(run_id, '/', 1) from run_view where starts_with(run_id, ?) "
                        "limit 2", [prefix])
    if len(roots) != 1:
        return None
    session = engine.records("select * from run_view where run_id = ?", [roots[0][0]])
    return session[0] if session else None


def find_run(engine: Engine, run_id: str) -> dict[str, Any]:
    """The run_view row whose id is ``run_id``, or starts with it when that is unambiguous."""
    exact = engine.records("select * from run_view where run_id = ?", [run_id])
    if exact:
        return exact[0]
    matches = engine.records("select * from run_view where starts_with(run_id, ?) order by run_id limit 6", [run_id]
    )
    if len(matches) == 1:
        return matches[0]
    session = _one_tree(engine, run_id)
    if session is not None:  # a session's prefix is the session, not "ambiguous" with its own subagents
        return session
    if not matches:
        raise RunNotFound(f"No run with id {run_id!r}. List ids with: reconcile sql \"select run_id from run_view\"")
    shown = ", ".join(m["run_id"] for m in matches[:5])
    raise RunNotFound(f"Run id {run_id!r} is ambiguous: it starts {shown}{' …' if len(matches) > 5 else ''}. "
                      "Give more of the id.")


def run_cost_sources(engine: Engine, run_id: str) -> dict[str, Any] | None:
    """The run's cost as ``--cost-source auto`` takes it (``chosen_costs``): which source, its figure, bounds and
    why ours is not exact."""
    rows = engine.records("select * from chosen_costs where asked = 'auto' and run_id = ?", [run_id])
    return rows[0] if rows else None


def run_steps(engine: Engine, run_id: str) -> list[dict[str, Any]]:
    """Every step of a run, in order, with what it did, its tokens, cost (exact, else its bounds) and time."""
    return engine.records("""select idx, kind, what, agent_label, input_tokens, output_tokens, cost_micros,
                  cost_low_micros, cost_high_micros, ms, error
           from step_view where run_id = ? order by idx""",
        [run_id],
    )


def run_findings(engine: Engine, run_id: str) -> dict[str, Any]:
    """What the recorded checks found on a run: each check's findings from its latest recorded run, kept only when
    made after the run's file was last loaded (a finding on rows since replaced is not this run's any more).

    ``checked``: when the store's latest recorded check ran (None: no check was ever recorded — ``reconcile morning``
    records them; ``reconcile check`` only prints)."""
    checked = engine.value("select max(checked_at) from check_runs")
    rows = engine.records(
        """with loaded as (select max(f.ingested_at) as loaded_at from runs r join ingested_files f on f.path = r.source_file
                          where r.run_id = $run),
           latest as (select check_name, max(checked_at) as latest_at from findings where run_id = $run group by 1)
        select f.check_name as "check", f.severity, f.step, f.detail, f.checked_at
        from findings f join latest l on f.check_name = l.check_name and f.checked_at = l.latest_at
        where f.run_id = $run and f.checked_at >= coalesce((select loaded_at from loaded), f.checked_at)
        order by case f.severity when 'error' then 0 when 'warn' then 1 else 2 end, f.check_name, f.step nulls first""",
        {"run": run_id})
    return {"checked_at": checked, "findings": rows}


def step_detail(engine: Engine, run_id: str, idx: int) -> dict[str, Any]:
    """All recorded fields of one step (nulls left out), plus the tool calls it asked for."""
    rows = engine.records("select s.*, st.output_text, st.result_preview, st.response_id, st.request_id, st.detail "
        "from step_view s join steps st using (run_id, idx) where s.run_id = ? and s.idx = ?",
        [run_id, idx],
    )
    if not rows:
        raise RunNotFound(f"Run {run_id} has no step {idx}. Its steps: reconcile show {run_id}")
    detail = {key: value for key, value in rows[0].items() if value is not None}
    calls = engine.records("select call_id, tool_name, args_json from tool_calls where run_id = ? and step_idx = ? order by call_id",
        [run_id, idx],
    )
    if calls:
        detail["tool_calls"] = calls
    return detail


def run_select(engine: Engine, sql: str) -> tuple[list[str], list[tuple]]:
    """Run one read-only statement; return column names and rows.

    The statement check gives a plain refusal; what enforces it is the connection itself, opened
    read-only with file, network and extension access off and its settings locked (see
    ``store.connect``), so a statement that slips past the check still cannot write, read a file,
    fetch a URL or load code.
    """
    kind = _statement_kind(engine, sql)
    if kind not in _ALLOWED_STATEMENTS:
        raise QueryError(f"reconcile sql only reads the store: {kind} statements are refused. Use a SELECT "
                         "(or EXPLAIN / EXPLAIN ANALYZE of one).")
    try:
        return engine.described(sql)
    except duckdb.PermissionException as exc:
        raise QueryError("reconcile sql reads only the store's tables and views: files, URLs, extensions and "
                         f"settings are out of its reach ({_first_line(exc)}).") from exc
    except duckdb.Error as exc:
        raise QueryError(f"The query failed: {exc}") from exc


_EXPLAIN = re.compile(r"(?is)^\s*explain\s+(?:analy[sz]e\s+)?(?:\([^)]*\)\s*)?")


def _statement_kind(engine: Engine, sql: str) -> str:
    """The statement's type; for EXPLAIN, the type of the statement it explains (EXPLAIN ANALYZE runs it)."""
    if not engine.capabilities.parses_statements:
        raise QueryError(f"reconcile sql reads a DuckDB store; the {engine.name} engine cannot vouch that a statement "
                         "only reads.")
    try:
        kinds = engine.statement_kinds(sql)
    except duckdb.Error as exc:
        raise QueryError(f"The query does not parse: {exc}") from exc
    if len(kinds) != 1:
        raise QueryError(f"Give exactly one statement; got {len(kinds)}.")
    kind = kinds[0]
    if kind == "EXPLAIN":
        try:
            inner = engine.statement_kinds(_EXPLAIN.sub("", sql, count=1))
        except duckdb.Error:
            return kind  # a form we do not unwrap: the locked connection still holds
        if len(inner) == 1 and inner[0] != "SELECT":
            return f"EXPLAIN {inner[0]}"
    return kind


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0]
