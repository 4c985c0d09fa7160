"""What an ingest did with every input: stored, duplicate, auxiliary, ignored or rejected."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Row = dict[str, Any]


@dataclass(frozen=True)
class Reject:
    """A file or row that was not taken."""

    run_id: str
    path: str
    reason: str
    field: str = ""
    reader: str = ""
    sha256: str = ""


@dataclass(frozen=True)
class Ignored:
    """A file that was recognised or read but holds nothing to store, and why."""

    path: str
    reason: str
    run_id: str = ""


@dataclass(frozen=True)
class FileOutcome:
    """A file that gave points (accepted or duplicate) or was joined to points (auxiliary)."""

    run_id: str
    path: str
    point_ids: tuple[str, ...]
    reader: str = ""


@dataclass
class IngestReport:
    """Outcome of one ingest call.

    Every input file ends in exactly one of: `accepted_files` (it gave new points),
    `duplicate_files` (every point it gave was already stored), `auxiliary` (joined to the points
    of another file: an aiperf CSV beside its JSON, a server-metrics export, a command line),
    `rejected` (with the field and the reason) or `ignored` (recognised or read, nothing to store,
    with why). A file some of whose rows were rejected while others were taken is accepted and
    also has its row rejects listed.
    """

    runs: list[str] = field(default_factory=list)
    accepted: int = 0
    duplicates: int = 0
    rejected: list[Reject] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)
    notes: list[Ignored] = field(default_factory=list)
    accepted_files: list[FileOutcome] = field(default_factory=list)
    duplicate_files: list[FileOutcome] = field(default_factory=list)
    auxiliary: list[FileOutcome] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The CLI's `--json` document: the counts, the five per-file lists and the notes."""

        def files(outs: list[FileOutcome]) -> list[dict[str, Any]]:
            return [{"run_id": o.run_id, "path": o.path, "points": list(o.point_ids)} for o in outs]

        return {
            "runs": self.runs,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "accepted_files": files(self.accepted_files),
            "duplicate_files": files(self.duplicate_files),
            "auxiliary": files(self.auxiliary),
            "rejected": [
                {"path": r.path, "field": r.field, "reader": r.reader, "reason": _reason(r)}
                for r in self.rejected
            ],
            "ignored": [{"path": i.path, "reason": i.reason} for i in self.ignored],
            "notes": [{"path": n.path, "note": n.reason} for n in self.notes],
        }


def _reason(r: Reject) -> str:
    return f"{r.field}: {r.reason}" if r.field else r.reason
