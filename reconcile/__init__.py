"""reconcile: morning-after reconciliation of LLM agent runs.

Transcripts (what each step did), the harness ledger (what the harness counted) and the
provider bill (what was charged) land in one DuckDB store; checks, costs and reports read it.
"""

from reconcile.version import __version__

__all__ = ["__version__", "connect", "open_dataset"]


def connect(path="reconcile.duckdb"):
    """Open a store as polars DataFrames (see ``reconcile.api``): ``reconcile.connect("night.duckdb").runs()``."""
    from reconcile.api import connect as _connect

    return _connect(path)


def open_dataset(folder, engine="duckdb", master=None, remote=None):
    """Open an export (``reconcile export --to DIR``) the same way, in DuckDB or on Spark (``engine="spark"``)."""
    from reconcile.api import open_dataset as _open

    return _open(folder, engine=engine, master=master, remote=remote)
