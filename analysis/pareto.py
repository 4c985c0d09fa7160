"""Two-metric Pareto frontiers: per comparison group (the envelope across arms) and per arm.

Both axes are oriented by `ingest.schema.better`, so "dominates" always means "at least as good on
both metrics and strictly better on one". A point equal to a frontier point is on the frontier; a
weakly dominated point (equal on one metric, worse on the other) is not. The numpy kernel is
`analysis.dominance`: one O(n log n) sort of all groups at once plus vectorised running maxima.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
import pyarrow as pa

from analysis.dominance import (
    BoolArray,
    FloatArray,
    IntArray,
    dense,
    dominators_from_ranks,
    nondominated_from_ranks,
)
from ingest.schema import DEFAULT_GROUP, Col, better

# Internal column names (never collide with canonical ones).
_GROUP = "__group"


@dataclass(frozen=True)
class Frontier:
    """One frontier polyline, its points sorted by x ascending.

    key: the (column, value) pairs that identify the group (and, for an arm frontier, the arm).
    label: readable name (the arm label for arm frontiers, the group values otherwise).
    """

    key: tuple[tuple[str, object], ...]
    label: str
    x: str
    y: str
    point_ids: tuple[str, ...]
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    concs: tuple[int | None, ...]


@dataclass(frozen=True, eq=False)
class FrontierResult:
    """Frontier membership of every input row plus the frontier polylines.

    flags: one row per input row, in input order: `point_id`, `excluded_reason` (null when both
        axes are usable), `on_frontier` (group envelope), `on_arm_frontier`, `dominated_by`
        (ids of the group-frontier points that dominate the point, nearest in x first).
    """

    x: str
    y: str
    by: tuple[str, ...]
    flags: pl.DataFrame
    group_frontiers: tuple[Frontier, ...]
    arm_frontiers: tuple[Frontier, ...]

    @property
    def excluded(self) -> pl.DataFrame:
        """Rows whose axis values are missing or non-positive: `point_id`, `reason`."""
        return self.flags.filter(pl.col("excluded_reason").is_not_null()).select(
            "point_id", pl.col("excluded_reason").alias("reason")
        )


def arm_columns(by: Sequence[str]) -> tuple[str, ...]:
    """The columns that identify an arm inside a comparison group (group + run + arm id)."""
    return tuple(dict.fromkeys([*by, Col.RUN_ID, Col.ARM_ID]))


def oriented(values: FloatArray, metric: str) -> FloatArray:
    """Values flipped so that bigger is better (negated when the schema says lower is better)."""
    return values if better(metric) == "higher" else -values


def axis_problems(points: pl.DataFrame, x: str, y: str) -> pl.Series:
    """Why each row cannot go on the x/y plane (null when it can), e.g. 'missing p90_ttft'."""
    exprs = []
    for col in dict.fromkeys([x, y]):
        v = pl.col(col).cast(pl.Float64)
        exprs.append(
            pl.when(v.is_null() | v.is_nan())
            .then(pl.lit(f"missing {col}"))
            .when(v.is_infinite())
            .then(pl.lit(f"non-finite {col}"))
            .when(v <= 0)
            .then(pl.format(f"non-positive {col} ({{}})", v))
        )
    joined = pl.concat_str(exprs, separator="; ", ignore_nulls=True)
    return points.select(pl.when(joined != "").then(joined).alias("excluded_reason")).to_series()


def frontier_mask(
    points: pl.DataFrame,
    x: str = Col.MEDIAN_INTVTY,
    y: str = Col.TPUT_PER_GPU,
    by: Sequence[str] = DEFAULT_GROUP,
) -> pl.Series:
    """Boolean Series aligned to `points`: on its group's frontier (False when excluded)."""
    return compute_frontiers(points, x, y, by, with_dominators=False).flags.get_column(
        "on_frontier"
    )


def _group_codes(points: pl.DataFrame, by: Sequence[str]) -> IntArray:
    if not by:
        return np.zeros(points.height, dtype=np.int64)
    codes = (
        points.select(list(by)).with_row_index(_GROUP).select(pl.col(_GROUP).first().over(list(by)))
    )
    return codes.to_series().to_numpy().astype(np.int64)


