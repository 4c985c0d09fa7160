"""Arms ranked at one x (an interactivity target): each arm frontier's y there, best first.

"At 40 tok/s/user, which configuration gives the most throughput per GPU?" Each arm's frontier
is read at x by monotone PCHIP between its measured points (`interpolate.frontier_value`); an
arm whose points do not reach x has no value there and ranks last. The run page's "rank arms at
x" and `paretolens analyze --at` print this one table.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analysis.frontier.interpolate import frontier_value
from analysis.frontier.polylines import Frontier
from ingest.contract.col import Col

RANKING_SCHEMA: dict[str, pl.DataType] = {
    Col.RUN_ID.value: pl.String(),
    Col.ARM_ID.value: pl.String(),
    Col.ARM_LABEL.value: pl.String(),
    "x": pl.Float64(),
    "y": pl.Float64(),
    "x_lo": pl.Float64(),
    "x_hi": pl.Float64(),
}


def rank_at(frontiers: Sequence[Frontier], at: float | None) -> pl.DataFrame:
    """Every arm frontier's y at x = `at`, best first.

    Args:
        frontiers: arm frontiers (`Analysis.arm_frontiers`), keyed by run and arm.
        at: the x to read them at; None gives an empty table.

    Returns:
        One row per frontier: `run_id`, `arm_id`, `arm_label`, `x` (= at), `y` (null where the
        frontier does not reach x), `x_lo`/`x_hi` (the x range it covers); sorted by `y`
        descending, nulls last.
    """
    if at is None:
        return pl.DataFrame(schema=RANKING_SCHEMA)
    rows = []
    for f in frontiers:
        key = dict(f.key)
        rows.append(
            {
                Col.RUN_ID.value: key.get(Col.RUN_ID),
                Col.ARM_ID.value: key.get(Col.ARM_ID),
                Col.ARM_LABEL.value: f.label,
                "x": at,
                "y": frontier_value(f, at),
                "x_lo": min(f.xs),
                "x_hi": max(f.xs),
            }
        )
    return pl.DataFrame(rows, schema=RANKING_SCHEMA).sort("y", descending=True, nulls_last=True)


__all__ = ["RANKING_SCHEMA", "rank_at"]
