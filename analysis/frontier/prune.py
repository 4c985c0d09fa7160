"""Verdicts: every point is exactly one of frontier | dominated | post_cliff | invalid.

The order of judgement matters. Invalid points (an axis value missing or non-positive, error rate
over the threshold, no successful request) are set aside first; post-cliff points are removed
next (a point past the cliff can look non-dominated while its queue explodes); dominance is then
judged on what is left, against the point's comparison-group envelope.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

import numpy as np
import numpy.typing as npt
import polars as pl

from analysis.frontier.cliff import CliffParams, arm_cliffs, cliff_frame
from analysis.frontier.codes import (
    columns,
    dense_codes,
    gather,
    key_ranks,
    load_values,
    nulls_last_key,
    rows_of,
    spread,
)
from analysis.frontier.dominance import BoolArray, IntArray, dense, order_by
from analysis.frontier.pareto import (
    ArmSets,
    Check,
    Judgement,
    axis_problems,
    axis_unusable,
    dominated_lists,
    first_reason,
    frontier_lines,
    judge,
)
from analysis.frontier.polylines import FrontierLines, LazyFrontiers, PolylineColumns
from analysis.frontier.reasons import ReasonTexts, dominator_descriptions
from analysis.frontier.slo import Slo
from ingest.contract.col import Col
from ingest.contract.schema import DEFAULT_GROUP, better

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
    Col.REQUEST_RATE,
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

# Dominating ids listed per point by default (nearest in x first); `dominated_by_count` has the
# total. Uncapped, a million points in a thousand groups list twenty million ids.
DEFAULT_MAX_DOMINATED_BY = 3


class Verdict(StrEnum):
    """What the analysis concluded about one point."""

    FRONTIER = "frontier"
    DOMINATED = "dominated"
    POST_CLIFF = "post_cliff"
    INVALID = "invalid"
    OUT_OF_SLO = "out_of_slo"


@dataclass(frozen=True, eq=False)
class Analysis(LazyFrontiers):
    """One analysis of a set of points on the x/y plane.

    table: one row per input point: the identity columns present in the input (then `image`,
        `hw_label`, `kv_offload_backend_version`), `x`, `y`,
        `verdict`, `on_arm_frontier`, `reason`, `dominated_by` (ids of the group-frontier
        points that dominate it, nearest in x first, at most `max_dominated_by` of them; empty
        unless dominated), `dominated_by_count` (how many dominate it) and `knee_conc`.
    group_frontiers / arm_frontiers: polylines of the judged (valid, pre-cliff) points, built
        from `lines` on first use (the table, the CLI and the exports never need them).
    """

    x: str
    y: str
    group_by: tuple[str, ...]
    cliff: CliffParams
    max_error_rate: float
    table: pl.DataFrame
    lines: FrontierLines = field(repr=False)
    slo: Slo = field(default_factory=Slo)

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
    rules = pl.concat_str(
        [
            pl.lit(axis_problems(points, x, y)),
            *(first_reason([check]) for check in _run_checks(max_error_rate)),
        ],
        separator="; ",
        ignore_nulls=True,
    )
    return points.select(pl.when(rules != "").then(rules).alias("invalid")).to_series()


def invalid_mask(
    points: pl.DataFrame, x: str, y: str, max_error_rate: float, *, errors: bool = True
) -> BoolArray:
    """True where `invalid_reasons` names a reason (without building the strings); with
    `errors=False`, only the measurements that cannot be placed at all (axes, no successes)."""
    checks = _run_checks(max_error_rate) if errors else _run_checks(max_error_rate)[1:]
    conds = [cond for cond, _ in checks]
    bad = pl.any_horizontal(axis_unusable(x, y), *conds).fill_null(False)
    mask: BoolArray = points.select(bad).to_series().to_numpy()
    return mask


def _placeable_masks(
    points: pl.DataFrame, x: str, y: str, max_error_rate: float
) -> tuple[BoolArray, BoolArray]:
    """(`invalid_mask(..., errors=False)`, the error-rate check) in one pass, input order."""
    masks = points.select(*_placeable_exprs(x, y, max_error_rate))
    return masks.get_column("u").to_numpy(), masks.get_column("f").to_numpy()


@lru_cache(maxsize=256)
def _placeable_exprs(x: str, y: str, max_error_rate: float) -> tuple[pl.Expr, pl.Expr]:
    (error, _), *rest = _run_checks(max_error_rate)
    unplaceable = pl.any_horizontal(axis_unusable(x, y), *(cond for cond, _ in rest))
    return unplaceable.fill_null(False).alias("u"), error.fill_null(False).alias("f")


@lru_cache(maxsize=256)
def _run_checks(max_error_rate: float) -> tuple[Check, ...]:
    """The checks of how a point's benchmark went (each names its own reason); the error-rate
    check first (a point past its arm's knee with a high error rate is post-cliff instead)."""
    err = pl.col(Col.ERROR_RATE)
    return (
        (err > max_error_rate, pl.format(f"error rate {{}} > {max_error_rate:g}", err.round(3))),
        (pl.col(Col.NUM_REQUESTS_SUCCESSFUL) == 0, pl.lit("no successful requests")),
    )


# verdict codes (index into _VERDICTS)
_FRONTIER, _DOMINATED, _POST_CLIFF, _INVALID, _OUT_OF_SLO = range(5)
_VERDICTS = (
    Verdict.FRONTIER,
    Verdict.DOMINATED,
    Verdict.POST_CLIFF,
    Verdict.INVALID,
    Verdict.OUT_OF_SLO,
)


def analyze_points(
    points: pl.DataFrame,
    x: str = Col.MEDIAN_INTVTY,
    y: str = Col.TPUT_PER_GPU,
    group_by: Sequence[str] = DEFAULT_GROUP,
    cliff: CliffParams = CliffParams(),
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    max_dominated_by: int | None = DEFAULT_MAX_DOMINATED_BY,
    slo: Slo = Slo(),
) -> Analysis:
    """Give every point a verdict on the x/y plane of its comparison group.

    Args:
        points: canonical points (not modified).
        x, y: metrics (better directions from the schema); defaults median_intvty, tput_per_gpu.
        group_by: comparison-group columns (default run x scenario x model x isl/osl x hw x
            precision); the envelope is across all arms of a group.
        cliff: post-cliff thresholds.
        max_error_rate: points with a higher error rate are invalid.
        max_dominated_by: cap on each `dominated_by` list (default 3; None: every dominating
            frontier point). `dominated_by_count` and the reason count them all regardless.
        slo: latency/error limits (`analysis.frontier.slo.parse_slo`); a point that breaks one is
            `out_of_slo` (after invalid and post_cliff) and left out of the frontiers.

    Returns:
        An Analysis (see its fields).

    Raises:
        ValueError: when x or y is not a metric with a better direction.
    """
    better(x), better(y)  # raise early on a non-metric axis
    x, y, group_by = str(x), str(y), tuple(str(c) for c in group_by)
    cliff = _cliff_throughput(points, y, cliff)
    have = set(points.columns)
    ident = [c for c in (*IDENTITY_COLUMNS, *CONTEXT_COLUMNS) if c in have]
    # The judgement works on integer codes and numpy arrays in output order; the identity
    # columns are gathered once, at the end.
    sets = ArmSets.of(points, group_by)
    order, arm_ordered = _output_order(points, sets, [c for c in group_by if c in ident])
    v = _judge_rows(points, sets, order, arm_ordered, x, y, cliff, max_error_rate, slo)
    axes = [points.get_column(c).cast(pl.Float64).alias(a) for c, a in ((x, "x"), (y, "y"))]
    picked = columns(points, ident).hstack(axes) if ident else pl.DataFrame(axes)
    table = gather(picked, order).hstack(
        _verdict_columns(points, order, v, x, y, max_error_rate, max_dominated_by, slo)
    )
    lines = frontier_lines(v.judgement, v.judged_rows, sets, PolylineColumns.of(points, x, y))
    return Analysis(
        x=x,
        y=y,
        group_by=group_by,
        cliff=cliff,
        max_error_rate=max_error_rate,
        table=table,
        lines=lines,
        slo=slo,
    )


@dataclass(frozen=True, eq=False)
class _Judged:
    """The verdicts of every row, in output order.

    code: verdict code; invalid_at / post_at: output rows of the invalid and post-cliff points;
    evidence: the cliff evidence of the post_at rows; knee: `knee_conc`; judged_at /
    judged_rows: output and input rows of the points judged for dominance (in output order);
    judgement: their frontiers and dominators (aligned with judged_at).
    """

    code: npt.NDArray[np.int8]
    invalid_at: IntArray
    post_at: IntArray
    slo_at: IntArray
    evidence: pl.Series
    knee: pl.Series
    judged_at: IntArray
    judged_rows: IntArray
    judgement: Judgement


_THROUGHPUTS = frozenset(
    str(c)
    for c in (
        Col.TPUT_PER_GPU,
        Col.OUTPUT_TPUT_PER_GPU,
        Col.TOTAL_TPUT,
        Col.OUTPUT_TPUT,
        Col.INPUT_TPUT,
        Col.REQUEST_THROUGHPUT,
    )
)


def _cliff_throughput(points: pl.DataFrame, y: str, cliff: CliffParams) -> CliffParams:
    """The cliff rules read the chart's throughput when theirs was never measured (no GPU count:
    no per-GPU throughput, so a total-throughput chart would otherwise find no knee)."""
    tput = cliff.tput
    if (
        y != tput
        and y in _THROUGHPUTS
        and (tput not in points.columns or points.get_column(tput).null_count() == points.height)
    ):
        return dataclasses.replace(cliff, tput=y)
    return cliff


def _judge_rows(
    points: pl.DataFrame,
    sets: ArmSets,
    order: IntArray,
    arm_ordered: bool,
    x: str,
    y: str,
    cliff: CliffParams,
    max_error_rate: float,
    slo: Slo,
) -> _Judged:
    n = len(order)
    # Cliffs are judged on every point that can be placed; a point with a failing error rate is
    # post-cliff when it is past its arm's knee (the load broke the server), invalid otherwise.
    unplaceable_in, failing_in = _placeable_masks(points, x, y, max_error_rate)
    unplaceable, failing = unplaceable_in[order], failing_in[order]
    valid = np.flatnonzero(~unplaceable)
    v_rows = order[valid]
    ys = points.get_column(y).cast(pl.Float64).to_numpy()
    y_rank = np.zeros(n, dtype=np.int64)
    y_rank[valid] = dense(ys[v_rows])
    # post-cliff, on the valid rows of each arm by concurrency (then input row): the output order
    # when it keeps each arm in one run, else the input order when that does, else a sort
    seq, arm = valid, sets.arm[v_rows]
    if not (arm_ordered and _contiguous(arm)):
        load = nulls_last_key(load_values(points))
        in_rows = np.flatnonzero(~unplaceable_in)
        arm_in = sets.arm[in_rows]
        if _contiguous(arm_in) and _ascending_within(arm_in, load[in_rows]):
            position = np.empty(n, dtype=np.int64)
            position[order] = np.arange(n, dtype=np.int64)
            seq, v_rows, arm = position[in_rows], in_rows, arm_in
        else:
            by = order_by(arm, load[v_rows], v_rows)
            seq, v_rows, arm = valid[by], v_rows[by], arm[by]
    # the cliff rules' throughput is usually y, whose ranks on these rows are known
    t_rank = y_rank[seq] if cliff.tput == y else None
    cl = arm_cliffs(gather(cliff_frame(points, cliff), v_rows), arm, cliff, t_rank)
    post = np.zeros(n, dtype=np.bool_)
    post[seq] = cl.post
    invalid = unplaceable | (failing & ~post)
    # the SLO, on the points that are neither: a service could not offer the ones that break it
    out_slo = ~invalid & ~post & slo.broken(points).to_numpy()[order] if slo else np.zeros(n, bool)
    # dominance, on the rest
    judged = np.flatnonzero(~invalid & ~post & ~out_slo)
    rows = order[judged]
    xs = points.get_column(x).cast(pl.Float64).to_numpy()
    j = judge(sets.group[rows], sets.arm[rows], xs[rows], ys[rows], x, y,
              tiebreak=rows, y_rank=y_rank[judged])  # fmt: skip
    code = np.full(n, _DOMINATED, dtype=np.int8)
    code[invalid] = _INVALID
    code[post] = _POST_CLIFF
    code[out_slo] = _OUT_OF_SLO
    code[judged[j.on_group]] = _FRONTIER
    return _Judged(
        code=code,
        invalid_at=np.flatnonzero(invalid),
        post_at=seq[cl.post],
        slo_at=np.flatnonzero(out_slo),
        evidence=cl.evidence,
        knee=spread(cl.knee_conc, seq, n).alias("knee_conc"),
        judged_at=judged,
        judged_rows=rows,
        judgement=j,
    )


def _verdict_columns(
    points: pl.DataFrame,
    order: IntArray,
    v: _Judged,
    x: str,
    y: str,
    max_error_rate: float,
    max_dominated_by: int | None,
    slo: Slo,
) -> list[pl.Series]:
    """`verdict`, `on_arm_frontier`, `reason`, `dominated_by`, `dominated_by_count`,
    `knee_conc`, in output order."""
    n, j, judged = len(order), v.judgement, v.judged_at
    on_arm = np.zeros(n, dtype=np.bool_)
    on_arm[judged] = j.on_arm
    lo = np.zeros(n, dtype=np.int64)
    counts = np.zeros(n, dtype=np.int64)
    lo[judged], counts[judged] = j.lo, j.counts
    listed = counts if max_dominated_by is None else np.minimum(counts, max_dominated_by)
    front_rows = v.judged_rows[j.front]
    checks = [x, y, Col.ERROR_RATE, Col.NUM_REQUESTS_SUCCESSFUL]
    invalid = (
        invalid_reasons(
            gather(columns(points, dict.fromkeys(checks)), order[v.invalid_at]),
            x,
            y,
            max_error_rate,
        )
        if len(v.invalid_at)
        else pl.Series("invalid", [], dtype=pl.String)  # what the query gives on no rows
    )
    texts = ReasonTexts(
        invalid_at=v.invalid_at,
        invalid=invalid,
        post_at=v.post_at,
        post=v.evidence,
        slo_at=v.slo_at,
        slo=slo.reasons(gather(points, order[v.slo_at])),
        dominators=dominator_descriptions(points, x, y, front_rows, v.judged_rows),
    )
    return [
        rows_of(pl.Series("verdict", [c.value for c in _VERDICTS]), v.code),
        pl.Series("on_arm_frontier", on_arm),
        texts.reasons(v.code == _FRONTIER, (v.code == _DOMINATED) & (counts > 0), lo, counts),
        dominated_lists(points.get_column(Col.POINT_ID).gather(front_rows), lo, listed),
        pl.Series("dominated_by_count", counts),
        v.knee,
    ]


def _output_order(
    points: pl.DataFrame, sets: ArmSets, group_cols: Sequence[str]
) -> tuple[IntArray, bool]:
    """The row order of the table (group columns, arm label, conc with nulls last, input row)
    and whether the sort key is constant within each arm (so each arm's rows are ordered by
    conc, then input row, wherever they are)."""
    cols = list(dict.fromkeys([*group_cols, Col.ARM_LABEL]))
    labels = points.get_column(Col.ARM_LABEL)
    per_arm = bool(rows_of(labels, sets.arm_first[sets.arm]).eq_missing(labels).all())
    if per_arm:  # one label per arm (as ingest writes them): rank the arms, not the rows
        key = key_ranks(gather(columns(points, cols), sets.arm_first))[sets.arm]
    else:
        codes, first = dense_codes(points, cols)
        key = key_ranks(gather(columns(points, cols), first))[codes]
    return order_by(key, nulls_last_key(load_values(points))), per_arm


def _ascending_within(codes: IntArray, key: IntArray) -> bool:
    """Whether `key` never decreases inside a run of equal codes."""
    if len(codes) < 2:
        return True
    return bool(np.all((key[1:] >= key[:-1]) | (codes[1:] != codes[:-1])))


def _contiguous(codes: IntArray) -> bool:
    """Whether every code's rows form one run (codes are non-negative)."""
    if len(codes) == 0:
        return True
    runs = int(np.count_nonzero(codes[1:] != codes[:-1])) + 1
    return runs == int(np.count_nonzero(np.bincount(codes)))
