"""Two-metric Pareto frontiers: per comparison group (the envelope across arms) and per arm.

Both axes are oriented by `ingest.contract.schema.better`, so "dominates" always means "at least as good on
both metrics and strictly better on one". A point equal to a frontier point is on the frontier; a
weakly dominated point (equal on one metric, worse on the other) is not. The numpy kernel is
`analysis.frontier.dominance`: one float sort per axis, small-integer regroupings by arm and by group and
vectorised running maxima; the polylines are `analysis.frontier.polylines`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
import polars as pl
import pyarrow as pa
from polars import CompatLevel

from analysis.frontier.codes import columns, dense_codes, gather, key_ranks, rows_of, spread
from analysis.frontier.dominance import (
    BoolArray,
    FloatArray,
    IntArray,
    dense,
    dominator_runs,
    nondominated_sorted,
    order_by,
)
from analysis.frontier.polylines import FrontierLines, LazyFrontiers, LineSet, PolylineColumns
from ingest.contract.col import Col
from ingest.contract.schema import DEFAULT_GROUP, better

if TYPE_CHECKING:
    from polars.expr.whenthen import ChainedThen, Then

__all__ = [
    "ArmSets",
    "Check",
    "FrontierResult",
    "Judgement",
    "arm_columns",
    "axis_problems",
    "axis_unusable",
    "compute_frontiers",
    "dominated_lists",
    "first_reason",
    "frontier_lines",
    "frontier_mask",
    "judge",
]


@dataclass(frozen=True, eq=False)
class FrontierResult(LazyFrontiers):
    """Frontier membership of every input row plus the frontier polylines (`group_frontiers`,
    `arm_frontiers`: built from `lines` on first use).

    flags: one row per input row, in input order: `point_id`, `excluded_reason` (null when both
        axes are usable), `on_frontier` (group envelope), `on_arm_frontier`, `dominated_by`
        (ids of the group-frontier points that dominate the point, nearest in x first).
    """

    x: str
    y: str
    by: tuple[str, ...]
    flags: pl.DataFrame
    lines: FrontierLines = field(repr=False)

    @property
    def excluded(self) -> pl.DataFrame:
        """Rows whose axis values are missing or non-positive: `point_id`, `reason`."""
        return self.flags.filter(pl.col("excluded_reason").is_not_null()).select(
            "point_id", pl.col("excluded_reason").alias("reason")
        )


def arm_columns(by: Sequence[str]) -> tuple[str, ...]:
    """The columns that identify an arm inside a comparison group (group + run + arm id)."""
    return tuple(dict.fromkeys([*by, Col.RUN_ID, Col.ARM_ID]))


def axis_problems(points: pl.DataFrame, x: str, y: str) -> pl.Series:
    """Why each row cannot go on the x/y plane (null when it can), e.g. 'missing p90_ttft'."""
    bad = np.flatnonzero(points.select(axis_unusable(x, y)).to_series().to_numpy())
    # the strings are built for the unusable rows only
    reasons = gather(columns(points, dict.fromkeys([x, y])), bad).select(_axis_reasons(x, y))
    return spread(reasons.to_series(), bad, points.height).alias("excluded_reason")


@lru_cache(maxsize=256)
def _axis_reasons(x: str, y: str) -> pl.Expr:
    """The reasons `axis_problems` gives, built once per pair of axes."""
    return pl.concat_str(
        [first_reason(checks) for checks in _axis_checks(x, y)], separator="; ", ignore_nulls=True
    )


@lru_cache(maxsize=256)
def axis_unusable(x: str, y: str) -> pl.Expr:
    """True where a row cannot go on the x/y plane (where `axis_problems` names a reason);
    built once per pair of axes (an expression is immutable)."""
    conds = [cond for checks in _axis_checks(x, y) for cond, _ in checks]
    return pl.any_horizontal(conds).fill_null(False)


Check = tuple[pl.Expr, pl.Expr]  # (condition, the reason it gives when it holds)


@lru_cache(maxsize=256)
def _axis_checks(x: str, y: str) -> tuple[tuple[Check, ...], ...]:
    """Per axis column, its checks in order (the first that holds is the column's reason)."""
    out = []
    for col in dict.fromkeys([x, y]):
        v = pl.col(col).cast(pl.Float64)
        out.append(
            (
                (v.is_null() | v.is_nan(), pl.lit(f"missing {col}")),
                (v.is_infinite(), pl.lit(f"non-finite {col}")),
                (v <= 0, pl.format(f"non-positive {col} ({{}})", v)),
            )
        )
    return tuple(out)


def first_reason(checks: Sequence[Check]) -> pl.Expr:
    """The reason of the first check that holds (null when none does)."""
    (cond, reason), *rest = checks
    expr: Then | ChainedThen = pl.when(cond).then(reason)
    for cond, reason in rest:
        expr = expr.when(cond).then(reason)
    return expr


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
    reasons = axis_problems(points, x, y)
    valid = np.flatnonzero(reasons.is_null().to_numpy())
    sets = ArmSets.of(points, by)
    xs = points.get_column(x).cast(pl.Float64).to_numpy()
    ys = points.get_column(y).cast(pl.Float64).to_numpy()
    j = judge(sets.group[valid], sets.arm[valid], xs[valid], ys[valid], x, y, max_dominated_by,
              dominators=with_dominators)  # fmt: skip
    on_group = np.zeros(points.height, dtype=np.bool_)
    on_arm = np.zeros(points.height, dtype=np.bool_)
    on_group[valid], on_arm[valid] = j.on_group, j.on_arm
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
        counts = np.zeros(points.height, dtype=np.int64)
        lo = np.zeros(points.height, dtype=np.int64)
        counts[valid], lo[valid] = j.counts, j.lo
        front_ids = ids.gather(valid[j.front])
        flags = flags.with_columns(dominated_lists(front_ids, lo, counts).alias("dominated_by"))
    cols = PolylineColumns.of(points, x, y)
    return FrontierResult(x=x, y=y, by=by, flags=flags, lines=frontier_lines(j, valid, sets, cols))


def frontier_lines(
    j: Judgement, rows: IntArray, sets: ArmSets, cols: PolylineColumns
) -> FrontierLines:
    """What the polylines of a judgement are built from (`rows`: the judged points' rows)."""
    g_rows, a_rows = rows[j.on_group], rows[j.on_arm]
    return FrontierLines(
        cols=cols,
        group=LineSet(g_rows, sets.group[g_rows], sets.group_keys, j.x_rank[j.on_group], False),
        arm=LineSet(a_rows, sets.arm[a_rows], sets.arm_keys, j.x_rank[j.on_arm], True),
    )


@dataclass(frozen=True, eq=False)
class ArmSets:
    """Integer codes of the comparison groups and arms of a frame of points.

    arm / group: dense codes per row; arm_first: the first row of each arm; arm_keys /
    group_keys: one row per code with the key columns (`arm_columns(by)` / `by`) and `__rank`,
    its rank in key order (nulls last).
    """

    arm: IntArray
    group: IntArray
    arm_first: IntArray
    arm_keys: pl.DataFrame
    group_keys: pl.DataFrame

    @classmethod
    def of(cls, points: pl.DataFrame, by: Sequence[str]) -> ArmSets:
        """Hash the arm columns once; groups are coded on one row per arm."""
        arm_by = list(arm_columns(by))
        arm, arm_first = dense_codes(points, arm_by)
        arm_keys = gather(columns(points, arm_by), arm_first)
        group_of_arm, group_first = dense_codes(arm_keys, list(by))
        # one row per group (no key columns when `by` is empty: one group)
        group_keys = gather(columns(arm_keys, list(by)), group_first, len(group_first))
        return cls(
            arm=arm,
            group=group_of_arm[arm],
            arm_first=arm_first,
            arm_keys=arm_keys.hstack([pl.Series("__rank", key_ranks(arm_keys))]),
            group_keys=group_keys.hstack([pl.Series("__rank", key_ranks(group_keys))]),
        )


@dataclass(frozen=True, eq=False)
class Judgement:
    """Frontier membership of a set of points (arrays aligned with that set).

    x_rank: dense rank of the raw x values (ascending, not oriented): the polyline order.
    front, lo, counts: the dominators of point i are front[lo[i] : lo[i] + counts[i]]
        (see `dominance.dominator_runs`).
    """

    on_group: BoolArray
    on_arm: BoolArray
    x_rank: IntArray
    front: IntArray
    lo: IntArray
    counts: IntArray


def judge(
    group: IntArray,
    arm: IntArray,
    xs: FloatArray,
    ys: FloatArray,
    x: str,
    y: str,
    limit: int | None = None,
    tiebreak: IntArray | None = None,
    y_rank: IntArray | None = None,
    dominators: bool = True,
) -> Judgement:
    """Group and arm frontiers of usable points, and every point's dominators.

    Args:
        group, arm: integer codes (arms nested in groups).
        xs, ys: raw axis values (finite); x, y: their metrics (for the directions).
        limit: cap on the dominators listed per point.
        tiebreak: order of equal frontier points in the dominator lists (default: array order).
        y_rank: dense ranks of ys when the caller already has them.
        dominators: also find each point's dominators (else front, lo, counts are empty).
    """
    x_rank = dense(xs)
    yr = dense(ys) if y_rank is None else y_rank
    nx = int(x_rank.max(initial=0))
    ox = x_rank if better(x) == "higher" else nx - x_rank
    oy = yr if better(y) == "higher" else int(yr.max(initial=0)) - yr
    n = len(xs)
    on_group = np.zeros(n, dtype=np.bool_)
    on_arm = np.zeros(n, dtype=np.bool_)
    if n:
        # each arm with better x first (one packed integer sort)
        back = nx - ox
        by_arm = order_by(arm, back)
        on_arm[by_arm] = nondominated_sorted(arm[by_arm], ox[by_arm], oy[by_arm])
        # an arm is a subset of its group, so the group frontier is among the arm frontiers
        cand = np.flatnonzero(on_arm)
        by_group = cand[order_by(group[cand], back[cand])]
        on_group[by_group] = nondominated_sorted(group[by_group], ox[by_group], oy[by_group])
    if not dominators:
        none = np.zeros(0, dtype=np.int64)
        return Judgement(on_group, on_arm, x_rank, none, none, none)
    front, lo, counts = dominator_runs(group, ox, oy, on_group, limit, tiebreak)
    return Judgement(on_group, on_arm, x_rank, front, lo, counts)


# Below this many listed ids in all, `dominated_lists` builds 32-bit list offsets.
_LIST_OFFSETS_32 = 2**31


def dominated_lists(front_ids: pl.Series, lo: IntArray, counts: IntArray) -> pl.Series:
    """List[String] column: row i holds front_ids[lo[i] : lo[i] + counts[i]] (empty when 0)."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    flat = np.arange(offsets[-1], dtype=np.int64) - np.repeat(offsets[:-1] - lo, counts)
    values = rows_of(front_ids, flat).to_arrow(compat_level=CompatLevel.newest())
    if offsets[-1] < _LIST_OFFSETS_32:  # polars takes 32-bit offsets as they are, no cast
        return pl.Series("dominated_by", pa.ListArray.from_arrays(offsets.astype(np.int32), values))
    arr = pa.LargeListArray.from_arrays(pa.array(offsets), values)
    return pl.Series("dominated_by", arr).cast(pl.List(pl.String))
