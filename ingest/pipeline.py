"""Ingest: inputs -> units -> readers -> canonical rows -> the store.

The batch is read and normalised entirely before the store is touched; then, under the store lock,
each run's file is rewritten once. A file that yields nothing keeps whatever the store already had
from it. Every file is accounted for: stored, duplicate, ignored (auxiliary, with why) or rejected
(with the field and the reason).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from ingest import attach
from ingest.artifacts import Collected, Unit, collect_all
from ingest.errors import ParseError, SchemaError
from ingest.identity import refine_arms, unique_point_ids
from ingest.normalize import NOT_FROM_READERS, canonical_hw, normalize_batch
from ingest.normalize import _coerce as coerce_value
from ingest.readers.base import JsonDocs, ReadResult, SourceFile
from ingest.readers.registry import file_readers, unit_readers
from ingest.schema import Col, RejectCol, RunCol, SeriesCol, empty_points
from ingest.store import Store, check_run_id

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
        """The CLI's `--json` document: the counts and the five per-file lists."""

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
        }


def _reason(r: Reject) -> str:
    return f"{r.field}: {r.reason}" if r.field else r.reason


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
        raise ParseError(src.rel, "", f"invalid JSON: {exc}") from exc
    except ValueError as exc:
        raise ParseError(src.rel, "", f"invalid JSON: {exc}") from exc
    if src.name.endswith(".jsonl"):
        return JsonDocs((doc,), (1,))
    return doc


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
class _UnitOut:
    unit: Unit
    results: list[tuple[SourceFile, ReadResult, str]] = field(default_factory=list)
    enrich: list[tuple[SourceFile, ReadResult]] = field(default_factory=list)


def _read_unit(unit: Unit, run_id: str, report: IngestReport) -> _UnitOut:
    out = _UnitOut(unit)
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
    out: _UnitOut, src: SourceFile, res: ReadResult, reader: str, report: IngestReport, run_id: str
) -> None:
    for rj in res.rejects:
        where = f"{src.rel}#{rj.row}" if rj.row else src.rel
        report.rejected.append(Reject(run_id, where, rj.reason, rj.field, reader, src.sha256))
    if res.points or res.enrich or res.series:
        report.notes.extend(Ignored(src.rel, n, run_id) for n in res.notes)
    if res.points:
        out.results.append((src, res, reader))
    elif res.enrich or res.series:
        out.enrich.append((src, res))
    elif res.notes:
        report.ignored.extend(
            Ignored(rel, n, run_id) for rel in _files_of(src, res) for n in res.notes
        )
    elif not res.rejects:
        report.ignored.extend(
            Ignored(rel, f"{reader}: nothing to store", run_id) for rel in _files_of(src, res)
        )


def _files_of(src: SourceFile, res: ReadResult) -> list[str]:
    """The files a result stands for: what a unit reader consumed, else the one file read."""
    return list(dict.fromkeys([src.rel, *res.consumed]))


def _content_sha(src: SourceFile, extras: Sequence[SourceFile]) -> str:
    if not extras:
        return src.sha256
    h = hashlib.sha256(src.sha256.encode())
    for e in sorted(extras, key=lambda f: f.rel):
        h.update(e.sha256.encode())
    return h.hexdigest()


@dataclass
class _Pending:
    """The partial rows of one read result, waiting for the batch to be normalised."""

    src: SourceFile
    reader: str
    sha: str
    artifact: str
    first: int
    count: int
    series: list[Row]
    aux: tuple[str, ...] = ()
    point_aux: dict[int, tuple[str, ...]] = field(default_factory=dict)


def _window_of(src: SourceFile, index: int, count: int) -> Callable[[], attach.Window | None]:
    return lambda: attach.point_window(src.data, index, count)


