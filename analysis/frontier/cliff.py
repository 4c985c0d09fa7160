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

The rules are one implementation: polars expressions over the rows grouped by arm
(`_windows_polars`: running values over the whole column cut at the arm boundaries, aggregates
keyed by sorted run numbers), sized for real pages and whole histories (`benchmarks/` measures
them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import polars as pl

from analysis.frontier.codes import (
    dense_codes,
    gather,
    load_values,
    nulls_last_key,
    spread,
)
from analysis.frontier.dominance import BoolArray, IntArray, dense, order_by
from analysis.frontier.pareto import arm_columns
from ingest.contract.col import Col
from ingest.contract.schema import DEFAULT_GROUP, better


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
    error_rate: a point past the knee with a higher error rate is post-cliff (0.05), also one
        above the `invalid` threshold (0.10): the load broke the server. A point with a failing
        error rate at or before the knee is invalid instead.
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
    arm, _ = dense_codes(points, arm_columns(by))
    order = order_by(arm, nulls_last_key(load_values(points)))
    res = arm_cliffs(gather(cliff_frame(points, params), order), arm[order], params)
    inverse = np.empty(len(order), dtype=np.int64)
    inverse[order] = np.arange(len(order))
    evidence = res.evidence_at(len(order))
    return pl.DataFrame(
        {
            Col.POINT_ID: points.get_column(Col.POINT_ID),
            "knee_conc": res.knee_conc.gather(inverse),
            "post_cliff": res.post[inverse],
            "cliff_evidence": evidence.gather(inverse),
        }
    )


@dataclass(frozen=True, eq=False)
class ArmCliffs:
    """Cliff verdicts of rows ordered by arm, then concurrency (nulls last), then input row.

    knee_conc: the arm's knee, one value per row (dtype of `conc`); post: post-cliff mask;
    evidence: the evidence of the post-cliff rows only, in row order.
    """

    knee_conc: pl.Series
    post: BoolArray
    evidence: pl.Series

    def evidence_at(self, n: int) -> pl.Series:
        """The evidence as a full-length column (null where not post-cliff)."""
        return spread(self.evidence, np.flatnonzero(self.post), n)


def cliff_frame(points: pl.DataFrame, params: CliffParams) -> pl.DataFrame:
    """The columns the cliff rules read: `conc` (the load: concurrency, else request rate),
    `__t`, `__ttft`, `__err` (floats)."""
    by_rate = (
        pl.col(Col.CONC).is_null() & pl.col(Col.REQUEST_RATE).is_not_null()
        if Col.REQUEST_RATE in points.columns
        else pl.lit(False)
    )
    return points.select(
        load_values(points),
        by_rate.alias("__by_rate"),
        pl.col(params.tput).cast(pl.Float64).alias("__t"),
        pl.col(params.ttft).cast(pl.Float64).alias("__ttft"),
        # 1 - 95/100 is 0.05000000000000004: compare error rates at 9 decimals, not float noise.
        pl.col(Col.ERROR_RATE).cast(pl.Float64).round(9).alias("__err"),
    )


def arm_cliffs(
    frame: pl.DataFrame, arm: IntArray, params: CliffParams, t_rank: IntArray | None = None
) -> ArmCliffs:
    """Cliff verdicts of `frame` (a `cliff_frame`) whose rows are in arm order (see ArmCliffs).

    Args:
        frame: rows grouped by arm (each arm contiguous), by concurrency (nulls last) within it.
        arm: the arm code of each row.
        params: the thresholds.
        t_rank: the dense ranks of `__t` when the caller has them (then `__t` has no null or NaN).
    """
    windows = _windows_polars(frame, arm, params, t_rank)
    post = (windows["__low"] | windows["__slow"] | windows["__errc"]).to_numpy()
    knee = windows.get_column("knee_conc")
    if not post.any():  # what the evidence query gives on no rows
        return ArmCliffs(knee, post, pl.Series("cliff_evidence", [], dtype=pl.String))
    evidence = windows.filter(pl.Series(post)).select(_evidence(params)).to_series()
    return ArmCliffs(knee_conc=knee, post=post, evidence=evidence)


def _windows_polars(
    frame: pl.DataFrame, arm: IntArray, params: CliffParams, t_rank: IntArray | None = None
) -> pl.DataFrame:
    """The rules' columns over each arm. Each arm's rows are contiguous, and so are each (arm,
    load)'s: the per-arm running values (cumulative maximum, shifts, forward fill) are computed
    over the whole column and cut at the arm boundaries, and the per-arm aggregates are keyed
    by one ascending run number marked sorted (polars groups it as slices, no hashing)."""
    starts = np.r_[True, arm[1:] != arm[:-1]] if len(arm) else np.zeros(0, dtype=np.bool_)
    runs = np.cumsum(starts, dtype=np.int64)
    ordered = frame.hstack(
        [pl.Series("__arm", runs).set_sorted(), _cum_max(frame.get_column("__t"), runs, t_rank)]
    )
    for stage in _window_stages(params):
        ordered = ordered.with_columns(*stage)
    return ordered.drop("__arm", "__load", "__stops", "__cm", "__best")


@lru_cache(maxsize=64)
def _window_stages(params: CliffParams) -> tuple[tuple[pl.Expr, ...], ...]:
    """The expressions of `_windows_polars`, one tuple per `with_columns` (each reads the
    columns of the ones before), built once per set of thresholds."""
    t = pl.col("__t")
    conc = pl.col(Col.CONC)
    arm_col = pl.col("__arm")
    a, same = ["__arm"], ["__load"]
    in_arm_prev, in_arm_next = arm_col.shift(1) == arm_col, arm_col.shift(-1) == arm_col
    best = pl.when(t == pl.col("__cm")).then(conc)
    owner = pl.when(best.is_not_null()).then(arm_col).forward_fill()
    knee_ttft = pl.col("__ttft").filter(conc == pl.col("knee_conc")).first().over(a)
    past = conc > pl.col("knee_conc")
    return (
        (
            pl.when(owner == arm_col).then(best.forward_fill()).alias("__best"),
            (conc.ne_missing(conc.shift(1)) | ~in_arm_prev.fill_null(False))
            .cum_sum()
            .alias("__load"),
        ),
        (
            pl.col("__load").set_sorted(),
            pl.when(in_arm_prev).then(pl.col("__cm").shift(1)).alias("__prev"),
            pl.when(in_arm_prev).then(pl.col("__best").shift(1)).alias("__best_conc"),
            (pl.when(in_arm_next).then(t.shift(-1)) < t * (1.0 + params.knee_min_gain)).alias(
                "__stops"
            ),
        ),
        (
            # "lower concurrency" is strict: repeated concs share the value of their first row.
            pl.col("__prev").first().over(same).alias("__prev"),
            pl.col("__best_conc").first().over(same).alias("__best_conc"),
            pl.when(pl.col("__stops")).then(conc).min().over(a).alias("knee_conc"),
        ),
        (knee_ttft.fill_null(strategy="zero").alias("__knee_ttft"),),
        (
            (past & (t < params.tput_fraction * pl.col("__prev"))).fill_null(False).alias("__low"),
            (past & (pl.col("__ttft") > _limit(params))).fill_null(False).alias("__slow"),
            (past & (pl.col("__err") > params.error_rate)).fill_null(False).alias("__errc"),
        ),
    )


def _cum_max(t: pl.Series, runs: IntArray, rank: IntArray | None = None) -> pl.Series:
    """`t.cum_max()` within each run of equal `runs` (ascending run numbers), as polars computes
    it: null where t is null, NaN skipped (NaN until a number is seen).

    Numbers are replaced by their dense rank, offset by the run number times the rank count, so
    one cumulative maximum over the whole column stays inside each run (`rank`: the dense
    ranks of t when the caller has them, t then holding no null or NaN)."""
    v = t.to_numpy()
    num = np.flatnonzero(~np.isnan(v)) if rank is None else np.arange(len(v))
    rank = (dense(v[num]) if rank is None else rank) + 1
    value = np.empty(int(rank.max(initial=0)) + 1)
    value[rank] = v[num]  # the number of each rank (value[0]: none yet)
    base = runs * len(value)
    key = base.copy()
    key[num] += rank
    seen = np.maximum.accumulate(key) - base
    out = np.where(seen > 0, value[seen], np.nan)
    return pl.Series("__cm", out, dtype=pl.Float64).scatter(
        np.flatnonzero(t.is_null().to_numpy()), None
    )


def _limit(params: CliffParams) -> pl.Expr:
    return pl.max_horizontal(pl.col("__knee_ttft") * params.ttft_ratio, pl.lit(params.ttft_floor_s))


def _at(col: str) -> pl.Expr:
    """A load in evidence text: `c16` for a concurrency, `16 req/s` for a request rate."""
    value = pl.col(col)
    return (
        pl.when(pl.col("__by_rate"))
        .then(pl.format("{} req/s", value))
        .otherwise(pl.format("c{}", value.cast(pl.Int64, strict=False)))
    )


@lru_cache(maxsize=64)
def _evidence(params: CliffParams) -> pl.Expr:
    t = pl.col("__t")
    limit = _limit(params)
    ttft_why = (
        pl.when(pl.col("__knee_ttft") * params.ttft_ratio > params.ttft_floor_s)
        .then(
            pl.format(
                f"{{}} s ({params.ttft_ratio:g} x knee {{}})", limit.round(1), _at("knee_conc")
            )
        )
        .otherwise(pl.lit(f"{params.ttft_floor_s:g} s floor"))
    )
    return pl.concat_str(
        [
            pl.when("__low").then(
                pl.format(
                    f"{_label(params.tput)} {{}} < {params.tput_fraction:g} x {{}} ({{}})",
                    t.round(1),
                    pl.col("__prev").round(1),
                    _at("__best_conc"),
                )
            ),
            pl.when("__slow").then(
                pl.format(
                    f"{_label(params.ttft)} {{}} s > {{}}", pl.col("__ttft").round(1), ttft_why
                )
            ),
            pl.when("__errc").then(
                pl.format(f"error rate {{}} > {params.error_rate:g}", pl.col("__err").round(3))
            ),
        ],
        separator="; ",
        ignore_nulls=True,
    ).alias("cliff_evidence")
