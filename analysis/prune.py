"""Verdicts: every point is exactly one of frontier | dominated | post_cliff | invalid.

The order of judgement matters. Invalid points (an axis value missing or non-positive, error rate
over the threshold, no successful request) are set aside first; post-cliff points are removed
next (a point past the cliff can look non-dominated while its queue explodes); dominance is then
judged on what is left, against the point's comparison-group envelope.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

import polars as pl

from analysis.cliff import CliffParams, detect_cliffs
from analysis.pareto import Frontier, axis_problems, compute_frontiers
from ingest.schema import DEFAULT_GROUP, Col

# The columns that say which configuration a row is (emitted on every per-point output row).
IDENTITY_COLUMNS: tuple[Col, ...] = (
    Col.POINT_ID,
    Col.RUN_ID,
    Col.SCENARIO,
    Col.MODEL_PREFIX,
    Col.MODEL,
    Col.HW,
    Col.FRAMEWORK,
    Col.PRECISION,
    Col.ISL,
    Col.OSL,
    Col.ARM_ID,
    Col.ARM_LABEL,
    Col.CONC,
    Col.TP,
    Col.PP,
    Col.EP,
    Col.DP_ATTENTION,
    Col.DCP_SIZE,
    Col.PCP_SIZE,
    Col.IS_MULTINODE,
    Col.DISAGG,
    Col.PREFILL_TP,
    Col.PREFILL_EP,
    Col.PREFILL_DP_ATTENTION,
    Col.PREFILL_NUM_WORKERS,
    Col.DECODE_TP,
    Col.DECODE_EP,
    Col.DECODE_DP_ATTENTION,
    Col.DECODE_NUM_WORKERS,
    Col.SPEC_DECODING,
    Col.SPEC_METHOD,
    Col.DRAFT_MODEL,
    Col.NUM_SPEC_TOKENS,
    Col.KV_OFFLOADING,
    Col.KV_OFFLOAD_BACKEND,
)

# Configuration context carried on verdict rows (exports need them to rebuild a recipe).
CONTEXT_COLUMNS: tuple[Col, ...] = (Col.IMAGE, Col.HW_LABEL, Col.KV_OFFLOAD_BACKEND_VERSION)

# InferenceX's aiperf gate: error rate <= 0.10 passes (AIPERF_FAILED_REQUEST_THRESHOLD).
DEFAULT_MAX_ERROR_RATE = 0.10


class Verdict(StrEnum):
    """What the analysis concluded about one point."""

    FRONTIER = "frontier"
    DOMINATED = "dominated"
    POST_CLIFF = "post_cliff"
    INVALID = "invalid"


@dataclass(frozen=True, eq=False)
class Analysis:
    """One analysis of a set of points on the x/y plane.

    table: one row per input point: the identity columns present in the input (then `image`,
        `hw_label`, `kv_offload_backend_version`), `x`, `y`,
        `verdict`, `on_arm_frontier`, `reason`, `dominated_by` (ids of the group-frontier
        points that dominate it, nearest in x first; empty unless dominated) and `knee_conc`.
    group_frontiers / arm_frontiers: polylines of the judged (valid, pre-cliff) points.
    """

    x: str
    y: str
    group_by: tuple[str, ...]
    cliff: CliffParams
    max_error_rate: float
    table: pl.DataFrame
    group_frontiers: tuple[Frontier, ...] = field(default=())
    arm_frontiers: tuple[Frontier, ...] = field(default=())

    @property
    def excluded(self) -> pl.DataFrame:
        """The invalid points and why: `point_id`, `reason`."""
        return self.table.filter(pl.col("verdict") == Verdict.INVALID).select("point_id", "reason")

    def counts(self) -> dict[str, int]:
        """How many points got each verdict (every verdict present, zeros included)."""
        got = dict(self.table.get_column("verdict").value_counts().iter_rows())
        return {v.value: int(got.get(v.value, 0)) for v in Verdict}


def invalid_reasons(points: pl.DataFrame, x: str, y: str, max_error_rate: float) -> pl.Series:
    """Why each row is invalid (null when it is valid)."""
    err = pl.col(Col.ERROR_RATE)
    ok = pl.col(Col.NUM_REQUESTS_SUCCESSFUL)
    rules = pl.concat_str(
        [
            pl.lit(axis_problems(points, x, y)),
            pl.when(err > max_error_rate).then(
                pl.format(f"error rate {{}} > {max_error_rate:g}", err.round(3))
            ),
            pl.when(ok == 0).then(pl.lit("no successful requests")),
        ],
        separator="; ",
        ignore_nulls=True,
    )
    return points.select(pl.when(rules != "").then(rules).alias("invalid")).to_series()


def _fmt(expr: pl.Expr, digits: int) -> pl.Expr:
    return expr.cast(pl.Float64).round(digits).cast(pl.String)


def analyze_points(
    points: pl.DataFrame,
    x: str = Col.MEDIAN_INTVTY,
    y: str = Col.TPUT_PER_GPU,
    group_by: Sequence[str] = DEFAULT_GROUP,
    cliff: CliffParams = CliffParams(),
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    max_dominated_by: int | None = None,
) -> Analysis:
    """Give every point a verdict on the x/y plane of its comparison group.

    Args:
        points: canonical points (not modified).
        x, y: metrics (better directions from the schema); defaults median_intvty, tput_per_gpu.
        group_by: comparison-group columns (default run x scenario x model x isl/osl x hw x
            precision); the envelope is across all arms of a group.
        cliff: post-cliff thresholds.
        max_error_rate: points with a higher error rate are invalid.
        max_dominated_by: cap on each `dominated_by` list (None: every dominating frontier point).

    Returns:
        An Analysis (see its fields).

    Raises:
        ValueError: when x or y is not a metric with a better direction.
    """
    x, y, group_by = str(x), str(y), tuple(str(c) for c in group_by)
    rows = points.with_row_index("__row")
    invalid = invalid_reasons(points, x, y, max_error_rate)
    valid = rows.filter(invalid.is_null())
    cliffs = detect_cliffs(valid, cliff, group_by).with_columns(valid.get_column("__row"))
    judged = valid.filter(~cliffs.get_column("post_cliff"))
    fr = compute_frontiers(judged, x, y, group_by, max_dominated_by=max_dominated_by)
    flags = fr.flags.drop("point_id", "excluded_reason").with_columns(judged.get_column("__row"))
    ident = [c for c in (*IDENTITY_COLUMNS, *CONTEXT_COLUMNS) if c in points.columns]
    base = (
        rows.select(
            "__row",
            *ident,
            pl.col(x).cast(pl.Float64).alias("x"),
            pl.col(y).cast(pl.Float64).alias("y"),
            invalid.alias("__invalid"),
        )
        .join(cliffs.drop("point_id"), on="__row", how="left")
        .join(flags, on="__row", how="left")
    )
    lookup = judged.select(
        pl.col(Col.POINT_ID).alias("__dom"),
        pl.format(
            "{} c{} ({}, {})", Col.ARM_LABEL, Col.CONC, _fmt(pl.col(x), 2), _fmt(pl.col(y), 1)
        ).alias("__dom_desc"),
    ).unique("__dom", keep="first")
    base = base.with_columns(
        pl.col("dominated_by").fill_null(pl.lit([], pl.List(pl.String))),
        pl.col("dominated_by").list.first().alias("__dom"),
    ).join(lookup, on="__dom", how="left")
    n_more = pl.col("dominated_by").list.len() - 1
    post = pl.col("post_cliff").fill_null(False)
    on_front = pl.col("on_frontier").fill_null(False)
    verdict = (
        pl.when(pl.col("__invalid").is_not_null())
        .then(pl.lit(Verdict.INVALID.value))
        .when(post)
        .then(pl.lit(Verdict.POST_CLIFF.value))
        .when(on_front)
        .then(pl.lit(Verdict.FRONTIER.value))
        .otherwise(pl.lit(Verdict.DOMINATED.value))
    )
    reason = (
        pl.when(pl.col("__invalid").is_not_null())
        .then(pl.col("__invalid"))
        .when(post)
        .then(pl.col("cliff_evidence"))
        .when(on_front)
        .then(pl.lit("not dominated in its comparison group"))
        .when(pl.col("__dom_desc").is_null())
        .then(pl.lit("dominated in its comparison group"))
        .when(n_more > 0)
        .then(pl.format("dominated by {} and {} more", "__dom_desc", n_more))
        .otherwise(pl.format("dominated by {}", "__dom_desc"))
    )
    table = (
        base.with_columns(
            verdict.alias("verdict"),
            (pl.col("on_arm_frontier").fill_null(False) & ~post).alias("on_arm_frontier"),
            reason.alias("reason"),
        )
        .sort(
            [*[c for c in group_by if c in ident], Col.ARM_LABEL, Col.CONC, "__row"],
            nulls_last=True,
        )
        .select(
            *ident, "x", "y", "verdict", "on_arm_frontier", "reason", "dominated_by", "knee_conc"
        )
    )
    return Analysis(
        x=x,
        y=y,
        group_by=group_by,
        cliff=cliff,
        max_error_rate=max_error_rate,
        table=table,
        group_frontiers=fr.group_frontiers,
        arm_frontiers=fr.arm_frontiers,
    )
