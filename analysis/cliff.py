"""Post-cliff detection: points past an arm's throughput knee whose service has collapsed.

Within an arm ordered by concurrency, the *knee* is the first point whose next-higher
concurrency raises throughput by less than `knee_min_gain` (5%: inside run-to-run noise, so
throughput has stopped rising). A point past the knee is *post-cliff* when any of these
hold (each threshold is a `CliffParams` field):

* throughput below `tput_fraction` x the best lower-concurrency throughput of the arm;
* p90 TTFT above max(`ttft_ratio` x the knee's p90 TTFT, `ttft_floor_s`);
* error rate above `error_rate`.

Post-cliff points must be removed before dominance is judged: past the cliff a point can look
non-dominated (low TPOT, high interactivity) while its queue explodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from analysis.pareto import arm_columns
from ingest.schema import DEFAULT_GROUP, Col, better


@dataclass(frozen=True)
class CliffParams:
    """Thresholds of the post-cliff rules (defaults chosen from the real InferenceX sweeps).

    tput_fraction: a point past the knee below this fraction of the best lower-concurrency
        throughput is post-cliff (0.95: a 5% drop is beyond run-to-run noise).
    knee_min_gain: the knee is the first point after which the next concurrency gains less
        than this fraction of throughput (0.05).
    ttft_ratio, ttft_floor_s: a point past the knee whose `ttft` exceeds
        max(ttft_ratio x the knee's value, ttft_floor_s) is post-cliff (10x and 10 s: queueing,
        not prefill cost; agentic prefill of 100k-token prompts alone takes seconds).
    error_rate: a point past the knee with a higher error rate is post-cliff (0.05; points
        above the `invalid` threshold, 0.10, are invalid instead).
    tput, ttft: the throughput and TTFT columns the rules read.
    """

    tput_fraction: float = 0.95
    knee_min_gain: float = 0.05
    ttft_ratio: float = 10.0
    ttft_floor_s: float = 10.0
    error_rate: float = 0.05
    tput: str = Col.TPUT_PER_GPU
    ttft: str = Col.P90_TTFT

    def __post_init__(self) -> None:
        if better(self.tput) != "higher":
            raise ValueError(f"CliffParams.tput must be a higher-is-better metric, got {self.tput}")
        if better(self.ttft) != "lower":
            raise ValueError(f"CliffParams.ttft must be a lower-is-better metric, got {self.ttft}")
        if not 0 < self.tput_fraction <= 1:
            raise ValueError(f"tput_fraction must be in (0, 1], got {self.tput_fraction}")


def _label(col: str) -> str:
    if col == Col.TPUT_PER_GPU:
        return "tput"
    stat, _, metric = col.rpartition("_")
    return f"{stat} {metric.upper()}" if stat else col


def detect_cliffs(
    points: pl.DataFrame,
    params: CliffParams = CliffParams(),
    by: Sequence[str] = DEFAULT_GROUP,
) -> pl.DataFrame:
    """Post-cliff verdicts for every row of `points` (pass only the rows that are valid).

    Args:
        points: canonical points; arms are (`by` columns, run_id, arm_id), ordered by conc.
        params: the thresholds.
        by: comparison-group columns (the arm is always within one group).

    Returns:
        A frame aligned with `points`: `point_id`, `knee_conc` (null when throughput never stops
        rising), `post_cliff` (bool) and `cliff_evidence` (e.g.
        `tput 2879.6 < 0.95 x 7739.5 (c8); p90 TTFT 113.3 s > 15.9 s (10 x knee c8)`; null when
        not post-cliff).
    """
    arm_cols = list(arm_columns(by))
    # One integer code per arm: sorting and windowing over it is much cheaper than over the
    # twenty-odd identity columns.
    arm = ["__arm"]
    tput = pl.col(params.tput).cast(pl.Float64)
    ttft = pl.col(params.ttft).cast(pl.Float64)
    conc = pl.col(Col.CONC)
    frame = (
        points.select(
            *arm_cols,
            Col.POINT_ID,
            Col.CONC,
            tput.alias("__t"),
            ttft.alias("__ttft"),
            pl.col(Col.ERROR_RATE).cast(pl.Float64).alias("__err"),
        )
        .with_row_index("__row")
        .with_columns(__arm=pl.col("__row").first().over(arm_cols))
        .drop(arm_cols)
    )
    t = pl.col("__t")
    ordered = frame.sort([*arm, Col.CONC, "__row"], nulls_last=True).with_columns(
        __prev=t.cum_max().shift(1).over(arm),
        __best_conc=pl.when(t == t.cum_max()).then(conc).forward_fill().shift(1).over(arm),
        __stops=(t.shift(-1).over(arm) < t * (1.0 + params.knee_min_gain)),
    )
    ordered = ordered.with_columns(
        # "lower concurrency" is strict: repeated concs share the value of their first row.
        __prev=pl.col("__prev").first().over([*arm, Col.CONC]),
        __best_conc=pl.col("__best_conc").first().over([*arm, Col.CONC]),
        knee_conc=pl.when(pl.col("__stops")).then(conc).min().over(arm),
    )
    knee_ttft = pl.col("__ttft").filter(conc == pl.col("knee_conc")).first().over(arm)
    ordered = ordered.with_columns(__knee_ttft=knee_ttft.fill_null(strategy="zero"))
    limit = pl.max_horizontal(
        pl.col("__knee_ttft") * params.ttft_ratio, pl.lit(params.ttft_floor_s)
    )
    past = conc > pl.col("knee_conc")
    low = past & (t < params.tput_fraction * pl.col("__prev"))
    slow = past & (pl.col("__ttft") > limit)
    err = past & (pl.col("__err") > params.error_rate)
    ttft_why = (
        pl.when(pl.col("__knee_ttft") * params.ttft_ratio > params.ttft_floor_s)
        .then(
            pl.format(
                f"{{}} s ({params.ttft_ratio:g} x knee c{{}})", limit.round(1), pl.col("knee_conc")
            )
        )
        .otherwise(pl.lit(f"{params.ttft_floor_s:g} s floor"))
    )
    evidence = pl.concat_str(
        [
            pl.when(low).then(
                pl.format(
                    f"{_label(params.tput)} {{}} < {params.tput_fraction:g} x {{}} (c{{}})",
                    t.round(1),
                    pl.col("__prev").round(1),
                    pl.col("__best_conc"),
                )
            ),
            pl.when(slow).then(
                pl.format(
                    f"{_label(params.ttft)} {{}} s > {{}}", pl.col("__ttft").round(1), ttft_why
                )
            ),
            pl.when(err).then(
                pl.format(f"error rate {{}} > {params.error_rate:g}", pl.col("__err").round(3))
            ),
        ],
        separator="; ",
        ignore_nulls=True,
    )
    post = (low | slow | err).fill_null(False)
    out = ordered.select(
        "__row",
        Col.POINT_ID,
        "knee_conc",
        post.alias("post_cliff"),
        pl.when(post).then(evidence).alias("cliff_evidence"),
    )
    return out.sort("__row").drop("__row")
