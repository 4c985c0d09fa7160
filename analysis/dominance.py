"""The dominance kernel: vectorised 2-D non-dominated filtering of many groups at once.

Inputs are already oriented so that bigger is better on both axes. Values are replaced by dense
integer ranks first, so ties are exact and every group's running maximum can be one global
`np.maximum.accumulate` (group index x span + rank). No Python loop touches a point.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]


def dense(values: npt.NDArray[np.generic]) -> IntArray:
    """Dense 0-based ranks of the values (equal values share a rank)."""
    ranks: IntArray = np.unique(values, return_inverse=True)[1].astype(np.int64).reshape(-1)
    return ranks


def _order(*keys: IntArray) -> IntArray:
    """Stable ascending order by several non-negative integer keys (one packed int64 sort)."""
    spans = [int(k.max(initial=0)) + 1 for k in keys]
    if float(np.prod([float(s) for s in spans])) < 2.0**62:
        packed = np.zeros(len(keys[0]), dtype=np.int64)
        for k, span in zip(keys, spans, strict=True):
            packed = packed * span + k
        order: IntArray = np.argsort(packed, kind="stable").astype(np.int64)
        return order
    fallback: IntArray = np.lexsort(keys[::-1]).astype(np.int64)
    return fallback


def nondominated(group: IntArray, x: FloatArray, y: FloatArray) -> BoolArray:
    """Mask of the points no other point of the same group dominates (both axes maximised).

    Sort by (group, x desc, y desc); a point is kept when its y is the best of its x-tie block and
    strictly above the best y at any larger x. Running maxima within groups become one global
    running maximum by offsetting dense y ranks by the group index.
    """
    if len(x) == 0:
        return np.zeros(0, dtype=np.bool_)
    return nondominated_from_ranks(dense(group), dense(x), dense(y))


def nondominated_from_ranks(g_rank: IntArray, x_rank: IntArray, y_rank: IntArray) -> BoolArray:
    """`nondominated` on dense ranks (reuse the ranks for several groupings)."""
    n = len(x_rank)
    order = _order(g_rank, int(x_rank.max()) - x_rank, int(y_rank.max()) - y_rank)
    gs, xs, ys = g_rank[order], x_rank[order], y_rank[order]
    span = int(y_rank.max()) + 2
    g_start = np.r_[True, gs[1:] != gs[:-1]]
    key = gs * span + ys + 1
    running = np.maximum.accumulate(key)
    b_start = g_start | np.r_[True, xs[1:] != xs[:-1]]
    block = np.maximum.accumulate(np.where(b_start, np.arange(n), 0))
    before = np.where(g_start[block], gs[block] * span, running[np.maximum(block - 1, 0)])
    keep = np.empty(n, dtype=np.bool_)
    keep[order] = (key == key[block]) & (key > before)
    return keep


def dominators(
    group: IntArray, x: FloatArray, y: FloatArray, on: BoolArray, limit: int | None = None
) -> tuple[IntArray, IntArray]:
    """For every point, the frontier points that dominate it, as (offsets, frontier row indices).

    Within a group the frontier sorted by x ascending has y descending, so the frontier points
    with x >= p.x and y >= p.y form one contiguous run, found by two binary searches.
    """
    return dominators_from_ranks(dense(group), dense(x), dense(y), on, limit)


def dominators_from_ranks(
    g: IntArray, x_rank: IntArray, y_rank: IntArray, on: BoolArray, limit: int | None
) -> tuple[IntArray, IntArray]:
    """`dominators` on dense ranks."""
    n = len(x_rank)
    nx, ny = int(x_rank.max(initial=0)) + 2, int(y_rank.max(initial=0)) + 2
    k1, k2 = g * nx + x_rank, g * ny + (ny - 1 - y_rank)
    front = np.flatnonzero(on)
    front = front[_order(g[front], x_rank[front], ny - 1 - y_rank[front])]
    lo = np.searchsorted(k1[front], k1, side="left")
    hi = np.searchsorted(k2[front], k2, side="right")
    counts = np.where(on, 0, np.maximum(hi - lo, 0))
    if limit is not None:
        counts = np.minimum(counts, limit)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    flat = np.arange(offsets[-1]) - np.repeat(offsets[:-1], counts) + np.repeat(lo, counts)
    return offsets, front[flat]
