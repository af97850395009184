"""``reconcile show``, ``reconcile sql`` and ``reconcile summary``: look at the store."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from decimal import Decimal
from typing import Annotated

import typer

from reconcile.analyses.inspect import find_run, run_cost_sources, run_findings, run_select, run_steps, step_detail
from reconcile.analyses.summary import agents_sheet, render_summary, store_summary
from reconcile.cli.root import app
from reconcile.money import amount_text, left_out, plural, usd
from reconcile.outputs import write_output
from reconcile.sheets import MISSING_AS, Column, Sheet, in_dollars, json_rows, rows_parquet
from reconcile.cli.options import Output, Store, WideOption, grouped
from reconcile.cli.render import (LiteralConsole, console, fitted_table, folded_path, output, print_csv, print_json, rendered,
                                  to_jsonable)

_HEADER_FIELDS = [
    ("run", "run_id"), ("agent", "agent"), ("task class", "task_class"), ("models", "models"),
    ("provider", "provider"), ("status", "status"), ("harness status", "harness_status"), ("stop reason", "stop_reason"),
    ("predicted stop", "predicted_stop_reason"), ("started", "started_at"), ("ended", "ended_at"),
    ("wall seconds", "wall_seconds"), ("final answer at step", "final_answer_step"), ("agent tree", "root_run_id"),
    ("loop detector", "loop_detector"), ("fallback model", "fallback_model"), ("source", "source_file"),
]


@app.command("show")
@grouped
def show_command(
    run_id: Annotated[str, typer.Argument(help="A run id, or an unambiguous prefix of one.")],
    step: Annotated[int | None, typer.Option("--step", help="Show every recorded field of this step.")] = None,
    given: Output = Output(),
    source: Store = Store(),
    wide: WideOption = False,
) -> None:
    """Show a run's header and its steps, or one step in full; --csv and --parquet carry the steps.

    Example: reconcile show 8f3a --step 7
    """
    with source.reading() as engine:
        run = find_run(engine, run_id)
        if step is not None:
            detail = step_detail(engine, run["run_id"], step)
            if given.json:
                return print_json(in_dollars(detail))
            console.print(fitted_table(["field", "value"], _step_fields(detail), title=f"run {run['run_id']} step {step}"))
            return None
        steps = run_steps(engine, run["run_id"])
        found = run_findings(engine, run["run_id"])
        chosen = run_cost_sources(engine, run["run_id"])
    if given.json:  # money in dollars, as --csv has it
        return print_json(in_dollars({"run": run, "steps": steps, "findings": found["findings"],
                                      "checked_at": found["checked_at"]}))
    shown = {**run, "root_run_id": run["root_run_id"] if run.get("root_run_id") != run["run_id"] else None}
    header = [(label, _value(shown.get(key))) for label, key in _HEADER_FIELDS if shown.get(key) not in (None, [])]
    if run.get("status_inferred"):
        header = [(label, f"{value} (inferred from the transcript)" if label == "status" else value)
                  for label, value in header]
    header.append(("model calls / tool results", f"{_value(run['steps'])}{_uncharged(run)}"
                   f" / {_value(run['tool_results'])}{_ledger(run, 'ledger_steps', 'ledger_tool_results')}"))
    header.append(("tokens in / out", f"{_value(run['input_tokens'])} / {_value(run['output_tokens'])}"
                   f"{_ledger(run, 'ledger_input_tokens', 'ledger_output_tokens')}"))
    header.append(("cost", _run_cost(run, chosen)))
    limits = {k: run[k] for k in ("max_steps", "max_tokens", "max_prompt_tokens", "max_completion_tokens",
                                  "max_wall_seconds", "max_cost_micros", "max_repeats", "max_retries")
              if run.get(k) is not None}
    if limits and run.get("budget_scope") == "tree":
        limits["scope"] = "tree"
    if limits:
        header.append(("limits", ", ".join(f"{k}={usd(v) if k == 'max_cost_micros' else v}" for k, v in limits.items())
                       .replace("max_cost_micros=", "max_cost=")))
    rows = [{**s, "what": s["what"] if not s["agent_label"] else f"[{s['agent_label']}] {s['what']}",
             "input_tokens": s["input_tokens"] if s["kind"] == "model" else None, "error": brief(s["error"]),
             # a tool result costs nothing itself: its cost cell is blank, where a model call's unknown cost says so
             MISSING_AS: {} if s["kind"] == "model" else {"cost_micros": ""}}
            for s in steps]
    kinds = {kind: sum(1 for s in steps if s["kind"] == kind) for kind in dict.fromkeys(s["kind"] for s in steps)}
    sheet = Sheet(STEP_COLUMNS, rows, title=f"run {run['run_id']}: {len(rows)} row(s) of steps"
                  + (f" ({', '.join(f'{n:,} {k}' for k, n in kinds.items())})" if kinds else ""))
    if given.csv or given.parquet:
        output(sheet, given)
        return None
    # the source path folds between its separators: the box is as wide whatever the path's length
    label_width = max(len(label) for label, _ in header)
    header = [(label, folded_path(value, console.width - label_width - 8) if label == "source" else value)
              for label, value in header]
    console.print(fitted_table(["", ""], header, header=False))
    output(sheet, wide=wide)
    _print_findings(run["run_id"], found)
    return None


def _uncharged(run: dict) -> str:
    """The model calls a step ceiling does not count, named: the wrap-up turn after a budget ran out, and calls the
    provider refused (a transport error, a rate limit: it billed nothing for them)."""
    parts = []
    if run.get("wrap_up_steps"):
        parts.append(plural(run["wrap_up_steps"], "wrap-up turn"))
    if run.get("refused_steps"):
        parts.append(plural(run["refused_steps"], "call") + " the provider refused (transport error or rate limit)")
    return f" ({' and '.join(parts)}, not charged)" if parts else ""


def _print_findings(run_id: str, found: dict) -> None:
    """The run's findings as the latest recorded checks left them, worst first; or why there are none to show."""
    if found["checked_at"] is None:
        console.print("Findings: no check is recorded in this store; reconcile check judges the runs now "
                      "(reconcile morning records what it finds, and show lists it here).")
        return
    when = found["checked_at"].astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    if not found["findings"]:
        console.print(f"Findings: none recorded on this run (the latest check recorded ran {when}).")
        return
    rows = [[f["severity"], f["check"], "" if f["step"] is None else f["step"], f["detail"]] for f in found["findings"]]
    console.print(fitted_table(["severity", "check", "step", "detail"], rows, right={"step"},
                               title=f"Findings on run {run_id} (as the checks recorded them; latest check {when})"))


