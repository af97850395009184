"""``reconcile show``, ``reconcile sql`` and ``reconcile summary``: look at the store."""

from __future__ import annotations

from typing import Annotated

import typer

from .. import store
from ..inspect import find_run, run_select, run_steps, step_detail
from ..summary import render_summary
from . import app
from .options import ConfigOption, DbOption, JsonOption, configured
from .render import console, print_csv, print_json, table

_HEADER_FIELDS = [
    ("run", "run_id"), ("agent", "agent"), ("task class", "task_class"), ("models", "models"),
    ("provider", "provider"), ("status", "status"), ("stop reason", "stop_reason"),
    ("predicted stop", "predicted_stop_reason"), ("started", "started_at"), ("ended", "ended_at"),
    ("wall seconds", "wall_seconds"), ("final answer at step", "final_answer_step"), ("source", "source_file"),
]


@app.command("show")
def show_command(
    run_id: Annotated[str, typer.Argument(help="A run id, or an unambiguous prefix of one.")],
    step: Annotated[int | None, typer.Option("--step", help="Show every recorded field of this step.")] = None,
    json_out: JsonOption = False,
    config_file: ConfigOption = None,
    db: DbOption = None,
) -> None:
    """Show a run's header and its steps, or one step in full.

    Example: reconcile show 8f3a --step 7
    """
    with store.connect(configured(config_file, db)[1], read_only=True) as con:
        run = find_run(con, run_id)
        if step is not None:
            detail = step_detail(con, run["run_id"], step)
            if json_out:
                return print_json(detail)
            console.print(table(["field", "value"], list(detail.items()), title=f"run {run['run_id']} step {step}"))
            return None
        steps = run_steps(con, run["run_id"])
    if json_out:
        return print_json({"run": run, "steps": steps})
    header = [(label, run.get(key)) for label, key in _HEADER_FIELDS if run.get(key) not in (None, [])]
    if run.get("status_inferred"):
        header = [(label, f"{value} (inferred from the transcript)" if label == "status" else value)
                  for label, value in header]
    header.append(("steps / tool results", f"{run['steps']} / {run['tool_results']} "
                   f"(ledger: {run['ledger_steps']} / {run['ledger_tool_results']})"))
    header.append(("tokens in / out", f"{run['input_tokens']} / {run['output_tokens']} "
                   f"(ledger: {run['ledger_input_tokens']} / {run['ledger_output_tokens']})"))
    limits = {k: run[k] for k in ("max_steps", "max_tokens", "max_wall_seconds", "max_cost_micros", "max_repeats")
              if run.get(k) is not None}
    if limits:
        header.append(("limits", ", ".join(f"{k}={v}" for k, v in limits.items())))
    console.print(table(["", ""], header, header=False))
    columns = ["idx", "kind", "what", "in", "out", "cost µ$", "ms", "error"]
    rows = [[s["idx"], s["kind"], s["what"] if not s["agent_label"] else f"[{s['agent_label']}] {s['what']}",
             s["input_tokens"] if s["kind"] == "model" else None, s["output_tokens"], s["cost_micros"], s["ms"],
             (s["error"] or "")[:80]] for s in steps]
    console.print(table(columns, rows, right={"idx", "in", "out", "cost µ$", "ms"}))
    return None


@app.command("sql")
def sql_command(
    query: Annotated[str, typer.Argument(help="One SELECT over the documented views and tables.")],
    json_out: JsonOption = False,
    csv_out: Annotated[bool, typer.Option("--csv", help="Print CSV instead of a table.")] = False,
    config_file: ConfigOption = None,
    db: DbOption = None,
) -> None:
    """Run a read-only SELECT against the store.

    Example: reconcile sql "select idx, kind, tool_name, cost_micros, ms, error from step_view where run_id = '8f3a'"
    """
    with store.connect(configured(config_file, db)[1], read_only=True) as con:
        columns, rows = run_select(con, query)
    if json_out:
        print_json([dict(zip(columns, row)) for row in rows])
    elif csv_out:
        print_csv(columns, rows)
    else:
        console.print(table(columns, rows))
        console.print(f"{len(rows)} row(s)")


@app.command("summary")
def summary_command(config_file: ConfigOption = None, db: DbOption = None) -> None:
    """Print what the store holds: runs by agent and status, and the ingest accounting.

    Example: reconcile summary --db night.duckdb
    """
    with store.connect(configured(config_file, db)[1], read_only=True) as con:
        text = render_summary(con)
    console.print(text, markup=False, end="")
