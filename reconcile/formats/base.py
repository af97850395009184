"""The landing contract: what a format module declares, and what the shared landing does for it.

A transcript format is a small class (one module, with its staging SQL beside it as
``<module>.sql``). It owns:

- ``name`` and ``description`` (what ``--format`` takes, and what the error messages call it);
- ``sniff(values, text)``: does a file's head look like this format;
- ``input``: how the file reaches the staging SQL — ``lines`` (typed, validated JSON Lines in
  ``_parsed(file_no, line_no, j)``, the text by line number in ``_lines(file_no, line_no, line)``;
  ``fields`` say what to validate), ``document`` (one JSON
  document per file in ``_doc(file_no, j)``, checked against ``shape_sql``), or ``text`` (the
  file's text in ``_text(file_no, content)``);
- ``facts``: what the format records (see ``reconcile.store.facts``), as ``{fact: how}``; a fact it
  does not list is not recorded, lands as NULL, and checks that need it do not judge its runs.
  ``inferred`` lists facts reconcile derives from the transcript rather than reads from it;
  ``examples`` names, for each recorded fact, a real file under ``tests/fixtures/realdata`` that
  shows it (``docs/formats.md`` prints them, and a test proves each file is there);
- ``zero_buckets``: token buckets the format writes as 0 although its records do not carry them,
  because the provider bills none of that kind (OpenAI bills no cache writes) — each with why. Any
  other bucket a record leaves out is NULL, and the call's cost is unknown;
- ``policy``: check settings the harness documents for itself (e.g. Claude Code's tool-output
  limits), used when neither the run nor the configuration gives one;
- the staging SQL, which turns the input into staged tables (``docs/formats.md`` lists their
  columns): ``_stage_records`` (one decision per line or record), ``_stage_runs``,
  ``_stage_steps``, and optionally ``_stage_calls`` and ``_stage_tools``. Every staged row carries
  the ``file_no`` it came from; files are described by ``_files``.

The shared landing (``reconcile.ingest.landing``) does everything else, once, for every format:
ownership and "already loaded" notes, canonical arguments and idempotency keys, result sizes
estimated from result text, final-answer detection, inserts, accounting and clean-up. A column
the staging SQL leaves out is filled by the landing where it knows how (``is_final``,
``final_output``, result sizes) and is NULL otherwise.

Built-in formats register exactly as a third party's would: a package exposes a format instance
under the ``reconcile.formats`` entry-point group (see ``reconcile.formats.registry``).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from importlib import resources
from typing import ClassVar

import duckdb

from reconcile.ingest.landing import land
from reconcile.ingest.result import FileCounts
from reconcile.ingest.validate import Field
from reconcile.sql_text import string_literal


class Format(ABC):
    """Anything ``reconcile ingest`` can recognise and load."""

    name: ClassVar[str]
    description: ClassVar[str]
    batch: ClassVar[bool] = True  # many files of this format may be loaded by one set of statements

    @abstractmethod
    def sniff(self, values: list[object], text: str) -> bool:
        """Whether a file's head (its first JSON values, and its text) looks like this format."""

    @abstractmethod
    def load(self, con: duckdb.DuckDBPyConnection, sources: list, forced: bool) -> dict[int, FileCounts]:
        """Load ``sources`` (``ingest.files.Source``: path, alias, facts) inside the caller's transaction.

        Readers are given ``source.alias`` (``ingest.files.Aliases``: the file's own path only where DuckDB
        reads it literally), never the user's file name as it was given (a name is data, not a pattern).
        Returns the counts by file number (1, 2, …).
        """


