"""Frontier polylines: each frontier's points as tuples sorted by x, ready to draw.

At a million points the arm frontiers hold about half of them, so the tuples are built from
whole columns at once (one `to_list` per column, then slices), not row by row.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise

import numpy as np
import polars as pl

from analysis.frontier.codes import gather
from analysis.frontier.dominance import IntArray, order_by
from ingest.contract.col import Col


@dataclass(frozen=True, slots=True)
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
class PolylineColumns:
    """The per-point values a Frontier carries (concs/labels None when the column is absent)."""

    x: str
    y: str
    ids: pl.Series
    xs: pl.Series
    ys: pl.Series
    concs: pl.Series | None
    labels: pl.Series | None

    @classmethod
    def of(cls, points: pl.DataFrame, x: str, y: str) -> PolylineColumns:
        """Read them from canonical points."""
        return cls(
            x=x,
            y=y,
            ids=points.get_column(Col.POINT_ID),
            xs=points.get_column(x).cast(pl.Float64),
            ys=points.get_column(y).cast(pl.Float64),
            concs=points.get_column(Col.CONC) if Col.CONC in points.columns else None,
            labels=points.get_column(Col.ARM_LABEL) if Col.ARM_LABEL in points.columns else None,
        )


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while `polylines` builds its tuples (acyclic, so
    there is nothing to collect; at a million points each pass over them and the column lists
    they are cut from costs as much as building them). Call `polylines` inside it, so the
    column lists are freed before the collector runs again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass(frozen=True, eq=False)
class LineSet:
    """The frontier points of one kind (group envelopes or arm frontiers) to draw.

    rows: positions in the PolylineColumns; codes: their group or arm code; keys: one row per
    code, the key columns then `__rank` (see `pareto.ArmSets`); x_rank: per row, ascending x
    rank (points are ordered by x, then point id); arm: label each frontier by its first
    point's arm label.
    """

    rows: IntArray
    codes: IntArray
    keys: pl.DataFrame
    x_rank: IntArray
    arm: bool


@dataclass(frozen=True, eq=False)
class FrontierLines:
    """What the group and arm polylines of one result are built from.

    At a million points they are 11,000 Frontier objects holding half a million points (most of
    the result's Python objects), which the table, the CLI and the exports never read: results
    build them on first use (`build`) and keep them.
    """

    cols: PolylineColumns
    group: LineSet
    arm: LineSet

    def build(self) -> tuple[tuple[Frontier, ...], tuple[Frontier, ...]]:
        """(group frontiers, arm frontiers)."""
        with collector_paused():
            return polylines(self.cols, self.group), polylines(self.cols, self.arm)


class LazyFrontiers:
    """The `group_frontiers` and `arm_frontiers` of a result that holds its `lines`: built on
    first use, then kept (mixed into the frozen result dataclasses)."""

    lines: FrontierLines

    @cached_property
    def _frontiers(self) -> tuple[tuple[Frontier, ...], tuple[Frontier, ...]]:
        return self.lines.build()

    @property
    def group_frontiers(self) -> tuple[Frontier, ...]:
        """The envelope of each comparison group, x ascending (built on first use, then kept)."""
        return self._frontiers[0]

    @property
    def arm_frontiers(self) -> tuple[Frontier, ...]:
        """The frontier of each (group, run, arm), x ascending (built on first use, then kept)."""
        return self._frontiers[1]


def polylines(cols: PolylineColumns, lines: LineSet) -> tuple[Frontier, ...]:
    """One Frontier per distinct code of `lines`, in key order (build many inside
    `collector_paused()`)."""
    rows, codes, keys, x_rank, arm = lines.rows, lines.codes, lines.keys, lines.x_rank, lines.arm
    if len(rows) == 0:
        return ()
    rank = keys.get_column("__rank").to_numpy()[codes]
    order = order_by(rank, x_rank)
    rs, xr = rank[order], x_rank[order]
    if bool(((rs[1:] == rs[:-1]) & (xr[1:] == xr[:-1])).any()):
        # equal x in one frontier (duplicate points): the point id breaks the tie
        tied = pl.DataFrame({"r": rank, "x": x_rank, "id": cols.ids.gather(rows)})
        order = tied.with_row_index("i").sort("r", "x", "id", maintain_order=True)["i"].to_numpy()
        rs = rank[order]
    at = rows[order]
    starts = np.flatnonzero(np.r_[True, rs[1:] != rs[:-1]])
    bounds = [*starts.tolist(), len(at)]
    key_cols = [c for c in keys.columns if c != "__rank"]
    first = gather(keys.select(key_cols), codes[order][starts])
    key_values = list(zip(*(first.get_column(c).to_list() for c in key_cols), strict=True))
    if not key_cols:
        key_values = [()] * len(starts)
    ids = cols.ids.gather(at).to_list()
    xs, ys = cols.xs.gather(at).to_list(), cols.ys.gather(at).to_list()
    concs = cols.concs.gather(at).to_list() if cols.concs is not None else [None] * len(at)
    labels: list[object] = [None] * len(starts)
    if arm and cols.labels is not None:
        labels = cols.labels.gather(at[starts]).to_list()
    cuts = [slice(a, b) for a, b in pairwise(bounds)]
    pairs: dict[tuple[str, object], tuple[str, object]] = {}  # arms share most key values
    out = []
    for i, (values, cut) in enumerate(zip(key_values, cuts, strict=True)):
        name = labels[i] or " / ".join(str(v) for v in values if v is not None)
        key = tuple(pairs.setdefault(kv, kv) for kv in zip(key_cols, values, strict=True))
        out.append(
            Frontier(
                key=key,
                label=str(name),
                x=cols.x,
                y=cols.y,
                point_ids=tuple(ids[cut]),
                xs=tuple(xs[cut]),
                ys=tuple(ys[cut]),
                concs=tuple(concs[cut]),
            )
        )
    return tuple(out)
