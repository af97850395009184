"""The HTML reports (finance, morning): their context, rendering and writing (``reconcile.morning`` runs the whole job).

Reports are single self-contained files: CSS inline, charts as inline SVG, no script, no font and
no URL of any kind, printable. Templates (``reports/*.html.j2``) render with autoescaping on, and
every value printed passes through ``redact`` first, so a transcript's ``<script>`` is text and
its API keys are masked.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import jinja2
from markupsafe import Markup, escape

from reconcile import store
from reconcile.analyses.budgets import budget_report, stop_reason_rates
from reconcile.checks import CheckReport, Scope, load_checks, run_checks
from reconcile.errors import BadInput, NoRuns
from reconcile.analyses.glance import bill_vs_journals, glance, latest_night, night_buckets
from reconcile.analyses.costs import GROUPS, SOURCE_TEXT, WINDOW, cost_reports, costliest_runs
from reconcile.display import literal
from reconcile.money import amount_text, described, left_out, share_text, usd
from reconcile.outputs import check_file_target, write_output
from reconcile.redact import redact
from reconcile.reports.first import FIX_FIRST, cents, fix_first
from reconcile.reports.signals import crossed_signals
from reconcile.sheets import bounds_keys, shown as shown_value
from reconcile.analyses.replay import from_budgets, replay
from reconcile.resources import reports_dir
from reconcile.store.status import STATUSES
from reconcile.analyses.usage import usage_report
from reconcile.when import RUNS_IN_WINDOW, TIME_GROUPS, Window, night_bounds, night_sql, use_zone
from reconcile.engine import Engine


def _environment() -> jinja2.Environment:
    # Our own markup (the charts, marked safe) passes as it is; every other value is redacted, made literal
    # (a right-to-left override or a zero-width space shows as its escape, \u202e), then HTML-escaped.
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(reports_dir()), autoescape=True,
                             finalize=_shown,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    env.filters["usd"] = lambda micros, unknown="unknown": usd(micros, unknown=unknown)  # dollars and cents
    env.filters["usd4"] = lambda micros, unknown="": usd(micros, unknown=unknown, places=4)  # a call's cost
    env.filters["usd_signed"] = lambda micros: usd(micros, signed=True)
    env.filters["cents"] = cents  # the finance report's tables: to the cent, never a fraction of one
    env.filters["cents_signed"] = lambda micros, unknown="unknown": cents(micros, signed=True, unknown=unknown)
    env.filters["cost_cents"] = lambda row: described(row, amount=cents)  # "cost", to the cent
    # any money figure of a row by the one rule (exact, "$a to $b", "at least $a", unknown), without the reasons
    env.filters["money"] = lambda row, key="cost_micros", unknown="unknown": _money(row, key, usd, unknown)
    env.filters["money_cents"] = lambda row, key="cost_micros", unknown="unknown": _money(row, key, cents, unknown)
    env.filters["money_signed"] = lambda row, key: _money(row, key, lambda m: usd(m, signed=True), "unknown")
    env.filters["money_cents_signed"] = lambda row, key: _money(row, key, lambda m: cents(m, signed=True), "unknown")
    env.filters["cost"] = described  # a figure with what it leaves out: "unknown", "$x + unpriced (…)"
    env.filters["cost4"] = lambda row: described(row, places=4)
    env.filters["change"] = _change
    env.filters["share"] = share_text  # a share by the one rule: exact, or between its bounds
    env.globals["status_colours"] = STATUS_COLOURS
    # a figure nobody knows reads "unknown" in every cell ("—" is for what does not apply: no night before)
    env.filters["count"] = lambda value: "—" if value is None else shown_value(value, "count")  # as the CLI's tables show it
    env.filters["pct"] = lambda share, unknown="unknown": unknown if share is None else f"{share:.1%}"
    env.filters["num"] = lambda value, unknown="unknown": (unknown if value is None else f"{value:,.0f}"
                                                           if isinstance(value, (int, float)) else value)
    env.filters["left_out"] = lambda row: ", ".join(left_out(row))  # what a tile's figure leaves out, under it
    # a date, an amount or an id inside running text: never broken at its hyphen (2026-11-<br>28)
    env.filters["nw"] = lambda value: Markup('<span class="nw">%s</span>') % _shown(value)
    env.filters["words"] = _words
    env.filters["anchor"] = lambda run_id: "run-" + "".join(c if c.isalnum() else "-" for c in str(run_id))
    return env


def _money(row: dict[str, Any], key: str, amount, unknown: str) -> str:
    """``row[key]`` as the one rule says it, its bounds read from beside it (``cost_low_micros`` …)."""
    low_key, high_key = bounds_keys(key)
    return amount_text(row.get(key), row.get(low_key), row.get(high_key), amount=amount, unknown=unknown)


def _shown(value: Any) -> Any:
    """Every value a template prints: secrets redacted, invisible and directional characters escaped."""
    if isinstance(value, Markup):
        return value
    shown = redact(value)
    return literal(shown) if isinstance(shown, str) else shown


def _words(value: Any) -> Markup:
    """Running text that wraps between words only: a token with a hyphen or a slash (a model name, a date, a path)
    is kept whole (the browser would break claude-haiku-4-5 at a hyphen)."""
    text = str(escape(_shown(value)))
    return Markup(_TOKEN.sub(_kept_whole, text))


# Each maximal run of non-spaces, looked at once. (r"\S*[-/]\S*" tried again from every character of a token
# with neither: quadratic, a 1 MB tool name took minutes.)
_TOKEN = re.compile(r"\S+")


def _kept_whole(token: re.Match) -> str:
    word = token.group(0)
    return f'<span class="nw">{word}</span>' if "-" in word or "/" in word else word


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


def _catalogued(engine: Engine, names, window: Window) -> dict[str, dict[str | None, int]]:
    """Per grouping and group (None: all of them), how many of its runs record their tool catalogue.

    The runs that record one are found once; each grouping then counts distinct (group, run) pairs of
    those runs' kept totals by model (``run_model_totals``), so memory follows the runs, not the steps.
    """
    engine.run("create or replace temp table _catalogued_runs as select run_id from run_facts where catalogue")
    try:
        out = {}
        for name in names:
            rows = engine.rows(f"""with pairs as (
                                       select distinct {GROUPS[name][0]} as key, r.run_id
                                       from run_model_totals s join runs r using (run_id)
                                       where {WINDOW} and r.run_id in (select run_id from _catalogued_runs))
                                   select key, count(*) from pairs group by key
                                   union all select null, count(distinct run_id) from pairs""",
                               window.params)
            out[name] = {k: n for k, n in rows}
        return out
    finally:
        engine.run("drop table if exists _catalogued_runs")


def _has_usage(engine: Engine) -> bool:
    return bool(engine.rows("select count(*) from usage_buckets")[0][0])


def finance_context(engine: Engine, window: Window | None = None, source: str = "auto",
                    period: str = "day") -> dict[str, Any]:
    from reconcile.reports.charts import bar_chart  # matplotlib costs a quarter of a second to import: only the reports that draw pay it

    window = window or Window()
    if period not in TIME_GROUPS:
        raise BadInput(f"--by {period!r}: the finance report groups spend by {', '.join(TIME_GROUPS)}")
    use_zone(engine, window.zone)
    by = cost_reports(engine, [period, "model", "agent", "task_class"], window, source)
    total = by[period]["total"]
    charts = {  # each titled with what it shows, its axis with the unit
        "per_period": bar_chart([g["key"] for g in by[period]["groups"]],
                                {"spend": _dollars(by[period]["groups"], "cost_micros")},
                                f"Spend per {period} ({window.zone}): the runs started that {period}",
                                xlabel="spend, US dollars"),
        "by_model": bar_chart([g["key"] for g in by["model"]["groups"]],
                              {"spend": _dollars(by["model"]["groups"], "cost_micros"),
                               "the same calls without the cache": _dollars(by["model"]["groups"], "uncached_cost_micros")},
                              "By model: spend, and what the same calls would cost without the cache",
                              xlabel="US dollars, our prices"),
        "by_agent": bar_chart([g["key"] for g in by["agent"]["groups"]],
                              {"spend": _dollars(by["agent"]["groups"], "cost_micros"),
                               "of it, sending the tool descriptions": _dollars(by["agent"]["groups"], "catalogue_tax_micros")},
                              "By agent: spend, and the part of it that paid for sending the tool descriptions",
                              xlabel="US dollars"),
    }
    catalogued = _catalogued(engine, by, window)
    for name in by:  # the catalogue tax of a group none of whose runs records a tool catalogue is not recorded, not $0
        for g in [*by[name]["groups"], by[name]["total"]]:
            g["catalogue_recorded"] = bool(catalogued[name].get(g["key"] if g is not by[name]["total"] else None))
    costliest = costliest_runs(engine, window, source)
    usage = usage_report(engine, "day", window) if _has_usage(engine) else None
    period_span = engine.rows(f"select min(started_at), max(started_at) from runs r where {RUNS_IN_WINDOW}",
                              window.params)[0]
    return {"generated_at": _now(window.zone), "period": [_local(t, window.zone) for t in period_span], "zone": window.zone,
            "by_period": period, "total": total, "by": by, "charts": charts, "source": source,
            "source_text": SOURCE_TEXT[source], "bill": bill_vs_journals(engine, window),
            "costliest": costliest, "usage": usage, "prices": by[period]["prices"],
            "per_task": by[period]["cost_per_completed_task"],
            "waste": by[period]["spend_on_failed_stalled_budget_stopped"],
            "unfinished": by[period]["spend_on_cancelled_abandoned"],
            "unpriced": sorted({m for g in by["model"]["groups"] for m in g["unpriced_models"]})}


# Step tables longer than this fold into <details>, so the page stays short; findings show this many, then fold
# (a warning's findings fewer: errors come first to the eye).
FOLD_ROWS = 12
WARN_ROWS = 4


def morning_context(engine: Engine, checks: CheckReport, config=None, zone: str = "UTC",
                    source: str = "auto", night: str | None = None, earlier: dict[str, Any] | None = None) -> dict[str, Any]:
    """The morning report of ``night`` (default: the latest in the store); ``checks`` should judge that night's runs."""
    from reconcile.reports.charts import share_chart

    use_zone(engine, zone)
    night = night or latest_night(engine)
    failing = [r for r in checks.results if r.failures]
    partial = [r for r in checks.results if r.not_judged]
    run_ids = sorted({f.run_id for f in checks.findings if f.run_id})
    erred = {f.run_id for f in checks.findings if f.run_id and f.severity == "error"}
    warned_only = set(run_ids) - erred  # their step tables fold: errors come first to the eye
    runs = {row["run_id"]: row for row in engine.records("""select v.run_id, v.agent, v.task_class, v.status, v.stop_reason,
                                                                   v.steps, v.tool_results, v.events, v.total_tokens,
                                                                   v.cost_micros, v.cost_low_micros,
                                                                   v.cost_high_micros, v.wall_seconds,
                                                                   c.unpriced_tokens, c.calls_without_usage,
                                                                   c.calls_with_unknown_buckets,
                                                                   c.calls_with_unknown_split
                                                            from run_view v join run_costs c using (run_id)
                                                            where v.run_id in (select unnest(?))""", [run_ids])}
    steps = {}
    with store.priced_runs(engine, "select unnest(?) as run_id", [run_ids]):  # the findings' runs priced, not every step of the history
        found_steps = engine.records("""select run_id, idx, kind, what, input_tokens, output_tokens, cost_micros,
                                               cost_low_micros, cost_high_micros, ms, error
                                        from step_view where run_id in (select unnest(?)) order by run_id, idx""",
                                     [run_ids])
    for row in found_steps:
        steps.setdefault(row["run_id"], []).append(row)
    # night with night, as the glance compares them; nothing after the report's night
    rates = stop_reason_rates(engine, "agent", Window(until=night_bounds(night, zone)[1] if night else None),
                              period="night")
    days = sorted({r["day"] for r in rates if r["day"]})
    latest = [r for r in rates if days and r["day"] == days[-1]]
    rate_rows: dict[str, dict] = {}  # one row an agent, a cell a status: runs, share, change from the night before
    for r in latest:
        rate_rows.setdefault(r["key"], {"key": r["key"], "cells": {}})["cells"][r["status"]] = r
    budgets = budget_report(engine, "agent", source=source, config=config)
    seen = glance(engine, checks, source, night, zone)
    usage = usage_report(engine, "model", seen["buckets"]) if seen["buckets"] else None  # the night's buckets only
    shown = [s for s in STATUSES if any(n[s] for n in seen["nights"])]
    chart = share_chart([n["night"] for n in seen["nights"]],
                        {s: [n[s] / n["runs"] for n in seen["nights"]] for s in shown},
                        f"How each night's runs ended: status, share of the night's runs "
                        f"(the last {len(seen['nights'])} night{'s' if len(seen['nights']) != 1 else ''})",
                        STATUS_COLOURS, xlabel="share of the night's runs") if seen["nights"] else None
    first = fix_first(failing, runs)
    order = {item["name"]: n for n, item in enumerate(first)}
    failing = sorted(failing, key=lambda r: order.get(r.name, len(order)))  # the findings in the same order
    return {"generated_at": _now(zone), "checks": checks, "failing": failing, "partial": partial, "runs": runs, "steps": steps,
            "fix_first": first[:FIX_FIRST], "fix_order": first,
            "config_source": str(config.path) if config is not None and config.path else None, "zone": zone,
            "rates": latest, "rate_rows": list(rate_rows.values()),
            "rate_statuses": [s for s in STATUSES if any(r["status"] == s for r in latest)], "night": days[-1] if days else None, "previous_night": days[-2] if len(days) > 1 else None,
            "budgets": budgets, "replayed": _replayed(engine, budgets, night, config, zone, source),
            "usage": usage, "glance": seen, "rates_chart": chart, "earlier": earlier,
            "signals": crossed_signals(engine, config, night, zone),
            "store_runs": engine.rows("select count(*) from runs")[0][0],
            "fold_rows": FOLD_ROWS, "warn_rows": WARN_ROWS, "warned_only": warned_only, "source": source,
            "not_loaded": engine.records("select path, status, reason from ingested_files where status <> 'loaded' "
                                       "order by path")}


