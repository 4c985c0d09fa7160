"""Accuracy next to performance on the pages and in the exports (issue 14, item 3).

The eval rows of the view's runs (the store's `evals` table, `ingest.eval_store.read_evals`) are
joined to the arms by `analysis.evals.arm_accuracy`; this module only shapes the result for the
grids and the exports: per arm and task the accuracy table (`eval_*` columns and an `accuracy`
text), and per point its arm's accuracy (`eval_columns`). The numeric `eval_*` columns of a
point are its arm's first task (alphabetically); `accuracy` lists every task of the arm.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from analysis.comparison.baseline import baseline_sources
from analysis.evals import arm_accuracy
from ingest.contract.col import Col
from ingest.contract.evals_schema import EvalCol
from ingest.eval_store import evals_path, read_evals
from ingest.store import Store
from views.cache import file_version
from views.facets import ARM_NAME

# The eval columns of the points table and its exports, in order.
EVAL_COLUMNS: tuple[str, ...] = (
    "accuracy",
    "eval_task",
    "eval_metric",
    "eval_score",
    "eval_stderr",
    "eval_n_eff",
    "eval_conc",
)
EVAL_SCHEMA: dict[str, pl.DataType] = {
    "accuracy": pl.String(),
    "eval_task": pl.String(),
    "eval_metric": pl.String(),
    "eval_score": pl.Float64(),
    "eval_stderr": pl.Float64(),
    "eval_n_eff": pl.Int64(),
    "eval_conc": pl.Int64(),
}
# The eval columns' units and meanings are declared with the analyses' columns
# (`analysis.tables.COLUMNS`), where every table and the pinned-point panel read them.


def evals_version(store: Store, runs: Sequence[str]) -> tuple[Any, ...]:
    """The fingerprint of the runs' eval files (evals can be ingested without new points)."""
    return tuple(file_version(evals_path(store, r)) for r in runs)


def run_evals(store: Store, runs: Sequence[str]) -> pl.DataFrame:
    """The eval rows of some runs."""
    return read_evals(store, list(runs))


def describe(task: str, metric: str, score: float | None, se: float | None, n: int | None,
             conc: int | None) -> str:  # fmt: skip
    """`gsm8k em_strict 0.9378 ± 0.0067 (n_eff 1319, conc 64)`."""
    text = f"{task} {metric} " + ("–" if score is None else f"{score:.4f}")
    if se is not None:
        text += f" ± {se:.4f}"
    extra = ([f"n_eff {n}"] if n is not None else []) + ([f"conc {conc}"] if conc else [])
    return text + (f" ({', '.join(extra)})" if extra else "")


def accuracy_table(points: pl.DataFrame, evals: pl.DataFrame, names: pl.DataFrame) -> pl.DataFrame:
    """Per (run, arm, task): the arm's headline accuracy (`arm_accuracy`) as `eval_*` columns,
    with the arm's name and the `accuracy` text; sorted by run, arm name, task."""
    acc = arm_accuracy(points, evals)
    schema = {
        Col.RUN_ID.value: pl.String(), Col.ARM_ID.value: pl.String(), ARM_NAME: pl.String(),
        **EVAL_SCHEMA, "eval_concs": pl.List(pl.Int64()), "n_evals": pl.Int64(),
        Col.POINT_ID.value: pl.String(), EvalCol.SOURCE_PATH.value: pl.String(),
    }  # fmt: skip
    if not acc.height:
        return pl.DataFrame(schema=schema)
    named = acc.join(names, on=Col.ARM_ID, how="left")
    rows = []
    for r in named.iter_rows(named=True):
        rows.append(
            {
                Col.RUN_ID.value: r[Col.RUN_ID],
                Col.ARM_ID.value: r[Col.ARM_ID],
                ARM_NAME: r.get(ARM_NAME) or r[Col.ARM_LABEL],
                "accuracy": describe(r[EvalCol.TASK], r[EvalCol.METRIC], r[EvalCol.VALUE],
                                     r[EvalCol.STDERR], r[EvalCol.N_EFF], r[EvalCol.CONC]),
                "eval_task": r[EvalCol.TASK],
                "eval_metric": r[EvalCol.METRIC],
                "eval_score": r[EvalCol.VALUE],
                "eval_stderr": r[EvalCol.STDERR],
                "eval_n_eff": r[EvalCol.N_EFF],
                "eval_conc": r[EvalCol.CONC],
                "eval_concs": r["concs"],
                "n_evals": r["n_evals"],
                Col.POINT_ID.value: r[Col.POINT_ID],
                EvalCol.SOURCE_PATH.value: r[EvalCol.SOURCE_PATH],
            }
        )  # fmt: skip
    return pl.DataFrame(rows, schema=schema).sort(Col.RUN_ID, ARM_NAME, "eval_task")


def eval_columns(frame: pl.DataFrame, accuracy: pl.DataFrame) -> pl.DataFrame:
    """`frame` (points) with its arm's accuracy: `EVAL_COLUMNS` (null for an arm without
    evals; the columns are there either way, so every export has the same header)."""
    per_arm = (
        accuracy.sort(Col.RUN_ID, Col.ARM_ID, "eval_task")
        .group_by(Col.RUN_ID, Col.ARM_ID, maintain_order=True)
        .agg(
            pl.col("accuracy").str.join("; "),
            *[pl.col(c).first() for c in EVAL_COLUMNS if c != "accuracy"],
        )
        .select(Col.RUN_ID, Col.ARM_ID, *[pl.col(c).cast(EVAL_SCHEMA[c]) for c in EVAL_COLUMNS])
    )
    base = frame.drop([c for c in EVAL_COLUMNS if c in frame.columns])
    return base.join(per_arm, on=[Col.RUN_ID, Col.ARM_ID], how="left")


def accuracy_notes(frame: pl.DataFrame, what: str) -> list[str]:
    """One line per distinct `accuracy_flag` of a deltas or compare table: what the page says
    above it (the flag itself names the task, both accuracies and the combined stderr)."""
    if "accuracy_flag" not in frame.columns or not frame.height:
        return []
    cols = [c for c in ("treatment_arm_label", Col.ARM_LABEL.value) if c in frame.columns][:1]
    rows = frame.filter(pl.col("accuracy_flag").is_not_null()).unique(
        [*cols, "accuracy_flag"], keep="first", maintain_order=True
    )
    return [
        f"accuracy {what}: {r[cols[0]] + ': ' if cols else ''}{r['accuracy_flag']}"
        for r in rows.iter_rows(named=True)
    ]


def comparison_evals(
    read: Callable[[list[str]], pl.DataFrame],
    base_id: str,
    candidate: str,
    main: tuple[pl.DataFrame, pl.DataFrame] | None = None,
) -> pl.DataFrame:
    """The eval rows a comparison of `candidate` with `base_id` reads.

    Args:
        read: reads the eval rows of some runs.
        main: for a main-branch baseline, (the points read, the baseline points): the evals of
            the main-branch runs its points came from are relabelled as `base_id`, so that
            `arm_accuracy` finds them under the baseline's arms.
    """
    if main is None:
        return read([base_id, candidate])
    stored, baseline = main
    used = (
        baseline_sources(stored, baseline).get_column("source_run").drop_nulls().unique().sort()
        if baseline.height
        else pl.Series(dtype=pl.String)
    )
    mains = read(used.to_list()).with_columns(pl.lit(base_id).alias(EvalCol.RUN_ID))
    return pl.concat([read([candidate]), mains])