ERROR_CHARS = 80  # an error in the steps table: its first words; --step N shows it whole


def brief(text: str | None, width: int = ERROR_CHARS) -> str:
    """An error message for a table cell: on one line, cut between words with "…" when longer than ``width``
    (``--step N`` and ``--json`` carry it whole)."""
    flat = " ".join((text or "").split())
    if len(flat) <= width:
        return flat
    cut = flat[:width].rsplit(" ", 1)[0] if " " in flat[:width] else flat[:width]
    return cut.rstrip() + " …"



STEP_COLUMNS = [Column("idx", "idx", "count"), Column("kind", "kind"), Column("what", "what"),
                Column("input_tokens", "in", "count"), Column("output_tokens", "out", "count"),
                Column("cost_micros", "cost", "money4"), Column("ms", "ms", "count"), Column("error", "error")]


def _step_fields(detail: dict) -> list[tuple[str, str]]:
    """A step's fields as people read them: money in exact dollars (``cost_usd  $0.002142``), not micro-dollars; the
    unrounded sums the views keep for adding calls left to ``--json`` and ``sql``."""
    shown = []
    for key, value in detail.items():
        if key.endswith("_unrounded"):
            continue
        if key.endswith("_micros") and isinstance(value, int) and not isinstance(value, bool):
            dollars = Decimal(value) / 1_000_000
            shown.append((f"{key.removesuffix('_micros')}_usd", f"{'-' if dollars < 0 else ''}${abs(dollars):,.6f}"))
        else:
            shown.append((key, _field(value)))
    return shown


