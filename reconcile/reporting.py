"""The HTML reports (finance, morning) and ``reconcile morning``, the one command cron runs.

Reports are single self-contained files: CSS inline, charts as inline SVG, no script, no font and
no URL of any kind, printable. Templates (``reports/*.html.j2``) render with autoescaping on, and
every value printed passes through ``redact`` first, so a transcript's ``<script>`` is text and
its API keys are masked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import duckdb
import jinja2
from markupsafe import Markup

from . import store
from .budgets import budget_report, stop_reason_rates
from .checks import CheckReport, load_checks, run_checks, write_junit
from .errors import BadInput, NoRuns
from .glance import bill_vs_journals, glance
from .costs import SOURCE_TEXT, cost_report, costliest_runs
from .display import literal
from .ingest import IngestReport, ingest
from .money import described, usd
from .outputs import check_file_target, check_folder_target, make_folder, write_output
from .redact import redact
from .replay import from_budgets, replay
from .resources import reports_dir
from .store import records
from .status import STATUSES
from .usage import usage_report
from .when import TIME_GROUPS, Window, night_bounds, use_zone


def _environment() -> jinja2.Environment:
    # Our own markup (the charts, marked safe) passes as it is; every other value is redacted, made literal
    # (a right-to-left override or a zero-width space shows as its escape, \u202e), then HTML-escaped.
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(reports_dir()), autoescape=True,
                             finalize=_shown,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["usd"] = lambda micros, unknown="unknown": usd(micros, unknown=unknown)  # dollars and cents
    env.filters["usd4"] = lambda micros, unknown="": usd(micros, unknown=unknown, places=4)  # a call's cost
    env.filters["usd_signed"] = lambda micros: usd(micros, signed=True)
    env.filters["cost"] = described  # a figure with what it leaves out: "unknown", "$x + unpriced (…)"
    env.filters["cost4"] = lambda row: described(row, places=4)
    env.filters["change"] = _change
    env.globals["status_colours"] = STATUS_COLOURS
    env.filters["pct"] = lambda share: "—" if share is None else f"{share:.1%}"
    env.filters["num"] = lambda value: "—" if value is None else f"{value:,.0f}" if isinstance(value, (int, float)) else value
    env.filters["anchor"] = lambda run_id: "run-" + "".join(c if c.isalnum() else "-" for c in str(run_id))
    return env


def _shown(value: Any) -> Any:
    """Every value a template prints: secrets redacted, invisible and directional characters escaped."""
    if isinstance(value, Markup):
        return value
    shown = redact(value)
    return literal(shown) if isinstance(shown, str) else shown


def _change(value: int | None, kind: str = "runs") -> str:
    """A change from the night before: "+3", "−2", "no change"; money signed; unknown as "—"."""
    if value is None:
        return "—"
    if value == 0:
        return "no change"
    return usd(value, signed=True) if kind == "money" else f"{value:+,}".replace("-", "−")


def _dollars(groups: list[dict[str, Any]], key: str) -> list[float | None]:
    """Chart values in dollars; an unknown figure stays None (drawn as "unknown", never as a $0 bar)."""
    return [None if g[key] is None else g[key] / 1e6 for g in groups]


def render(template: str, context: dict[str, Any]) -> str:
    return _environment().get_template(template).render(**context)


def _has_usage(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute("select count(*) from usage_buckets").fetchall()[0][0])


def finance_context(con: duckdb.DuckDBPyConnection, window: Window | None = None, source: str = "auto",
                    period: str = "day") -> dict[str, Any]:
    from .charts import bar_chart  # matplotlib costs a quarter of a second to import: only the reports that draw pay it

    window = window or Window()
    if period not in TIME_GROUPS:
        raise BadInput(f"--by {period!r}: the finance report groups spend by {', '.join(TIME_GROUPS)}")
    use_zone(con, window.zone)
    since, until = window.since, window.until
    by = {name: cost_report(con, name, since, until, source) for name in (period, "model", "agent", "task_class")}
    total = by[period]["total"]
    charts = {
        "per_period": bar_chart([g["key"] for g in by[period]["groups"]],
                                {"spend": _dollars(by[period]["groups"], "cost_micros")}, f"Spend per {period}"),
        "by_model": bar_chart([g["key"] for g in by["model"]["groups"]],
                              {"cost": _dollars(by["model"]["groups"], "cost_micros"),
                               "without cache": _dollars(by["model"]["groups"], "uncached_cost_micros")},
                              "By model: cost, and what it would be without the cache"),
        "by_agent": bar_chart([g["key"] for g in by["agent"]["groups"]],
                              {"spend": _dollars(by["agent"]["groups"], "cost_micros"),
                               "catalogue tax": _dollars(by["agent"]["groups"], "catalogue_tax_micros")},
                              "By agent: spend and catalogue tax"),
    }
    costliest = costliest_runs(con, since, until, source)
    usage = usage_report(con, "day", window) if _has_usage(con) else None
    period_span = con.execute("select min(started_at), max(started_at) from runs where ($since is null or started_at >= $since) "
                              "and ($until is null or started_at < $until)", {"since": since, "until": until}).fetchall()[0]
    return {"generated_at": _now(window.zone), "period": [_local(t, window.zone) for t in period_span], "zone": window.zone,
            "by_period": period, "total": total, "by": by, "charts": charts, "source": source,
            "source_text": SOURCE_TEXT[source], "bill": bill_vs_journals(con, window),
            "costliest": costliest, "usage": usage, "prices": by[period]["prices"],
            "per_task": by[period]["cost_per_completed_task"],
            "waste": by[period]["spend_on_failed_stalled_budget_stopped"],
            "unpriced": sorted({m for g in by["model"]["groups"] for m in g["unpriced_models"]})}


# Step tables longer than this fold into <details>, so the page stays short; findings show this many, then fold
# (a warning's findings fewer: errors come first to the eye).
FOLD_ROWS = 12
WARN_ROWS = 4


def morning_context(con: duckdb.DuckDBPyConnection, checks: CheckReport, config=None, zone: str = "UTC",
                    source: str = "auto") -> dict[str, Any]:
    from .charts import share_chart

    use_zone(con, zone)
    failing = [r for r in checks.results if r.failures]
    partial = [r for r in checks.results if r.not_judged]
    run_ids = sorted({f.run_id for f in checks.findings if f.run_id})
    erred = {f.run_id for f in checks.findings if f.run_id and f.severity == "error"}
    warned_only = set(run_ids) - erred  # their step tables fold: errors come first to the eye
    runs = {row["run_id"]: row for row in records(con, """select v.run_id, v.agent, v.task_class, v.status, v.stop_reason,
                                                                   v.steps, v.total_tokens, v.cost_micros, v.wall_seconds,
                                                                   c.unpriced_tokens, c.calls_without_usage,
                                                                   c.calls_with_unknown_buckets
                                                            from run_view v join run_costs c using (run_id)
                                                            where v.run_id in (select unnest(?))""", [run_ids])}
    steps = {}
    for row in records(con, """select run_id, idx, kind, what, input_tokens, output_tokens, cost_micros, ms, error
                                from step_view where run_id in (select unnest(?)) order by run_id, idx""", [run_ids]):
        steps.setdefault(row["run_id"], []).append(row)
    rates = stop_reason_rates(con, "agent", period="night")  # night with night, as the glance compares them
    days = sorted({r["day"] for r in rates if r["day"]})
    latest = [r for r in rates if days and r["day"] == days[-1]]
    rate_rows: dict[str, dict] = {}  # one row an agent, a cell a status: runs, share, change from the night before
    for r in latest:
        rate_rows.setdefault(r["key"], {"key": r["key"], "cells": {}})["cells"][r["status"]] = r
    usage = usage_report(con, "model") if _has_usage(con) else None
    budgets = budget_report(con, "agent", source=source)
    seen = glance(con, checks, source)
    shown = [s for s in STATUSES if any(n[s] for n in seen["nights"])]
    chart = share_chart([n["night"] for n in seen["nights"]],
                        {s: [n[s] / n["runs"] for n in seen["nights"]] for s in shown},
                        f"Stop reasons over the last {len(seen['nights'])} night(s) (share of runs)",
                        STATUS_COLOURS) if seen["nights"] else None
    return {"generated_at": _now(zone), "checks": checks, "failing": failing, "partial": partial, "runs": runs, "steps": steps,
            "config_source": str(config.path) if config is not None and config.path else None, "zone": zone,
            "rates": latest, "rate_rows": list(rate_rows.values()),
            "rate_statuses": [s for s in STATUSES if any(r["status"] == s for r in latest)], "night": days[-1] if days else None, "previous_night": days[-2] if len(days) > 1 else None,
            "budgets": budgets, "replayed": _replayed(con, budgets, days[-1] if days else None, config, zone, source),
            "usage": usage, "glance": seen, "rates_chart": chart,
            "fold_rows": FOLD_ROWS, "warn_rows": WARN_ROWS, "warned_only": warned_only, "source": source,
            "not_loaded": records(con, "select path, status, reason from ingested_files where status <> 'loaded' "
                                       "order by path")}


def _replayed(con: duckdb.DuckDBPyConnection, budgets: dict[str, Any], night: str | None, config, zone: str,
              source: str) -> dict[str, Any] | None:
    """The recommended ceilings replayed over the latest night's runs: "if these limits had been on last night"."""
    candidate = from_budgets(budgets)
    if night is None or not candidate.limits:
        return None
    since, until = night_bounds(night, zone)
    report = replay(con, [candidate], "agent", since, until, config, source)
    return {"night": night, **report["candidates"][0]}


