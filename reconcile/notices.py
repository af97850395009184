"""What the library tells while it works, for the interface in front of it to show.

A module of its own, importing nothing, so the command line can listen before it knows which
command will run (and without importing the store, DuckDB and all).
"""

from __future__ import annotations

from collections.abc import Callable

# Told once when a store open has to wait for another process (the CLI prints it); None: wait silently.
on_wait: Callable[[str], None] | None = None