def _field(value) -> str:
    """A step field: structured values (the tool calls) as JSON, not as a Python repr."""
    if isinstance(value, (list, dict)):
        return json.dumps(to_jsonable(value), ensure_ascii=False, indent=1)
    return _value(value) if isinstance(value, datetime) else value


def _value(value) -> str:
    """A header value as people read it: lists joined, moments in UTC to the second, counts with separators."""
    if value is None:
        return "unknown"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _ledger(run: dict, *keys: str) -> str:
    """``; the ledger counted a / b`` beside a run's own counts; "no ledger" when its harness kept none."""
    if all(run.get(key) is None for key in keys):
        return "; the harness kept no ledger"
    return f"; the ledger counted {' / '.join(_value(run.get(key)) for key in keys)}"


def _run_cost(run: dict, chosen: dict | None) -> str:
    """The run's cost by reconcile's prices (exact, a range, or at least; per-call precision) with why it is not exact,
    beside what its harness and ledger recorded, and the figure ``runs`` and ``cost`` report where it is another."""
    ours = amount_text(run["cost_micros"], run.get("cost_low_micros"), run.get("cost_high_micros"), places=4)
    why = [] if run["cost_micros"] is not None else left_out(chosen or {})
    text = ours + (f" ({', '.join(why)})" if why else "")
    others = [f"{name}: {usd(run[key], places=4)}" for name, key in
              (("harness", "harness_step_cost_micros"), ("ledger", "ledger_cost_micros")) if run.get(key) is not None]
    text += f" ({', '.join(others)})" if others else ""
    if chosen and chosen["source"] == "harness" and run["cost_micros"] is None:
        text += f"; runs and cost report the harness's {usd(chosen['cost_micros'], places=4)}"
    if chosen and chosen.get("harness_below_floor"):
        text += ("; the harness's own figure is below what these calls cost at the least, so runs and cost report "
                 "reconcile's")
    return text


@app.command("sql")
@grouped
def sql_command(
    query: Annotated[str, typer.Argument(help="One SELECT over the documented views and tables.")],
    given: Output = Output(),
    source: Store = Store(),
) -> None:
    """Run a read-only SELECT against the store.

    --json and --csv carry values exactly: a BLOB as DuckDB writes it (printable ASCII as itself; other
    bytes, backslash and quotes as \\xHH; '…'::blob reads it back), a DECIMAL with all its places, an
    interval as ISO 8601 (P3DT2H0M0S), NaN and infinities as "NaN", "Infinity", "-Infinity", lists,
    structs and maps as JSON.

    Example: reconcile sql "select idx, kind, tool_name, cost_micros, ms, error from step_view where run_id = '8f3a'"
    """
    with source.reading() as engine:
        columns, rows = run_select(engine, query)
    if given.json:
        print_json([dict(zip(columns, row)) for row in rows])
    elif given.csv:
        print_csv(columns, rows)
    elif given.parquet:
        written = write_output(given.parquet, rows_parquet(columns, rows), option="--parquet")
        LiteralConsole(stderr=True).print(f"wrote {len(rows)} row(s) to {written}")
    else:
        console.print(fitted_table(columns, rows))
        console.print(f"{len(rows)} row(s)")


@app.command("summary")
@grouped
def summary_command(
    given: Output = Output(),
    wide: WideOption = False,
    source: Store = Store(),
) -> None:
    """Print what the store holds: runs by agent and status, cost, and the ingest accounting.

    --csv and --parquet carry the agents' table; --json carries everything.
    Example: reconcile summary --db night.duckdb
    """
    with source.reading() as engine:
        if not given.as_table:
            data = store_summary(engine)
            sheet = agents_sheet(data["by_agent"])  # --json: the CSV's rows, and the rest in dollars too
            return output(sheet, given,
                          json_data={**in_dollars(data), "by_agent": json_rows(sheet)}) and None
        text = render_summary(engine, lambda sheet: rendered(sheet, wide))
    console.print(text, markup=False, end="")
