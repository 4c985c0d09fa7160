"""Integer codes for multi-column keys, so the analysis sorts and groups small ints, not strings.

A frame of points carries its configuration as twenty-odd columns; hashing and sorting those per
operation is what made the analysis slow at a million points. The key columns are hashed once
(`dense_codes`), their sort order is taken on one row per distinct key (`key_ranks`), and every
later step works on int64 arrays.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow as pa

from analysis.frontier.dominance import BoolArray, IntArray
from ingest.contract.col import Col

_ROW = "__codes_row"
# From this many rows, `gather` makes all-null columns instead of gathering them.
_BIG = 1 << 14
# Below this many rows, `dense_codes` hashes every row (one query) rather than finding the runs
# of equal keys first (a second query, which pays off only when it spares hashing many rows).
_RUNS_FROM = 1 << 12
# Row positions as polars' index type: a gather by them skips the checks and casts an int64
# array goes through (negative positions, bounds), about half the time of a page's gather.
_INDEX = np.uint32 if pl.get_index_type() == pl.UInt32 else np.uint64


def dense_codes(frame: pl.DataFrame, cols: Sequence[str]) -> tuple[IntArray, IntArray]:
    """(code of each row, first row of each code): distinct keys numbered by first appearance.

    Nulls are a value like any other (two rows with a null in the same column share a key).
    Rows of one key usually come in runs (a sweep's points are stored arm by arm), so runs of
    equal keys are found first and only the first row of each run is hashed.
    """
    n = frame.height
    if not cols:
        return np.zeros(n, dtype=np.int64), np.zeros(min(n, 1), dtype=np.int64)
    keys = columns(frame, cols)
    if n < _RUNS_FROM:
        return _hashed_codes(keys)
    run = keys.select(pl.struct(list(cols)).rle_id()).to_series().to_numpy().astype(np.int64)
    if n and int(run[-1]) + 1 <= n // 4:
        starts = np.flatnonzero(np.r_[True, run[1:] != run[:-1]])
        codes, first = _hashed_codes(keys.gather(starts))
        return codes[run], starts[first]
    return _hashed_codes(keys)


def _hashed_codes(keys: pl.DataFrame) -> tuple[IntArray, IntArray]:
    n = keys.height
    first = (
        keys.with_row_index(_ROW)
        .select(pl.col(_ROW).first().over(keys.columns))
        .to_series()
        .to_numpy()
        .astype(np.int64)
    )
    is_first = first == np.arange(n, dtype=np.int64)
    number = np.cumsum(is_first, dtype=np.int64) - 1
    codes: IntArray = number[first]
    firsts: IntArray = np.flatnonzero(is_first).astype(np.int64)
    return codes, firsts


def key_ranks(keys: pl.DataFrame) -> IntArray:
    """Dense rank of each row of `keys` in `sort(keys.columns, nulls_last=True)` order.

    Equal rows (nulls equal to nulls) share a rank, so the ranks order rows exactly as a sort of
    the full frame by those columns would.
    """
    n = keys.height
    if n == 0 or keys.width == 0:
        return np.zeros(n, dtype=np.int64)
    cols = keys.columns
    ordered = keys.with_row_index(_ROW).sort(cols, nulls_last=True, maintain_order=True)
    if all(dt == pl.String or dt == pl.Boolean or dt.is_integer() for dt in keys.dtypes):
        # equal neighbours are equal structs (nulls equal): a run number per key, a lighter
        # query than comparing each column with its shift (floats keep that: NaN, -0.0)
        changed = ordered.select(pl.struct(cols).rle_id())
    else:
        changed = ordered.select(_changed(tuple(cols)))
    ranks = np.empty(n, dtype=np.int64)
    ranks[ordered.get_column(_ROW).to_numpy()] = changed.to_series().to_numpy().astype(np.int64)
    return ranks - int(ranks.min())


@lru_cache(maxsize=256)
def _changed(cols: tuple[str, ...]) -> pl.Expr:
    """The running count of distinct keys along rows sorted by `cols` (built once per set of
    key columns: an expression is immutable)."""
    return (
        pl.any_horizontal([pl.col(c).ne_missing(pl.col(c).shift(1)) for c in cols])
        .fill_null(True)
        .cum_sum()
    )


def columns(frame: pl.DataFrame, cols: Iterable[str]) -> pl.DataFrame:
    """`frame.select(cols)` for column names (distinct), without a query: about a tenth of the
    time on a page's few hundred rows."""
    names = list(cols)
    return frame[names] if names else frame.select()


def rows_of(values: pl.Series, rows: npt.NDArray[np.integer[Any]]) -> pl.Series:
    """`values.gather(rows)` for non-negative positions, without a query."""
    return values[pl.Series(rows.astype(_INDEX, copy=False))]


def load_values(points: pl.DataFrame) -> pl.Series:
    """Each point's load coordinate, named `conc`: its concurrency, else its request rate.

    A frame without request-rate points gives `conc` itself (integers); otherwise floats, with the
    request rate (req/s, inf for every-request-at-once) where conc is null. Ingest keeps the two
    kinds in separate arms, so within an arm the values are one kind.
    """
    conc = points.get_column(Col.CONC)
    if Col.REQUEST_RATE not in points.columns or not conc.has_nulls():
        return conc
    rate = points.get_column(Col.REQUEST_RATE)
    if not (conc.is_null() & rate.is_not_null()).any():
        return conc
    return conc.cast(pl.Float64).fill_null(rate).alias(Col.CONC)


def nulls_last_key(values: pl.Series) -> IntArray:
    """Non-negative ints ordering `values` ascending with nulls last (equal values share a key)."""
    if values.dtype.is_integer() and values.len():
        lo, hi = values.min(), values.max()
        if isinstance(lo, int) and isinstance(hi, int) and hi - lo < 2**40:
            key = (values - lo).fill_null(hi - lo + 1).to_numpy().astype(np.int64)
            return key
    ranks = values.rank("dense").fill_null(values.len() + 1).to_numpy().astype(np.int64)
    return ranks


def gather(frame: pl.DataFrame, rows: IntArray, height: int | None = None) -> pl.DataFrame:
    """frame[rows], rechunked first when it has several chunks (a gather across chunks is slow).

    A frame without columns has no height of its own: give `height` (len(rows)) to keep one.
    """
    if frame.width == 0:
        return pl.DataFrame(height=len(rows) if height is None else height)
    if len(rows) == frame.height and bool((rows == np.arange(len(rows))).all()):
        return frame
    if len(rows) == 0:
        return frame.clear()
    if len(rows) >= _BIG:
        # columns with no value at all (a sweep without disaggregation, spec decoding, ...) are
        # made, not gathered: a third of the identity columns of a typical frame
        empty = [s for s in frame.iter_columns() if s.null_count() == s.len()]
        if empty and len(empty) < frame.width:
            names = {s.name for s in empty}
            kept = gather(frame.drop(names), rows)
            made = {s.name: pl.repeat(None, len(rows), dtype=s.dtype, eager=True) for s in empty}
            return pl.DataFrame(
                [kept.get_column(c) if c not in names else made[c].alias(c) for c in frame.columns]
            )
    if max(frame.n_chunks("all")) > 1:
        frame = frame.rechunk()
    # row selection by an index Series (DataFrame.gather is unstable API, and a query)
    return frame[pl.Series(rows.astype(_INDEX, copy=False))]


def nullable(name: str, values: npt.NDArray[np.generic], nulls: BoolArray) -> pl.Series:
    """A Series of `values` with nulls where `nulls` is set."""
    return pl.Series(name, pa.array(values, mask=nulls))


def take(values: pl.Series, idx: IntArray) -> pl.Series:
    """values[idx], null where idx < 0."""
    if len(values) == 0:
        return pl.Series(values.name, [None] * len(idx), dtype=values.dtype)
    neg = idx < 0
    return values[nullable("", np.where(neg, 0, idx).astype(_INDEX), neg)]


def spread(values: pl.Series, at: IntArray, n: int) -> pl.Series:
    """An n-row column holding values[i] at row at[i] and null elsewhere."""
    idx = np.full(n, -1, dtype=np.int64)
    idx[at] = np.arange(len(at))
    return take(values, idx)
