"""History: one configuration (or a set of arms) followed across runs in time.

"How has TP8 / MTP on MI355X moved over the last ten sweeps?" For each run that measured one of
the chosen arms, the arm's frontier in that run is read at one interactivity by monotone PCHIP
between its measured points (`ranking.rank_at`, never extrapolated: a run whose frontier does not
reach x has no value there and says its range). Runs are ordered by their creation date, else
their ingest date.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analysis.comparison.ranking import rank_at
from analysis.frontier.prune import analyze_points
from ingest.contract.col import Col
from ingest.contract.schema import RunCol

HISTORY_COLUMNS: tuple[str, ...] = (
    Col.RUN_ID.value,
    "date",
    RunCol.BRANCH.value,
    RunCol.HEAD_SHA.value,
    Col.ARM_ID.value,
    Col.ARM_LABEL.value,
    "x",
    "y",
    "x_lo",
    "x_hi",
    "points",
)


def arm_history(
    points: pl.DataFrame,
    runs: pl.DataFrame,
    arm_ids: Sequence[str],
    at: float,
    *,
    x: str = Col.MEDIAN_INTVTY,
    y: str = Col.TPUT_PER_GPU,
) -> pl.DataFrame:
    """The chosen arms' frontier value at x = `at` in every run that measured them, oldest first.

    Args:
        points: canonical points of any runs (the store's).
        runs: the runs catalog (dates, branches, commits).
        arm_ids: the arms to follow (an arm id is the same configuration in every run).
        at: the x to read each run's arm frontier at.
        x, y: the plane.

    Returns:
        One row per (run, arm): `run_id`, `date` (created, else ingested, ISO text), `branch`,
        `head_sha`, `arm_id`, `arm_label`, `x` (= at), `y` (null when that run's frontier does
        not reach x), `x_lo`/`x_hi` (the x range it covers) and `points` (how many points of
        the arm the run has).
    """
    chosen = (
        points.filter(pl.col(Col.ARM_ID).is_in(list(arm_ids)))
        if arm_ids and Col.ARM_ID in points.columns
        else points.clear()
    )
    if chosen.height == 0:
        return (
            pl.DataFrame(schema={c: pl.String for c in HISTORY_COLUMNS})
            .cast({"x": pl.Float64, "y": pl.Float64, "x_lo": pl.Float64, "x_hi": pl.Float64})
            .cast({"points": pl.UInt32})
        )
    # One comparison group per run and arm: the arm's own frontier in each run.
    analysis = analyze_points(chosen, x, y, group_by=(Col.RUN_ID, Col.ARM_ID))
    ranked = rank_at(analysis.arm_frontiers, at)
    counts = chosen.group_by(Col.RUN_ID, Col.ARM_ID).agg(pl.len().alias("points"))
    dated = runs.select(
        pl.col(RunCol.RUN_ID),
        pl.coalesce(
            pl.col(RunCol.CREATED_AT).cast(pl.String),
            pl.col(RunCol.INGESTED_AT).cast(pl.String),
        ).alias("date"),
        pl.col(RunCol.BRANCH),
        pl.col(RunCol.HEAD_SHA),
    )
    # An arm with points but no frontier (every point invalid or past its cliff) still shows.
    base = counts.join(
        ranked.drop(Col.ARM_LABEL), on=[Col.RUN_ID, Col.ARM_ID], how="left"
    ).with_columns(pl.lit(float(at)).alias("x"))
    labels = chosen.group_by(Col.RUN_ID, Col.ARM_ID).agg(pl.col(Col.ARM_LABEL).first())
    out = (
        base.join(labels, on=[Col.RUN_ID, Col.ARM_ID], how="left")
        .join(dated, on=Col.RUN_ID, how="left")
        .sort(["date", Col.RUN_ID, Col.ARM_LABEL], nulls_last=True)
    )
    return out.select(HISTORY_COLUMNS)


__all__ = ["HISTORY_COLUMNS", "arm_history"]
