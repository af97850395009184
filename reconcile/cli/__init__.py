"""The ``reconcile`` command line: parse, call one library function, print.

``main`` is the only place errors become messages and exit codes (``reconcile.errors.ExitCode``).
"""

from __future__ import annotations

import os
import sys

import typer
from rich.console import Console

from ..errors import ExitCode, ReconcileError

app = typer.Typer(
    name="reconcile",
    help="Morning-after reconciliation of LLM agent runs: ingest journals, inspect runs, query the store.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)

from . import budgets_cmd, check_cmd, config_cmd, cost_cmd, ingest_cmd, inspect_cmd, report_cmd  # noqa: E402  (they register commands)

__all__ = ["app", "main", "budgets_cmd", "check_cmd", "config_cmd", "cost_cmd", "ingest_cmd", "inspect_cmd", "report_cmd"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns (and exits with) the exit code.

    Typer runs in standalone mode, so usage errors print their usage line and exit 2 on their own;
    commands choose their exit code with ``typer.Exit``.
    """
    errors = Console(stderr=True, highlight=False, soft_wrap=True)
    try:
        app(args=argv, prog_name="reconcile")
        code = ExitCode.OK
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (ExitCode.OK if exc.code is None else ExitCode.BAD_INPUT)
    except ReconcileError as exc:
        errors.print(f"error: {exc}", markup=False)
        code = exc.exit_code
    except Exception as exc:  # a bug: say so plainly, keep the traceback for those who ask
        if os.environ.get("RECONCILE_DEBUG"):
            raise
        errors.print(f"internal error: {type(exc).__name__}: {exc}\n"
                     "This is a bug in reconcile. Re-run with RECONCILE_DEBUG=1 for the traceback.", markup=False)
        code = ExitCode.INTERNAL
    if argv is None:
        sys.exit(int(code))
    return int(code)
