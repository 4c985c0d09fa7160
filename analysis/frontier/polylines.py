"""Frontier polylines: each frontier's points sorted by x, ready to draw.

At a million points the arm frontiers hold about half of them in over 100,000 frontiers, so a
result keeps them as columns (`FrontierSet`: one array per value, offsets per frontier) and makes
a `Frontier` object only for the frontiers that are read; iterating makes them all from whole
columns at once (one `to_list` per column, then slices), not row by row.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from itertools import pairwise
from typing import overload

import numpy as np
import polars as pl

from analysis.frontier.codes import columns, gather, rows_of
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

    At a million points they are over 100,000 frontiers holding half a million points, which the
    table, the CLI and the exports never read: results order them on first use (`build`) into
    columnar `FrontierSet`s and keep them.
    """

    cols: PolylineColumns
    group: LineSet
    arm: LineSet

    def build(self) -> tuple[FrontierSet, FrontierSet]:
        """(group frontiers, arm frontiers)."""
        return polylines(self.cols, self.group), polylines(self.cols, self.arm)


class LazyFrontiers:
    """The `group_frontiers` and `arm_frontiers` of a result that holds its `lines`: built on
    first use, then kept (mixed into the frozen result dataclasses)."""

    lines: FrontierLines

    @cached_property
    def _frontiers(self) -> tuple[FrontierSet, FrontierSet]:
        return self.lines.build()

    @property
    def group_frontiers(self) -> FrontierSet:
        """The envelope of each comparison group, x ascending (built on first use, then kept)."""
        return self._frontiers[0]

    @property
    def arm_frontiers(self) -> FrontierSet:
        """The frontier of each (group, run, arm), x ascending (built on first use, then kept)."""
        return self._frontiers[1]


class FrontierSet(Sequence[Frontier]):
    """Frontiers held as columns: every frontier's points, in order, in one array per value
    (`ids`, `xs`, `ys`, `concs`), frontier i at `starts[i]:starts[i + 1]`, and one row of key
    values per frontier.

    A `Frontier` object is made only when a frontier is read (`fs[i]`); iterating makes them all
    at once (inside `collector_paused`) and keeps them. It compares equal to the tuple of its
    frontiers.
    """

    __slots__ = ("_all", "_cols", "_concs", "_ids", "_key_cols", "_keys", "_labels", "_starts",
                 "_xs", "_ys")  # fmt: skip

    def __init__(
        self,
        cols: PolylineColumns,
        at: IntArray,
        starts: IntArray,
        keys: pl.DataFrame,
        labels: pl.Series | None,
    ) -> None:
        self._cols = cols
        self._ids = rows_of(cols.ids, at)
        self._xs = rows_of(cols.xs, at)
        self._ys = rows_of(cols.ys, at)
        self._concs = rows_of(cols.concs, at) if cols.concs is not None else None
        self._starts = np.r_[starts, len(at)].astype(np.int64)
        self._keys = keys
        self._key_cols = tuple(keys.columns)
        self._labels = labels
        self._all: tuple[Frontier, ...] | None = None

    def __len__(self) -> int:
        return len(self._starts) - 1

    @overload
    def __getitem__(self, i: int) -> Frontier: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Frontier, ...]: ...
    def __getitem__(self, i: int | slice) -> Frontier | tuple[Frontier, ...]:
        if isinstance(i, slice):
            return tuple(self)[i]
        if self._all is not None:
            return self._all[i]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"frontier {i} of {n}")
        i %= n
        a, b = int(self._starts[i]), int(self._starts[i + 1])
        values = self._keys.row(i) if self._key_cols else ()
        label = self._labels[i] if self._labels is not None else None
        concs = (
            self._concs.slice(a, b - a).to_list() if self._concs is not None else [None] * (b - a)
        )
        return Frontier(
            key=tuple(zip(self._key_cols, values, strict=True)),
            label=_label(label, values),
            x=self._cols.x,
            y=self._cols.y,
            point_ids=tuple(self._ids.slice(a, b - a).to_list()),
            xs=tuple(self._xs.slice(a, b - a).to_list()),
            ys=tuple(self._ys.slice(a, b - a).to_list()),
            concs=tuple(concs),
        )

    def __iter__(self) -> Iterator[Frontier]:
        if self._all is None:
            with collector_paused():
                self._all = self._build_all()
        return iter(self._all)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrontierSet | tuple):
            return tuple(self) == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"FrontierSet({len(self)} frontiers, {len(self._ids)} points)"

    def _build_all(self) -> tuple[Frontier, ...]:
        """Every Frontier, from whole columns at once (one `to_list` per column, then slices)."""
        n = len(self)
        if n == 0:
            return ()
        key_cols = self._key_cols
        key_values = self._keys.rows() if key_cols else [()] * n
        labels = self._labels.to_list() if self._labels is not None else [None] * n
        ids, xs, ys = self._ids.to_list(), self._xs.to_list(), self._ys.to_list()
        concs = self._concs.to_list() if self._concs is not None else [None] * len(ids)
        cuts = [slice(a, b) for a, b in pairwise(self._starts.tolist())]
        pairs: dict[tuple[str, object], tuple[str, object]] = {}  # arms share most key values
        x, y = self._cols.x, self._cols.y
        out = []
        for values, cut, label in zip(key_values, cuts, labels, strict=True):
            key = tuple(pairs.setdefault(kv, kv) for kv in zip(key_cols, values, strict=True))
            out.append(
                Frontier(
                    key=key,
                    label=_label(label, values),
                    x=x,
                    y=y,
                    point_ids=tuple(ids[cut]),
                    xs=tuple(xs[cut]),
                    ys=tuple(ys[cut]),
                    concs=tuple(concs[cut]),
                )
            )
        return tuple(out)


def _label(label: object, values: Sequence[object]) -> str:
    """The arm label when there is one, else the group values joined."""
    return str(label or " / ".join(str(v) for v in values if v is not None))


def polylines(cols: PolylineColumns, lines: LineSet) -> FrontierSet:
    """One frontier per distinct code of `lines`, in key order, as a columnar `FrontierSet`."""
    rows, codes, keys, x_rank, arm = lines.rows, lines.codes, lines.keys, lines.x_rank, lines.arm
    key_cols = [c for c in keys.columns if c != "__rank"]
    none = np.zeros(0, dtype=np.int64)
    if len(rows) == 0:
        return FrontierSet(cols, none, none, keys.select(key_cols).clear(), None)
    rank = keys.get_column("__rank").to_numpy()[codes]
    order = order_by(rank, x_rank)
    rs, xr = rank[order], x_rank[order]
    if bool(((rs[1:] == rs[:-1]) & (xr[1:] == xr[:-1])).any()):
        # equal x in one frontier (duplicate points): the point id breaks the tie
        tied = pl.DataFrame({"r": rank, "x": x_rank, "id": rows_of(cols.ids, rows)})
        order = tied.with_row_index("i").sort("r", "x", "id", maintain_order=True)["i"].to_numpy()
        rs = rank[order]
    at = rows[order]
    starts = np.flatnonzero(np.r_[True, rs[1:] != rs[:-1]])
    first = gather(columns(keys, key_cols), codes[order][starts])
    labels = rows_of(cols.labels, at[starts]) if arm and cols.labels is not None else None
    return FrontierSet(cols, at, starts, first, labels)
