"""reconcile: morning-after reconciliation of LLM agent runs.

Transcripts (what each step did), the harness ledger (what the harness counted) and the
provider bill (what was charged) land in one DuckDB store; checks, costs and reports read it.
"""

__version__ = "0.1.0"


def connect(path="reconcile.duckdb"):
    """Open a store as polars DataFrames (see ``reconcile.api``): ``reconcile.connect("night.duckdb").runs()``."""
    from .api import connect as _connect

    return _connect(path)
