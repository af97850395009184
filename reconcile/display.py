"""Showing a transcript's text as it is: characters a terminal or a chart would act on become visible.

Transcripts are evidence. A tool result may hold an escape sequence that recolours a terminal, a
bell, a carriage return that overwrites what came before it, or the bidirectional overrides that
show text in another order than its bytes ("Trojan Source"). ``literal`` writes each of them as an
escape (``\\x1b``, ``\\u202e``) so what is printed is what was recorded, readable and inert.
"""

from __future__ import annotations

import re

# C0 and C1 controls bar newline and tab, DEL, the directional marks, embeddings, overrides and isolates.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def literal(text: str) -> str:
    """``text`` with every character a terminal would act on instead of show written as an escape."""
    return _HIDDEN.sub(_escape, text)


def label(text: object, width: int = 60) -> str:
    """A short, single-line, literal form of ``text`` for a chart label or legend (secrets already redacted)."""
    shown = literal(str(text).replace("\n", " ").replace("\t", " "))
    return shown if len(shown) <= width else shown[: width - 1] + "…"
