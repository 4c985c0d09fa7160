"""The dominance kernel: vectorised 2-D non-dominated filtering of many groups at once.

Inputs are already oriented so that bigger is better on both axes. Values are replaced by dense
integer ranks first, so ties are exact and every group's running maximum can be one global
`np.maximum.accumulate` (group index x span + rank). Orders are integer sorts: 16-bit keys by
radix, wider ones packed with the row number into one int64 value sort (polars' sort: about 3x
numpy's at a million keys). No Python loop touches a point.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import polars as pl

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


# Below this many values, `dense` ranks with numpy.
_NUMPY_BELOW = 1 << 12


def dense(values: npt.NDArray[np.generic]) -> IntArray:
    """Dense 0-based ranks of the values (equal values share a rank; NaNs share the last).

    Numbers are ranked by polars (about twice as fast as numpy's argsort at a million values);
    -0.0 is made 0.0 first, so the two share a rank as they compare equal.
    """
    if len(values) < _NUMPY_BELOW or values.dtype.kind not in "fiu":
        # a page's few hundred values: numpy's sort, not a polars query (the same ranks: -0.0
        # equals 0.0, NaNs share the last rank)
        return ranked(values)[0]
    if values.dtype.kind == "f":
        values = np.add(values, 0.0)  # -0.0 + 0.0 is 0.0
    out: IntArray = pl.Series(values, nan_to_null=False).rank("dense").to_numpy().astype(np.int64)
    out -= 1
    return out


def ranked(values: npt.NDArray[np.generic]) -> tuple[IntArray, IntArray]:
    """(dense 0-based ranks, an ascending order) of the values (NaN ranks last)."""
    order: IntArray = np.argsort(values).astype(np.int64, copy=False)
    ranks = np.empty(len(values), dtype=np.int64)
    if len(values):
        ordered = values[order]
        step = np.empty(len(values), dtype=np.int64)
        step[0] = 0
        np.not_equal(ordered[1:], ordered[:-1], out=step[1:], casting="unsafe")
        if ordered.dtype.kind == "f":  # NaN != NaN: all NaNs share the last rank, as np.unique
            step[1:] &= ~(np.isnan(ordered[1:]) & np.isnan(ordered[:-1]))
        ranks[order] = np.cumsum(step)
    return ranks, order


def sorted_distinct(values: IntArray) -> IntArray:
    """np.sort(values) for int64 values that are all distinct: polars' single-threaded sort,
    about 3x numpy's at a million values (distinct values have one sorted order)."""
    out: IntArray = pl.Series(values).sort(multithreaded=False).to_numpy(writable=True)
    return out


def order_by(*keys: IntArray) -> IntArray:
    """Stable ascending order by several non-negative integer keys (one packed int64 sort)."""
    spans = [int(k.max(initial=0)) + 1 for k in keys]
    if len(keys) == 1 and spans[0] <= 2**16:  # numpy sorts 16-bit keys stably by radix: O(n)
        small: IntArray = np.argsort(keys[0].astype(np.uint16), kind="stable")
        return small.astype(np.int64, copy=False)
    # pack the leading keys into one int64 while their spans fit, lexsort what is left
    packed, total, used = np.zeros(len(keys[0]), dtype=np.int64), 1.0, 0
    for k, span in zip(keys, spans, strict=True):
        if total * span >= 2.0**62:
            break
        packed = packed * span + k
        total *= span
        used += 1
    if used < len(keys):
        fallback: IntArray = np.lexsort((*keys[used:][::-1], packed)).astype(np.int64)
        return fallback
    n = len(packed)
    if total <= 2.0**16:  # numpy sorts 16-bit keys stably by radix: O(n)
        packed = packed.astype(np.uint16)
    elif n and total * n < 2.0**62:
        # the row number as the last key makes every key distinct: a plain value sort is
        # then stable, and several times faster than a stable argsort
        ordered = sorted_distinct(packed * n + np.arange(n, dtype=np.int64))
        np.remainder(ordered, n, out=ordered)
        return ordered
    order: IntArray = np.argsort(packed, kind="stable")
    return order.astype(np.int64, copy=False)


def nondominated_sorted(gs: IntArray, xs: IntArray, ys: IntArray) -> BoolArray:
    """Mask of the points no other point of their group dominates, for rank arrays sorted so
    that each group is contiguous and x descends in it (equal x in any order): a point is kept
    when its y is the best of its x-tie block and strictly above the best y at any larger x of
    its group (equal points are all kept)."""
    n = len(xs)
    if n == 0:
        return np.zeros(0, dtype=np.bool_)
    g_start = np.r_[True, gs[1:] != gs[:-1]]
    seg = np.cumsum(g_start) - 1  # increasing along the array whatever the group order
    span = int(ys.max()) + 2
    key = seg * span + ys + 1
    running = np.maximum.accumulate(key)
    b_start = g_start | np.r_[True, xs[1:] != xs[:-1]]
    if b_start.all():  # no equal x in a group: each point is its own block
        before = np.where(g_start, seg * span, np.r_[0, running[:-1]])
        keep: BoolArray = key > before
        return keep
    starts = np.flatnonzero(b_start)
    block = np.cumsum(b_start) - 1
    best = np.maximum.reduceat(key, starts)
    before = np.where(g_start[starts], seg[starts] * span, running[np.maximum(starts - 1, 0)])
    keep = (key == best[block]) & (key > before[block])
    return keep


def dominator_runs(
    g: IntArray,
    x_rank: IntArray,
    y_rank: IntArray,
    on: BoolArray,
    limit: int | None,
    tiebreak: IntArray | None = None,
) -> tuple[IntArray, IntArray, IntArray]:
    """The dominators of every point as runs of one sorted array: (front, lo, counts).

    front: the frontier rows sorted by group, x ascending, y descending, then `tiebreak` (row
    order when None); point i is dominated by front[lo[i] : lo[i] + counts[i]] (nearest in x
    first; at most `limit` of them; none for frontier points).
    """
    nx, ny = int(x_rank.max(initial=0)) + 2, int(y_rank.max(initial=0)) + 2
    k1, k2 = g * nx + x_rank, g * ny + (ny - 1 - y_rank)
    front = np.flatnonzero(on)
    keys = [g[front], x_rank[front], ny - 1 - y_rank[front]]
    if tiebreak is not None:
        keys.append(tiebreak[front])
    front = front[order_by(*keys)]
    lo = np.searchsorted(k1[front], k1, side="left")
    hi = np.searchsorted(k2[front], k2, side="right")
    counts = np.where(on, 0, np.maximum(hi - lo, 0))
    if limit is not None:
        counts = np.minimum(counts, limit)
    return front, lo.astype(np.int64, copy=False), counts.astype(np.int64, copy=False)