class TranscriptFormat(Format):
    """A format of agent runs: it stages runs, steps and tool calls; the landing does the rest."""

    input: ClassVar[str] = "lines"
    fields: ClassVar[list[Field]] = []  # lines: the typed fields validated on every line
    extra_line_checks: ClassVar[str] = ""  # lines: more ``when … then 'reason'`` branches over ``f``
    extra_line_suspect: ClassVar[str | None] = None  # lines: SQL over ``j``, true where those branches might fire
    shape_sql: ClassVar[str] = "true"  # document: over ``j``; false means the file is another format
    expected: ClassVar[str] = ""  # document: what the shape means, for the error when it is wrong
    facts: ClassVar[Mapping[str, str]] = {}  # fact -> how the format records it
    inferred: ClassVar[frozenset[str]] = frozenset()  # of those, the ones reconcile infers
    examples: ClassVar[Mapping[str, str]] = {}  # fact -> a real file showing it (under tests/fixtures/realdata)
    zero_buckets: ClassVar[Mapping[str, str]] = {}  # bucket column -> why 0 is a fact for this format's provider
    policy: ClassVar[Mapping[str, tuple[str, str]]] = {}  # setting -> (value, where the harness documents it)
    # lines: SQL over ``_stage_runs``, true for a run whose end the file recorded (nothing later changes it); a grown
    # file is then read from its first open run on (``ingest.tail``). None: a grown file is read whole, and ``whole``
    # says why in ``ingest -v`` (for a ``continues`` format: why a file may have no line to go on from).
    settled: ClassVar[str | None] = None
    whole: ClassVar[str | None] = None
    # lines: the staging SQL goes on inside a run still open. It reads ``_files.first_line`` and ``_files.carry``
    # (its state there, JSON), leaves ``_tail_conflicts(file_no, line, reason)`` for what it cannot go on from
    # (the file is then read whole), ``_tail_state(file_no, line, state)`` for where the next read may start, and
    # ``_prior_model(file_no, run_id, idx, main, has_text, asks)`` for the kept model steps of a continued run (the
    # final answer is found among them and the new ones alike).
    continues: ClassVar[bool] = False
    # text: a file that may hold one record per line (OTLP JSON Lines) is read by its tail as a line format is: its
    # staging numbers a tail's lines on from ``_files.first_line``, fills ``_lines`` (their text, for the offsets) and
    # gives ``_tail_spans`` and ``_tail_caps`` itself, and ``_tail_conflicts`` for what it cannot go on from
    tail_text: ClassVar[bool] = False

    def load(self, con: duckdb.DuckDBPyConnection, sources: list, forced: bool) -> dict[int, FileCounts]:
        return land(con, self, sources, forced)

    def staging_sql(self) -> list[str]:
        """The staging statements: ``<module>.sql`` beside the format's module, in file order."""
        module = type(self).__module__
        package, _, stem = module.rpartition(".")
        text = resources.files(package).joinpath(f"{stem}.sql").read_text(encoding="utf-8")
        return [statement for statement in _split_statements(self.render(text)) if statement]

    def render(self, sql: str) -> str:
        """Fill ``{{ name }}`` placeholders from ``sql_values()`` (constants the module owns)."""
        values = self.sql_values()

        def fill(match: re.Match) -> str:
            key = match.group(1)
            if key not in values:
                raise KeyError(f"{type(self).__name__}: the staging SQL asks for {{{{ {key} }}}}, which sql_values() lacks")
            return values[key]

        return re.sub(r"\{\{\s*(\w+)\s*\}\}", fill, sql)

    def sql_values(self) -> dict[str, str]:
        return {}

    def stage(self, con: duckdb.DuckDBPyConnection) -> None:
        """Run the staging SQL. Override to add work the SQL cannot do (rare)."""
        for statement in self.staging_sql():
            con.execute(statement)

    def policy_facts(self) -> set[str]:
        """Facts a documented default of the format supplies (a result bound from its tool-output limits)."""
        return {"result_bound"} if "result_bound_tokens" in self.policy else set()


def _split_statements(sql: str) -> list[str]:
    """Split a script on the semicolons DuckDB's own parser sees (not those inside strings)."""
    return [statement.query.strip() for statement in duckdb.extract_statements(sql)]


def sql_list(values) -> str:
    """A SQL list of string literals, for ``{{ placeholders }}``."""
    return ", ".join(string_literal(v) for v in values)
