"""The commands that write (a store, a report, an export) fit the terminal too (issue 50): each width on its own copy
of the sample night, in a real pty. Apart from test_terminal_width.py so the two halves can run on both workers."""

from __future__ import annotations

import shutil

import pytest

from terminal import in_pty, too_wide

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

# the commands that write (a store, a report, an export): each on its own copy of the night, at each width
WRITERS = [(["ingest", "{sample}"], (0,)), (["report", "finance", "--out", "{tmp}/f.html"], (0,)),
           (["report", "morning", "--out", "{tmp}/m.html"], (0,)), (["export", "--to", "{tmp}/export"], (0,)),
           (["morning", "{sample}", "--out", "{tmp}/out"], (1,)), (["prices", "--help"], (0,)),
           (["watch", "--help"], (0,)), (["signals", "--help"], (0,))]


@pytest.mark.parametrize("columns", [80, 120, 200])
def test_the_commands_that_write_fit_the_terminal_too(night_db, tmp_path, columns):
    from conftest import SAMPLE_RUNS

    db = tmp_path / "night.duckdb"
    shutil.copy(night_db, db)
    commands = [([part.format(sample=SAMPLE_RUNS, tmp=tmp_path) for part in args], codes) for args, codes in WRITERS]
    for args, codes in commands:  # one at a time: they write the same store
        lines = in_pty([*args, "--db", str(db)] if "--help" not in args else args, columns, codes)
        assert not too_wide(lines, columns), (args, [line for line in lines if len(line) > columns])