STATUS_COLOURS = {"succeeded": "#5a9e4b", "failed": "#b8474b", "cancelled": "#8c8c8c", "budget_exceeded": "#e08a2c",
                  "timed_out": "#7b61a8", "stalled": "#2f6f9f", "running": "#c9b037"}


def _local(moment: datetime | None, zone: str) -> datetime | None:
    return None if moment is None else moment.astimezone(ZoneInfo(zone))


def _now(zone: str = "UTC") -> str:
    return datetime.now(timezone.utc).astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M ") + zone


def write_finance(con: duckdb.DuckDBPyConnection, out: Path, window: Window | None = None, source: str = "auto",
                  period: str = "day") -> Path:
    check_file_target(out)
    with store.frozen_views(con):
        context = finance_context(con, window, source, period)
    return write_output(out, render("finance.html.j2", context))


def write_morning(con: duckdb.DuckDBPyConnection, out: Path, checks: CheckReport | None = None, config=None,
                  checks_dir: list[Path] | None = None, zone: str = "UTC", source: str = "auto", scope=None) -> Path:
    check_file_target(out)
    with store.frozen_views(con):
        checks = checks or run_checks(con, load_checks(checks_dir), scope, config=config, record=False)
        context = morning_context(con, checks, config, zone, source)
    return write_output(out, render("morning.html.j2", context))


