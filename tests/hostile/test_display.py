"""Terminal output never interprets a transcript: markup, emoji codes and control characters print as they are.

A run whose id, agent, tool name, error and result hold rich markup (``[/INST]``, ``[bold]``),
emoji codes (``:x:``), Elixir's ``@spec render([map()], …)`` and terminal escapes is printed by
``show``, ``show --step``, ``sql``, ``check`` and ``summary``; each printable string must appear
byte for byte, and each control character as its visible escape (never raw).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from journals import StepClock  # noqa: E402
from reconcile import store  # noqa: E402
from reconcile.cli import main  # noqa: E402
from reconcile.display import literal  # noqa: E402
from reconcile.ingest.driver import ingest  # noqa: E402
from reconcile.journal import Journal  # noqa: E402

RUN = "[red]r1:x:"
AGENT = "[b]a[/b]:x:"
TOOL = "[/INST]:tada:"
SPEC = "@spec render([map()], opts)"
ERROR = "[bold]boom[/bold] :x: [/]"
ESCAPES = "red\x1b[31mX\x1b[0m bell\x07 back\rover \u202eevil zero\u200bwidth\ufeff \u2066iso\u2069 tag\U000e0041"
RAW = ("\x1b", "\x07", "\r", "\u202e", "\u200b", "\ufeff", "\u2066", "\u2069", "\U000e0041")
PRINTABLE = [RUN, AGENT, TOOL, SPEC, ERROR]


@pytest.fixture(scope="module")
def hostile_db(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("display")
    journal_path = folder / "hostile.jsonl"
    with Journal(journal_path, clock=StepClock()) as journal:
        run = journal.start_run(RUN, agent=AGENT, task_class="t", model="claude-sonnet-4-5", provider="anthropic",
                                tools=[{"name": "read_file"}], catalogue_tokens=10)
        step = run.model_step(model="claude-sonnet-4-5", ms=10, usage={"input_uncached": 10, "output": 5},
                              tool_calls=[(TOOL, {"spec": SPEC})], finish_reason="tool_use")
        run.tool_step(step.calls[0], result=f"{SPEC} {ESCAPES}", ms=3, status="error", error=ERROR)
        run.model_step(model="claude-sonnet-4-5", ms=10, usage={"input_uncached": 10, "output": 5}, text=SPEC, final=True)
        run.end("model_finished", final_output=SPEC)
    db = folder / "hostile.duckdb"
    with store.connect(db) as con:
        ingest(con, [journal_path])
    return db


def _run(capsys, *args) -> str:
    capsys.readouterr()
    code = main([*args])
    out = capsys.readouterr().out
    assert code in (0, 1), out
    return out


@pytest.mark.parametrize("args,expected", [
    (["show", RUN], [RUN, AGENT, ERROR]),
    (["show", RUN, "--step", "1"], [RUN, TOOL, ERROR, SPEC, *literal(ESCAPES).split()]),
    (["sql", "select s.run_id, s.agent, s.tool_name, s.error, st.result_preview from step_view s "
             "join steps st using (run_id, idx) where s.idx = 1"], [RUN, AGENT, TOOL, ERROR, *literal(ESCAPES).split()]),
    (["check"], [RUN, TOOL]),
    (["summary"], [AGENT]),
])
def test_hostile_strings_print_literally(hostile_db, capsys, args, expected):
    out = _run(capsys, *args, "--db", str(hostile_db))
    for text in expected:
        assert text in out, (text, out)
    for raw in RAW:
        assert raw not in out


def test_escapes_are_shown_visibly():
    assert literal(ESCAPES) == ("red\\x1b[31mX\\x1b[0m bell\\x07 back\\x0dover \\u202eevil zero\\u200bwidth\\ufeff "
                                "\\u2066iso\\u2069 tag\\U000e0041")
    assert literal("\u061c\u200e\u200f soft\xadhyphen line\u2028sep private\ue000") == \
        "\\u061c\\u200e\\u200f soft\\xadhyphen line\\u2028sep private\\ue000"
    assert literal("tab\tand\nnewline stay") == "tab\tand\nnewline stay"


def test_error_messages_print_literally(hostile_db, capsys):
    capsys.readouterr()
    code = main(["show", "[/nope]:x:\x1b[2J", "--db", str(hostile_db)])
    err = capsys.readouterr().err
    assert code == 2
    assert "[/nope]:x:\\x1b[2J" in err and "\x1b" not in err


def test_a_huge_value_is_shortened_in_a_table_and_whole_in_json(hostile_db, capsys):
    query = "select repeat('x', 5000000) || 'END' as big"
    shown = _run(capsys, "sql", query, "--db", str(hostile_db))
    assert "END" not in shown and "(4,998,003 more characters; --json shows them all)" in shown
    whole = _run(capsys, "sql", query, "--json", "--db", str(hostile_db))
    assert whole.count("x") == 5_000_000 and "END" in whole


def test_every_invisible_or_directional_character_is_escaped():
    """Controls but tab and newline, format characters (Cf), surrogates, private use, line and paragraph
    separators: all escaped, per this Python's Unicode tables; nothing else assigned is."""
    import unicodedata

    from reconcile.display import _HIDDEN

    hidden = {"Cc", "Cf", "Cs", "Co", "Zl", "Zp"}
    for code in range(0x110000):
        char = chr(code)
        category = unicodedata.category(char)
        escaped = bool(_HIDDEN.fullmatch(char))
        if category in hidden and char not in "\t\n":
            assert escaped and literal(char) == (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000
                                                 else f"\\U{code:08x}"), hex(code)
        elif category != "Cn":  # a character this Python's tables do not know yet may be a newer Cf
            assert not escaped, (hex(code), category)
