"""One measurement, one point; one rule for repeats.

After a run's batch is normalised and its arms refined, the rows that share a configuration
(`arm_id`) and a load (`conc`, or `request_rate`) are sorted out by what was measured, never by
file name:

- **copies**: rows whose measured values are equal (relative 1e-9, on every measured column
  both state) are one measurement that the download holds twice (a `bmk_agentic_*/<name>.json`
  and its row in `results_bmk/agg_bmk.json`, a zip and its unzipped copy). The fullest row is
  stored; the others' files name it as their point.
- **disagreeing copies**: rows from the same benchmark run (equal duration, and equal request
  counts and token totals where both state them) whose measured values differ. Both are kept
  apart, each with a warning, and the ingest notes say which values differ.
- **repeats**: different measurements of the same configuration at the same load in one
  directory (lines appended to one SGLang JSONL or vLLM JSON, re-runs saved beside each other).
  Measurements of other directories stay apart, with a note (a directory can stand for a
  setting no file records). Repeats become one point, as a
  `vllm bench sweep` combination's `run=N` files do: every measured column is the mean of the
  repeats (counts rounded), `repeats` is their number and `repeat_tput_spread` the (max - min) /
  mean of their total throughput; each underlying measurement (its source, its own point id and
  every measured value) stays in `metadata.repeats` (`paretolens points --repeats`).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import polars as pl
import pyarrow as pa

from ingest.contract.col import Col
from ingest.contract.columns import COLUMNS

Row = dict[str, Any]

MEASURED_GROUPS = frozenset({"throughput", "latency", "interactivity", "requests", "spec_measured"})
MEASURED: tuple[str, ...] = tuple(
    str(s.name)
    for s in COLUMNS
    if s.group in MEASURED_GROUPS and s.dtype in (pa.float64(), pa.int64())
)
_INTS = frozenset(str(s.name) for s in COLUMNS if s.dtype == pa.int64())
# What one benchmark run leaves however its result is copied: two rows that agree on these are
# the same run (two copies), whatever else they say.
RUN_FINGERPRINT: tuple[str, ...] = tuple(
    str(c)
    for c in (
        Col.NUM_REQUESTS_TOTAL,
        Col.NUM_REQUESTS_SUCCESSFUL,
        Col.TOTAL_INPUT_TOKENS,
        Col.TOTAL_OUTPUT_TOKENS,
        Col.DURATION,
    )
)
KEY_COLUMNS = (str(Col.ARM_ID), str(Col.CONC), str(Col.REQUEST_RATE))
_KEY = KEY_COLUMNS
_REL = 1e-9


@dataclass
class Merged:
    """What `merge_measurements` did.

    frame: the rows to store.
    moved: {point id of a row not stored on its own: the point id that now holds it}.
    notes: (source path, what happened) for the ingest report.
    """

    frame: pl.DataFrame
    moved: dict[str, str] = field(default_factory=dict)
    notes: list[tuple[str, str]] = field(default_factory=list)
    copies: dict[str, list[str]] = field(default_factory=dict)

    def copy_notes(self) -> list[tuple[str, str]]:
        """One note per file some of whose points were copies of stored ones."""
        out = []
        for path, kept in self.copies.items():
            if len(kept) == 1:
                why = f"the same measurement as {kept[0]}"
            else:
                shown = ", ".join(kept[:3]) + (
                    f", ... ({len(kept)} files)" if len(kept) > 3 else ""
                )
                why = f"{len(kept)} of its points are the same measurements as {shown}"
            out.append((path, f"{why} (same configuration, load and measured values): stored once"))
        return out


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        fa, fb = float(a), float(b)
        return fa == fb or math.isclose(fa, fb, rel_tol=_REL, abs_tol=0.0)
    return bool(a == b)


def _shared(a: Row, b: Row, cols: Sequence[str]) -> list[str]:
    return [c for c in cols if a.get(c) is not None and b.get(c) is not None]


def _same_values(a: Row, b: Row) -> bool:
    shared = _shared(a, b, MEASURED)
    return len(shared) >= 3 and all(_equal(a[c], b[c]) for c in shared)


def _same_run(a: Row, b: Row) -> bool:
    # The duration tells one run from a repeat (a repeat with a fixed prompt set has the same
    # request and token counts); without it two rows are never taken for one run.
    shared = _shared(a, b, RUN_FINGERPRINT)
    return str(Col.DURATION) in shared and all(_equal(a[c], b[c]) for c in shared)


def _differing(a: Row, b: Row) -> list[str]:
    return [c for c in _shared(a, b, MEASURED) if not _equal(a[c], b[c])]


def _fullness(row: Row) -> int:
    return sum(v is not None for v in row.values())


def _meta(raw: Any) -> dict[str, Any]:
    if not raw:
        return {}
    try:
        doc = json.loads(str(raw))
    except (json.JSONDecodeError, RecursionError):
        return {"metadata": str(raw)}
    return doc if isinstance(doc, dict) else {"metadata": doc}


def measurement(source_path: str, row: Row, point_id: str | None = None) -> dict[str, Any]:
    """One underlying measurement as `metadata.repeats` keeps it: where it came from and every
    measured value it states (a reader's row or a stored point)."""
    out: dict[str, Any] = {"source_path": source_path}
    if point_id is not None:
        out["point_id"] = point_id
    out.update({c: row[c] for c in MEASURED if row.get(c) is not None})
    return out


def _weight(row: Row) -> int:
    n = row.get(str(Col.REPEATS))
    return n if isinstance(n, int) and n > 1 else 1


def _underlying(row: Row) -> list[dict[str, Any]]:
    """The measurements a row stands for: its own `metadata.repeats` (a point that summarises
    repeats already, e.g. a sweep combination), else itself."""
    kept = _meta(row.get(str(Col.METADATA))).get("repeats")
    if isinstance(kept, list) and kept:
        return [k for k in kept if isinstance(k, dict)]
    return [measurement(str(row.get(str(Col.SOURCE_PATH))), row, str(row.get(str(Col.POINT_ID))))]


def _pick(rows: Sequence[Row]) -> Row:
    """The row whose identity and provenance stand for several: the fullest, then the first by
    source path and point id (the same whichever order the rows arrived in)."""
    return min(
        rows,
        key=lambda r: (
            -_fullness(r),
            str(r.get(str(Col.SOURCE_PATH)) or ""),
            str(r.get(str(Col.POINT_ID)) or ""),
        ),
    )


_SAID = "each is in metadata.repeats"


def repeats_of(metadata: Any) -> list[dict[str, Any]]:
    """The underlying measurements a stored point's `metadata` lists (none: not a merged point)."""
    kept = _meta(metadata).get("repeats")
    return [k for k in kept if isinstance(k, dict)] if isinstance(kept, list) else []


def _mean_row(reps: list[Row]) -> Row:
    """The repeats as one row: the fullest one's identity and provenance, the mean of each
    measured column over the measurements that state it (a row that summarises n repeats stands
    for its n measurements). The result does not depend on the order of `reps`, nor on whether
    some of them were merged before (a stored point that a later ingest adds a repeat to)."""
    base = dict(_pick(reps))
    # A measurement is counted once, also when two of the rows hold it (a stored point and a
    # merged row of a concurrent ingest that both contain it): the same source, id and values.
    seen: dict[str, dict[str, Any]] = {}
    listed = 0
    for r in reps:
        for m in _underlying(r):
            listed += 1
            seen.setdefault(json.dumps(m, sort_keys=True, default=str), m)
    every = sorted(seen.values(), key=lambda m: (str(m.get("source_path")), str(m.get("point_id"))))
    for c in MEASURED:
        if all(m.get(c) is not None for m in every):
            mean = math.fsum(float(m[c]) for m in every) / len(every)
        else:
            pairs = [(float(r[c]), _weight(r)) for r in reps if r.get(c) is not None]
            if not pairs:
                continue
            mean = math.fsum(v * w for v, w in pairs) / sum(w for _, w in pairs)
        base[c] = round(mean) if c in _INTS else mean
    base[str(Col.REPEATS)] = sum(_weight(r) for r in reps) - (listed - len(seen))
    tputs = [float(m[str(Col.TOTAL_TPUT)]) for m in every if m.get(str(Col.TOTAL_TPUT)) is not None]
    if len(tputs) == len(every) and sum(tputs) > 0:
        base[str(Col.REPEAT_SPREAD)] = (max(tputs) - min(tputs)) / (math.fsum(tputs) / len(tputs))
    meta = _meta(base.get(str(Col.METADATA)))
    meta["repeats"] = every
    base[str(Col.METADATA)] = json.dumps(meta, sort_keys=True, default=str)
    sources = sorted({str(m.get("source_path")) for m in every})
    said = (
        f"the mean of {base[str(Col.REPEATS)]} measurements of this configuration at this load "
        f"({', '.join(sources)}); {_SAID}"
    )
    kept = [w for w in base.get(str(Col.WARNINGS)) or [] if not str(w).endswith(_SAID)]
    base[str(Col.WARNINGS)] = [*kept, said]
    ids = [str(m.get("point_id")) for m in every]
    if any(m.get("point_id") is None for m in every):
        ids = [str(r.get(str(Col.POINT_ID))) for r in reps]
    base[str(Col.POINT_ID)] = hashlib.sha256(json.dumps(sorted(ids)).encode()).hexdigest()[:16]
    return base


def _sort_group(group: list[Row], out: Merged) -> list[Row]:
    """The rows of one configuration and load, as the rows to store."""
    copies: list[list[Row]] = []
    for row in group:
        for cluster in copies:
            if _same_values(cluster[0], row):
                cluster.append(row)
                break
        else:
            copies.append([row])
    kept: list[Row] = []
    for cluster in copies:
        best = _pick(cluster)
        for other in cluster:
            if other is best:
                continue
            out.moved[str(other[str(Col.POINT_ID)])] = str(best[str(Col.POINT_ID)])
            where = str(other[str(Col.SOURCE_PATH)])
            out.copies.setdefault(where, []).append(str(best[str(Col.SOURCE_PATH)]))
        kept.append(best)
    if len(kept) < 2:
        return kept
    disagree = [(a, b) for i, a in enumerate(kept) for b in kept[i + 1 :] if _same_run(a, b)]
    if disagree:
        for a, b in disagree:
            cols = _differing(a, b)
            shown = "; ".join(f"{c} {a[c]} vs {b[c]}" for c in cols[:4])
            more = f" (and {len(cols) - 4} more)" if len(cols) > 4 else ""
            why = (
                f"{a[str(Col.SOURCE_PATH)]} and {b[str(Col.SOURCE_PATH)]} are copies of one "
                f"benchmark run (same requests, tokens and duration) that disagree: {shown}{more}; "
                "both kept apart"
            )
            out.notes.append((str(a[str(Col.SOURCE_PATH)]), why))
            for r in (a, b):
                r[str(Col.WARNINGS)] = [*(r.get(str(Col.WARNINGS)) or []), why]
        return kept
    # Repeats are the measurements of one directory (lines appended to one file, re-runs saved
    # beside each other, a sweep combination's runs): rows of other directories may differ in a
    # setting no file records (a `vllm+eagle` folder beside a `vllm` one), so they stay apart.
    by_dir: dict[str, list[Row]] = {}
    for r in kept:
        by_dir.setdefault(_directory(r), []).append(r)
    rows: list[Row] = []
    for reps in by_dir.values():
        if len(reps) == 1:
            rows.extend(reps)
            continue
        merged = _mean_row(reps)
        for r in reps:
            out.moved[str(r[str(Col.POINT_ID)])] = str(merged[str(Col.POINT_ID)])
        rows.append(merged)
    if len(rows) > 1:
        where = ", ".join(sorted(by_dir))
        out.notes.append(
            (
                str(rows[0][str(Col.SOURCE_PATH)]),
                f"{len(rows)} points of one configuration and load in different directories "
                f"({where}) are kept apart: nothing the files say tells them apart, and a "
                "directory can stand for a setting they do not record (say it with --set or a "
                "paretolens.yaml beside them to give each its own arm)",
            )
        )
    return rows


def _directory(row: Row) -> str:
    return str(PurePosixPath(str(row.get(str(Col.SOURCE_PATH)) or "")).parent)


def merge_measurements(frame: pl.DataFrame) -> Merged:
    """Store each measurement once and each configuration and load as one point (module doc).

    Args:
        frame: one run's normalised points (arms refined).

    Returns:
        The rows to store, the point ids that now live in another row, and the notes.
    """
    if frame.height < 2:
        return Merged(frame)
    dup = frame.select(pl.struct(*_KEY).is_duplicated()).to_series()
    if not dup.any():
        return Merged(frame)
    out = Merged(frame)
    rest = frame.filter(~dup)
    groups: dict[tuple[Any, ...], list[Row]] = {}
    for row in frame.filter(dup).iter_rows(named=True):
        groups.setdefault(tuple(row[k] for k in _KEY), []).append(row)
    rows = [r for g in groups.values() for r in _sort_group(g, out)]
    out.notes[:0] = out.copy_notes()
    if not out.moved and not any(str(Col.WARNINGS) in r for r in rows):
        return out
    made = pl.DataFrame(rows, schema=frame.schema, strict=False)
    out.frame = pl.concat([rest, made], how="vertical")
    return out


def point_repeats(point: Row) -> list[Row]:
    """The underlying measurements of one stored point that summarises repeats, in the order
    `points --repeats` numbers them (each: `source_path`, maybe `point_id`, and the measured
    values it states); [] for a point that is one measurement."""
    reps = _meta(point.get(str(Col.METADATA))).get("repeats")
    if not isinstance(reps, list) or len(reps) < 2:
        return []
    return [r if isinstance(r, dict) else {} for r in reps]


REPEAT_COLUMNS: tuple[str, ...] = (
    str(Col.RUN_ID),
    str(Col.POINT_ID),
    str(Col.ARM_LABEL),
    str(Col.CONC),
    str(Col.REQUEST_RATE),
    str(Col.REPEATS),
    "repeat",
    "repeat_source",
)


def repeat_rows(points: pl.DataFrame) -> pl.DataFrame:
    """Every underlying measurement of the points: a point that summarises repeats
    (`metadata.repeats`) gives one row per repeat, numbered from 1, with its own source and
    measured values; any other point is its own one measurement.

    Returns:
        `REPEAT_COLUMNS`, then the measured columns (`MEASURED`) the points have.
    """
    measured = [c for c in MEASURED if c in points.columns]
    rows: list[Row] = []
    for p in points.iter_rows(named=True):
        head = {c: p.get(c) for c in REPEAT_COLUMNS[:6]}
        reps = _meta(p.get(str(Col.METADATA))).get("repeats")
        if not isinstance(reps, list) or not reps:
            one = {c: p.get(c) for c in measured}
            rows.append({**head, "repeat": 1, "repeat_source": p.get(str(Col.SOURCE_PATH)), **one})
            continue
        for i, rep in enumerate(reps, 1):
            got = rep if isinstance(rep, dict) else {}
            vals = {c: got.get(c) for c in measured}
            rows.append({**head, "repeat": i, "repeat_source": got.get("source_path"), **vals})
    schema: dict[str, Any] = {c: points.schema[c] for c in REPEAT_COLUMNS if c in points.schema}
    schema.update(repeat=pl.Int64, repeat_source=pl.String)
    schema.update({c: points.schema[c] for c in measured})
    return pl.DataFrame(rows, schema=schema, strict=False)
