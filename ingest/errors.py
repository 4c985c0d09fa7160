"""Ingest exceptions. Rejected inputs become `Reject` rows; these exceptions carry the details."""

from __future__ import annotations


class IngestError(Exception):
    """Base of every ingest error."""


class ParseError(IngestError):
    """A file (or one row of it) could not be turned into canonical points.

    Args:
        path: the file, relative to the ingested root.
        field: the offending field ('' for whole-file problems).
        reason: what was wrong and what was expected.
    """

    def __init__(self, path: str, field: str, reason: str) -> None:
        self.path = path
        self.field = str(field)
        self.reason = reason
        where = f"{path}: field {field!r}" if field else path
        super().__init__(f"{where}: {reason}")


class SchemaError(IngestError):
    """A canonical row does not satisfy the data contract in `ingest.contract.schema`."""

    def __init__(self, field: str, reason: str) -> None:
        self.field = str(field)
        self.reason = reason
        super().__init__(f"field {field!r}: {reason}")


class UnsafeArchiveError(IngestError):
    """A zip archive is unsafe to extract (path escape, symlink, bomb, oversize)."""
