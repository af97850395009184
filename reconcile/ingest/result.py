"""What ingesting reports back: per-file counts and the passed-over files."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


@dataclass
class FileCounts:
    """loaded + rejected + skipped = lines, always."""

    lines: int = 0
    loaded: int = 0
    rejected: int = 0
    skipped: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class FileResult:
    path: str
    format: str
    status: str  # loaded | replaced | unchanged | failed | unreadable (for the last two, notes[0] says why)
    lines: int
    loaded: int
    rejected: int
    skipped: int
    notes: list[str] = field(default_factory=list)


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

    def to_json(self) -> dict:
        return {"files": [asdict(f) for f in self.files], "passed_over": [asdict(p) for p in self.passed_over],
                "forgotten": self.forgotten, "totals": self.totals}
