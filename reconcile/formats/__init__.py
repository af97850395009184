"""The formats ``reconcile ingest`` reads, and how they register.

Each built-in format is one module here (with its staging SQL beside it) exposing a format
object; the provider exports are ``reconcile.formats.provider``. A format from another package
registers the same way the built-ins are loaded — by naming its object — through the
``reconcile.formats`` entry-point group::

    [project.entry-points."reconcile.formats"]
    my_agent = "my_package.reconcile_format:FORMAT"

Files are recognised by content: the formats' sniffers are asked in registration order
(built-ins first) and the first that says yes wins.

``FORMATS`` is loaded on first use (importing every format and the ingest's modules costs a
command that never reads a file, ``reconcile runs`` say, a tenth of a second at start-up).
"""

from __future__ import annotations

import importlib
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from reconcile.errors import BadInput

if TYPE_CHECKING:
    from reconcile.formats.base import Format, TranscriptFormat

ENTRY_POINT_GROUP = "reconcile.formats"

BUILTIN = [  # the order is the order sniffers are asked
    "reconcile.formats.native:FORMAT",
    "reconcile.formats.claude_code:FORMAT",
    "reconcile.formats.codex:FORMAT",
    "reconcile.formats.gemini:CHAT",
    "reconcile.formats.gemini:JSONL",
    "reconcile.formats.langfuse:FORMAT",
    "reconcile.formats.inspect_ai:FORMAT",
    "reconcile.formats.mini_swe_agent:FORMAT",  # before SWE-agent: a trajectory's config names an "environment"
    "reconcile.formats.swe_agent:FORMAT",
    "reconcile.formats.openhands:FORMAT",
    "reconcile.formats.provider:OPENAI_USAGE",
    "reconcile.formats.provider:OPENAI_COSTS",
    "reconcile.formats.provider:ANTHROPIC_USAGE",
    "reconcile.formats.provider:ANTHROPIC_COSTS",
    "reconcile.formats.otel:FORMAT",
]


def _load(reference: str) -> object:
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def register(found: dict[str, Format], candidate: object, origin: str) -> None:
    """Add a format object (or a Format subclass, instantiated) to ``found``, refusing a clash."""
    from reconcile.formats.base import Format

    fmt = candidate() if isinstance(candidate, type) else candidate
    if not isinstance(fmt, Format):
        raise BadInput(f"{origin}: {candidate!r} is not a reconcile format (a reconcile.formats.base.Format)")
    if fmt.name in found:
        raise BadInput(f"{origin}: a format named {fmt.name!r} is already registered; give yours another name")
    found[fmt.name] = fmt


def load_formats() -> dict[str, Format]:
    """Built-ins, then every ``reconcile.formats`` entry point of the installed packages."""
    found: dict[str, Format] = {}
    for reference in BUILTIN:
        register(found, _load(reference), reference)
    for point in entry_points(group=ENTRY_POINT_GROUP):
        origin = f"entry point {point.name!r} of {point.dist.name if point.dist else 'an installed package'}"
        try:
            candidate = point.load()
        except Exception as exc:  # a third party's import error: say whose it is
            raise BadInput(f"{origin} ({point.value}) failed to load: {type(exc).__name__}: {exc}") from exc
        register(found, candidate, origin)
    return found


def __getattr__(name: str) -> object:
    """``FORMATS`` (every registered format, by name), loaded once on first use; the base classes."""
    if name == "FORMATS":
        globals()["FORMATS"] = formats = load_formats()
        return formats
    if name in ("Format", "TranscriptFormat"):
        from reconcile.formats import base

        return getattr(base, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def transcript_formats() -> list[TranscriptFormat]:
    from reconcile.formats.base import TranscriptFormat

    formats = globals().get("FORMATS") or __getattr__("FORMATS")
    return [f for f in formats.values() if isinstance(f, TranscriptFormat)]


def format_fact_rows() -> list[list]:
    """What each registered transcript format records: ``format_facts`` rows, one per (format, fact).

    The ingest writes them into the store (``ingest.bookkeeping.record_format_facts``) and a dataset
    is opened with them: the store's views only read the table, so they need not know the formats.
    """
    from reconcile.store.facts import RUN_FACT_NAMES

    return [[fmt.name, fact, fact in fmt.facts, fmt.facts.get(fact), fact in fmt.inferred]
            for fmt in transcript_formats() for fact in RUN_FACT_NAMES]


__all__ = ["FORMATS", "Format", "TranscriptFormat", "format_fact_rows", "load_formats", "register",
           "transcript_formats"]
