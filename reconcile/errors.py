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
