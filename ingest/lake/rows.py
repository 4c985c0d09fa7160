"""The new content of a run's partitions, computed from what the store holds (pure functions over
frames; `ingest.store` stages what they return)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl
import pyarrow as pa

from ingest.contract.col import Col
from ingest.contract.schema import (
    POINTS_SCHEMA,
    REJECTS_SCHEMA,
    RUNS_SCHEMA,
    TIMESERIES_SCHEMA,
    RejectCol,
    SeriesCol,
)
from ingest.frames import _conform, _polars_overrides, conform_frame

# What makes a reject the same one (it is recorded once).
REJECT_KEY = [RejectCol.RUN_ID, RejectCol.PATH, RejectCol.SHA256, RejectCol.FIELD, RejectCol.REASON]


def replaced_points(
    old: pl.DataFrame,
    new: pl.DataFrame,
    sources: Sequence[str],
    merged: Mapping[str, str] | None = None,
) -> tuple[pa.Table, set[str]]:
    """A run's points with the rows of `sources` (and the point ids `merged` names) replaced by
    `new`; and the point ids dropped."""
    gone = pl.col(Col.SOURCE_PATH).is_in(list(sources)) | pl.col(Col.POINT_ID).is_in(
        list(merged or {})
    )
    kept = old.filter(~gone)
    dropped = set(old.filter(gone).get_column(Col.POINT_ID).to_list())
    parts = [_conform(kept, POINTS_SCHEMA)] if kept.height else []
    parts.append(_conform(new, POINTS_SCHEMA))
    return (pa.concat_tables(parts).combine_chunks() if len(parts) > 1 else parts[0]), dropped


def replaced_series(old: pl.DataFrame, new: pl.DataFrame, written: set[str]) -> pa.Table:
    """A run's series without those of the `written` point ids, plus `new`."""
    kept = old.filter(~pl.col(SeriesCol.POINT_ID).is_in(list(written)))
    frames = [conform_frame(kept, TIMESERIES_SCHEMA)]
    if new.height:
        frames.append(conform_frame(new, TIMESERIES_SCHEMA))
    return _conform(pl.concat(frames), TIMESERIES_SCHEMA)


def catalog_row(old: pl.DataFrame, entry: dict[str, object]) -> pa.Table:
    """A run's catalog row: `old`'s (if any) updated with the fields `entry` gives."""
    base: dict[str, object] = old.row(0, named=True) if old.height else {}
    merged = {**base, **{k: v for k, v in entry.items() if v is not None}}
    row = conform_frame(
        pl.DataFrame([merged], schema_overrides=_polars_overrides(RUNS_SCHEMA), strict=False),
        RUNS_SCHEMA,
    )
    return _conform(row, RUNS_SCHEMA)


def with_rejects(old: pl.DataFrame, new: pl.DataFrame) -> pa.Table | None:
    """A run's rejects with those of `new` not recorded yet (None: nothing new)."""
    added = new.join(old.select(REJECT_KEY), on=REJECT_KEY, how="anti", nulls_equal=True)
    return _conform(pl.concat([old, added]), REJECTS_SCHEMA) if added.height else None


def without_rejects_of(old: pl.DataFrame, paths: list[str]) -> pa.Table | None:
    """A run's rejects without those of `paths` (None: it has none of them)."""
    drop = pl.col(RejectCol.PATH).is_in(paths)
    return _conform(old.filter(~drop), REJECTS_SCHEMA) if old.filter(drop).height else None
