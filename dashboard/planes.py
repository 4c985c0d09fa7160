"""What a chart and the points table read: an analysis table with the point columns it does not
carry (for the hover and the detail panel) and the arm names joined on by `point_id`/`arm_id`."""

from __future__ import annotations

import polars as pl

from analysis import Analysis
from ingest.schema import Col

# Analysis columns joined onto the points (beyond the canonical schema).
VERDICT_COLUMNS = ("verdict", "reason", "on_arm_frontier", "knee_conc")
# Point columns the hover and the detail panel read that the analysis table does not carry.
HOVER_COLUMNS = (
    Col.NUM_GPUS,
    Col.NUM_REQUESTS_SUCCESSFUL,
    Col.NUM_REQUESTS_TOTAL,
    Col.ERROR_RATE,
    Col.AL_MEASURED,
    Col.AL_SOURCE,
    Col.SYNTHETIC_AL,
    Col.IMAGE,
)


def chart_plane(a: Analysis, points: pl.DataFrame, names: pl.DataFrame) -> pl.DataFrame:
    """What a chart draws: the analysis rows plus the hover columns and the arm names."""
    extra = [c for c in HOVER_COLUMNS if c not in a.table.columns]
    plane = a.table.join(points.select(Col.POINT_ID, *extra), on=Col.POINT_ID, how="left")
    return plane.join(names, on=Col.ARM_ID, how="left")


def verdict_points(a: Analysis, points: pl.DataFrame, names: pl.DataFrame) -> pl.DataFrame:
    """The points with their arm names and verdict columns, sorted by run, arm and concurrency."""
    verdicts = a.table.select(Col.POINT_ID, *VERDICT_COLUMNS)
    named = points.join(names, on=Col.ARM_ID, how="left")
    return named.join(verdicts, on=Col.POINT_ID, how="left").sort(
        Col.RUN_ID, Col.ARM_LABEL, Col.CONC
    )
