"""`paretolens evals`: the accuracy of each arm of a run (eval results joined to its points),
or with --axis the accuracy of A/B arm pairs with the combined-standard-error flag."""

from __future__ import annotations

from typing import Annotated

import polars as pl
import typer

from analysis.comparison.deltas import compute_deltas
from analysis.evals import arm_accuracy, evals_for
from ingest.contract.col import Col
from ingest.eval_store import read_evals
from paretolens.commands.common import (
    RunOpt,
    StoreOpt,
    UsageError,
    emit_frame,
    guard,
    open_store,
)
from paretolens.commands.format_opts import FmtOpt

_ARM_COLUMNS = [
    "arm_label",
    "task",
    "metric",
    "value",
    "stderr",
    "n_eff",
    "conc",
    "concs",
    "n_evals",
    "point_id",
]
_PAIR_COLUMNS = [
    "baseline_arm_label",
    "treatment_arm_label",
    "accuracy_task",
    "accuracy_baseline",
    "accuracy_treatment",
    "accuracy_flag",
]


def _four(frame: pl.DataFrame, fmt: str) -> pl.DataFrame:
    """Accuracies to 4 decimals in the terminal table (its default is 2)."""
    if fmt != "table":
        return frame
    return frame.with_columns(
        pl.col(c).map_elements(lambda v: f"{v:.4f}", return_dtype=pl.String)
        for c in ("value", "stderr", "accuracy_baseline", "accuracy_treatment")
        if c in frame.columns
    )


def evals(
    run: RunOpt = None,
    axis: Annotated[
        str | None,
        typer.Option("--axis", help="pair arms differing only in this field (spec_decoding, ...)"),
    ] = None,
    every: Annotated[
        bool,
        typer.Option("--all", help="every joined eval row and metric, not one per arm and task"),
    ] = False,
    fmt: FmtOpt = "table",
    store: StoreOpt = None,
) -> None:
    """Accuracy per arm of a run: its evals (agg_eval_all.json, lm-eval results with
    meta_env.json, dump eval rows) joined to the arms by configuration, the headline metric at
    the highest evaluated concurrency. With --axis: each A/B pair's accuracies, flagged when they
    differ by more than sqrt(se_b^2 + se_t^2)."""
    with guard():
        if not run:
            raise UsageError("give a run with --run (see `paretolens runs`)")
        st = open_store(store)
        pts = st.points(list(run))
        ev = read_evals(st, list(run))
        if not ev.height:
            raise UsageError(f"run(s) {', '.join(run)} have no eval results in store {st.root}")
        if axis:
            d = compute_deltas(pts, axis, evals=ev)
            emit_frame(_four(d.frontier, fmt), fmt, _PAIR_COLUMNS, f"accuracy of {axis} A/B pairs")
            return
        table = evals_for(pts, ev) if every else arm_accuracy(pts, ev)
        if every:
            table = table.sort(Col.ARM_LABEL, "task", "metric", "conc")
        emit_frame(_four(table, fmt), fmt, _ARM_COLUMNS, "accuracy per arm")
        joined = set(table.get_column("source_path").to_list()) if table.height else set()
        lost = ev.filter(~pl.col("source_path").is_in(sorted(joined)))
        if lost.height and fmt == "table":
            typer.echo(
                f"{lost.select('source_path').unique().height} eval source(s) joined no arm of "
                "the run (no point with their hardware, precision, model and topology)",
                err=True,
            )


def register(app: typer.Typer) -> None:
    """Register the evals command."""
    app.command()(evals)