def judge_night(engine: Engine, checks_to_run: list, config=None, zone: str = "UTC",
                scope: Scope | None = None, record: bool = False,
                night: str | None = None) -> tuple[str | None, CheckReport, dict[str, Any] | None]:
    """The night a morning report is about, its checks, and what the checks find on earlier runs.

    Without ``--since/--until`` the checks judge the latest night's runs only (noon to noon in ``zone``), or the
    ``night`` named (its evening's date): a store of many months would otherwise put March's findings in November's
    report. ``earlier`` counts the findings on runs started before the judged runs, and names the command that
    lists them. A named night with no runs is :class:`~reconcile.errors.NoRuns`, saying which nights there are.
    """
    use_zone(engine, zone)
    given = scope if scope is not None and scope.active else None
    if night is not None:
        if given is not None:
            raise BadInput("--night names a night; --since/--until name a window: give one or the other")
        night = _named_night(engine, night, zone)
    else:
        night = latest_night(engine, given.since, given.until) if given else latest_night(engine)
    if given is None and night:
        buckets = night_buckets(engine, night, zone)  # a provider bucket's finding falls in the night its bucket overlaps
        scope = Scope(*night_bounds(night, zone), at_since=buckets.since if buckets else None)
    scope = scope or Scope()
    checks = run_checks(engine, checks_to_run, scope, config=config, record=record)
    return night, checks, _earlier(engine, checks_to_run, config, scope, checks, record)


