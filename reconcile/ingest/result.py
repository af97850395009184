"""What ingesting reports back: per-file counts and the passed-over files."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field


@dataclass
class FileCounts:
    """loaded + rejected + skipped = lines, always."""

    lines: int = 0
    loaded: int = 0
    rejected: int = 0
    skipped: int = 0
    notes: list[str] = field(default_factory=list)
    skipped_by: dict[str, int] = field(default_factory=dict)  # the skipped lines by their note (a reason, in full)
    resume: object = None  # where a later read may go on from (``tail.Resume``); None: read it whole


@dataclass
class FileResult:
    path: str
    format: str
    status: str  # loaded | replaced | grown | unchanged | failed | unreadable (for the last two, notes[0] says why)
    lines: int
    loaded: int
    rejected: int
    skipped: int
    notes: list[str] = field(default_factory=list)
    skipped_by: dict[str, int] = field(default_factory=dict)  # the skipped lines by their note
    read: str | None = None  # how a file that changed was read: from a line on, or whole and why (``ingest -v``)


# "run <id> was already loaded from <file>": a note per run, so its reason must drop the id and the file
# too, or a night of re-exported journals prints one reason per run on the summary line.
_ALREADY_LOADED = re.compile(r"run .* was already loaded from ", re.DOTALL)


def reason_of(note: str) -> str:
    """A skip note without its detail: "not a step (event_msg/user_message)" is "not a step", and
    "run r1 was already loaded from a.jsonl (3 lines)" is "run already loaded from another file"."""
    if _ALREADY_LOADED.match(note):
        return "run already loaded from another file"
    return note.split(" (", 1)[0].strip() or note


@dataclass
class PassedOver:
    path: str
    reason: str


NOT_LOADED = ("failed", "unreadable")


@dataclass
class IngestReport:
    files: list[FileResult] = field(default_factory=list)
    passed_over: list[PassedOver] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)  # files gone, or no longer of any format: their rows went too

    @property
    def not_loaded(self) -> list[FileResult]:
        """The files that could not be loaded at all (failed or unreadable): the command must not pass for a success."""
        return [f for f in self.files if f.status in NOT_LOADED]

    @property
    def totals(self) -> dict[str, int]:
        keys = ("lines", "loaded", "rejected", "skipped")
        totals = {key: sum(getattr(f, key) for f in self.files) for key in keys}
        totals["files"] = len(self.files)
        totals["unchanged"] = sum(f.status == "unchanged" for f in self.files)
        totals["unreadable"] = sum(f.status == "unreadable" for f in self.files)
        totals["failed"] = sum(f.status == "failed" for f in self.files)
        totals["passed_over"] = len(self.passed_over)
        totals["forgotten"] = len(self.forgotten)
        return totals

    @property
    def skipped_by_reason(self) -> dict[str, int]:
        """The skipped lines of every file by reason (a note without its detail), most first.

        Lines a format skipped without a note are counted as "no reason recorded", so the counts add
        up to ``totals["skipped"]``.
        """
        counts: dict[str, int] = {}
        for f in self.files:
            for note, count in f.skipped_by.items():
                counts[reason_of(note)] = counts.get(reason_of(note), 0) + count
            rest = f.skipped - sum(f.skipped_by.values())
            if rest > 0:
                counts["no reason recorded"] = counts.get("no reason recorded", 0) + rest
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    @property
    def passed_over_by_reason(self) -> dict[str, int]:
        """The passed-over files by reason ("not a recognised format", without what was found instead)."""
        counts: dict[str, int] = {}
        for p in self.passed_over:
            reason = p.reason.split(":", 1)[0]
            counts[reason] = counts.get(reason, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    def to_json(self) -> dict:
        return {"files": [asdict(f) for f in self.files], "passed_over": [asdict(p) for p in self.passed_over],
                "forgotten": self.forgotten, "totals": self.totals, "skipped_by_reason": self.skipped_by_reason}
