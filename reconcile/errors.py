"""Named errors and the exit codes they map to.

Library code raises these; only ``reconcile.cli`` turns them into a message and an exit code,
so the mapping lives in one place.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes of every ``reconcile`` command."""

    OK = 0  #: the command did its job and found nothing at error severity
    FINDINGS = 1  #: a check found a violation at error severity
    BAD_INPUT = 2  #: bad input or usage: unreadable file, unknown format, bad argument
    INTERNAL = 3  #: a bug in reconcile itself
    INTERRUPTED = 130  #: stopped by Ctrl-C (SIGINT), as a shell reports a process an interrupt ended


class ReconcileError(Exception):
    """Base class: a problem the user can act on. ``str()`` says what, the value and the fix."""

    exit_code = ExitCode.BAD_INPUT


class BadInput(ReconcileError):
    """Input the tool cannot use: a missing path, a malformed argument, an unreadable file."""


class UnknownFormat(BadInput):
    """A file named explicitly whose format is not one the tool reads."""


class StoreError(ReconcileError):
    """The store cannot be opened or is in a state this version cannot use."""


class StoreBusy(StoreError):
    """Another process held the store for longer than this one would wait (``reconcile watch`` tries again)."""


class NoRuns(BadInput):
    """The store, or the window asked for, holds no runs: nothing to check or report is not a pass."""


class QueryError(BadInput):
    """A user's SQL failed, or tried to change the store through a read-only command."""


class RunNotFound(BadInput):
    """No run matches the id (or id prefix) the user gave."""


class Interrupted(ReconcileError):
    """Ctrl-C stopped the command. ``str()`` says what was kept: work is saved a file (or a stage) at a time, in
    one transaction, so what was under way is not saved and what was saved before it is whole."""

    exit_code = ExitCode.INTERRUPTED

    def __init__(self, what: str | None = None):
        super().__init__(
            f"interrupted: nothing of {what} was saved; what was saved before it is kept and the store is whole; "
            "run the command again to do the rest" if what else
            "interrupted: nothing under way was saved; the store is as the last finished step left it; run the "
            "command again to do the rest")


def is_interrupt(exc: BaseException) -> bool:
    """True for Ctrl-C however it surfaced: Python's KeyboardInterrupt, or DuckDB stopping the query it ran (its
    ``InterruptException``, or the ``RuntimeError("Query interrupted")`` its Python client raises)."""
    if isinstance(exc, KeyboardInterrupt):
        return True
    if type(exc).__name__ == "InterruptException":
        return True
    return isinstance(exc, RuntimeError) and str(exc).startswith("Query interrupted")


class InternalError(ReconcileError):
    """Something reconcile should have handled did not work: a bug to report."""

    exit_code = ExitCode.INTERNAL


def did_you_mean(value: str, choices: Iterable[str]) -> str:
    """`` Did you mean 'swe_agent'?`` for the closest choice (underscores and dashes aside), else ``""``."""
    options = list(choices)
    plain = {option.replace("_", "").replace("-", "").lower(): option for option in options}
    wanted = value.replace("_", "").replace("-", "").lower()
    close = [plain[m] for m in difflib.get_close_matches(wanted, plain, n=1, cutoff=0.75)]
    return f" Did you mean {close[0]!r}?" if close else ""