def _named_night(engine: Engine, night: str, zone: str) -> str:
    """``night`` checked: a date (its evening's), and one the store has runs in."""
    try:
        since, until = night_bounds(night, zone)
    except ValueError as exc:
        raise BadInput(f"--night {night!r} is not a date: give the night's evening, e.g. --night 2026-11-28") from exc
    if not engine.value("select count(*) from runs where started_at >= $since and started_at < $until",
                        {"since": since, "until": until}):
        nights = [row[0] for row in engine.rows(f"select distinct {night_sql('started_at')} as n from runs "
                                                "where started_at is not null order by n desc limit 5")]
        raise NoRuns(f"no runs on the night of {night} (noon to noon, {zone}); the latest nights with runs: "
                     f"{', '.join(nights) or 'none'}")
    return night


def _earlier(engine: Engine, checks_to_run: list, config, scope: Scope,
             shown: CheckReport, keep: bool = False) -> dict[str, Any] | None:
    """Findings on the runs started before ``scope`` (a second pass of the checks, made only when there are such runs).

    With ``keep`` (the morning job) the verdicts reached on those runs are kept, though not recorded as a check
    run: a store whose history no morning judged night by night (its first morning, a backlog ingested at once)
    would otherwise have that history judged whole again every morning.

    The command named lists them as ``reconcile check`` places them: a provider bucket's finding by the bucket's start,
    so a daily bucket that began before the night is listed there too; ``shared`` counts those (``shown`` has them).
    """
    since = scope.since
    if since is None:
        return None
    runs, undated = engine.rows("select count(*) filter (where started_at < $since), count(*) filter (where started_at "
                                "is null) from runs", {"since": since})[0]
    if not runs and not undated:
        return None
    report = (run_checks(engine, checks_to_run, Scope(until=since), config=config, record=False, keep=keep)
              if runs else None)
    on_the_night = {(f.check, f.step, f.detail) for f in shown.findings if f.run_id is None}
    listed = report.findings if report else []
    findings = [f for f in listed if f.run_id is not None or (f.check, f.step, f.detail) not in on_the_night]
    errors = {r.name for r in report.results if r.outcome == "error"} if report else set()
    return {"runs": runs, "undated": undated, "findings": len(findings), "shared": len(listed) - len(findings),
            "errors": sum(1 for f in findings if f.check in errors),
            "runs_with_findings": len({f.run_id for f in findings if f.run_id}),
            "command": "reconcile check --until " + since.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")}


def _replayed(engine: Engine, budgets: dict[str, Any], night: str | None, config, zone: str,
              source: str) -> dict[str, Any] | None:
    """The recommended ceilings replayed over the latest night's runs: "if these limits had been on last night"."""
    candidate = from_budgets(budgets)
    if night is None or not candidate.limits:
        return None
    report = replay(engine, [candidate], "agent", Window(*night_bounds(night, zone)), config, source)
    return {"night": night, **report["candidates"][0]}


STATUS_COLOURS = {"succeeded": "#5a9e4b", "failed": "#b8474b", "cancelled": "#8c8c8c", "budget_exceeded": "#e08a2c",
                  "timed_out": "#7b61a8", "stalled": "#2f6f9f", "abandoned": "#6b4f3a", "running": "#c9b037"}


def _local(moment: datetime | None, zone: str) -> datetime | None:
    return None if moment is None else moment.astimezone(ZoneInfo(zone))


def _now(zone: str = "UTC") -> str:
    return datetime.now(timezone.utc).astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M ") + zone


def write_finance(engine: Engine, out: Path, window: Window | None = None, source: str = "auto",
                  period: str = "day") -> Path:
    check_file_target(out)
    with store.frozen_views(engine, steps=False):  # runs' kept totals: no step of the history is priced
        context = finance_context(engine, window, source, period)
    return write_output(out, render("finance.html.j2", context))


def write_morning(engine: Engine, out: Path, judged: tuple | None = None, config=None,
                  checks_dir: list[Path] | None = None, zone: str = "UTC", source: str = "auto",
                  scope: Scope | None = None, night: str | None = None) -> Path:
    """The morning report of the latest night (or of ``night``, or of the runs in ``scope``); ``judged``:
    :func:`judge_night`'s answer."""
    return write_morning_ordered(engine, out, judged, config, checks_dir, zone, source, scope, night)[0]


def write_morning_ordered(engine: Engine, out: Path, judged: tuple | None = None, config=None,
                          checks_dir: list[Path] | None = None, zone: str = "UTC", source: str = "auto",
                          scope: Scope | None = None, night: str | None = None) -> tuple[Path, list[dict]]:
    """:func:`write_morning`, and the failing checks in the report's order to fix them (its "Fix first" list, every
    failing check): what ``reconcile morning`` prints under the night's counts."""
    check_file_target(out)
    # the runs' views once; the steps each part prices where it needs them (the checks, the findings' runs, the replay)
    with store.frozen_views(engine, steps=False):
        night, checks, earlier = judged or judge_night(engine, load_checks(checks_dir), config, zone, scope,
                                                       night=night)
        context = morning_context(engine, checks, config, zone, source, night, earlier)
    return write_output(out, render("morning.html.j2", context)), context["fix_order"]
