"""Single-field A/B deltas: pair arms that differ only in one field, compare at equal conc.

Arms pair when their identity (`ingest.contract.schema.ARM_KEY`) is equal except for the A/B field's
columns (spec_decoding also frees spec_method, draft_model and num_spec_tokens; kv_offloading also
frees kv_offload_backend). The baseline is the side whose value is none/off/false (else the smaller
value). Every other configuration difference between the paired points (image, recipe
fingerprint, runner, server flags, ...) is listed as a confound (`analysis.comparison.confounds`): a delta is
only as good as its pairing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from analysis.comparison.confounds import confounds
from analysis.evals import accuracy_columns
from analysis.frontier.cliff import CliffParams
from analysis.frontier.interpolate import FrontierGap, frontier_gap
from analysis.frontier.polylines import Frontier
from analysis.frontier.prune import DEFAULT_MAX_ERROR_RATE, analyze_points
from ingest.contract.col import Col
from ingest.contract.schema import ARM_KEY, DEFAULT_GROUP

DELTA_METRICS: tuple[Col, ...] = (
    Col.TPUT_PER_GPU,
    Col.OUTPUT_TPUT_PER_GPU,
    Col.MEDIAN_INTVTY,
    Col.P90_INTVTY,
    Col.MEDIAN_TTFT,
    Col.P90_TTFT,
    Col.MEDIAN_E2EL,
    Col.P90_E2EL,
)
AXIS_COLUMNS: dict[str, tuple[Col, ...]] = {
    Col.SPEC_DECODING: (Col.SPEC_DECODING, Col.SPEC_METHOD, Col.DRAFT_MODEL, Col.NUM_SPEC_TOKENS),
    Col.KV_OFFLOADING: (Col.KV_OFFLOADING, Col.KV_OFFLOAD_BACKEND),
}
_OFF = {"none", "off", "false", "0", ""}


@dataclass(frozen=True)
class ArmPair:
    """A baseline arm and a treatment arm that differ only on `axis`."""

    axis: str
    baseline_run_id: str
    baseline_arm_id: str
    baseline_arm_label: str
    baseline_value: object
    treatment_run_id: str
    treatment_arm_id: str
    treatment_arm_label: str
    treatment_value: object


@dataclass(frozen=True, eq=False)
class Deltas:
    """table: one row per paired concurrency; frontier: one row per pair (PCHIP at matched x);
    gaps: the FrontierGap of each pair (None when the arm frontiers do not overlap)."""

    axis: str
    x: str
    y: str
    pairs: tuple[ArmPair, ...]
    table: pl.DataFrame
    frontier: pl.DataFrame
    gaps: tuple[FrontierGap | None, ...]


def axis_columns(axis: str) -> tuple[Col, ...]:
    """The identity columns an A/B on `axis` lets differ.

    Raises:
        ValueError: when the axis is not part of the arm identity.
    """
    if axis not in ARM_KEY:
        raise ValueError(
            f"axis {axis!r} is not an arm-identity field; choose one of {[str(c) for c in ARM_KEY]}"
        )
    return AXIS_COLUMNS.get(axis, (Col(axis),))


def _is_off(value: object) -> bool:
    return value is None or value is False or str(value).lower() in _OFF


def _baseline_value(values: Sequence[object]) -> object:
    off = [v for v in values if _is_off(v)]
    if off:
        return off[0]
    nums = [v for v in values if isinstance(v, int | float)]
    return min(nums) if len(nums) == len(values) else min(values, key=str)


def pair_arms(
    points: pl.DataFrame, axis: str = Col.SPEC_DECODING, *, cross_run: bool = False
) -> tuple[ArmPair, ...]:
    """All (baseline, treatment) arm pairs on `axis`; with cross_run, only pairs across runs."""
    free = set(axis_columns(axis))
    keep = [c for c in ARM_KEY if c not in free and c in points.columns]
    arms = points.unique([Col.RUN_ID, Col.ARM_ID], keep="first", maintain_order=True)
    groups: dict[tuple[object, ...], list[dict[str, Any]]] = defaultdict(list)
    for arm in arms.iter_rows(named=True):
        groups[tuple(arm[c] for c in keep)].append(arm)
    out = []
    for members in groups.values():
        base_value = _baseline_value([m[axis] for m in members])
        if all(m[axis] == base_value for m in members):
            continue
        for b in (m for m in members if m[axis] == base_value):
            for t in (m for m in members if m[axis] != base_value):
                if (b[Col.RUN_ID] != t[Col.RUN_ID]) != cross_run:
                    continue
                out.append(
                    ArmPair(
                        axis,
                        b[Col.RUN_ID],
                        b[Col.ARM_ID],
                        b[Col.ARM_LABEL],
                        b[axis],
                        t[Col.RUN_ID],
                        t[Col.ARM_ID],
                        t[Col.ARM_LABEL],
                        t[axis],
                    )
                )
    return tuple(
        sorted(out, key=lambda p: (p.baseline_arm_label, p.treatment_arm_label, p.baseline_run_id))
    )


def _load(r: dict[str, Any]) -> tuple[str, float]:
    """The load a point was measured at, by kind: ("conc", N) or ("request_rate", req/s)."""
    if r.get(Col.CONC) is not None:
        return ("conc", float(r[Col.CONC]))
    rate = r.get(Col.REQUEST_RATE)
    return ("request_rate", float(rate) if rate is not None else float("nan"))


_UNCOMPARABLE = ("post_cliff", "invalid", "out_of_slo")


def _flag(baseline_verdict: object, treatment_verdict: object) -> str | None:
    """Why a pair's deltas say nothing about the A/B (a side past its cliff, invalid or out of
    the SLO): such pairs are flagged in every table and left out of the summaries."""
    sides = [
        f"{name} {verdict}"
        for name, verdict in (("baseline", baseline_verdict), ("treatment", treatment_verdict))
        if verdict in _UNCOMPARABLE
    ]
    return "; ".join(sides) if sides else None


def _pct(b: object, t: object) -> float | None:
    if not isinstance(b, int | float) or not isinstance(t, int | float) or b == 0:
        return None
    return 100.0 * (float(t) / float(b) - 1.0)


def compute_deltas(
    points: pl.DataFrame,
    axis: str = Col.SPEC_DECODING,
    *,
    cross_run: bool = False,
    x: str = Col.MEDIAN_INTVTY,
    y: str = Col.TPUT_PER_GPU,
    group_by: Sequence[str] = DEFAULT_GROUP,
    cliff: CliffParams = CliffParams(),
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE,
    metrics: Sequence[str] = DELTA_METRICS,
    evals: pl.DataFrame | None = None,
) -> Deltas:
    """A/B deltas of arms paired on `axis`, at each concurrency both measured and on the frontier.

    Args:
        points: canonical points of one run, or of two runs with cross_run=True.
        axis: the field that differs (any ARM_KEY column); default spec_decoding.
        cross_run: pair only arms of different runs (`--vs-run`).
        x, y, group_by, cliff, max_error_rate: how arm frontiers (post-cliff and invalid points
            removed) are built for the frontier-level delta at matched x.
        metrics: metrics reported as `<m>_baseline`, `<m>_treatment`, `<m>_delta_pct`.
        evals: rows of the store's `evals` table; when given, `table` and `frontier` rows also
            carry each arm's headline accuracy (`accuracy_task`, `accuracy_baseline`,
            `accuracy_treatment`) and `accuracy_flag` (`analysis.evals.accuracy_columns`).

    Returns:
        Deltas; `table` rows also carry each side's verdict and `al_measured`, and `confounds`.
    """
    pairs = pair_arms(points, axis, cross_run=cross_run)
    analysis = analyze_points(points, x, y, group_by, cliff, max_error_rate, max_dominated_by=0)
    tbl = analysis.table
    verdicts = dict(
        zip(zip(tbl[Col.RUN_ID], tbl[Col.POINT_ID], strict=True), tbl["verdict"], strict=True)
    )
    fronts: dict[tuple[object, object], Frontier] = {
        (dict(f.key)[Col.RUN_ID], dict(f.key)[Col.ARM_ID]): f for f in analysis.arm_frontiers
    }
    # Equal load: the same concurrency, or for request-rate sweeps the same request rate.
    by_arm: dict[tuple[object, object], dict[tuple[str, float], dict[str, Any]]] = defaultdict(dict)
    for r in points.sort(Col.POINT_ID).iter_rows(named=True):
        by_arm[(r[Col.RUN_ID], r[Col.ARM_ID])].setdefault(_load(r), r)
    free = set(axis_columns(axis))
    ident = [c for c in ARM_KEY if c not in free and c in points.columns]
    rows, front_rows, gaps = [], [], []
    for p in pairs:
        base, treat = (
            by_arm[(p.baseline_run_id, p.baseline_arm_id)],
            by_arm[(p.treatment_run_id, p.treatment_arm_id)],
        )
        head = {
            "axis": axis,
            "baseline_value": str(p.baseline_value),
            "treatment_value": str(p.treatment_value),
            "baseline_run_id": p.baseline_run_id,
            "treatment_run_id": p.treatment_run_id,
            "baseline_arm_id": p.baseline_arm_id,
            "treatment_arm_id": p.treatment_arm_id,
            "baseline_arm_label": p.baseline_arm_label,
            "treatment_arm_label": p.treatment_arm_label,
        }
        for load in sorted(set(base) & set(treat)):
            b, t = base[load], treat[load]
            row: dict[str, Any] = {
                **{c: b[c] for c in ident},
                Col.CONC.value: b[Col.CONC],
                Col.REQUEST_RATE.value: b.get(Col.REQUEST_RATE),
                **head,
            }
            for m in metrics:
                row[f"{m}_baseline"], row[f"{m}_treatment"] = b.get(m), t.get(m)
                row[f"{m}_delta_pct"] = _pct(b.get(m), t.get(m))
            row["al_measured_baseline"], row["al_measured_treatment"] = (
                b.get(Col.AL_MEASURED),
                t.get(Col.AL_MEASURED),
            )
            row["baseline_verdict"], row["treatment_verdict"] = (
                verdicts.get((b[Col.RUN_ID], b[Col.POINT_ID])),
                verdicts.get((t[Col.RUN_ID], t[Col.POINT_ID])),
            )
            row["confounds"] = confounds(b, t, axis)
            row["flag"] = _flag(row["baseline_verdict"], row["treatment_verdict"])
            rows.append(row)
        fb, ft = (
            fronts.get((p.baseline_run_id, p.baseline_arm_id)),
            fronts.get((p.treatment_run_id, p.treatment_arm_id)),
        )
        gap = frontier_gap(fb, ft) if fb is not None and ft is not None else None
        gaps.append(gap)
        front_rows.append({**head, **_gap_fields(gap, fb, ft)})
    table = pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()
    if table.height:
        # Each row reads: what else differs and whether it can be trusted, then the numbers.
        lead = [
            c
            for c in (Col.CONC, Col.REQUEST_RATE, Col.ISL, Col.OSL, Col.SCENARIO)
            if c in table.columns
        ]
        first = [*lead, "flag", "confounds"]
        table = table.select(*first, *[c for c in table.columns if c not in first])
    frontier = pl.DataFrame(front_rows, infer_schema_length=None)
    if evals is not None:
        sides = [("baseline_run_id", "baseline_arm_id"), ("treatment_run_id", "treatment_arm_id")]
        if table.height:
            table = accuracy_columns(table, points, evals, sides)
        if frontier.height:
            frontier = accuracy_columns(frontier, points, evals, sides)
    return Deltas(axis, str(x), str(y), pairs, table, frontier, tuple(gaps))


def _gap_fields(
    gap: FrontierGap | None, fb: Frontier | None, ft: Frontier | None
) -> dict[str, Any]:
    why = None
    if fb is None or ft is None:
        why = "an arm has no valid pre-cliff point"
    elif gap is None:
        why = (
            f"no common {fb.x} range: baseline {min(fb.xs):.2f}-{max(fb.xs):.2f}, "
            f"treatment {min(ft.xs):.2f}-{max(ft.xs):.2f}"
        )
    return {
        "x_lo": gap.lo if gap else None,
        "x_hi": gap.hi if gap else None,
        "matched_x": list(gap.xs) if gap else [],
        "delta_pct": list(gap.delta_pct) if gap else [],
        "mean_delta_pct": gap.mean_delta_pct if gap else None,
        "area_delta_pct": gap.area_delta_pct if gap else None,
        "note": why,
    }
