"""Accuracy next to performance: eval rows (the store's `evals` table) joined to the arms of the
points, and the flag for a treatment whose accuracy moved more than its noise.

The join (docs/analysis.md, "Accuracy next to performance"): an eval row joins an arm of the same
run when every configuration column it states (`ingest.contract.schema.EVAL_IDENTITY`) equals the arm's,
where the arm states it too; the hardware, the precision and a model column (`model_prefix`, or
`model` by full id or last path part) must be stated and equal on both sides. ISL/OSL never take
part (lm-eval runs its own prompts). The eval's `conc`, when given, names the arm's point at that
concurrency (`point_id`; null when the arm has no point there).

The arm's accuracy (`arm_accuracy`) is, per task and metric, the eval at the arm's highest
evaluated concurrency (InferenceX evaluates the highest and the median), the newest of those.

The flag (`accuracy_flag`): a treatment's accuracy differs from its baseline's when
|a_t - a_b| > sqrt(se_b^2 + se_t^2), the combined standard error of the two independent
estimates; with a standard error missing on either side nothing is said.

For the dashboard: `arm_accuracy(points, evals)` is the table to show per arm (run page, exports);
`accuracy_columns` adds `accuracy_baseline`, `accuracy_treatment`, `accuracy_flag` to any frame
of arm pairs (A/B deltas, run vs run compare).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from ingest.contract.col import Col
from ingest.contract.evals_schema import EVAL_IDENTITY, EvalCol

JOINED_COLUMNS: tuple[str, ...] = (
    Col.RUN_ID,
    Col.ARM_ID,
    Col.ARM_LABEL,
    EvalCol.TASK,
    EvalCol.METRIC,
    EvalCol.PRIMARY,
    EvalCol.VALUE,
    EvalCol.STDERR,
    EvalCol.N_EFF,
    EvalCol.CONC,
    Col.POINT_ID,
    EvalCol.DATE,
    EvalCol.SOURCE_PATH,
)
_FROM_EVAL = (
    EvalCol.TASK,
    EvalCol.METRIC,
    EvalCol.PRIMARY,
    EvalCol.VALUE,
    EvalCol.STDERR,
    EvalCol.N_EFF,
    EvalCol.CONC,
    EvalCol.DATE,
    EvalCol.SOURCE_PATH,
)
_REQUIRED = (EvalCol.HW, EvalCol.PRECISION)
_MODEL = (EvalCol.MODEL, EvalCol.MODEL_PREFIX)


def _norm(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


def _same_model(ev: Mapping[str, Any], arm: Mapping[str, Any]) -> bool:
    """A model column stated and equal on both sides, and none stated on both and different."""
    agree = False
    for col in _MODEL:
        e, a = _norm(ev.get(col)), _norm(arm.get(col))
        if e is None or a is None:
            continue
        same = e == a or (col == EvalCol.MODEL and e.rsplit("/", 1)[-1] == a.rsplit("/", 1)[-1])
        if not same:
            return False
        agree = True
    return agree


def joins(ev: Mapping[str, Any], arm: Mapping[str, Any]) -> bool:
    """Whether an eval row's configuration is the arm's (the rule in the module doc)."""
    for col in _REQUIRED:
        e, a = _norm(ev.get(col)), _norm(arm.get(col))
        if e is None or a is None or e != a:
            return False
    if not _same_model(ev, arm):
        return False
    for col in EVAL_IDENTITY:
        if col in _REQUIRED or col in _MODEL:
            continue
        e, a = _norm(ev.get(col)), _norm(arm.get(col))
        if e is not None and a is not None and e != a:
            return False
    return True


def evals_for(points: pl.DataFrame, evals: pl.DataFrame) -> pl.DataFrame:
    """Every eval row joined to every arm of its run it belongs to (columns `JOINED_COLUMNS`).

    Args:
        points: canonical points (any runs).
        evals: rows of the store's `evals` table (`ingest.eval_store.read_evals`).
    """
    types: dict[str, pl.DataType] = {
        EvalCol.N_EFF: pl.Int64(),
        EvalCol.CONC: pl.Int64(),
        EvalCol.VALUE: pl.Float64(),
        EvalCol.STDERR: pl.Float64(),
        EvalCol.PRIMARY: pl.Boolean(),
    }
    schema = {str(c): types.get(str(c), pl.String()) for c in JOINED_COLUMNS}
    if not points.height or not evals.height:
        return pl.DataFrame(schema=schema)
    ident = [str(c) for c in EVAL_IDENTITY if str(c) in points.columns]
    arms: dict[str, list[dict[str, Any]]] = {}
    for arm in (
        points.unique([Col.RUN_ID, Col.ARM_ID], keep="first", maintain_order=True)
        .select(Col.RUN_ID, Col.ARM_ID, Col.ARM_LABEL, *ident)
        .iter_rows(named=True)
    ):
        arms.setdefault(arm[Col.RUN_ID], []).append(arm)
    at: dict[tuple[Any, Any, Any], str] = {}
    for run, arm_id, conc, pid in (
        points.filter(pl.col(Col.CONC).is_not_null())
        .sort(Col.POINT_ID)
        .select(Col.RUN_ID, Col.ARM_ID, Col.CONC, Col.POINT_ID)
        .iter_rows()
    ):
        at.setdefault((run, arm_id, conc), pid)
    rows = []
    for ev in evals.iter_rows(named=True):
        for arm in arms.get(ev[EvalCol.RUN_ID], []):
            if not joins(ev, arm):
                continue
            conc = ev.get(EvalCol.CONC)
            rows.append(
                {
                    Col.RUN_ID.value: arm[Col.RUN_ID],
                    Col.ARM_ID.value: arm[Col.ARM_ID],
                    Col.ARM_LABEL.value: arm[Col.ARM_LABEL],
                    **{str(c): ev.get(c) for c in _FROM_EVAL},
                    Col.POINT_ID.value: at.get((arm[Col.RUN_ID], arm[Col.ARM_ID], conc)),
                }
            )
    return pl.DataFrame(rows, schema=schema)


def arm_accuracy(
    points: pl.DataFrame, evals: pl.DataFrame, *, primary_only: bool = True
) -> pl.DataFrame:
    """One accuracy per (run, arm, task, metric): the eval at the arm's highest evaluated
    concurrency, the newest of those (rows without a date after dated ones); `concs` lists every
    concurrency evaluated, `n_evals` the
    eval rows behind it. Only each task's headline metric unless `primary_only` is False.

    This is the per-arm accuracy table for the run page and the exports.
    """
    joined = evals_for(points, evals)
    if primary_only:
        joined = joined.filter(pl.col(EvalCol.PRIMARY))
    keys = [Col.RUN_ID, Col.ARM_ID, EvalCol.TASK, EvalCol.METRIC]
    return (
        joined.sort([EvalCol.CONC, EvalCol.DATE], descending=[True, True], nulls_last=True)
        .group_by(keys, maintain_order=True)
        .agg(
            pl.col(Col.ARM_LABEL).first(),
            pl.col(EvalCol.VALUE).first(),
            pl.col(EvalCol.STDERR).first(),
            pl.col(EvalCol.N_EFF).first(),
            pl.col(EvalCol.CONC).first(),
            pl.col(Col.POINT_ID).first(),
            pl.col(EvalCol.CONC).drop_nulls().unique().sort().alias("concs"),
            pl.len().alias("n_evals"),
            pl.col(EvalCol.SOURCE_PATH).first(),
        )
        .sort(Col.RUN_ID, Col.ARM_LABEL, EvalCol.TASK, EvalCol.METRIC)
    )


def accuracy_flag(
    baseline: float | None,
    baseline_se: float | None,
    treatment: float | None,
    treatment_se: float | None,
) -> tuple[float | None, float | None, bool | None]:
    """(treatment - baseline, sqrt(se_b^2 + se_t^2), whether |difference| > combined se).

    None where a value or a standard error is missing: a difference without its noise is not
    flagged either way."""
    if baseline is None or treatment is None:
        return None, None, None
    diff = treatment - baseline
    if baseline_se is None or treatment_se is None:
        return diff, None, None
    combined = math.sqrt(baseline_se**2 + treatment_se**2)
    return diff, combined, abs(diff) > combined


def _pair_accuracy(
    acc: dict[tuple[str, str], dict[str, tuple[float, float | None, str]]],
    base: tuple[str, str],
    treat: tuple[str, str],
) -> dict[str, Any]:
    b, t = acc.get(base, {}), acc.get(treat, {})
    common = sorted(set(b) & set(t))
    out: dict[str, Any] = {
        "accuracy_task": None,
        "accuracy_baseline": None,
        "accuracy_treatment": None,
        "accuracy_flag": None,
    }
    flags = []
    for i, task in enumerate(common):
        (bv, bse, metric), (tv, tse, _) = b[task], t[task]
        diff, combined, flagged = accuracy_flag(bv, bse, tv, tse)
        if i == 0:
            out.update(
                accuracy_task=f"{task} {metric}", accuracy_baseline=bv, accuracy_treatment=tv
            )
        if flagged and diff is not None and combined is not None:
            flags.append(
                f"{task} {metric} {bv:.4f} -> {tv:.4f} ({diff:+.4f}) differs by more than the "
                f"combined stderr {combined:.4f}"
            )
    out["accuracy_flag"] = "; ".join(flags) or None
    return out


def accuracy_columns(
    frame: pl.DataFrame,
    points: pl.DataFrame,
    evals: pl.DataFrame,
    sides: Sequence[tuple[str, str]],
) -> pl.DataFrame:
    """`frame` (one row per arm pair) with `accuracy_task`, `accuracy_baseline`,
    `accuracy_treatment` and `accuracy_flag` (text naming each task whose headline accuracy
    differs by more than the combined standard error; null when none does or it cannot be said).

    Args:
        sides: (run column, arm column) of the baseline and of the treatment in `frame`, e.g.
            `[("baseline_run_id", "baseline_arm_id"), ("treatment_run_id", "treatment_arm_id")]`.
    """
    acc: dict[tuple[str, str], dict[str, tuple[float, float | None, str]]] = {}
    for r in arm_accuracy(points, evals).iter_rows(named=True):
        acc.setdefault((r[Col.RUN_ID], r[Col.ARM_ID]), {})[r[EvalCol.TASK]] = (
            r[EvalCol.VALUE],
            r[EvalCol.STDERR],
            r[EvalCol.METRIC],
        )
    (brun, barm), (trun, tarm) = sides
    extra = [
        _pair_accuracy(acc, (r[brun], r[barm]), (r[trun], r[tarm]))
        for r in frame.select(list(dict.fromkeys([brun, barm, trun, tarm]))).iter_rows(named=True)
    ]
    schema = {
        "accuracy_task": pl.String,
        "accuracy_baseline": pl.Float64,
        "accuracy_treatment": pl.Float64,
        "accuracy_flag": pl.String,
    }
    return pl.concat([frame, pl.DataFrame(extra, schema=schema)], how="horizontal")