def _join(
    primaries: list[_UnitOut],
    extra_enrich: list[tuple[SourceFile, ReadResult]],
    partials: list[Row],
    pending: list[_Pending],
    report: IngestReport,
    run_id: str,
) -> None:
    """The points of the primaries' results, each with the auxiliary measurements it agrees with.

    A unit's own enrichment may join its own points, a sibling unit's any primary point; each
    measurement joins exactly one point or none (`ingest.attach`; the ignored say why).
    """
    results = [(o, r) for o in primaries for r in o.results]
    joined: dict[tuple[int, int], list[tuple[SourceFile, ReadResult]]] = {}

    def place(item: tuple[SourceFile, ReadResult], where: list[int]) -> None:
        keys: list[tuple[int, int]] = []
        cands: list[attach.Candidate] = []
        for ri in where:
            src, res, _ = results[ri][1]
            n = len(res.points)
            for pi, point in enumerate(res.points):
                keys.append((ri, pi))
                label = src.rel if n == 1 else f"{src.rel}#{pi}"
                cands.append(attach.Candidate(label, point, _window_of(src, pi, n)))
        choice = attach.choose(item[1].scope, item[1].enrich, cands)
        if choice.index is None:
            report.ignored.extend(
                Ignored(rel, choice.reason, run_id) for rel in _files_of(item[0], item[1])
            )
        else:
            joined.setdefault(keys[choice.index], []).append(item)

    for o in primaries:
        own = [ri for ri, (oo, _) in enumerate(results) if oo is o]
        for item in o.enrich:
            place(item, own)
    for item in extra_enrich:
        place(item, list(range(len(results))))
    for ri, (o, (src, res, reader)) in enumerate(results):
        items = {pi: joined.get((ri, pi), []) for pi in range(len(res.points))}
        attached = [s_ for its in items.values() for s_, _ in its]
        sha = _content_sha(src, attached if len(o.results) == 1 else [])
        first = len(partials)
        series = list(res.series)
        point_aux: dict[int, tuple[str, ...]] = {}
        for pi, partial in enumerate(res.points):
            merged: Row = {}
            for _s, e in items[pi]:
                for k, v in e.enrich.items():
                    if v is not None and merged.get(k) is None:
                        merged[k] = v
                series.extend({**r, "point_key": pi} for r in e.series)
            if items[pi]:
                point_aux[pi] = tuple(
                    dict.fromkeys(rel for s_, e in items[pi] for rel in _files_of(s_, e))
                )
            if not merged:
                partials.append(partial)  # normalize_batch does not modify its input
                continue
            full = dict(partial)
            for k, v in merged.items():
                if full.get(k) is None:
                    full[k] = v
            partials.append(full)
        pending.append(
            _Pending(
                src,
                reader,
                sha,
                o.unit.logical,
                first,
                len(res.points),
                series,
                tuple(dict.fromkeys(r for r in res.consumed if r != src.rel)),
                point_aux,
            )
        )


