"""What `reconcile morning` prints (issue 61): the night's counts, the failing checks in the morning report's own
"Fix first" order, the files written, and a next command that runs as printed."""

from __future__ import annotations

import re
import shlex

import pytest

from conftest import SAMPLE_RUNS


@pytest.mark.slow  # out of the README's command (its 5-minute budget); CI runs it with -m slow
def test_morning_prints_the_reports_fix_first_order_and_a_next_step_that_runs(cli, tmp_path):
    db, out = tmp_path / "night.duckdb", tmp_path / "out"
    result = cli("morning", SAMPLE_RUNS, "--out", out, "--db", db)
    assert result.code == 1, result.err  # the sample night has error findings
    lines = result.out.splitlines()
    start = lines.index("Fix first:")
    printed = [re.match(r"\s+\d+\. (\w+) \((error|warn)\): ", line).group(1) for line in lines[start + 1:start + 6]]
    html = (out / "morning.html").read_text(encoding="utf-8")
    listed = re.findall(r'<li><a href="#check-(\w+)"', html.split('id="fix-first"', 1)[1].split("</section>", 1)[0])
    assert printed == listed and len(printed) == 5  # the same checks, in the same order
    assert any(line.startswith("  … and ") and "more failing checks" in line for line in lines)
    # the next step: the report, and a command that shows the first run to fix, with the store it is in
    step = lines[-1]
    assert step.startswith(f"Next: open {out / 'morning.html'}, or reconcile show ")
    command = shlex.split(step.split(", or ", 1)[1].removesuffix(" (the first run to fix)"))
    assert command[:2] == ["reconcile", "show"] and command[3:] == ["--db", str(db)]
    shown = cli(*command[1:])
    assert shown.code == 0 and command[2] in shown.out
