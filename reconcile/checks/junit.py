"""JUnit XML for CI dashboards: one test case per check.

A check whose outcome is ``error`` is a ``<failure>``; a ``warn`` one is reported as
``<skipped>`` with its findings in ``<system-out>`` (JUnit has no warning state, and a warning
must not fail a build). What a check could not judge is a ``not_judged`` property.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from reconcile.outputs import write_output
from reconcile.checks.runner import CheckReport


def write_junit(report: CheckReport, path: Path, option: str = "--junit") -> None:
    failures = sum(1 for r in report.results if r.outcome == "error")
    skipped = sum(1 for r in report.results if r.outcome == "warn")
    suite = ET.Element("testsuite", name="reconcile", tests=str(len(report.results)), failures=str(failures),
                       errors="0", skipped=str(skipped), timestamp=report.checked_at.isoformat())
    for result in report.results:
        case = ET.SubElement(suite, "testcase", classname=f"reconcile.{result.severity}", name=result.name,
                             file=result.source)
        if result.not_judged:
            ET.SubElement(case, "properties").append(ET.Element("property", name="not_judged",
                                                                value=result.not_judged_text()))
        if result.outcome == "pass":
            continue
        lines = "\n".join(f"run {f.run_id or '-'} step {'-' if f.step is None else f.step}: {f.detail}"
                          for f in result.findings)
        message = f"{result.failures} violation(s) of: {result.invariant}. Remedy: {result.remedy}"
        if result.outcome == "error":
            ET.SubElement(case, "failure", message=message, type="invariant").text = lines
        else:
            ET.SubElement(case, "skipped", message=f"warning: {message}")
            ET.SubElement(case, "system-out").text = lines
    ET.indent(suite)
    write_output(path, ET.tostring(suite, encoding="unicode", xml_declaration=True) + "\n", option)
