"""The ``reconcile`` command line: parse, call one library function, print.

``main`` is the only place errors become messages and exit codes (``reconcile.errors.ExitCode``).
Commands load when asked for (``reconcile.cli.root.COMMAND_MODULES``): nothing here imports DuckDB,
rich or a command module, so ``--version`` and ``--help`` of one command start fast.
"""

from __future__ import annotations

import errno
import os
import sys

import typer

from reconcile import notices
from reconcile.errors import ExitCode, Interrupted, ReconcileError, is_interrupt
from reconcile.cli.help import plain_metavars
from reconcile.cli.root import app, load_commands

__all__ = ["app", "load_commands", "main"]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns (and exits with) the exit code.

    Typer runs in standalone mode, so usage errors print their usage line and exit 2 on their own;
    commands choose their exit code with ``typer.Exit``.
    """
    notices.on_wait = lambda message: _errors().print(f"note: {message}")
    try:
        command = typer.main.get_command(app)
        plain_metavars(command)
        command.main(args=argv, prog_name="reconcile")
        code = ExitCode.OK
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (ExitCode.OK if exc.code is None else ExitCode.BAD_INPUT)
        if code == ExitCode.INTERRUPTED:  # Typer's exit for a KeyboardInterrupt, silent: say what was kept
            _errors().print(str(Interrupted()))
    except ReconcileError as exc:
        _errors().print(f"{exc}" if isinstance(exc, Interrupted) else f"error: {exc}")
        code = exc.exit_code
    except KeyboardInterrupt:  # Ctrl-C outside a load (which names its file): one line, never a traceback
        _errors().print(str(Interrupted()))
        code = ExitCode.INTERRUPTED
    except Exception as exc:  # a bug: say so plainly, keep the traceback for those who ask
        if os.environ.get("RECONCILE_DEBUG"):
            raise
        if is_interrupt(exc):  # DuckDB stops its query on Ctrl-C and raises its own error instead
            _errors().print(str(Interrupted()))
            return _exit(ExitCode.INTERRUPTED, argv)
        machine = _machine_failure(exc)
        _errors().print(f"error: {machine}" if machine else f"internal error: {type(exc).__name__}: {exc}\n"
                        "This is a bug in reconcile. Re-run with RECONCILE_DEBUG=1 for the traceback.")
        code = ExitCode.BAD_INPUT if machine else ExitCode.INTERNAL
    return _exit(code, argv)


def _errors():
    from reconcile.cli.render import LiteralConsole

    return LiteralConsole(stderr=True)


def _exit(code: int, argv: list[str] | None) -> int:
    if argv is None:
        sys.exit(int(code))
    return int(code)


_MACHINE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG, errno.EIO}


def _machine_failure(exc: Exception) -> str | None:
    """The message for a failure of the machine (full disk, permissions, memory) that reached here, else None.

    Library code turns the ones it expects into named errors; this is the net under the rest, so a
    full disk is never reported as a bug in reconcile.
    """
    duckdb = sys.modules.get("duckdb")  # an error of DuckDB's comes from a command that imported it
    if duckdb is not None:
        from reconcile import durability

        if isinstance(exc, (duckdb.IOException, duckdb.OutOfMemoryException)) or (
                isinstance(exc, duckdb.Error) and durability.refused_by_disk(exc)):  # a commit the disk refused
            return (f"the store could not be read or written: {durability.first_line(exc)}. Free disk space or "
                    "memory, then run the command again.")
    if isinstance(exc, OSError) and exc.errno in _MACHINE_ERRNOS:
        return (f"{exc.strerror}{': ' + str(exc.filename) if exc.filename else ''}. Free space or fix the "
                "permissions, then run the command again.")
    return None
