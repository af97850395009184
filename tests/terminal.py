"""Running ``reconcile`` in a real pseudo-terminal of a given width, as a person's terminal runs it."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios

ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def in_pty(args: list[str], columns: int, codes: tuple[int, ...] = (0, 1), cwd: str | None = None) -> list[str]:
    """``python -m reconcile.cli ARGS`` run in a pseudo-terminal ``columns`` wide; its lines, escapes removed."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    process = subprocess.Popen([sys.executable, "-m", "reconcile.cli", *args], stdin=slave, stdout=slave,
                               stderr=slave, env={**env, "TERM": "xterm"}, cwd=cwd)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    code = process.wait(timeout=120)
    lines = ESCAPES.sub("", out.decode()).replace("\r", "").splitlines()
    assert code in codes, (args, code, "\n".join(lines))
    return lines


def too_wide(lines: list[str], columns: int) -> list[str]:
    """The lines wider than the terminal, unless the output says its table cannot fit (and where to read it whole)."""
    if any("too wide for" in line and ("--wide" in line or "--csv" in line) for line in lines):
        return []
    return [line for line in lines if len(line) > columns]
