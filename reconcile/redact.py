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
    re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # JWTs
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)", re.S),
]
# A password in a URL: scheme://user:password@host keeps the user and the host.
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^/\s:@]*):([^/\s@]+)@")
# NAME = value, "name": "value", NAME=value in an environment dump (AWS_SECRET_ACCESS_KEY=…, DB_PASSWORD=…):
# keep the name, hide the value. The secret word may sit anywhere in an identifier, but a name that
# only counts tokens ("max_tokens", "output_tokens") is not a secret.
_ASSIGNED = re.compile(r"""(?ix)
    (?<![A-Za-z0-9])
    ([A-Za-z0-9_\-]*?(?:password|passwd|pwd|secret|api[_-]?key|access[_-]?key|private[_-]?key|credentials?
                       |access[_-]?token|auth[_-]?token|refresh[_-]?token|session[_-]?token|token)(?![A-Za-z0-9]))
    (["']?\s*[:=]\s*["']?)
    ([^\s"',}&]{3,})""")


def redact(text: object) -> object:
    """The same value with anything that looks like a secret replaced by ``[redacted]``."""
    if not isinstance(text, str):
        return text
    for pattern in _PATTERNS:
        text = pattern.sub(MASK, text)
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{MASK}@", text)
    return _ASSIGNED.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
