"""Every command fits the terminal it runs in (issue 50): 80, 120 and 200 columns, in a real pty.

A table too wide for the terminal drops columns (named under it), shortens ids to unique prefixes and
folds prose between words; one that cannot fit even so says so and points at --wide / --csv. The
not-judged lines of ``check`` collapse to one a format (``-v`` has each check's).
"""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from reconcile import store
from terminal import in_pty, too_wide as _too_wide

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "fixtures" / "realdata"

# (arguments, exit codes it may give); {db} is the store
COMMANDS = [
    (["runs"], (0,)), (["runs", "--sort", "cost", "-n", "5"], (0,)), (["summary"], (0,)), (["cost"], (0,)),
    (["cost", "--by", "agent"], (0,)), (["budgets"], (0,)), (["check"], (1,)), (["usage"], (0,)),
    (["replay", "--set", "max_steps=20"], (0,)), (["prices", "list"], (0,)), (["signals"], (0,)),
    (["config"], (0,)), (["sql", "select run_id, agent, status, stop_reason, started_at from run_view limit 5"], (0,)),
    (["show", "8f3a"], (0,)), (["show", "8f3a", "--step", "7"], (0,)), (["reprice", "--as-of", "2026-01-01"], (0,)),
    (["cost", "project", "--fit"], (0,)), (["replay", "--detector", "all"], (0,)),
]
REAL_COMMANDS = [(["runs"], (0,)), (["summary"], (0,)), (["cost"], (0,)), (["budgets"], (0,)), (["check"], (1,)),
                 (["usage"], (0,)), (["show", "fe5e1c67"], (0,))]


@pytest.fixture(scope="module")
def real_db(tmp_path_factory) -> Path:
    """Real Claude Code and Codex sessions (tests/fixtures/realdata, their SOURCE.txt), ingested once."""
    from reconcile.ingest.driver import ingest

    path = tmp_path_factory.mktemp("real") / "real.duckdb"
    with store.connect(path) as con:
        ingest(con, [REAL / "claude-code-viewer", REAL / "codex-cli"])
    return path


def _all_fit(db: Path, commands, columns: int) -> None:
    with ThreadPoolExecutor(max_workers=2) as pool:  # CI has two cores; each run is a whole process
        outputs = list(pool.map(lambda c: (c[0], in_pty([*c[0], "--db", str(db)], columns, c[1])), commands))
    wide = {" ".join(args): _too_wide(lines, columns) for args, lines in outputs}
    assert not any(wide.values()), {k: v for k, v in wide.items() if v}
    for args, lines in outputs:
        assert len(lines) > 1, args  # it printed its answer, not nothing


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_every_command_fits_the_terminal_on_the_sample_night(night_db, columns):
    _all_fit(night_db, COMMANDS, columns)


def test_every_command_fits_80_columns_on_real_sessions(real_db):
    _all_fit(real_db, REAL_COMMANDS, 80)


def test_a_narrow_terminal_shortens_ids_and_names_what_it_left_out(real_db):
    lines = in_pty(["runs", "--db", str(real_db)], 80)
    text = "\n".join(lines)
    assert "fe5e1c67…" in text and "fe5e1c67-53e7-4862-81ae-d0e013e3270b" not in text
    assert "not shown:" in text and "--wide shows every column" in text
    # the prefix shown is one `show` takes
    assert any("fe5e1c67-53e7-4862-81ae-d0e013e3270b" in line for line in in_pty(["show", "fe5e1c67", "--db", str(real_db)], 200))
    wide = in_pty(["runs", "--db", str(real_db), "--wide"], 80)
    assert any("fe5e1c67-53e7-4862-81ae-d0e013e3270b" in line for line in wide)  # --wide: every column, whole


def test_check_collapses_what_it_could_not_judge_to_one_line_a_format(real_db):
    lines = in_pty(["check", "--db", str(real_db)], 200, (1,))
    text = "\n".join(lines)
    assert sum("format does not record" in line for line in lines) == 2  # claude_code and codex, one line each
    assert "need facts the claude_code format does not record (5 run(s))" in text
    assert "budgets_enforced:" not in text  # no line a check
    verbose = "\n".join(in_pty(["check", "--db", str(real_db), "-v"], 200, (1,)))
    assert "budgets_enforced: not judged for 7 codex runs: the codex format records no budgets" in verbose


def test_a_table_that_cannot_fit_says_so(tmp_path, night_db):
    shutil.copy(night_db, tmp_path / "n.duckdb")
    figures = ", ".join(f"{10**12 + i} as c{i}" for i in range(12))  # whole numbers never break
    lines = in_pty(["sql", f"select {figures}", "--db", str(tmp_path / "n.duckdb")], 80)
    assert any("too wide for 80 columns" in line and "--csv" in line for line in lines), lines
