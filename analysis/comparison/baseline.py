"""The latest main-branch result for each configuration of a run: a synthetic baseline run.

InferenceX's CI compares a PR sweep with the newest main-branch measurement of each of its points
(`utils/compare_results.py`, SemiAnalysisAI/InferenceX at 1dc5504e1d65eeb2e6e4d9095de9ecd42e93426b:
`BASELINE_QUERY` joins benchmark_results to configs and workflow_runs, keeps `head_branch = 'main'`
and `error IS NULL`, matches hardware, framework, model (`LIKE prefix || '%'`), precision,
spec_method, disagg, is_multinode, prefill/decode tp, ep and dp_attention, isl, osl and conc, and
takes `ORDER BY date DESC LIMIT 1`). `latest_main_baseline` does the same over the store: for each
arm (configuration, ISL/OSL included) and load of the run, the newest point of a main-branch run
other than the run itself. The chosen points are relabelled as one synthetic run (`baseline:main`)
that carries the run's own arm identity, so `compare_runs(points ∪ baseline, "baseline:main",
run_id)` gives the per-arm frontier uplift at matched interactivity (PCHIP, common range only).

Differences from compare_results.py, on purpose:

- "newest" is the run's `created_at` from the runs catalog (the dump's `date` is the run's date
  too); ties go to the larger run id, so the choice is deterministic (the script's LIMIT 1 is not);
- the configuration is the canonical configuration key (`ingest.contract.schema.ARM_KEY`, brought to one
  form at ingest: docs/schema.md), the model key (`model_prefix`) of the baseline starting with
  the run's, as the script's LIKE;
- the load is `conc`, or the request rate for request-rate sweeps.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from analysis.comparison.compare import RunComparison, comparison_markdown
from analysis.tables import md_cell, md_text
from ingest.contract.col import Col
from ingest.contract.schema import ARM_KEY, RunCol

BASELINE_MAIN = "baseline:main"
MAIN = "main"

_MODEL_KEY = "__model_key"
_WHEN = "__created_at"
_SOURCE_RUN = "__source_run"
_ROW = "__row"
_LOAD = (Col.CONC, Col.REQUEST_RATE)


def _config_columns(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """The frame with its model key as a column, and the arm columns to join on."""
    plain = [str(c) for c in ARM_KEY if c != Col.MODEL_PREFIX]
    key = pl.col(Col.MODEL_PREFIX).cast(pl.String).str.to_lowercase().str.strip_chars()
    return frame.with_columns(key.alias(_MODEL_KEY)), plain


def _main_runs(runs_catalog: pl.DataFrame, run_id: str | None, branch: str) -> pl.DataFrame:
    if not runs_catalog.height or RunCol.BRANCH not in runs_catalog.columns:
        return pl.DataFrame(schema={str(RunCol.RUN_ID): pl.String, _WHEN: pl.String})
    created = (
        pl.col(RunCol.CREATED_AT).cast(pl.String)
        if RunCol.CREATED_AT in runs_catalog.columns
        else pl.lit(None, pl.String)
    )
    official = pl.col(RunCol.BRANCH) == branch
    if run_id is not None:
        official &= pl.col(RunCol.RUN_ID) != run_id
    return runs_catalog.filter(official).select(
        pl.col(RunCol.RUN_ID).cast(pl.String), created.alias(_WHEN)
    )


def latest_main_baseline(
    points: pl.DataFrame,
    runs_catalog: pl.DataFrame,
    run_id: str,
    *,
    branch: str = MAIN,
    baseline_id: str = BASELINE_MAIN,
) -> pl.DataFrame:
    """For each arm and load of `run_id`, the newest point of a `branch` run (not `run_id`).

    Args:
        points: canonical points of the store (any runs; the run's own must be there).
        runs_catalog: the runs catalog (`Store.runs()`): `branch` and `created_at` per run.
        run_id: the run to find a baseline for.
        branch: the branch whose runs count as official (InferenceX: main).
        baseline_id: the run id the returned points carry.

    Returns:
        Points with exactly the columns of `points`: the chosen measurements (their point ids,
        metrics and provenance: image, runner, source path, ...) under `run_id = baseline_id` and
        with the arm identity of the run's point they stand for (so arms match in
        `compare_runs`). An arm and load with no main-branch point has no row;
        `baseline_sources` tells which run each row came from.
    """
    choice = main_baseline_choice(points, runs_catalog, run_id, branch=branch)
    if choice is None:
        return points.clear()
    return baseline_points(points[choice.get_column(CHOICE_ROW)], choice, baseline_id)


# The columns `main_baseline_choice` reads: of the main-branch runs' points, the matching ones; of
# the run's own, its arm identity too (a caller may read only these of a store's points).
MATCH_COLUMNS: tuple[str, ...] = tuple(
    dict.fromkeys([Col.RUN_ID, Col.POINT_ID, Col.MODEL_PREFIX, *ARM_KEY, *_LOAD])
)
IDENTITY_COLUMNS: tuple[str, ...] = tuple(
    dict.fromkeys([*MATCH_COLUMNS, Col.ARM_ID, Col.ARM_LABEL])
)
CHOICE_ROW = _ROW


# The groups whose rows `main_baseline_choice` cannot tell apart except by age: a configuration
# (every arm column, the model key as stored) and a load.
_GROUP = tuple(c for c in MATCH_COLUMNS if c not in (Col.RUN_ID, Col.POINT_ID))
_RANK = "__rank"


def latest_main_rows(
    points: pl.DataFrame, runs_catalog: pl.DataFrame, *, branch: str = MAIN, keep: int = 2
) -> pl.DataFrame:
    """The rows of `branch` runs' points that `main_baseline_choice` can choose, for any run.

    Per configuration and load (the `MATCH_COLUMNS` but the run and point ids), the newest point
    of each of the `keep` newest runs that measured it (newest as `main_baseline_choice` orders:
    `created_at`, then run id, then point id, descending). With `keep=2` a run's own rows can be
    left out (its baseline is never itself) and one of another run still stands, so
    `main_baseline_choice(run's rows + these, catalog, run)` chooses what it chooses over every
    row: a frame of configurations x loads rather than of every main-branch point. It is closed
    under adding runs: `latest_main_rows(rows of old + rows of new runs)` equals it over the
    points of all.

    Args:
        points: points of any runs with (at least) `MATCH_COLUMNS`; other runs' rows are left.
        runs_catalog: the runs catalog (`branch` and `created_at` per run).
        branch: the branch whose runs count as official.
        keep: how many runs to keep per configuration and load.

    Returns:
        The kept rows, `MATCH_COLUMNS` only, newest first within each configuration and load.
    """
    mains = _main_runs(runs_catalog, None, branch)
    ranked = (
        points.select(MATCH_COLUMNS)
        .join(mains, on=Col.RUN_ID, how="inner")
        .sort([_WHEN, Col.RUN_ID, Col.POINT_ID], descending=True, nulls_last=True)
        .unique([*_GROUP, Col.RUN_ID], keep="first", maintain_order=True)
    )
    kept = ranked.filter(pl.int_range(pl.len()).over(list(_GROUP)) < keep)
    return kept.select(MATCH_COLUMNS)


def main_baseline_choice(
    points: pl.DataFrame, runs_catalog: pl.DataFrame, run_id: str, *, branch: str = MAIN
) -> pl.DataFrame | None:
    """Which stored point stands for each arm and load of `run_id` (as `latest_main_baseline`),
    from the columns the matching reads (`MATCH_COLUMNS` of every run; `IDENTITY_COLUMNS` of the
    run's own points).

    Returns:
        None when nothing matches; else one row per chosen point, in the order chosen:
        `CHOICE_ROW` (its row in `points`), then the arm identity and load of the run's point it
        stands for (the columns `baseline_points` sets).
    """
    mine = points.filter(pl.col(Col.RUN_ID) == run_id)
    mains = _main_runs(runs_catalog, run_id, branch)
    # The matching runs on the columns it reads and a row number; the chosen rows are taken
    # whole at the end (joining and sorting every column of the main runs' points cost most).
    plain = [str(c) for c in ARM_KEY if c != Col.MODEL_PREFIX]
    narrow = list(dict.fromkeys([Col.RUN_ID, Col.POINT_ID, Col.MODEL_PREFIX, *plain, *_LOAD]))
    others = points.select(*narrow).with_row_index(_ROW).join(mains, on=Col.RUN_ID, how="inner")
    if not mine.height or not others.height:
        return None
    mine_n, keys = _config_columns(mine)
    other_n, _ = _config_columns(others)
    loads = [str(c) for c in _LOAD]
    ident = [str(c) for c in ARM_KEY] + [str(Col.ARM_ID), str(Col.ARM_LABEL)]
    target = mine_n.select(
        *keys, *loads, _MODEL_KEY, *[pl.col(c).alias(f"__t_{c}") for c in ident]
    ).unique([f"__t_{Col.ARM_ID}", *loads], keep="first", maintain_order=True)
    cand = other_n.with_columns(pl.col(Col.RUN_ID).alias(_SOURCE_RUN)).rename(
        {_MODEL_KEY: "__c_model_key"}
    )
    joined = target.join(cand, on=[*keys, *loads], how="inner", nulls_equal=True).filter(
        pl.col("__c_model_key").eq_missing(pl.col(_MODEL_KEY))
        | pl.col("__c_model_key").str.starts_with(pl.col(_MODEL_KEY))
    )
    if not joined.height:
        return None
    newest = joined.sort(
        [_WHEN, _SOURCE_RUN, Col.POINT_ID], descending=True, nulls_last=True
    ).unique([f"__t_{Col.ARM_ID}", *loads], keep="first", maintain_order=True)
    taken = [*keys, *loads]
    return newest.select(
        _ROW, *taken, *[pl.col(f"__t_{c}").alias(c) for c in ident if c not in taken]
    )


def baseline_points(
    chosen: pl.DataFrame, choice: pl.DataFrame, baseline_id: str = BASELINE_MAIN
) -> pl.DataFrame:
    """The baseline's points: `chosen` (the whole stored rows of `choice`, in its order) with the
    arm identity of the run's points they stand for, under run id `baseline_id`, sorted."""
    columns = chosen.columns
    out = chosen.with_columns(
        *choice.drop(_ROW).get_columns(), pl.lit(baseline_id, pl.String).alias(Col.RUN_ID)
    )
    order = [Col.ARM_LABEL, Col.CONC, Col.REQUEST_RATE]
    return out.select(columns).sort(order, nulls_last=True)


def baseline_sources(points: pl.DataFrame, baseline: pl.DataFrame) -> pl.DataFrame:
    """Which stored run each baseline point came from: arm_label, conc, request_rate, run_id,
    point_id (point ids are unique across runs: they hash the run)."""
    ids = baseline.get_column(Col.POINT_ID).implode()
    origin = points.filter(pl.col(Col.POINT_ID).is_in(ids)).select(
        Col.POINT_ID, pl.col(Col.RUN_ID).alias("source_run")
    )
    return (
        baseline.select(Col.ARM_LABEL, Col.CONC, Col.REQUEST_RATE, Col.ISL, Col.OSL, Col.POINT_ID)
        .join(origin.unique(Col.POINT_ID), on=Col.POINT_ID, how="left")
        .sort(Col.ARM_LABEL, Col.CONC, Col.REQUEST_RATE, nulls_last=True)
    )


def baseline_markdown(
    cmp: RunComparison,
    points: pl.DataFrame,
    baseline: pl.DataFrame,
    runs_catalog: pl.DataFrame,
    run_id: str,
) -> str:
    """The PR markdown for a run over its main-branch baseline: the comparison (uplift per arm,
    per-conc deltas, `analysis.comparison.compare.comparison_markdown`) followed by a "Baseline" section
    naming the main-branch runs the baseline points came from and the loads with none."""
    lines = [comparison_markdown(cmp).rstrip("\n"), "", _section(points, baseline, runs_catalog)]
    missing = _without_baseline(points, baseline, run_id)
    if missing:
        lines += ["", "**No main-branch result for:**"]
        lines += [f"- {md_text(label, in_table=False)} (conc {concs})" for label, concs in missing]
    return "\n".join(lines) + "\n"


def _section(points: pl.DataFrame, baseline: pl.DataFrame, runs_catalog: pl.DataFrame) -> str:
    head = (
        "#### Baseline: the latest main-branch result per configuration, ISL/OSL and load "
        "(as InferenceX `utils/compare_results.py`)"
    )
    if not baseline.height:
        return head + "\n\nNo main-branch run in the store measured any of these configurations."
    src = baseline_sources(points, baseline)
    used = src.group_by("source_run").agg(pl.len().alias("points"))
    cat_cols = [
        c for c in (RunCol.BRANCH, RunCol.HEAD_SHA, RunCol.CREATED_AT) if c in runs_catalog.columns
    ]
    if runs_catalog.height and cat_cols:
        info = runs_catalog.select(
            pl.col(RunCol.RUN_ID).alias("source_run"), *[pl.col(c) for c in cat_cols]
        )
        used = used.join(info, on="source_run", how="left")
    lines = [
        head,
        "",
        "| main-branch run | created | head sha | points used |",
        "|---|---|---|---|",
    ]
    for r in used.sort("source_run").iter_rows(named=True):
        sha = str(r.get(RunCol.HEAD_SHA) or "")[:7] or "–"
        day = str(r.get(RunCol.CREATED_AT) or "")[:10] or "–"
        lines.append(
            f"| {md_cell(str(r['source_run']))} | {md_cell(day)} | {md_cell(sha)} | {r['points']} |"
        )
    return "\n".join(lines)


def _without_baseline(
    points: pl.DataFrame, baseline: pl.DataFrame, run_id: str
) -> Sequence[tuple[str, str]]:
    load = [Col.ARM_ID, Col.CONC, Col.REQUEST_RATE]
    mine = points.filter(pl.col(Col.RUN_ID) == run_id).select(*load, Col.ARM_LABEL).unique(load)
    lost = mine.join(baseline.select(load), on=load, how="anti", nulls_equal=True)
    out = (
        lost.group_by(Col.ARM_LABEL)
        .agg(pl.col(Col.CONC).drop_nulls().unique().sort())
        .sort(Col.ARM_LABEL)
    )
    return [(r[0], ", ".join(map(str, r[1])) or "by rate") for r in out.iter_rows()]
