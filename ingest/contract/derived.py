"""Derived metrics: a column computed from other columns of the same point, declared once.

A `DerivedMetric` is one declaration: its column (name, type, unit, meaning, better direction,
group), the columns it reads, where it applies and its formula. The formula is one function of a
column accessor, written with arithmetic and comparisons only, so the same function runs on both
paths of normalize (`ingest.normalize.derive`): on the one-row path the accessor gives Python
numbers, on the batch path polars expressions. A point gets the metric when its own file does not
state it, every input is known and `applies` holds.

The declarations are read by normalize (both paths), the data contract (`schema.point_specs`,
so `docs/schema.md` lists them), the store's reads (a metric declared after points were stored is
computed when they are read) and the y-axis menu (`views.query.choices.y_choices`, for a metric
with a `label`). `registered(metric)` adds one for a block (tests).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyarrow as pa

from ingest.contract.col import Col, ColumnSpec

# A column accessor: a Python value on the row path, a polars expression on the batch path.
Get = Callable[[str], Any]
Formula = Callable[[Get], Any]


@dataclass(frozen=True)
class DerivedMetric:
    """One derived column.

    spec: the column (name, Arrow type, unit, meaning, better direction, group).
    inputs: the columns the formula and `applies` read; derived only where all are known.
    formula: the value, from the accessor (numeric inputs come as float64).
    applies: where the formula applies besides known inputs (None: everywhere).
    floor: the smallest value (a formula that can go below it is clipped).
    label: its y-axis menu label, when it is a y choice.
    """

    spec: ColumnSpec
    inputs: tuple[str, ...]
    formula: Formula
    applies: Formula | None = None
    floor: float | None = None
    label: str | None = None

    @property
    def name(self) -> str:
        return str(self.spec.name)

    def expr(self, numeric: Collection[str], *, stated: bool = True) -> pl.Expr:
        """The metric over a frame as a polars expression (`numeric`: the inputs that are
        numbers, read as float64). With `stated`, a value the frame has is kept."""

        def get(c: str) -> pl.Expr:
            return pl.col(c).cast(pl.Float64) if c in numeric else pl.col(c)

        cond = pl.col(self.name).is_null() if stated else pl.lit(True)
        for c in self.inputs:
            cond = cond & pl.col(c).is_not_null()
        if self.applies is not None:
            cond = cond & self.applies(get)
        value: pl.Expr = self.formula(get)
        if self.floor is not None:
            value = pl.when(value > self.floor).then(value).otherwise(self.floor)
        stated_value = pl.col(self.name) if stated else pl.lit(None)
        return (
            pl.when(cond)
            .then(value)
            .otherwise(stated_value)
            .cast(dtype_of(self.spec.dtype))
            .alias(self.name)
        )


_F = pa.float64()


def no_rows(schema: pa.Schema) -> pa.Table:
    """A table of `schema` with no rows, built from null arrays: `Schema.empty_table()` builds a
    timezone-aware timestamp column by way of pandas when pandas is installed (0.2-0.3 s of a
    command's start-up)."""
    return pa.Table.from_arrays([pa.nulls(0, type=f.type) for f in schema], schema=schema)


def dtype_of(dtype: pa.DataType) -> pl.DataType:
    """The polars dtype of an Arrow type."""
    empty = pl.from_arrow(no_rows(pa.schema([pa.field("c", dtype)])))
    assert isinstance(empty, pl.DataFrame)
    return empty.schema["c"]


# The built-in derived metrics, in the order they are derived (and listed in the contract).
BUILT_IN: tuple[DerivedMetric, ...] = (
    DerivedMetric(
        ColumnSpec(
            Col.ERROR_RATE, _F, "fraction", "failed / issued requests (0..1)", "lower", "requests"
        ),
        inputs=(Col.NUM_REQUESTS_TOTAL, Col.NUM_REQUESTS_SUCCESSFUL, Col.SCENARIO),
        formula=lambda v: 1.0 - v(Col.NUM_REQUESTS_SUCCESSFUL) / v(Col.NUM_REQUESTS_TOTAL),
        # agentic rows state their own
        applies=lambda v: (v(Col.SCENARIO) != "agentic-coding") & (v(Col.NUM_REQUESTS_TOTAL) != 0),
        floor=0.0,
    ),
    DerivedMetric(
        ColumnSpec(
            Col.AL_MEASURED,
            _F,
            "tokens/step",
            "measured acceptance length = 1 + accepted / drafts",
            "higher",
            "spec_measured",
        ),
        inputs=(Col.SPEC_ACCEPTED_TOKENS, Col.SPEC_DRAFTS),
        formula=lambda v: 1.0 + v(Col.SPEC_ACCEPTED_TOKENS) / v(Col.SPEC_DRAFTS),
        applies=lambda v: v(Col.SPEC_DRAFTS) > 0,
    ),
    DerivedMetric(
        ColumnSpec(
            Col.DRAFT_ACCEPTANCE_RATE,
            _F,
            "fraction",
            "accepted / draft tokens",
            "higher",
            "spec_measured",
        ),
        inputs=(Col.SPEC_ACCEPTED_TOKENS, Col.SPEC_DRAFT_TOKENS),
        formula=lambda v: v(Col.SPEC_ACCEPTED_TOKENS) / v(Col.SPEC_DRAFT_TOKENS),
        applies=lambda v: v(Col.SPEC_DRAFT_TOKENS) > 0,
    ),
)
BUILT_IN_SPECS: dict[str, ColumnSpec] = {m.name: m.spec for m in BUILT_IN}

# Metrics declared beyond the built-in ones (not stored columns: computed when read).
_EXTRA: dict[str, DerivedMetric] = {}
# Called whenever a metric is registered or removed (to drop what was built from the old list).
ON_CHANGE: list[Callable[[], None]] = []


def derived_metrics() -> tuple[DerivedMetric, ...]:
    """Every derived metric, built-in ones first, in the order they are derived."""
    return (*BUILT_IN, *_EXTRA.values())


def extra_metrics() -> tuple[DerivedMetric, ...]:
    """The derived metrics declared beyond the stored columns."""
    return tuple(_EXTRA.values())


def register(metric: DerivedMetric) -> None:
    """Declare a derived metric.

    Raises:
        ValueError: when a column of that name exists already.
    """
    if metric.name in BUILT_IN_SPECS or metric.name in _EXTRA or metric.name in set(Col):
        raise ValueError(f"derived metric {metric.name!r}: a column of that name exists")
    _EXTRA[metric.name] = metric
    _changed()


def unregister(name: str) -> None:
    """Remove a metric declared with `register`."""
    del _EXTRA[name]
    _changed()


def _changed() -> None:
    for hook in ON_CHANGE:
        hook()


@contextmanager
def registered(metric: DerivedMetric) -> Iterator[DerivedMetric]:
    """`metric` declared for the block, removed after it."""
    register(metric)
    try:
        yield metric
    finally:
        unregister(metric.name)
