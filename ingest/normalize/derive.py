"""The derived columns: what every row must have that a format may not say.

A derived metric (a value computed from other columns: error rate, acceptance length, ...) is one
declaration in `ingest.contract.derived`, whose one formula both paths run (`_metric_row`,
`_metric_batch`). The fill-ins below (defaults, GPU count, throughputs, interactivity) complete
columns a format may state itself and are written in two forms next to each other: `*_row` on one
row (Python, the one-row path, with Python's integers that never wrap) and `*_batch`, the same rule
as polars expressions over a batch (the fast path). A row that a batch form cannot derive exactly (an
integer that could leave int64, counters that show speculative decoding) is flagged, and the
one-row path derives it. `tests/ingest/test_normalize_batch.py` holds the two forms equal: change
both, or the test fails.

The speculative-decoding pairs are in `speculative`. `derive_row` runs the row forms in order;
`plan` builds the batch forms for a batch's columns (cached by the set of columns present), with
the contract checks (`rules.RULES`) after them.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import polars as pl

from ingest.contract.col import STATS, Col
from ingest.contract.derived import ON_CHANGE, DerivedMetric, derived_metrics
from ingest.contract.schema import polars_schema
from ingest.normalize.ids import canonical_columns, hw_pair
from ingest.normalize.planner import Planner
from ingest.normalize.rules import rule_flags
from ingest.normalize.speculative import spec_batch, spec_row
from ingest.normalize.values import unfinite

Row = dict[str, Any]

POLARS: pl.Schema = polars_schema()
# The batch's column of rows that must take the one-row path.
FLAGGED = "__flagged"

DEFAULTS: dict[Col, Any] = {
    Col.RUN_ATTEMPT: 1,
    Col.SCENARIO: "fixed-seq-len",
    Col.PP: 1,
    Col.EP: 1,
    Col.DCP_SIZE: 1,
    Col.PCP_SIZE: 1,
    Col.DP_ATTENTION: False,
    Col.DISAGG: False,
    Col.IS_MULTINODE: False,
    Col.SPEC_DECODING: "none",
    Col.KV_OFFLOADING: "none",
}
_NO_GPU_COUNT = (
    "GPU count unknown (neither the file nor its name says it): per-GPU throughput not "
    "computed, so the point has no place on a per-GPU frontier"
)
_PAIRS = (
    (Col.TOTAL_TPUT, Col.TPUT_PER_GPU),
    (Col.OUTPUT_TPUT, Col.OUTPUT_TPUT_PER_GPU),
    (Col.INPUT_TPUT, Col.INPUT_TPUT_PER_GPU),
)


def col(name: Col | str) -> pl.Expr:
    """The batch column of a canonical column."""
    return pl.col(str(name))


@dataclass(frozen=True)
class Plan:
    """The derivations and the contract checks as expressions, for batches with given columns.

    Only the steps whose inputs can be non-null are kept (a step whose inputs are null everywhere
    changes nothing), so a batch pays for the columns it has.
    """

    stages: tuple[tuple[pl.Expr, ...], ...]
    violations: pl.Expr
    live: frozenset[str]


def derive_row(row: Row) -> None:
    """Fill the derived columns of one row, in place (the values are coerced already)."""
    _defaults_row(row)
    canonical_columns(row)
    if row.get(Col.HW_LABEL) or row.get(Col.HW):
        # The batch path applies the same `hw_pair` to each distinct pair of its columns.
        row[Col.HW_LABEL], row[Col.HW] = hw_pair(row.get(Col.HW_LABEL), row.get(Col.HW))
    _gpus_row(row)
    _throughputs_row(row)
    _intvty_row(row)
    for metric in derived_metrics():
        _metric_row(metric, row)
    spec_row(row)


@functools.lru_cache(maxsize=64)
def plan(present: frozenset[str]) -> Plan:
    """The batch forms for a batch whose non-null columns are among `present`."""
    p = Planner(set(present))
    _defaults_batch(p)
    _gpus_batch(p)
    _throughputs_batch(p)
    # These four read nothing another of them writes: one stage.
    p.stages.append([])
    _intvty_batch(p)
    _metrics_batch(p)
    spec_batch(p)
    live = frozenset(p.live)
    checks = [pl.col(FLAGGED), *p.flags, *rule_flags(live)]
    finite = unfinite(live)
    if finite is not None:
        checks.append(finite)
    # Unknown (null) counts as a violation: the row path then decides.
    violations = pl.any_horizontal(checks).fill_null(True)
    return Plan(tuple(tuple(s) for s in p.stages if s), violations, live)


# A newly declared derived metric changes the plans.
ON_CHANGE.append(plan.cache_clear)


# ---- defaults: what InferenceX assumes when a file does not say it ----------------------------


def _defaults_row(row: Row) -> None:
    for name, default in DEFAULTS.items():
        if row.get(name) is None:
            row[name] = default


def _defaults_batch(p: Planner) -> None:
    p.live.update(str(k) for k in DEFAULTS)
    p.stages.append(
        [
            *(col(k).fill_null(pl.lit(v, dtype=POLARS[str(k)])) for k, v in DEFAULTS.items()),
            pl.lit(False).alias(FLAGGED),
        ]
    )


# ---- GPU count: prefill + decode GPUs, else tp * pp * pcp -------------------------------------


def _gpus_row(row: Row) -> None:
    if row.get(Col.NUM_GPUS) is None:
        pre, dec = row.get(Col.PREFILL_GPUS), row.get(Col.DECODE_GPUS)
        if pre is not None and dec is not None:
            row[Col.NUM_GPUS] = int(pre) + int(dec)
        elif row.get(Col.TP) is not None:
            row[Col.NUM_GPUS] = int(row[Col.TP]) * int(row[Col.PP]) * int(row[Col.PCP_SIZE])


def _gpus_batch(p: Planner) -> None:
    gpus = col(Col.NUM_GPUS)
    pre, dec = col(Col.PREFILL_GPUS), col(Col.DECODE_GPUS)
    tp, pp, pcp = col(Col.TP), col(Col.PP), col(Col.PCP_SIZE)
    split, single = p.has(Col.PREFILL_GPUS, Col.DECODE_GPUS), p.has(Col.TP)
    if not (split or single):
        return
    from_split = gpus.is_null() & pre.is_not_null() & dec.is_not_null()
    from_tp = gpus.is_null() & tp.is_not_null()
    if not p.has(Col.NUM_GPUS):
        gpus = pl.lit(None, dtype=pl.Int64)
        from_split, from_tp = pre.is_not_null() & dec.is_not_null(), tp.is_not_null()
    # Python's integers do not wrap: a row whose count could leave int64 is flagged.
    count: pl.Expr = gpus
    big: pl.Expr = pl.lit(False)
    if single:
        wide = (tp.abs() > 2**20) | (pp.abs() > 2**20) | (pcp.abs() > 2**20)
        count = pl.when(from_tp).then(tp * pp * pcp).otherwise(count)
        big = pl.when(from_tp).then(wide).otherwise(big)
    if split:
        wide = (pre.abs() > 2**40) | (dec.abs() > 2**40)
        count = pl.when(from_split).then(pre + dec).otherwise(count)
        big = pl.when(from_split).then(wide).otherwise(big)
    p.stages.append([count.alias(str(Col.NUM_GPUS)), big.alias(FLAGGED)])
    p.live.add(str(Col.NUM_GPUS))


# ---- throughputs: per GPU <-> total, total = input + output; a warning without a GPU count ----


def _throughputs_row(row: Row) -> None:
    gpus = row.get(Col.NUM_GPUS)
    if not gpus and row.get(Col.TPUT_PER_GPU) is None and row.get(Col.TOTAL_TPUT) is not None:
        row[Col.WARNINGS] = [*(row.get(Col.WARNINGS) or []), _NO_GPU_COUNT]
    if gpus:
        for total, per in _PAIRS:
            if row.get(per) is None and row.get(total) is not None:
                row[per] = float(row[total]) / gpus
            if row.get(total) is None and row.get(per) is not None:
                row[total] = float(row[per]) * gpus
    if row.get(Col.TOTAL_TPUT) is None and None not in (
        row.get(Col.INPUT_TPUT),
        row.get(Col.OUTPUT_TPUT),
    ):
        row[Col.TOTAL_TPUT] = float(row[Col.INPUT_TPUT]) + float(row[Col.OUTPUT_TPUT])
        if gpus and row.get(Col.TPUT_PER_GPU) is None:
            row[Col.TPUT_PER_GPU] = row[Col.TOTAL_TPUT] / gpus


def _throughputs_batch(p: Planner) -> None:
    has, live = p.has, p.live
    gpus = col(Col.NUM_GPUS)
    known = (gpus.is_not_null() & (gpus != 0)) if has(Col.NUM_GPUS) else pl.lit(False)
    step: list[pl.Expr] = []
    if has(Col.TOTAL_TPUT):
        warnings = col(Col.WARNINGS) if has(Col.WARNINGS) else pl.lit(None, pl.List(pl.String))
        no_per = col(Col.TPUT_PER_GPU).is_null() if has(Col.TPUT_PER_GPU) else pl.lit(True)
        empty = pl.lit([], dtype=pl.List(pl.String))
        step.append(
            pl.when(~known & no_per & col(Col.TOTAL_TPUT).is_not_null())
            .then(pl.concat_list(warnings.fill_null(empty), pl.lit(_NO_GPU_COUNT)))
            .otherwise(warnings)
            .alias(str(Col.WARNINGS))
        )
        live.add(str(Col.WARNINGS))
    if has(Col.NUM_GPUS):
        for total, per in _PAIRS:
            if has(total):
                step.append(
                    pl.when(known & col(per).is_null() & col(total).is_not_null())
                    .then(col(total) / gpus)
                    .otherwise(col(per))
                    .alias(str(per))
                )
                live.add(str(per))
    p.stages.append(step)
    if has(Col.NUM_GPUS):
        p.stages.append(
            [
                pl.when(known & col(total).is_null() & col(per).is_not_null())
                .then(col(per) * gpus)
                .otherwise(col(total))
                .alias(str(total))
                for total, per in _PAIRS
                if has(per)
            ]
        )
        live.update(str(total) for total, per in _PAIRS if has(per))
    if not has(Col.INPUT_TPUT, Col.OUTPUT_TPUT):
        return
    summed = (
        col(Col.TOTAL_TPUT).is_null()
        & col(Col.INPUT_TPUT).is_not_null()
        & col(Col.OUTPUT_TPUT).is_not_null()
    )
    live.add(str(Col.TOTAL_TPUT))
    summed_total = (
        pl.when(summed)
        .then(col(Col.INPUT_TPUT) + col(Col.OUTPUT_TPUT))
        .otherwise(col(Col.TOTAL_TPUT))
        .alias(str(Col.TOTAL_TPUT))
    )
    if not has(Col.NUM_GPUS):
        p.stages.append([summed_total])
        return
    live.add(str(Col.TPUT_PER_GPU))
    per_from_sum = summed & known & col(Col.TPUT_PER_GPU).is_null()
    p.stages.append([summed_total, per_from_sum.alias("__per_from_sum")])
    p.stages.append(
        [
            pl.when(pl.col("__per_from_sum"))
            .then(col(Col.TOTAL_TPUT) / gpus)
            .otherwise(col(Col.TPUT_PER_GPU))
            .alias(str(Col.TPUT_PER_GPU))
        ]
    )


# ---- interactivity from TPOT when the format does not carry it: 1 / pXX_tpot (the slow tail) --


def _intvty_row(row: Row) -> None:
    derived = False
    definition = row.get(Col.INTVTY_DEFINITION)
    for stat in STATS if definition in (None, "inv_tpot_percentile") else ():
        tpot = row.get(f"{stat}_tpot")
        key = f"{stat}_intvty"
        if row.get(key) is None and isinstance(tpot, int | float) and tpot > 0:
            row[key] = 1.0 / float(tpot)
            derived = True
    if derived and not row.get(Col.INTVTY_DEFINITION):
        row[Col.INTVTY_DEFINITION] = "inv_tpot_percentile"


def _intvty_batch(p: Planner) -> None:
    step = p.stages[-1]
    definition = col(Col.INTVTY_DEFINITION)
    eligible = definition.is_null() | (definition == "inv_tpot_percentile")
    fills = []
    for stat in STATS:
        key, tpot = f"{stat}_intvty", f"{stat}_tpot"
        if p.has(tpot):
            cond = eligible & pl.col(key).is_null() & (pl.col(tpot) > 0)
            step.append(pl.when(cond).then(1.0 / pl.col(tpot)).otherwise(pl.col(key)).alias(key))
            fills.append(cond.fill_null(False))
            p.live.add(key)
    if fills:
        step.append(
            pl.when(pl.any_horizontal(fills) & (definition.is_null() | (definition == "")))
            .then(pl.lit("inv_tpot_percentile"))
            .otherwise(definition)
            .alias(str(Col.INTVTY_DEFINITION))
        )
        p.live.add(str(Col.INTVTY_DEFINITION))


# ---- the derived metrics (`ingest.contract.derived`): one formula, on a row or on a batch ----


def _metric_row(metric: DerivedMetric, row: Row) -> None:
    name = metric.name
    if row.get(name) is not None:
        return
    values = {c: row.get(c) for c in metric.inputs}
    if any(v is None for v in values.values()):
        row.setdefault(name, None)
        return

    def get(c: str) -> Any:
        v = values[c]
        return float(v) if isinstance(v, int | float) else v

    if metric.applies is not None and not metric.applies(get):
        row.setdefault(name, None)
        return
    value = metric.formula(get)
    row[name] = value if metric.floor is None else max(metric.floor, value)


def _metrics_batch(p: Planner) -> None:
    """The derived metrics, each in the first stage after the stages writing its inputs (the
    built-in ones read nothing the interactivity stage writes: they join it)."""
    written = {str(e.meta.output_name()) for e in p.stages[-1]}
    for metric in derived_metrics():
        if not p.has(*metric.inputs):
            continue
        if written & set(metric.inputs):
            p.stages.append([])
            written = set()
        p.stages[-1].append(_metric_expr(metric))
        written.add(metric.name)
        p.live.add(metric.name)


def _metric_expr(metric: DerivedMetric) -> pl.Expr:
    schema = POLARS if all(c in POLARS for c in metric.inputs) else polars_schema()
    return metric.expr({c for c in metric.inputs if schema[c].is_numeric()})
