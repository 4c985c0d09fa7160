"""Reason strings of the verdicts, built once per distinct text and gathered per row.

Most rows are dominated, and a dominated row's reason names its nearest dominator: the
description of each group-frontier point is formatted once (not once per dominated row), and
the reasons are one gather plus one concatenation with the `and N more` suffix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from analysis.frontier.codes import columns, gather, rows_of
from analysis.frontier.dominance import BoolArray, IntArray, sorted_distinct
from ingest.contract.col import Col


def _fmt(expr: pl.Expr, digits: int) -> pl.Expr:
    return expr.cast(pl.Float64).round(digits).cast(pl.String)


def dominator_descriptions(
    points: pl.DataFrame, x: str, y: str, front_rows: IntArray, judged_rows: IntArray
) -> pl.Series:
    """`<arm label> c<conc> (<x>, <y>)` of each group-frontier row (null if label/conc is).

    A point id names the first judged row (in input order) that has it, so with duplicate ids
    the description is that row's.
    """
    ids = points.get_column(Col.POINT_ID)
    front_ids = rows_of(ids, front_rows)
    rows = front_rows
    hits = int(np.count_nonzero(ids.is_in(front_ids.implode()).to_numpy()[judged_rows]))
    if front_ids.n_unique() != len(front_ids) or hits != len(front_ids):
        judged = pl.DataFrame({"id": rows_of(ids, judged_rows), "row": judged_rows})
        first = judged.sort("row").unique("id", keep="first", maintain_order=True)
        rows = (
            pl.DataFrame({"id": front_ids})
            .join(first, on="id", how="left", maintain_order="left")
            .get_column("row")
            .to_numpy()
        )
    desc = pl.format(
        "{} c{} ({}, {})", Col.ARM_LABEL, Col.CONC, _fmt(pl.col(x), 2), _fmt(pl.col(y), 1)
    )
    cols = columns(points, dict.fromkeys([Col.ARM_LABEL, Col.CONC, x, y]))
    return gather(cols, rows).select(desc).to_series()


@dataclass(frozen=True, eq=False)
class ReasonTexts:
    """The reason strings that are not fixed: invalid reasons and cliff evidence (at their
    output rows) and the description of each group-frontier point (dominated rows name one)."""

    invalid_at: IntArray
    invalid: pl.Series
    post_at: IntArray
    post: pl.Series
    dominators: pl.Series
    slo_at: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    slo: pl.Series = field(default_factory=lambda: pl.Series([], dtype=pl.String))

    def reasons(
        self, frontier: BoolArray, named: BoolArray, lo: IntArray, counts: IntArray
    ) -> pl.Series:
        """The `reason` column: one head string per row (gathered) plus `and N more`.

        Args:
            frontier: rows on the group frontier; named: dominated rows whose first dominator
                is front[lo] (the others are invalid or post-cliff).
            lo, counts: per row, the first dominator (index into the descriptions) and how many.
        """
        fixed = ["not dominated in its comparison group", "dominated in its comparison group"]
        dominated_by = (pl.lit("dominated by ") + pl.col("d")).fill_null(pl.lit(fixed[1]))
        heads = pl.concat(
            [
                pl.Series(fixed),
                self.dominators.to_frame("d").select(dominated_by).to_series(),
                self.invalid,
                self.post,
                self.slo,
            ]
        )
        n_front, n_invalid = len(self.dominators), len(self.invalid_at)
        head = np.where(frontier, 0, 1)
        head[named] = 2 + lo[named]
        head[self.invalid_at] = 2 + n_front + np.arange(n_invalid)
        head[self.post_at] = 2 + n_front + n_invalid + np.arange(len(self.post_at))
        head[self.slo_at] = (
            2 + n_front + n_invalid + len(self.post_at) + np.arange(len(self.slo_at))
        )
        more = np.zeros(len(head), dtype=np.int64)
        has_desc = self.dominators.is_not_null().to_numpy()
        more[named] = np.where(has_desc[lo[named]], counts[named] - 1, 0)
        suffix = pl.Series(
            ["", *(f" and {k} more" for k in range(1, int(more.max(initial=0)) + 1))]
        )
        # about half the rows repeat another's (head, more): build each text once, then gather
        texts, at = _distinct(head * len(suffix) + more)
        parts = pl.DataFrame(
            {"h": rows_of(heads, texts // len(suffix)), "s": rows_of(suffix, texts % len(suffix))}
        )
        return rows_of(parts.select(pl.concat_str("h", "s")).to_series(), at).alias("reason")


def _distinct(keys: IntArray) -> tuple[IntArray, IntArray]:
    """(the distinct non-negative keys ascending, the index of each key among them)."""
    n = len(keys)
    if n == 0:
        return keys, keys
    span = int(keys.max()) + 1
    if span <= 2 * n:  # a table of the key space: no sort
        seen = np.zeros(span, dtype=np.bool_)
        seen[keys] = True
        index = np.cumsum(seen, dtype=np.int64)
        index -= 1
        return np.flatnonzero(seen).astype(np.int64, copy=False), index[keys]
    if float(span) * n >= 2.0**62:
        distinct, inverse = np.unique(keys, return_inverse=True)
        return distinct, inverse.reshape(-1).astype(np.int64)
    ordered = sorted_distinct(keys * n + np.arange(n, dtype=np.int64))  # keys, then row
    sorted_keys, rows = np.divmod(ordered, n)
    new = np.r_[True, sorted_keys[1:] != sorted_keys[:-1]]
    at = np.empty(n, dtype=np.int64)
    at[rows] = np.cumsum(new) - 1
    return sorted_keys[new], at
