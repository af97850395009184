"""Every regular expression applied to user data runs in linear time (issue 47, item 13).

Python's ``re`` backtracks: a pattern with two overlapping quantifiers side by side (``\\S*[-/]\\S*``,
``\\s*(?:unit)?\\s*``), or one that scans forwards from every character of a long word, takes time quadratic in
the input. A hostile transcript then hangs a report: a 1 MB tool name kept ``reconcile report morning`` busy
for minutes. (DuckDB's regular expressions are RE2, linear by construction.)

Each case feeds 1 MB inputs built on the characters its pattern's quantifiers overlap on. No wall-clock
figure is asserted: each case runs in a subprocess with a timeout far above what linear code needs (under a
second an input) and far below what the quadratic patterns took (from six minutes to hours an input), so a
noisy machine cannot make it flake.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from journals import StepClock
from reconcile.checks.loader import parse_check
from reconcile.journal import Journal
from reconcile.redact import MASK, redact
from reconcile.reports.reporting import _words
from reconcile.store.status import map_stop_reason, named_limit

pytestmark = pytest.mark.slow  # a minute's work or a subprocess-heavy scenario: CI runs it (pytest -m slow); the README's command leaves it out

SECONDS_AN_INPUT = 10  # linear code needs under 1; the quadratic patterns needed from six minutes to hours
M = 10**6

# Each case: what to import, the call applied to each input (named `text`), the inputs as Python expressions.
CASES = [
    pytest.param(
        "from reconcile.reports.reporting import _words", "_words(text)",
        ["'x' * M", "'-' * M", "'a/' * (M // 2)", "' ' * M + 'x'", "'x' * M + ' a-b'"], id="report words filter"),
    pytest.param(
        "from reconcile.redact import redact", "redact(text)",
        ["'x' * M", "'-' * M", "'_' * M", "'a-' * (M // 2)", "'a_' * (M // 2)", "'a.' * (M // 2)",
         "'eyJ' * (M // 3)", "'eyJaaaaaaaa.' * (M // 12)", "'a://' * (M // 4)", "'a' * M + '://u'",
         "'token' * (M // 5)", "'token=' + ' ' * M + 'x'", "'x_token' * (M // 7)", "'bearer' + ' ' * M + 'x'",
         "'-----BEGIN PRIVATE KEY-----' + '-----END ' * (M // 9)", "'sk-' * (M // 3) + ' '", "' ' * M + 'x'"],
        id="redaction"),
    pytest.param(
        "from reconcile.store.status import map_stop_reason, named_limit, map_run_end",
        "(map_stop_reason(text), named_limit(text), map_run_end(text, text))",
        ["'x' * M", "'1' * M", "'step limit (1' + ' ' * M + 'x'", "'token limit (1' + ' ' * M + 'x'",
         "'cost limit ($1' + ' ' * M + 'x'", "'time limit (1' + ' ' * M + 'x'", "'step limit (' + ' ' * M + 'x'",
         "'token limit (' + '1,' * (M // 2) + 'x'", "'submitted (' + ')' * M + 'x'"], id="stop reasons"),
    pytest.param(
        "from reconcile.checks.loader import _HEADER_LINE", "_HEADER_LINE.match(text)",
        ["'-- invariant: a' + ' ' * M + 'b'", "'-- invariant:' + ' ' * M + 'b'", "'--' + ' ' * M + 'x'"],
        id="check header"),
    pytest.param(
        "from reconcile.prices.pricing import model_candidates", "model_candidates(None, text)",
        ["'@' * M + '\\nx'", "'x' * M", "'-0' * (M // 2) + 'x'", "'a/' * (M // 2)"], id="model ids"),
    pytest.param(
        "from reconcile.engines.spark import _FAILED_READ", "_FAILED_READ.search(text)",
        ["'[FAILED_READ_FILE' * (M // 17)", "'[FAILED_READ_FILE]' * (M // 18)",
         "'[FAILED_READ_FILE] reading file ' + 'a.' * (M // 2)"], id="spark read errors"),
    pytest.param(  # the U-flag pattern of _NOT_PORTABLE_REGEX: "[a-zA-Z]*U[a-zA-Z]*" splits a run of letters every way
        "from reconcile.config.settings import validate_setting", "validate_setting('tool_error_pattern', text, 'test')",
        ["'[(?' + 'aU' * (M // 2) + ']'"], id="regex settings"),
]


def _finishes(setup: str, call: str, inputs: list[str]) -> None:
    """Apply ``call`` to each input in a fresh interpreter; fail if they do not finish in time."""
    script = textwrap.dedent(f"""\
        import sys
        {setup}
        M = {M}
        for number, expression in enumerate({inputs!r}):
            print(number, expression, flush=True)
            text = eval(expression)
            {call}
        """)
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=SECONDS_AN_INPUT * len(inputs))
    except subprocess.TimeoutExpired as exc:
        printed = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""  # bytes, even with text
        pytest.fail(f"not finished in {exc.timeout} s; the input running was: {printed.strip().splitlines()[-1:]}")
    assert done.returncode == 0, done.stderr[-2000:]


@pytest.mark.parametrize("setup, call, inputs", CASES)
def test_hostile_inputs_finish(setup, call, inputs):
    _finishes(setup, call, inputs)


# The patterns keep their meaning on ordinary input.

def test_words_keeps_hyphenated_and_slashed_tokens_whole():
    assert str(_words("claude-haiku-4-5 ran a/b.py on 2026-11-28 fine")) == (
        '<span class="nw">claude-haiku-4-5</span> ran <span class="nw">a/b.py</span> on '
        '<span class="nw">2026-11-28</span> fine')
    assert str(_words("  two  spaces\tand-a tab ")) == '  two  spaces\t<span class="nw">and-a</span> tab '


@pytest.mark.parametrize("text, shown", [
    ("x eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U y",
     f"x {MASK} y"),
    ("id_eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmN", f"id_{MASK}"),  # glued: kept before it
    ("eyJx-eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx.dozjgNryP4J3", f"{MASK}"),  # the word's first eyJ is the one masked
    ("eyJshort.eyJzdWIiOiIxMjM0.dozjgNryP4J3jV", "eyJshort.eyJzdWIiOiIxMjM0.dozjgNryP4J3jV"),
    ("postgres://admin:s3cr3t@db:5432/x", f"postgres://admin:{MASK}@db:5432/x"),
    ("see git+ssh://me:pw@host and https://x.org/a", f"see git+ssh://me:{MASK}@host and https://x.org/a"),
    ("AWS_SECRET_ACCESS_KEY=abcdef123", f"AWS_SECRET_ACCESS_KEY={MASK}"),
    ("-x_password: hunter22", f"-x_password: {MASK}"),
    ("max_tokens=3000000 output_tokens: 5", "max_tokens=3000000 output_tokens: 5"),
])
def test_redaction_means_what_it_meant(text, shown):
    assert redact(text) == shown


@pytest.mark.parametrize("raw, status, limit", [
    ("step limit (20)", "budget_exceeded", "steps"), ("step limit ( 20 steps  )", "budget_exceeded", "steps"),
    ("token limit (200,000 tokens)", "budget_exceeded", "tokens"), ("token limit (200,000 )", "budget_exceeded", "tokens"),
    ("cost limit ($ 2.00 usd )", "budget_exceeded", "cost_micros"), ("cost limit (2.00usd)", "budget_exceeded", "cost_micros"),
    ("time limit (300.0s)", "timed_out", "wall_seconds"), ("time limit (300 seconds )", "timed_out", "wall_seconds"),
    ("step limit (20 x)", None, None), ("cost limit ($2.00 usd usd)", None, None),
])
def test_stop_reasons_with_numbers_and_units_map_as_before(raw, status, limit):
    assert (map_stop_reason(raw), named_limit(raw)) == (status, limit)


def test_a_check_header_value_is_stripped(tmp_path):
    path = tmp_path / "spaced.sql"
    path.write_text("-- name: spaced\n-- invariant:   every run ends   \n-- severity: warn \n"
                    "-- remedy:\tnothing\t\nselect 1 where false\n")
    check = parse_check(path)
    assert (check.invariant, check.severity, check.remedy) == ("every run ends", "warn", "nothing")


def test_a_hostile_journal_reaches_the_morning_report(tmp_path):
    """A native run whose tool name, error text and stop reason are 1 MB words is ingested and reported.

    The tool is missing from the run's catalogue, so ``known_tools_only`` finds the run and the report shows
    it whole: the finding's detail and the step's tool name (through the ``words`` filter), the error text and
    the stop reason (through the redaction every printed value passes)."""
    tool, error, reason = "x" * M, "a_" * (M // 2), "eyJ" * (M // 3)
    folder = tmp_path / "night"
    folder.mkdir()
    with Journal(folder / "hostile.jsonl", clock=StepClock()) as journal:
        run = journal.start_run("hostile", agent="red-team", model="claude-sonnet-4-5", provider="anthropic",
                                tools=[{"name": "read_file"}])
        step = run.model_step(usage={"input_uncached": 100, "output": 10}, tool_calls=[(tool, {"path": "a.py"})])
        run.tool_step(step.calls[0], status="error", result="no such tool", error=error)
        run.end(reason, status="failed")
    db, out = tmp_path / "night.duckdb", tmp_path / "morning.html"
    cli = "import sys; from reconcile.cli import main; sys.exit(main(sys.argv[1:]))"
    ingested = subprocess.run([sys.executable, "-c", cli, "ingest", str(folder), "--db", str(db)],
                              capture_output=True, text=True, timeout=120)
    assert ingested.returncode == 0, ingested.stderr[-2000:]
    reported = subprocess.run([sys.executable, "-c", cli, "report", "morning", "--out", str(out), "--db", str(db)],
                              capture_output=True, text=True, timeout=120)
    assert reported.returncode == 0, reported.stderr[-2000:]
    html = out.read_text()
    assert 'id="run-hostile"' in html and html.count(tool) >= 2 and error in html and reason in html
