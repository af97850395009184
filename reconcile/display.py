"""Showing a transcript's text as it is: characters a terminal or a report would act on, or hide, become visible.

Transcripts are evidence. A tool result may hold an escape sequence that recolours a terminal, a
bell, a carriage return that overwrites what came before it, the bidirectional overrides that
show text in another order than its bytes ("Trojan Source"), or characters that show as nothing
at all (a zero-width space, a word joiner, a byte-order mark, a private-use or tag character).
``literal`` writes each of them as a lowercase escape (``\\x1b``, ``\\u202e``, ``\\U000e0041``) so what is
printed is what was recorded, readable and inert. The terminal (``cli.render.LiteralConsole``), the
HTML reports (the template environment's ``finalize``) and the charts' labels all show text through it.
"""

from __future__ import annotations

import re

# Every control (Unicode category Cc) but newline and tab, which lay text out as they should; every
# format character (Cf: the directional marks, embeddings, overrides and isolates, zero-width
# spaces and joiners, the word joiner and invisible operators, the byte-order mark, soft hyphen,
# interlinear annotation, tags …); the line and paragraph separators (Zl, Zp), which break lines
# where no newline is; surrogates (Cs) and private-use characters (Co), which show as anything or
# nothing. The ranges are Unicode 15.1's; tests/hostile/test_display.py holds them to this
# Python's ``unicodedata``.
HIDDEN_RANGES = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u0600-\u0605\u061c\u06dd\u070f\u0890-\u0891\u08e2\u180e"
    "\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u206f\ud800-\udfff\ue000-\uf8ff\ufeff\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0001\U000e0020-\U000e007f\U000f0000-\U000ffffd\U00100000-\U0010fffd"
)
_HIDDEN = re.compile(f"[{HIDDEN_RANGES}]")


def _escape(match: re.Match) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def literal(text: str) -> str:
    """``text`` with every character a terminal or a browser would act on, or show as nothing, written as an escape."""
    return _HIDDEN.sub(_escape, text)


def label(text: object, width: int = 60) -> str:
    """A short, single-line, literal form of ``text`` for a chart label or legend (secrets already redacted)."""
    shown = literal(str(text).replace("\n", " ").replace("\t", " "))
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def with_article(noun_phrase: str) -> str:
    """``a``/``an`` before a phrase as it is spoken: "an OpenAI Codex CLI rollout", "an Inspect AI log", "a reconcile
    native journal" (by the first letter: every phrase reconcile says starts with a plain word or a name)."""
    return ("an " if noun_phrase[:1].lower() in "aeiou" else "a ") + noun_phrase
