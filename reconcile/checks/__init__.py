"""Invariant checks: SQL files in ``queries/`` (and ``--checks-dir``) over the canonical store."""

from reconcile.checks.junit import write_junit
from reconcile.checks.loader import Check, CheckDefinitionError, load_checks, parse_check
from reconcile.checks.runner import CheckReport, Finding, Scope, run_checks, select_checks

__all__ = ["Check", "CheckDefinitionError", "CheckReport", "Finding", "Scope", "load_checks", "parse_check",
           "run_checks", "select_checks", "write_junit"]
