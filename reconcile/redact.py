"""Redacting values that look like secrets before they reach a report.

Transcripts carry whatever the agent saw: tool arguments and outputs can hold API keys, bearer
tokens and passwords. Every string a report prints goes through ``redact`` (the template
environment's ``finalize``, and every chart label, legend and title before it is drawn), so
nothing is forgotten by a template or a chart.
"""

from __future__ import annotations

import re

MASK = "[redacted]"

_PATTERNS = [
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),                            # Anthropic keys
    re.compile(r"sk-(?:proj-|svcacct-|admin-|live-|test-)?[A-Za-z0-9_\-]{16,}"),  # OpenAI-style keys
    re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"),                # Stripe keys
    re.compile(r"(?:AKIA|ASIA)[0-9A-Z]{16}"),                             # AWS access key ids
    re.compile(r"AIza[0-9A-Za-z_\-]{30,}"),                               # Google API keys
    re.compile(r"gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,}"),  # GitHub tokens
    re.compile(r"\bhf_[A-Za-z0-9]{30,}"),                                 # Hugging Face tokens
    re.compile(r"xox[abeoprs]-[A-Za-z0-9\-]{10,}"),                       # Slack tokens
    re.compile(r"(?i)\b(?:bearer|basic)\s+[A-Za-z0-9._~+/\-]{12,}=*"),    # Authorization: Bearer … / Basic …
    # JWTs. Tried once a word (a run of [A-Za-z0-9_-]), at its first "eyJ": a later one in the same word reaches
    # the same dot with fewer characters, so it fails too; trying each (as "eyJ[…]{8,}\." did) is quadratic.
    re.compile(r"(?<![A-Za-z0-9_\-])(?P<kept>(?:(?!eyJ)[A-Za-z0-9_\-])*)"
               r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
]
# A password in a URL: scheme://user:password@host keeps the user and the host. Found from the "://" (its
# scheme read behind it): a scheme read forwards from each letter of a long word is quadratic.
_URL_PASSWORD = re.compile(r"(?i)(?<=[a-z0-9+.\-])(://[^/\s:@]*):([^/\s@]+)@")
# NAME = value, "name": "value", NAME=value in an environment dump (AWS_SECRET_ACCESS_KEY=…, DB_PASSWORD=…):
# keep the name, hide the value. The secret word may sit anywhere in an identifier, but a name that
# only counts tokens ("max_tokens", "output_tokens") is not a secret. Tried from the start of a name only: a match
# from inside one implies a match from its start, and trying each character of a long name is quadratic.
_ASSIGNED = re.compile(r"""(?ix)
    (?<![A-Za-z0-9_\-])
    ([A-Za-z0-9_\-]*?(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|private[_-]?key|credentials?
                       |access[_-]?token|auth[_-]?token|refresh[_-]?token|session[_-]?token|token)(?![A-Za-z0-9]))
    (["']?\s*[:=]\s*["']?)
    ([^\s"',}&]{3,})""")


def redact(text: object) -> object:
    """The same value with anything that looks like a secret replaced by ``[redacted]``."""
    if not isinstance(text, str):
        return text
    for pattern in _PATTERNS:
        text = pattern.sub(_masked, text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{MASK}@", text)
    return _ASSIGNED.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)


def _masked(match: re.Match) -> str:
    """The mask, after what the pattern read but does not hide (its ``kept`` group)."""
    return (match.groupdict().get("kept") or "") + MASK