def compute_frontiers(
    points: pl.DataFrame,
    x: str = Col.MEDIAN_INTVTY,
    y: str = Col.TPUT_PER_GPU,
    by: Sequence[str] = DEFAULT_GROUP,
    *,
    with_dominators: bool = True,
    max_dominated_by: int | None = None,
) -> FrontierResult:
    """Frontiers of `points` on metrics x and y, per group of `by` and per arm inside each group.

    Args:
        points: canonical points (any subset of rows; not modified).
        x, y: metric columns; their better direction comes from the schema.
        by: comparison-group columns (default run x scenario x model x isl/osl x hw x precision).
        with_dominators: also list, for each dominated point, the frontier points dominating it.
        max_dominated_by: cap on the length of each `dominated_by` list (None: all of them).

    Returns:
        A FrontierResult; rows with missing or non-positive axis values are excluded (and named).

    Raises:
        ValueError: when x or y is not a metric with a better direction.
    """
    better(x), better(y)  # raise early on a non-metric axis
    x, y = str(x), str(y)
    by = tuple(str(c) for c in by)
    arm_by = arm_columns(by)
    reasons = axis_problems(points, x, y)
    valid = reasons.is_null().to_numpy()
    xs = points.get_column(x).cast(pl.Float64).to_numpy()
    ys = points.get_column(y).cast(pl.Float64).to_numpy()
    vx, vy = oriented(xs[valid], x), oriented(ys[valid], y)
    on_group = np.zeros(points.height, dtype=np.bool_)
    on_arm = np.zeros(points.height, dtype=np.bool_)
    x_rank, y_rank = dense(vx), dense(vy)
    g_rank = dense(_group_codes(points, by)[valid])
    if len(vx):
        on_group[valid] = nondominated_from_ranks(g_rank, x_rank, y_rank)
        on_arm[valid] = nondominated_from_ranks(
            dense(_group_codes(points, arm_by)[valid]), x_rank, y_rank
        )
    ids = points.get_column(Col.POINT_ID)
    flags = pl.DataFrame(
        {
            "point_id": ids,
            "excluded_reason": reasons,
            "on_frontier": on_group,
            "on_arm_frontier": on_arm,
        }
    )
    if with_dominators:
        offsets_v, rows_v = dominators_from_ranks(
            g_rank, x_rank, y_rank, on_group[valid], max_dominated_by
        )
        valid_rows = np.flatnonzero(valid)
        counts = np.zeros(points.height, dtype=np.int64)
        counts[valid] = np.diff(offsets_v)
        offsets = np.zeros(points.height + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        values = ids.gather(valid_rows[rows_v]).to_arrow()
        arr = pa.LargeListArray.from_arrays(pa.array(offsets), values)
        flags = flags.with_columns(pl.Series("dominated_by", arr).cast(pl.List(pl.String)))
    return FrontierResult(
        x=x,
        y=y,
        by=by,
        flags=flags,
        group_frontiers=_polylines(points, on_group, by, x, y, arm=False),
        arm_frontiers=_polylines(points, on_arm, arm_by, x, y, arm=True),
    )


def _polylines(
    points: pl.DataFrame, mask: BoolArray, keys: Sequence[str], x: str, y: str, *, arm: bool
) -> tuple[Frontier, ...]:
    sel = points.filter(pl.Series(mask))
    if sel.height == 0:
        return ()
    if Col.CONC not in sel.columns:
        sel = sel.with_columns(pl.lit(None, pl.Int64).alias(Col.CONC))
    aggs = [
        pl.col(Col.POINT_ID).alias("__ids"),
        pl.col(x).cast(pl.Float64).alias("__xs"),
        pl.col(y).cast(pl.Float64).alias("__ys"),
        pl.col(Col.CONC).alias("__concs"),
    ]
    if arm and Col.ARM_LABEL in sel.columns:
        aggs.append(pl.col(Col.ARM_LABEL).first().alias("__label"))
    group_keys: list[str | pl.Expr] = [*keys] if keys else [pl.lit(0).alias(_GROUP)]
    grouped = (
        sel.sort([x, Col.POINT_ID])
        .group_by(group_keys, maintain_order=True)
        .agg(aggs)
        .sort(list(keys) or _GROUP, nulls_last=True)
    )
    out = []
    for row in grouped.iter_rows(named=True):
        key = tuple((k, row[k]) for k in keys)
        name = row.get("__label") or " / ".join(str(v) for _, v in key if v is not None)
        out.append(
            Frontier(
                key=key,
                label=str(name),
                x=x,
                y=y,
                point_ids=tuple(row["__ids"]),
                xs=tuple(row["__xs"]),
                ys=tuple(row["__ys"]),
                concs=tuple(row["__concs"]),
            )
        )
    return tuple(out)