def _build_rows(
    outs: list[_UnitOut],
    run_id: str,
    now: datetime,
    report: IngestReport,
    defaults: Mapping[str, Any] | None = None,
    defaults_from: str = "the defaults",
    local: Mapping[str, tuple[Mapping[str, Any], str]] | None = None,
) -> tuple[pl.DataFrame, list[Row]]:
    partials: list[Row] = []
    pending: list[_Pending] = []
    by_pair: dict[str, list[_UnitOut]] = {}
    for o in outs:
        by_pair.setdefault(o.unit.pair, []).append(o)
    for group in by_pair.values():
        primaries = [o for o in group if o.results and o.unit.is_primary] or [
            o for o in group if o.results
        ]
        if not primaries:
            for o in group:
                for src, res in o.enrich:
                    report.ignored.extend(
                        Ignored(
                            rel,
                            "raw metrics with no aggregate point to attach to in this run",
                            run_id,
                        )
                        for rel in _files_of(src, res)
                    )
            continue
        secondary = [o for o in group if o not in primaries]
        extra_enrich: list[tuple[SourceFile, ReadResult]] = []
        for o in secondary:
            extra_enrich.extend(o.enrich)
            # A sibling's own points (e.g. power_audit raw JSON) only fill gaps in the aggregate.
            extra_enrich.extend(
                (
                    src,
                    ReadResult(
                        enrich={**res.enrich, **_fill_only(res.points[0])},
                        series=res.series,
                        consumed=res.consumed,
                    ),
                )
                for src, res, _ in o.results
            )
        _join(primaries, extra_enrich, partials, pending, report, run_id)
    # One frame for the whole batch; a row that breaks the contract is refused on its own.
    paths: list[str] = []
    shas: list[str] = []
    artifacts: list[str] = []
    for p in pending:
        paths.extend([p.src.rel] * p.count)
        shas.extend([p.sha] * p.count)
        artifacts.extend([p.artifact] * p.count)
    if local:
        # paretolens.yaml beside the files: what they do not say, for the files under its
        # directory (the nearest one wins; the caller's defaults, e.g. --set, win over it).
        partials = [
            _fill_row(row, *local_defaults(local, path), path, run_id, report)
            for row, path in zip(partials, paths, strict=True)
        ]
    if defaults:
        partials = _apply_defaults(partials, defaults, defaults_from, paths, run_id, report)
    batch = normalize_batch(
        partials,
        run_id=run_id,
        source_paths=paths,
        source_sha256s=shas,
        artifacts=artifacts,
        ingested_at=now,
    )
    frame, moved = refine_arms(batch.frame)
    if moved:
        batch.point_ids = [moved.get(x, x) if x else x for x in batch.point_ids]
    frame, renamed = unique_point_ids(frame)
    if renamed:
        # The frame holds the accepted rows in input order: map its rows back to the inputs.
        taken_rows = [i for i, x in enumerate(batch.point_ids) if x]
        for row, new in renamed.items():
            batch.point_ids[taken_rows[row]] = new
    series: list[Row] = []
    aux_ids: dict[str, dict[str, None]] = {}
    for p in pending:
        ids: list[str] = []
        for i in range(p.first, p.first + p.count):
            exc = batch.errors.get(i)
            if exc is not None:
                where = p.src.rel if p.count == 1 else f"{p.src.rel}#{i - p.first}"
                report.rejected.append(
                    Reject(run_id, where, exc.reason, exc.field, p.reader, p.src.sha256)
                )
            ids.append(batch.point_ids[i] or "")
        live = [x for x in ids if x]
        if live:
            report.accepted_files.append(FileOutcome(run_id, p.src.rel, tuple(live), p.reader))
            for rel in p.aux:
                aux_ids.setdefault(rel, {}).update(dict.fromkeys(live))
        for pi, rels in p.point_aux.items():
            for rel in rels:
                if ids[pi]:
                    aux_ids.setdefault(rel, {})[ids[pi]] = None
                elif rel not in aux_ids:
                    where = p.src.rel if p.count == 1 else f"{p.src.rel}#{pi}"
                    why = f"its point {where} was rejected: nothing stored from it"
                    report.ignored.append(Ignored(rel, why, run_id))
        for s in p.series:
            key = s.get("point_key")
            targets = (
                [ids[key]] if isinstance(key, int) and 0 <= key < len(ids) and ids[key] else live
            )
            for pid in targets:
                series.append(
                    {
                        SeriesCol.RUN_ID: run_id,
                        SeriesCol.POINT_ID: pid,
                        SeriesCol.METRIC: s["metric"],
                        SeriesCol.LABELS: s.get("labels", "{}"),
                        SeriesCol.T: s["t"],
                        SeriesCol.VALUE: s["value"],
                    }
                )
    taken = {o.path for o in report.accepted_files if o.run_id == run_id}
    report.auxiliary.extend(
        FileOutcome(run_id, rel, tuple(ids)) for rel, ids in aux_ids.items() if rel not in taken
    )
    return frame, series


# Columns a default may not set: provenance and derived ids (ingest's own), and the warnings list.
_NO_DEFAULT = NOT_FROM_READERS | {str(Col.WARNINGS)}


