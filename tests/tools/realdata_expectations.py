"""Rewrite the runs and not_judged sections of tests/realdata_expected/*.toml from what reconcile does now.

    python tests/tools/realdata_expectations.py [FOLDER ...]   # all folders when none is named

Findings are not written by this script: each one needs a human reading the transcript and
writing why it is a real defect, with a quote. A finding the checks report that the expectation
file does not justify stops the script (fix the check or the loader, or justify it by hand).
Run it after a change that moves what checks can judge, then read the diff.
"""

from __future__ import annotations

import json
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from reconcile import store  # noqa: E402
from reconcile.checks import load_checks, run_checks  # noqa: E402
from reconcile.ingest.driver import ingest  # noqa: E402
from reconcile.engine import DuckDBEngine

REAL = ROOT / "tests" / "fixtures" / "realdata"
OUT = ROOT / "tests" / "realdata_expected"


def _quoted(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def main() -> None:
    named = sys.argv[1:]
    for folder in sorted(p.name for p in REAL.iterdir() if p.is_dir() and (not named or p.name in named)):
        path = OUT / f"{folder}.toml"
        before = tomllib.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
        con = store.connect(":memory:")
        report = ingest(con, [REAL / folder])
        runs = dict(con.execute("select source_format, count(*) from runs group by all order by 1").fetchall())
        lines = [f"# reconcile on tests/fixtures/realdata/{folder} (see its SOURCE.txt): what it loads, finds and "
                 "cannot judge.", "# A finding listed here is a real defect, with why and a quote from the transcript; "
                 "see tests/test_realdata.py.", ""]
        lines.append("runs = {" + ", ".join(f"{k} = {v}" for k, v in runs.items()) + "}")
        if report.totals["rejected"]:
            lines.append(f"rejected = {report.totals['rejected']}")
        if not runs:
            lines.append(f"why_no_runs = {_quoted(before.get('why_no_runs', 'TODO: say why'))}")
        else:
            checks = run_checks(DuckDBEngine(con), load_checks(), record=False)
            justified = {(f["check"], f.get("run_id", ""), f.get("step", -1)): f for f in before.get("finding", [])}
            found = [(f.check, f.run_id or "", -1 if f.step is None else f.step) for f in checks.findings]
            unjustified = [key for key in found if key not in justified]
            if unjustified:
                raise SystemExit(f"{folder}: findings with no justification in {path.name}: {unjustified}")
            if found:
                for key in found:
                    finding = justified[key]
                    lines += ["", "[[finding]]"] + [f"{k} = {_quoted(v) if isinstance(v, str) else v}"
                                                    for k, v in finding.items()]
            else:
                lines += ["", "# No check reports a defect on this corpus.", "finding = []"]
            lines += ["", "[not_judged]"]
            for result in checks.results:
                if result.not_judged:
                    lines.append(f"{result.name} = [" + ", ".join(_quoted(n.text()) for n in result.not_judged) + "]")
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(folder, runs)


if __name__ == "__main__":
    main()
