"""Redacting values that look like secrets before they reach a report.

Transcripts carry whatever the agent saw: tool arguments and outputs can hold API keys, bearer
tokens and passwords. Every string a report prints goes through ``redact`` (the template
environment's ``finalize``), so nothing is forgotten by a template.
"""

from __future__ import annotations

import re

MASK = "[redacted]"

_PATTERNS = [
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),                      # Anthropic keys
    re.compile(r"sk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{16,}"),   # OpenAI-style keys
    re.compile(r"AKIA[0-9A-Z]{16}"),                                # AWS access key ids
    re.compile(r"gh[pousr]_[A-Za-z0-9]{30,}"),                      # GitHub tokens
    re.compile(r"xox[abprs]-[A-Za-z0-9\-]{10,}"),                   # Slack tokens
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{12,}=*"),        # Authorization: Bearer …
    re.compile(r"eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # JWTs
]
# key = value, "key": "value": keep the name, hide the value
_ASSIGNED = re.compile(r"""(?i)\b(password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|token)
                           (["']?\s*[:=]\s*["']?)([^\s"',}&]{3,})""", re.VERBOSE)


def redact(text: object) -> object:
    """The same value with anything that looks like a secret replaced by ``[redacted]``."""
    if not isinstance(text, str):
        return text
    for pattern in _PATTERNS:
        text = pattern.sub(MASK, text)
    return _ASSIGNED.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", text)
