"""What a run view selects: its filter expression, the options of every filter, arm names and
their colour order."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from ingest.contract.col import Col
from views.query.choices import FILTERS, seq_label
from views.query.state import RunView

# The display name of an arm in a view (its label, disambiguated; see `arm_names`).
ARM_NAME = "arm_name"


def filter_expr(view: RunView) -> pl.Expr:
    """The row filter of a view's filter fields (all rows when none is set)."""
    expr = pl.lit(True)
    for name, _, col in FILTERS:
        values = getattr(view, name)
        if not values:
            continue
        if col is None:
            expr = expr & _seq_col().is_in(list(values))
        else:
            expr = expr & pl.col(col).cast(pl.String).is_in(list(values))
    return expr


def _seq_col() -> pl.Expr:
    return (
        pl.when(pl.col(Col.ISL).is_null() | pl.col(Col.OSL).is_null())
        .then(pl.lit("trace"))
        .otherwise(pl.format("{}/{}", Col.ISL, Col.OSL))
    )


@dataclass(frozen=True)
class Option:
    """One choice of a filter: its value, menu label and how many points have it."""

    value: str
    label: str
    count: int


# Identity fields that name an arm when its label alone is ambiguous in a view.
_NAME_PARTS: tuple[str, ...] = (
    Col.MODEL_PREFIX,
    Col.HW,
    Col.FRAMEWORK,
    Col.PRECISION,
    "seq",
    Col.SCENARIO,
)


def arm_names(points: pl.DataFrame) -> pl.DataFrame:
    """`arm_id`, `arm_name`: the arm label, prefixed with the identity fields (hardware,
    framework, precision, isl/osl, ...) that differ between the view's arms, so two arms never
    share a legend entry (the label itself leaves those fields out)."""
    arms = points.select(
        Col.ARM_ID, Col.ARM_LABEL, Col.MODEL_PREFIX, Col.HW, Col.FRAMEWORK, Col.PRECISION, Col.SCENARIO,
        _seq_col().map_elements(seq_label, return_dtype=pl.String).alias("seq"),
    ).unique(Col.ARM_ID, keep="first")  # fmt: skip
    varying = [c for c in _NAME_PARTS if arms.get_column(c).n_unique() > 1]
    prefix = pl.concat_str(
        [pl.col(c).cast(pl.String) for c in varying], separator=" ", ignore_nulls=True
    )
    name = pl.format("{} · {}", prefix, Col.ARM_LABEL) if varying else pl.col(Col.ARM_LABEL)
    return arms.select(Col.ARM_ID, name.alias(ARM_NAME))


def arm_order(names: pl.DataFrame) -> dict[str, int]:
    """Arm id -> colour index, from `arm_names` (sorted by name, so stable under filtering)."""
    arms = names.sort(ARM_NAME, Col.ARM_ID)
    return {a: i for i, a in enumerate(arms.get_column(Col.ARM_ID).to_list())}


def facets(points: pl.DataFrame, names: pl.DataFrame | None = None) -> dict[str, list[Option]]:
    """The options of every filter, from the (unfiltered) points of the view's runs (`names`:
    their `arm_names`, when already known). One polars call runs every filter's count."""
    lazy = points.lazy()
    queries = []
    for _, _, col in FILTERS:
        if col == Col.ARM_ID:
            labels = (arm_names(points) if names is None else names).lazy()
            queries.append(
                lazy.group_by(Col.ARM_ID)
                .agg(pl.len().alias("n"))
                .join(labels, on=Col.ARM_ID)
                .rename({ARM_NAME: "label"})
                .sort("label", Col.ARM_ID)
            )
        else:
            values = _seq_col() if col is None else pl.col(col).cast(pl.String)
            queries.append(
                lazy.select(values.alias("v")).group_by("v").len().drop_nulls().sort("v")
            )
    out: dict[str, list[Option]] = {}
    for (name, _, col), frame in zip(FILTERS, pl.collect_all(queries), strict=True):
        if col == Col.ARM_ID:
            out[name] = [
                Option(str(r[Col.ARM_ID]), str(r["label"]), int(r["n"]))
                for r in frame.iter_rows(named=True)
            ]
        else:
            label = seq_label if col is None else str
            out[name] = [Option(str(v), label(str(v)), int(n)) for v, n in frame.iter_rows()]
    return out
