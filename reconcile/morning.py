"""The morning job, whole: ingest the night, judge it, write both reports and the findings.

``reconcile morning`` calls :func:`morning`; it is the one workflow that reaches across the layers
(ingest, prices, checks, reports), so it sits above all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reconcile import store
from reconcile.engine import DuckDBEngine
from reconcile.checks import CheckReport, Scope, load_checks, write_junit
from reconcile.errors import NoRuns
from reconcile.ingest.driver import IngestReport, ingest
from reconcile.outputs import check_folder_target, make_folder, write_output
from reconcile.reports.reporting import judge_night, write_finance, write_morning_ordered
from reconcile.when import Window, night_bounds


@dataclass
class MorningResult:
    ingested: IngestReport
    checks: CheckReport
    files: dict[str, Path]
    night: str | None = None
    earlier: dict[str, Any] | None = None  # findings on runs before the night: see judge_night
    fix_first: list[dict[str, Any]] = field(default_factory=list)  # the failing checks in the report's order to fix


def morning(db: Path, folder: Path, usage: list[Path], out: Path, config=None,
            checks_dir: list[Path] | None = None, source: str = "auto", zone: str = "UTC",
            night: str | None = None, scope: Scope | None = None) -> MorningResult:
    """Ingest everything under ``folder`` (and the usage exports), run every check over the latest night's runs
    (or ``night``'s, named by its evening's date, or the runs in ``scope``), write the reports — the finance report
    over the same runs when a night or a window is named, else over the whole store.

    A night with no runs at all is an error naming what was found instead, never an empty "clean" report.
    """
    checks_to_run = load_checks(checks_dir)
    check_folder_target(out)
    with store.connect(db) as con:
        ingested = ingest(con, [folder, *usage], window=config.window if config is not None else None,
                          keep_totals=False,  # kept below, from the steps priced once for the whole morning
                          **({"abandoned_after": config.abandoned_after} if config is not None else {}))
        engine = DuckDBEngine(con)  # the store just written, judged and reported in the same connection
        if not engine.value("select count(*) from runs"):
            totals = ingested.totals
            raise NoRuns(f"no runs in {folder} or in the store {db}: {totals['files']} file(s) of a known format "
                         f"({totals['loaded']} line(s) loaded), {totals['passed_over']} passed over as no format "
                         "reconcile reads. Point reconcile morning at the night's journals or transcripts.")
        # the night's runs priced once into the kept totals, and the runs' views frozen over them: the checks price
        # the trees they judge afresh (the night's), the checks of the whole store and both reports read kept sums
        with store.frozen_views(engine, steps=False, refresh=True):
            judged = judge_night(engine, checks_to_run, config, zone, scope, record=True, night=night)
            checks = judged[1]
            make_folder(out)
            money = (Window(*night_bounds(judged[0], zone), zone) if night is not None
                     else Window(scope.since, scope.until, zone) if scope is not None and scope.active else Window(zone=zone))
            report, order = write_morning_ordered(engine, out / "morning.html", judged, config, zone=zone, source=source)
            files = {"finance": write_finance(engine, out / "finance.html", money, source=source), "morning": report,
                     "findings": out / "findings.json", "junit": out / "findings.xml"}
        write_output(files["findings"], json.dumps(checks.to_json(), indent=2, default=str) + "\n")
        write_junit(checks, files["junit"], "--out")
    return MorningResult(ingested, checks, files, judged[0], judged[2], order)