@dataclass
class MorningResult:
    ingested: IngestReport
    checks: CheckReport
    files: dict[str, Path]


def morning(db: Path, folder: Path, usage: list[Path], out: Path, config=None,
            checks_dir: list[Path] | None = None, source: str = "auto", zone: str = "UTC") -> MorningResult:
    """Ingest everything under ``folder`` (and the usage exports), run every check, write the reports.

    A night with no runs at all is an error naming what was found instead, never an empty "clean" report.
    """
    checks_to_run = load_checks(checks_dir)
    check_folder_target(out)
    with store.connect(db) as con:
        ingested = ingest(con, [folder, *usage], window=config.window if config is not None else None)
        if not con.execute("select count(*) from runs").fetchall()[0][0]:
            totals = ingested.totals
            raise NoRuns(f"no runs in {folder} or in the store {db}: {totals['files']} file(s) of a known format "
                         f"({totals['loaded']} line(s) loaded), {totals['passed_over']} passed over as no format "
                         "reconcile reads. Point reconcile morning at the night's journals or transcripts.")
        with store.frozen_views(con):  # the checks and both reports read the night priced once
            checks = run_checks(con, checks_to_run, config=config)
            make_folder(out)
            files = {"finance": write_finance(con, out / "finance.html", Window(zone=zone), source=source),
                     "morning": write_morning(con, out / "morning.html", checks, config, zone=zone, source=source),
                     "findings": out / "findings.json", "junit": out / "findings.xml"}
        write_output(files["findings"], json.dumps(checks.to_json(), indent=2, default=str) + "\n")
        write_junit(checks, files["junit"], "--out")
    return MorningResult(ingested, checks, files)
