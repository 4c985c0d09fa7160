"""The reader interface: one module per raw format, registered in `ingest.readers.registry`.

A *file reader* turns one file into canonical rows. A *unit reader* claims several files of one
directory (an aiperf artifact tree, a vLLM capture directory) and reads them together. Readers return
partial canonical rows keyed by `Col` values; `ingest.normalize` fills the derived columns.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

Row = dict[str, Any]

_BOM_BYTES = frozenset(b"\xef\xbb\xbf")


def starts_after_bom(data: bytes, prefix: bytes) -> bool:
    """`data.lstrip(b"\\xef\\xbb\\xbf").startswith(prefix)`, without copying `data`."""
    i, n = 0, len(data)
    while i < n and data[i] in _BOM_BYTES:
        i += 1
    return data.startswith(prefix, i)


@dataclass(frozen=True)
class SourceFile:
    """One input file as read from disk or from an extracted archive."""

    path: Path
    rel: str
    artifact: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def name(self) -> str:
        return self.path.name

    def text(self) -> str:
        """The file decoded as UTF-8 (a BOM is dropped).

        Raises:
            ParseError: when the bytes are not UTF-8.
        """
        from ingest.errors import ParseError

        try:
            return self.data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ParseError(
                self.rel, "", f"not UTF-8 text (byte {exc.start}): {exc.reason}"
            ) from exc


@dataclass
class RowReject:
    """One row (or the whole file) a reader could not take."""

    field: str
    reason: str
    row: str = ""


@dataclass
class ReadResult:
    """What a reader made of its input.

    points: partial canonical rows (keys are `Col` values).
    series: server-metric samples; each row has `metric`, `labels` (JSON str), `t`, `value` and
        `point_key`: the index into `points` it belongs to (None when it belongs to every point).
    enrich: columns to merge into the points of the paired aggregate (raw metrics such as AL),
        used when the reader's input carries no point of its own.
    rejects: rows of the file that could not be taken.
    consumed: rel paths of the files this result used (unit readers).
    notes: informational messages for the summary.
    scope: what an enrich-only result (a /metrics scrape, a server-metric export, a server log)
        measured, for attaching it to the right point (`ingest.attach`): `models` (served model
        names), `window` ([start, end] epoch seconds, either may be None), `since_start` (True
        for counters since server start), `prompt_tokens` and `generation_tokens` (counter sums).
    evals: accuracy rows for the `evals` table (keys are `EvalCol` values; `source_path` names
        the file each came from), from the eval readers (`ingest.readers.evals`); such a result
        has no points.
    eval_ignored: rel path -> why, for files of an eval set that were read and not taken
        (a superseded lm-eval result, per-sample logs).
    """

    points: list[Row] = field(default_factory=list)
    series: list[Row] = field(default_factory=list)
    enrich: Row = field(default_factory=dict)
    rejects: list[RowReject] = field(default_factory=list)
    consumed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    scope: Row = field(default_factory=dict)
    evals: list[Row] = field(default_factory=list)
    eval_ignored: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class JsonDocs:
    """A file holding several JSON documents, one after another (JSON Lines, or vLLM's
    `--append-result`, which appends one result object per line to the same file).

    `docs[i]` is the i-th document and `lines[i]` the 1-based line it starts on.
    """

    docs: tuple[Any, ...]
    lines: tuple[int, ...]


class FileReader(Protocol):
    """Reads one file. `doc` is the parsed JSON when the file is one JSON document, a `JsonDocs`
    when it is several (JSON Lines, appended results), else None."""

    name: str

    def sniff(self, src: SourceFile, doc: Any) -> bool: ...

    def read(self, src: SourceFile, doc: Any) -> ReadResult: ...


class UnitReader(Protocol):
    """Reads several files of one directory together (and claims them)."""

    name: str

    def sniff_unit(self, files: list[SourceFile]) -> bool: ...

    def read_unit(self, files: list[SourceFile]) -> ReadResult: ...
