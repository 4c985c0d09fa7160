"""Building a batch's rows: the readers' results joined with their auxiliaries, defaults applied,
the batch normalised and the arms refined.

Auxiliary results (server metrics, logs, power, sidecars) are attached to the primary points they
belong to (`ingest.attach` decides which); what they add fills only what the point left null.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import polars as pl

from ingest import attach
from ingest.contract.col import Col
from ingest.contract.schema import SeriesCol
from ingest.defaults import apply_defaults, fill_row, local_defaults
from ingest.identity import refine_arms, unique_point_ids
from ingest.normalize import energy
from ingest.normalize.batch import normalize_batch
from ingest.normalize.canonical import is_known_model
from ingest.normalize.measurements import merge_measurements
from ingest.readers.base import ReadResult, SourceFile
from ingest.reading import UnitOut, content_sha, files_of
from ingest.report import FileOutcome, Ignored, IngestReport, Reject

Row = dict[str, Any]
_INPUT = "__input_row"


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
    primaries: list[UnitOut],
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
                Ignored(rel, choice.reason, run_id) for rel in files_of(item[0], item[1])
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
        sha = content_sha(src, attached if len(o.results) == 1 else [])
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
            measured = _measured_energy(
                items[pi], partial, src, (pi, len(res.points)), report, run_id
            )
            for k, v in measured.items():
                if merged.get(k) is None:
                    merged[k] = v
            if items[pi]:
                point_aux[pi] = tuple(
                    dict.fromkeys(rel for s_, e in items[pi] for rel in files_of(s_, e))
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


def _measured_energy(
    items: list[tuple[SourceFile, ReadResult]],
    point: Row,
    src: SourceFile,
    where: tuple[int, int],
    report: IngestReport,
    run_id: str,
) -> Row:
    """The measured energy columns of a point from the GPU telemetry joined to it (if any)."""
    power = next((e.scope["gpu_power"] for _s, e in items if e.scope.get("gpu_power")), None)
    if power is None:
        return {}
    # The point's own file, else a file joined to it that records the window (the raw result
    # beside an aggregate, in the same pair of artifacts).
    window = attach.point_window(src.data, *where) or next(
        (w for s_, _e in items if (w := attach.point_window(s_.data, 0, 1)) is not None),
        (None, None),
    )
    got = energy.measure(power, *window)
    if got.energy_j is None:
        report.notes.append(
            Ignored(src.rel, f"no measured energy from its GPU telemetry: {got.reason}", run_id)
        )
        return {}
    out: Row = {Col.MEASURED_ENERGY_J: got.energy_j, Col.MEASURED_POWER_W: got.power_w}
    tokens = [point.get(Col.TOTAL_INPUT_TOKENS), point.get(Col.TOTAL_OUTPUT_TOKENS)]
    counts = [float(t) for t in tokens if isinstance(t, int | float)]
    if len(counts) == 2 and sum(counts) > 0:
        out[Col.MEASURED_JOULES_PER_TOKEN] = got.energy_j / sum(counts)
    if got.power_w is not None and got.gpus:
        out[Col.AVG_POWER_W] = got.power_w / got.gpus
    return out


def build_rows(
    outs: list[UnitOut],
    run_id: str,
    now: datetime,
    report: IngestReport,
    defaults: Mapping[str, Any] | None = None,
    defaults_from: str = "the defaults",
    local: Mapping[str, tuple[Mapping[str, Any], str]] | None = None,
) -> tuple[pl.DataFrame, list[Row]]:
    """One run's rows from its read units: auxiliaries joined to their points, defaults
    applied, the batch normalised (refused rows to `report`) and arms refined; also the
    server-metric series of the stored points."""
    partials: list[Row] = []
    pending: list[_Pending] = []
    by_pair: dict[str, list[UnitOut]] = {}
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
                        for rel in files_of(src, res)
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
            fill_row(row, *local_defaults(local, path), path, run_id, report)
            for row, path in zip(partials, paths, strict=True)
        ]
    if defaults:
        partials = apply_defaults(partials, defaults, defaults_from, paths, run_id, report)
    batch = normalize_batch(
        partials,
        run_id=run_id,
        source_paths=paths,
        source_sha256s=shas,
        artifacts=artifacts,
        ingested_at=now,
    )
    _note_unknown_models(batch.frame, report)
    frame, moved = refine_arms(batch.frame)
    if moved:
        batch.point_ids = [moved.get(x, x) if x else x for x in batch.point_ids]
    # The frame holds the accepted rows in input order; each remembers its input row.
    taken_rows = [i for i, x in enumerate(batch.point_ids) if x]
    frame = frame.with_columns(pl.Series(_INPUT, taken_rows, dtype=pl.Int64))
    merged = merge_measurements(frame)
    if merged.moved:
        batch.point_ids = [merged.moved.get(x, x) if x else x for x in batch.point_ids]
    report.notes.extend(Ignored(path, why, run_id) for path, why in merged.notes)
    frame = merged.frame.sort(_INPUT)
    frame, renamed = unique_point_ids(frame)
    if renamed:
        inputs = frame.get_column(_INPUT).to_list()
        for row, new in renamed.items():
            batch.point_ids[inputs[row]] = new
    frame = frame.drop(_INPUT)
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


def _note_unknown_models(frame: pl.DataFrame, report: IngestReport) -> None:
    """One note per model key the model table does not know (the first file that names it)."""
    if not frame.height:
        return
    firsts = (
        frame.filter(pl.col(Col.MODEL_PREFIX).is_not_null())
        .group_by(Col.MODEL_PREFIX, maintain_order=True)
        .agg(pl.col(Col.SOURCE_PATH).first(), pl.col(Col.MODEL).drop_nulls().first())
    )
    said = {n.reason for n in report.notes}
    for key, path, model in firsts.iter_rows():
        if is_known_model(key):
            continue
        given = f" (from {model!r})" if model and str(model).casefold() != key else ""
        why = (
            f"model {key!r}{given} is not in the model table (ingest.normalize.canonical.MODELS): "
            f"kept as {key!r}; add a row there to pair it with its other spellings"
        )
        if why not in said:
            said.add(why)
            report.notes.append(Ignored(path, why))


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