def check_defaults(defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ingest defaults (canonical column -> value) and coerce each value to its column's
    type (``"8"`` for an integer column is 8, ``"true"`` for a boolean is True); None is dropped.

    Raises:
        SchemaError: naming the key that is not a column a default may set, or the bad value.
    """
    out: dict[str, Any] = {}
    for key, value in defaults.items():
        try:
            col = str(Col(key))
        except ValueError as exc:
            raise SchemaError(key, "not a canonical column (docs/schema.md lists them)") from exc
        if col in _NO_DEFAULT:
            raise SchemaError(key, "set by ingest itself; it cannot be given as a default")
        if value is None:
            continue
        try:
            out[col] = coerce_value(col, value)
        except SchemaError:
            # Text from a command line: "0.9" for a float column, "8.0" for an integer one.
            try:
                number = float(value) if isinstance(value, str) else None
            except ValueError:
                number = None
            if number is None:
                raise
            out[col] = coerce_value(col, number)
    return out


def _same(col: str, have: Any, want: Any) -> bool:
    try:
        have = coerce_value(col, have)
    except SchemaError:
        return False
    if isinstance(have, str) and isinstance(want, str):
        return have.strip().casefold() == want.strip().casefold()
    return bool(have == want)


def _apply_defaults(
    partials: list[Row],
    defaults: Mapping[str, Any],
    defaults_from: str,
    where: Sequence[str],
    run_id: str,
    report: IngestReport,
) -> list[Row]:
    """Fill the columns each row left null from `defaults` (validated by `check_defaults`).

    A row's own value is kept; where it differs from the default, the row gets a warning naming
    both and the report a note. `hw` and `hw_label` are one fact: a row that says either is
    compared on the canonical hardware, and the other is filled only when they agree. Returns new
    row dicts (the readers' rows are not modified).
    """
    hw_c, label_c = str(Col.HW), str(Col.HW_LABEL)
    out: list[Row] = []
    for i, partial in enumerate(partials):
        row = dict(partial)
        clashes: list[str] = []
        for col, want in defaults.items():
            have = row.get(col)
            if col in (hw_c, label_c) and have is None:
                other = row.get(label_c if col == hw_c else hw_c)
                if other is not None and canonical_hw(str(other)) != canonical_hw(str(want)):
                    name = label_c if col == hw_c else hw_c
                    clashes.append(
                        f"{name}={other!r} from the file differs from {col}={want!r} from "
                        f"{defaults_from}; the file's value is kept"
                    )
                    continue
            if have is None:
                row[col] = want
            elif not _same(col, have, want):
                clashes.append(
                    f"{col}={have!r} from the file differs from {col}={want!r} from "
                    f"{defaults_from}; the file's value is kept"
                )
        if clashes:
            row[str(Col.WARNINGS)] = [*(row.get(str(Col.WARNINGS)) or []), *clashes]
            path = where[i] if i < len(where) else ""
            report.notes.extend(Ignored(path, c, run_id) for c in clashes)
        out.append(row)
    return out


LOCAL_DEFAULTS = "paretolens.yaml"


def local_defaults(
    local: Mapping[str, tuple[Mapping[str, Any], str]], path: str
) -> tuple[Mapping[str, Any], str]:
    """The defaults of the nearest `paretolens.yaml` above a file: (column -> value, its path)."""
    best = ""
    for prefix in local:
        if (not prefix or path.startswith(prefix)) and len(prefix) >= len(best):
            best = prefix
    return local.get(best, ({}, ""))


def _fill_row(
    row: Row, defaults: Mapping[str, Any], where: str, path: str, run_id: str, report: IngestReport
) -> Row:
    if not defaults:
        return row
    return _apply_defaults([row], defaults, where, [path], run_id, report)[0]


def _read_local_defaults(
    c: Collected, run_id: str, report: IngestReport
) -> tuple[Collected, dict[str, tuple[Mapping[str, Any], str]]]:
    """Take every `paretolens.yaml` out of the input: {directory prefix: (defaults, its path)}.

    A file that is not a mapping of canonical columns to values is rejected with the key at
    fault; the rest of the input is read as usual.
    """
    import yaml

    local: dict[str, tuple[Mapping[str, Any], str]] = {}
    units: list[Unit] = []
    for unit in c.units:
        keep = []
        for f in unit.files:
            if f.name != LOCAL_DEFAULTS:
                keep.append(f)
                continue
            try:
                doc = yaml.safe_load(f.data.decode("utf-8-sig"))
                if not isinstance(doc, dict):
                    raise SchemaError("", "expected a mapping of column names to values")
                local[f.rel.rpartition("/")[0] + "/" if "/" in f.rel else ""] = (
                    check_defaults({str(k): v for k, v in doc.items()}),
                    f.rel,
                )
            except (yaml.YAMLError, UnicodeDecodeError) as exc:
                report.rejected.append(
                    Reject(run_id, f.rel, f"not valid YAML: {exc}", "", "paretolens.yaml", f.sha256)
                )
            except SchemaError as exc:
                report.rejected.append(
                    Reject(run_id, f.rel, exc.reason, exc.field, "paretolens.yaml", f.sha256)
                )
        if keep:
            units.append(dataclasses.replace(unit, files=keep))
    return dataclasses.replace(c, units=units), local


def _account_local(
    local: Mapping[str, tuple[Mapping[str, Any], str]], run_id: str, report: IngestReport
) -> None:
    """Each paretolens.yaml is auxiliary to the points of the files under its directory."""
    for prefix, (_defaults, rel) in local.items():
        ids = [
            pid
            for o in report.accepted_files
            if o.run_id == run_id and o.path.startswith(prefix)
            for pid in o.point_ids
        ]
        if ids:
            report.auxiliary.append(FileOutcome(run_id, rel, tuple(ids), LOCAL_DEFAULTS))
        else:
            report.ignored.append(
                Ignored(rel, "paretolens.yaml with no point under its directory", run_id)
            )


def _account(c: Collected, run_id: str, report: IngestReport) -> None:
    """Name an outcome for every file of the input that has none yet (none is left unsaid)."""
    said: set[str] = set()
    for outs in (report.accepted_files, report.auxiliary):
        said.update(o.path for o in outs if o.run_id == run_id)
    said.update(r.path.split("#", 1)[0] for r in report.rejected if r.run_id == run_id)
    said.update(r.path for r in report.rejected if r.run_id == run_id)
    said.update(i.path for i in report.ignored if i.run_id == run_id)
    for unit in c.units:
        for f in unit.files:
            if f.rel in said:
                continue
            if unit.name in said:
                why = f"not read on its own: it belongs to {unit.name}, which was rejected"
            else:
                why = "read, but no reader took anything from it: nothing stored"
            report.ignored.append(Ignored(f.rel, why, run_id))
            said.add(f.rel)


def _fill_only(point: Row) -> Row:
    keep = (
        Col.NUM_REQUESTS_TOTAL,
        Col.NUM_REQUESTS_SUCCESSFUL,
        Col.MEAN_INPUT_LEN,
        Col.MEAN_OUTPUT_LEN,
        Col.TOTAL_INPUT_TOKENS,
        Col.TOTAL_OUTPUT_TOKENS,
        Col.DURATION,
        Col.AVG_POWER_W,
        Col.SPEC_DRAFTS,
        Col.SPEC_DRAFT_TOKENS,
        Col.SPEC_ACCEPTED_TOKENS,
        Col.AL_MEASURED,
        Col.ACCEPT_RATE_PER_POS,
        Col.AL_SOURCE,
        Col.DRAFT_ACCEPTANCE_RATE,
    )
    return {k: point.get(k) for k in keep if point.get(k) is not None}


def ingest_paths(
    paths: Sequence[Path],
    store: Store,
    run_id: str | None = None,
    run_meta: dict[str, Any] | None = None,
    progress: Callable[[int, int], None] | None = None,
    defaults: Mapping[str, Any] | None = None,
    defaults_from: str = "the defaults",
) -> IngestReport:
    """Ingest files, directories and zips into the store.

    Args:
        paths: inputs; each becomes its own run unless `run_id` is given.
        store: the target store.
        run_id: put every point under this run id.
        run_meta: catalog fields for the run(s) (repo, branch, head_sha, title, ...).
        progress: called with (done, total) units as reading proceeds.
        defaults: canonical column -> value, for what the files do not say (the plan of a job
            the runner launched; ``--set key=value``). A default fills a column that the readers
            (and sidecars) left null, before normalisation, so it counts in the arm identity. A
            file's own value is kept; where it differs from the default, the point gets a warning
            naming both (also in ``report.notes``).
        defaults_from: how warnings name the defaults, e.g. "the job's plan".

    Returns:
        The report: runs touched, points accepted, duplicates skipped, rejects, ignored files.

    Raises:
        InvalidRunId: when `run_id`, or an input's default id (its directory's name), breaks
            the run id rule (`ingest.store.RUN_ID_RULE`); nothing is stored then.
        SchemaError: when a default is not a canonical column a default may set, or its value
            does not fit the column (nothing is read or stored then).
    """
    given = check_defaults(defaults or {})
    report = IngestReport()
    now = datetime.now(UTC)
    per_run: dict[str, tuple[list[pl.DataFrame], list[Row]]] = {}
    if run_id is not None:
        check_run_id(run_id)
    with tempfile.TemporaryDirectory(prefix="paretolens-ingest-") as work:
        collected = collect_all([Path(p) for p in paths], Path(work), run_id)
        # Nothing is read or written under an id the dashboard could not link to.
        for rid, _ in collected:
            check_run_id(rid)
        total = sum(len(c.units) for _, c in collected)
        done = 0
        for rid, c in collected:
            for prob in c.problems:
                report.rejected.append(Reject(rid, prob.rel, prob.reason, prob.field, "artifacts"))
            for name in c.superseded:
                report.ignored.append(
                    Ignored(
                        name,
                        "superseded: a newer retry of the same artifact, or a byte-identical "
                        "copy of a run-level artifact",
                        rid,
                    )
                )
            c, local = _read_local_defaults(c, rid, report)
            outs = []
            for unit in c.units:
                outs.append(_read_unit(unit, rid, report))
                done += 1
                if progress:
                    progress(done, total)
            rows, series = _build_rows(outs, rid, now, report, given, defaults_from, local)
            _account_local(local, rid, report)
            _account(c, rid, report)
            acc = per_run.setdefault(rid, ([], []))
            acc[0].append(rows)
            acc[1].extend(series)
            if rid not in report.runs:
                report.runs.append(rid)
    _store(store, per_run, report, run_meta or {}, now)
    return report


def _store(
    store: Store,
    per_run: dict[str, tuple[list[pl.DataFrame], list[Row]]],
    report: IngestReport,
    meta: dict[str, Any],
    now: datetime,
) -> None:
    with store.lock():
        for rid in report.runs:
            frames, series = per_run.get(rid, ([], []))
            rows = pl.concat(frames) if frames else empty_points()
            existing = (
                store.scan_points([rid])
                .select(Col.SOURCE_PATH, Col.SOURCE_SHA256)
                .unique()
                .collect()
            )
            known = set(
                zip(
                    existing.get_column(Col.SOURCE_PATH).to_list(),
                    existing.get_column(Col.SOURCE_SHA256).to_list(),
                    strict=True,
                )
            )
            known_sha = {s for _, s in known}
            paths: list[str] = rows.get_column(Col.SOURCE_PATH).to_list()
            new_rows = rows
            if known:
                shas = rows.get_column(Col.SOURCE_SHA256).to_list()
                keep = [
                    (p, s) not in known and s not in known_sha
                    for p, s in zip(paths, shas, strict=True)
                ]
                new_rows = rows.filter(pl.Series(keep, dtype=pl.Boolean))
            report.duplicates += rows.height - new_rows.height
            report.accepted += new_rows.height
            fresh = set(new_rows.get_column(Col.POINT_ID).to_list())
            mine = [o for o in report.accepted_files if o.run_id == rid]
            stale = [o for o in mine if not fresh.intersection(o.point_ids)]
            if stale:
                report.duplicate_files.extend(stale)
                report.accepted_files = [o for o in report.accepted_files if o not in stale]
            if new_rows.height:
                new_ids = set(new_rows.get_column(Col.POINT_ID).to_list())
                replaced = sorted(set(new_rows.get_column(Col.SOURCE_PATH).to_list()))
                sframe = (
                    pl.DataFrame([s for s in series if s[SeriesCol.POINT_ID] in new_ids])
                    if series
                    else pl.DataFrame()
                )
                store.replace_run_rows(rid, new_rows, sframe, replaced)
            # Every file read now has no old rejects, also one whose rows are already stored: an
            # ingest killed between the two writes left its stale reject behind.
            store.clear_rejects(rid, sorted(set(paths)))
            rej = [r for r in report.rejected if r.run_id == rid]
            store.add_rejects(
                pl.DataFrame(
                    [
                        {
                            RejectCol.RUN_ID: r.run_id,
                            RejectCol.PATH: r.path,
                            RejectCol.SHA256: r.sha256,
                            RejectCol.READER: r.reader,
                            RejectCol.FIELD: r.field,
                            RejectCol.REASON: r.reason,
                            RejectCol.AT: now,
                            RejectCol.OUTCOME: "rejected",
                        }
                        for r in rej
                    ]
                    + [
                        {
                            RejectCol.RUN_ID: rid,
                            RejectCol.PATH: i.path,
                            RejectCol.SHA256: "",
                            RejectCol.READER: "",
                            RejectCol.FIELD: "",
                            RejectCol.REASON: i.reason,
                            RejectCol.AT: now,
                            RejectCol.OUTCOME: "ignored",
                        }
                        for i in report.ignored
                        if i.run_id == rid
                    ]
                )
            )
            points = store.scan_points([rid]).select(pl.len()).collect().item()
            rejects = (
                store.rejects([rid])
                .filter(pl.col(RejectCol.OUTCOME).fill_null("rejected") != "ignored")
                .height
            )
            entry: dict[str, Any] = {
                RunCol.RUN_ID: rid,
                RunCol.SOURCE: meta.get(RunCol.SOURCE, "local"),
                RunCol.INGESTED_AT: now,
                RunCol.POINT_COUNT: points,
                RunCol.REJECT_COUNT: rejects,
            }
            for k in RunCol:
                if k in meta and k not in entry:
                    entry[k] = meta[k]
            store.upsert_run(entry)
