"""The provider's side of block one: what the fake model answered, as the provider's usage report.

Block four's second invariant: "token totals match what the provider reported for the run".
Here the provider is the scripted model, so its record is exact: every answered call is counted
into the window of the stub it was answered for, and ``write`` puts the windows in the shape of
Anthropic's usage report (``GET /v1/organizations/usage_report/messages``), which ingest reads like
a real download. ``tokens_match_provider`` then holds the journal's model steps to it: a call the
harness never journalled is unexplained tokens, a step journalled twice is phantom tokens.

Each stub runs in a window of its own (the protocol moves the clock at least an hour on between
stubs, and between harnesses judged together), so a finding names the window it is about, and
through it the stub. The journal must be stamped on the protocol's clock for its calls to fall
into their window.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from reconcile.testing.model import Turn

REPORT_TIME = "%Y-%m-%d %H:%M"  # how tokens_match_provider prints a bucket's start (its strftime)


@dataclass
class Window:
    stub: str
    start: datetime
    end: datetime | None = None
    models: dict[str, dict[str, int]] = field(default_factory=dict)  # model -> input, output tokens


class FakeProvider:
    """A model listener counting answered calls into the current stub's window."""

    def __init__(self) -> None:
        self.windows: list[Window] = []

    def open(self, stub: str, start: datetime) -> None:
        self.windows.append(Window(stub, start))

    def close(self, end: datetime) -> None:
        self.windows[-1].end = end

    def __call__(self, turn: Turn, model: str) -> None:
        counts = self.windows[-1].models.setdefault(model, {"input": 0, "output": 0})
        counts["input"] += turn.prompt_tokens
        counts["output"] += turn.completion_tokens

    def stub_at(self, text: str) -> str | None:
        """The stub whose window a finding's text names (by its start, as the check prints it)."""
        return next((w.stub for w in self.windows if w.start.strftime(REPORT_TIME) in text), None)

    def pages(self) -> list[dict]:
        """The report's pages: one per window in which the model answered."""
        return [{"starting_at": _stamp(w.start), "ending_at": _stamp(w.end or w.start + timedelta(hours=1)),
                 "results": [{"uncached_input_tokens": c["input"], "cache_read_input_tokens": 0,
                              "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                              "output_tokens": c["output"], "model": model, "service_tier": "standard"}
                             for model, c in sorted(w.models.items())]}
                for w in self.windows if w.models]


def write_report(providers: list[FakeProvider], path: Path) -> Path | None:
    """One usage report of every provider's windows (one file loads in one go); None when no model answered."""
    pages = [page for provider in providers for page in provider.pages()]
    if not pages:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"data": pages, "has_more": False, "next_page": None}, indent=1) + "\n",
                    encoding="utf-8")
    return path


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
