"""Locating the SQL checks and report templates shipped with the package.

In a wheel they live inside the package (``reconcile/queries``, ``reconcile/reports/templates``,
beside the reports package's modules); in a source checkout they live at the top of the
repository (``queries/``, ``reports/``), beside the package.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def _shipped(name: str, inside_as: str | None = None) -> Path:
    inside = Path(str(resources.files("reconcile"))) / (inside_as or name)
    if inside.is_dir():
        return inside
    beside = Path(__file__).resolve().parent.parent / name
    if beside.is_dir():
        return beside
    raise FileNotFoundError(f"reconcile's {name}/ folder is missing from this installation ({inside})")


def queries_dir() -> Path:
    """The built-in checks (``queries/*.sql``)."""
    return _shipped("queries")


def reports_dir() -> Path:
    """The report templates (``reports/*.j2``)."""
    return _shipped("reports", inside_as="reports/templates")
