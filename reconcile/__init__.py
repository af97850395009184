"""reconcile: morning-after reconciliation of LLM agent runs.

Transcripts (what each step did), the harness ledger (what the harness counted) and the
provider bill (what was charged) land in one DuckDB store; checks, costs and reports read it.
"""

__version__ = "0.1.0"
