"""Reading units: strict JSON, each file or unit through the reader that takes it.

A reader's bug (any exception but a parse or schema error) rejects the file it read, not the
ingest; every outcome is written to the report.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ingest.errors import ParseError, SchemaError
from ingest.readers.base import JsonDocs, ReadResult, SourceFile
from ingest.readers.registry import file_readers, unit_readers
from ingest.report import Ignored, IngestReport, Reject
from ingest.sources.artifacts import Unit

Row = dict[str, Any]


def _no_dupes(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) == len(pairs):
        return out
    seen: set[str] = set()
    for k, _v in pairs:
        if k in seen:
            raise ValueError(f"duplicate key {k!r}")
        seen.add(k)
    raise AssertionError("unreachable")


def _no_constant(name: str) -> Any:
    # SGLang's bench_serving writes its default request rate with json.dumps: `Infinity`. It is
    # taken as inf (readers refuse it anywhere but a request rate); NaN and -Infinity never are.
    if name == "Infinity":
        return float("inf")
    raise ValueError(f"non-standard JSON constant {name} (NaN/-Infinity are not valid JSON)")


_STRICT_JSON = json.JSONDecoder(object_pairs_hook=_no_dupes, parse_constant=_no_constant)


def parse_json(src: SourceFile) -> Any:
    """Parse a JSON file strictly (no duplicate keys, no NaN/Infinity); None if not JSON-shaped.

    Raises:
        ParseError: when it looks like JSON but is not valid.
    """
    head = src.data[:64].lstrip(b"\xef\xbb\xbf \t\r\n")
    if head[:1] not in (b"{", b"["):
        return None
    text = src.text()
    try:
        # json.loads with these hooks, without building a decoder per file.
        if text.startswith("\ufeff"):
            raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
        doc = _STRICT_JSON.decode(text)
    except RecursionError as exc:
        raise ParseError(src.rel, "", "JSON nested too deeply") from exc
    except json.JSONDecodeError as exc:
        if exc.msg == "Extra data":
            # Several documents: JSON Lines, or results appended with --append-result.
            return _json_docs(src, text)
        if _bracketed_text(text):
            return None  # a log whose first line opens with a `[tag]`, not broken JSON
        raise ParseError(src.rel, "", f"invalid JSON: {exc}") from exc
    except ValueError as exc:
        raise ParseError(src.rel, "", f"invalid JSON: {exc}") from exc
    if src.name.endswith(".jsonl"):
        return JsonDocs((doc,), (1,))
    return doc


_FIRST_BRACKET = re.compile(r"\s*\[(?P<inner>[^\[\]{}\"\n]*)\]")
_JSON_ARRAY_WORDS = re.compile(r"\b(?:true|false|null)\b|[-+0-9eE.,\s]")


def _bracketed_text(text: str) -> bool:
    """Whether text that failed to parse as JSON is a log line's `[tag]` rather than an array.

    `[TensorRT-LLM] TensorRT-LLM version: 0.16.0` or `[07/11/2025-08:12:24] [TRT-LLM] ...`:
    an unquoted, unnested bracket holding what no JSON array can hold (words, slashes, colons)."""
    m = _FIRST_BRACKET.match(text.lstrip("\ufeff"))
    return m is not None and _JSON_ARRAY_WORDS.sub("", m["inner"]) != ""


def _json_docs(src: SourceFile, text: str) -> JsonDocs:
    """Every JSON document of a multi-document file, each parsed as strictly as one document.

    Raises:
        ParseError: naming the line of the first document that is not valid JSON.
    """
    docs: list[Any] = []
    lines: list[int] = []
    pos, n = 0, len(text)
    line = 1
    while True:
        start = pos
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        line += text.count("\n", start, pos)
        if pos >= n:
            break
        try:
            doc, end = _STRICT_JSON.raw_decode(text, pos)
        except RecursionError as exc:
            raise ParseError(src.rel, f"line {line}", "JSON nested too deeply") from exc
        except ValueError as exc:
            raise ParseError(
                src.rel,
                f"line {line}",
                f"invalid JSON in document {len(docs) + 1} of a multi-document file: {exc}",
            ) from exc
        docs.append(doc)
        lines.append(line)
        line += text.count("\n", pos, end)
        pos = end
    return JsonDocs(tuple(docs), tuple(lines))


# What a reader bug raises: the file is rejected with the exception as its reason instead of the
# whole batch failing (a reader should raise ParseError; the reliability fuzz tests hunt these).
_READER_BUGS = (
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    IndexError,
    ArithmeticError,
    RecursionError,
)


@dataclass
class UnitOut:
    """What the readers made of one unit: its point results (file, result, reader) and the
    results that only enrich points of other files."""

    unit: Unit
    results: list[tuple[SourceFile, ReadResult, str]] = field(default_factory=list)
    enrich: list[tuple[SourceFile, ReadResult]] = field(default_factory=list)
    evals: list[tuple[SourceFile, ReadResult, str]] = field(default_factory=list)


def read_unit(unit: Unit, run_id: str, report: IngestReport) -> UnitOut:
    """Read one unit: its unit readers first, then every file left through the reader that
    sniffs it; what no reader takes, or a reader refuses, goes to `report`."""
    out = UnitOut(unit)
    remaining = list(unit.files)
    by_rel = {f.rel: f for f in unit.files}
    for ureader in unit_readers():
        try:
            hit = bool(remaining) and ureader.sniff_unit(remaining)
        except Exception:  # a sniffer must never sink the batch; treat as "not mine"
            hit = False
        if not hit:
            continue
        try:
            res = ureader.read_unit(remaining)
        except _READER_BUGS as exc:
            report.rejected.append(
                Reject(run_id, unit.name, f"{type(exc).__name__}: {exc}", "", ureader.name)
            )
            continue
        except (ParseError, SchemaError) as exc:
            rel = getattr(exc, "path", unit.name)
            report.rejected.append(
                Reject(
                    run_id,
                    rel,
                    getattr(exc, "reason", str(exc)),
                    getattr(exc, "field", ""),
                    ureader.name,
                )
            )
            # Only the file at fault is spent: the unit's other files (an aggregate beside a broken
            # aiperf export) still go to the other readers rather than vanishing unreported.
            remaining = [f for f in remaining if f.rel != rel] if rel in by_rel else []
            continue
        consumed = set(res.consumed)
        anchor = by_rel.get(res.consumed[0]) if res.consumed else remaining[0]
        _file_result(out, anchor or remaining[0], res, ureader.name, report, run_id)
        remaining = [f for f in remaining if f.rel not in consumed]
    for src in remaining:
        try:
            doc = parse_json(src)
        except ParseError as exc:
            report.rejected.append(
                Reject(run_id, src.rel, exc.reason, exc.field, "json", src.sha256)
            )
            continue
        for reader in file_readers():
            try:
                hit = reader.sniff(src, doc)
            except Exception:  # a sniffer must never sink the batch; treat as "not mine"
                hit = False
            if not hit:
                continue
            try:
                res = reader.read(src, doc)
            except (ParseError, SchemaError) as exc:
                report.rejected.append(
                    Reject(run_id, src.rel, exc.reason, exc.field, reader.name, src.sha256)
                )
            except _READER_BUGS as exc:
                report.rejected.append(
                    Reject(
                        run_id, src.rel, f"{type(exc).__name__}: {exc}", "", reader.name, src.sha256
                    )
                )
            else:
                _file_result(out, src, res, reader.name, report, run_id)
            break
        else:
            what = "JSON document" if doc is not None else "file"
            report.rejected.append(
                Reject(
                    run_id,
                    src.rel,
                    f"unrecognised {what}: no reader knows this format (docs/formats.md lists the formats paretolens reads and how each is recognised)",
                    "",
                    "sniff",
                    src.sha256,
                )
            )
    return out


def _file_result(
    out: UnitOut, src: SourceFile, res: ReadResult, reader: str, report: IngestReport, run_id: str
) -> None:
    for rj in res.rejects:
        where = f"{src.rel}#{rj.row}" if rj.row else src.rel
        report.rejected.append(Reject(run_id, where, rj.reason, rj.field, reader, src.sha256))
    if res.evals:  # accuracy rows: the pipeline stores them (`ingest.eval_rows`)
        out.evals.append((src, res, reader))
        report.notes.extend(Ignored(src.rel, n, run_id) for n in res.notes)
        return
    if res.points or res.enrich or res.series:
        report.notes.extend(Ignored(src.rel, n, run_id) for n in res.notes)
    if res.points:
        out.results.append((src, res, reader))
    elif res.enrich or res.series:
        out.enrich.append((src, res))
    elif res.notes:
        report.ignored.extend(
            Ignored(rel, n, run_id) for rel in files_of(src, res) for n in res.notes
        )
    elif not res.rejects:
        report.ignored.extend(
            Ignored(rel, f"{reader}: nothing to store", run_id) for rel in files_of(src, res)
        )


def files_of(src: SourceFile, res: ReadResult) -> list[str]:
    """The files a result stands for: what a unit reader consumed, else the one file read."""
    return list(dict.fromkeys([src.rel, *res.consumed]))


def content_sha(src: SourceFile, extras: Sequence[SourceFile]) -> str:
    """The sha256 a point's file is stored with: the file's own, or one over it and the files
    attached to it (so a changed sidecar is a changed point)."""
    if not extras:
        return src.sha256
    h = hashlib.sha256(src.sha256.encode())
    for e in sorted(extras, key=lambda f: f.rel):
        h.update(e.sha256.encode())
    return h.hexdigest()
