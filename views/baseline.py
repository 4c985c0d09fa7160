"""A baseline drawn under the run page's run (issue 14, item 1): `baseline=<run id>|main`.

`main` is the latest main-branch result per configuration, ISL/OSL and load
(`analysis.comparison.baseline.latest_main_baseline`, as InferenceX's `utils/compare_results.py`); a run id
is that run as it is stored. The baseline is compared with the view's first run by
`analysis.comparison.compare.compare_runs` (per arm: the uplift of the run's frontier over the baseline's at
matched interactivity, PCHIP, common range only), and the same analysis gives the frontiers and
the per-arm gaps the chart shades. The dashboard computes nothing here: it picks the points,
applies the view's filters and cost overrides, and hands them to `analysis/`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import polars as pl

from analysis.comparison.baseline import (
    BASELINE_MAIN,
    CHOICE_ROW,
    IDENTITY_COLUMNS,
    MAIN,
    MATCH_COLUMNS,
    baseline_markdown,
    baseline_points,
    baseline_sources,
    main_baseline_choice,
)
from analysis.comparison.compare import RunComparison, compare_runs, comparison_markdown
from analysis.frontier.interpolate import frontier_gap
from analysis.frontier.polylines import Frontier
from analysis.frontier.prune import Analysis, analyze_points
from analysis.frontier.slo import parse_slo
from ingest.contract.col import Col
from ingest.contract.schema import DEFAULT_GROUP, RunCol
from views.accuracy import comparison_evals
from views.facets import ARM_NAME, filter_expr
from views.planes import table_plane
from views.query.state import RunView

# The per-arm uplift table's columns (the rest of compare_runs' `arms`, then the arm's name).
UPLIFT_COLUMNS = (
    Col.ARM_ID.value,
    ARM_NAME,
    "x_lo",
    "x_hi",
    "uplift_pct",
    "mean_delta_pct",
    "area_base",
    "area_between",
    "matched_concs",
    # the arm's headline accuracy in the baseline and in the run, and the stderr flag
    "accuracy_task",
    "accuracy_baseline",
    "accuracy_treatment",
    "accuracy_flag",
)


@dataclass(frozen=True)
class ArmGap:
    """One arm's run frontier over its baseline frontier on their common x range: the PCHIP
    values at the measured x of either (`analysis.frontier.interpolate.FrontierGap`) and the uplift."""

    arm_id: str
    lo: float
    hi: float
    xs: tuple[float, ...]
    base: tuple[float, ...]
    run: tuple[float, ...]
    uplift_pct: float | None
    mean_delta_pct: float


@dataclass(frozen=True)
class Baseline:
    """A baseline of a run view.

    requested: `main` or the baseline run id, as the URL says.
    base_id: the run id the baseline points carry (`baseline:main` for main).
    run_id: the run it is compared with (the view's first run).
    points: the baseline points (view filters and cost overrides applied).
    plane: what the chart draws of them (verdicts on the view's plane, hover columns).
    frontiers: the baseline's arm frontiers (drawn solid).
    comparison: `compare_runs(baseline, run)`; its `arms` is the uplift table.
    gaps: per matched arm with a common x range, what the chart shades.
    markdown: the PR markdown (with the "Baseline" section for main).
    notes: what the page should say (no main-branch result, ...).
    """

    requested: str
    base_id: str
    run_id: str
    points: pl.DataFrame
    plane: pl.DataFrame
    frontiers: tuple[Frontier, ...]
    comparison: RunComparison
    gaps: tuple[ArmGap, ...]
    markdown: str
    notes: tuple[str, ...]

    @property
    def token(self) -> str:
        """The legend token of every baseline trace (`hide=baseline~main`): one legend group,
        hidden and shown as one, written to the URL as the arms' are."""
        return f"baseline~{self.requested}"

    def table(self, names: pl.DataFrame) -> pl.DataFrame:
        """Per arm of the run: the uplift over the baseline (arms without one say so)."""
        arms = self.comparison.arms
        if not arms.height:
            return pl.DataFrame(schema={c: pl.String for c in (Col.ARM_ID, ARM_NAME)})
        named = arms.join(names, on=Col.ARM_ID, how="left").with_columns(
            pl.coalesce(pl.col(ARM_NAME), pl.col(Col.ARM_LABEL)).alias(ARM_NAME)
        )
        return named.select([c for c in UPLIFT_COLUMNS if c in named.columns]).sort(ARM_NAME)


Costed = Callable[[pl.DataFrame], pl.DataFrame]


Query = Callable[[pl.LazyFrame], pl.LazyFrame]
# Reads the rows of some runs' points that a query keeps (as `ingest.store.Store.collect`).
Read = Callable[[Query, list[str]], pl.DataFrame]
_ORDER = "__order"


def _whole(lf: pl.LazyFrame) -> pl.LazyFrame:
    return lf


def main_points(
    catalog: pl.DataFrame, read: Read, run_id: str, latest: pl.DataFrame | None = None
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(the points read: the run's, whole, and the matching columns
    (`analysis.comparison.baseline.IDENTITY_COLUMNS`) of the main-branch points considered,
    the run's main-branch baseline `analysis.comparison.baseline.latest_main_baseline`, its
    points under run id `baseline:main`).

    Only the columns the matching reads are read of the main runs, then the whole rows of the
    points chosen: the same baseline as `latest_main_baseline` over every column of every run.
    With `latest` (`analysis.comparison.baseline.latest_main_rows` of the store's main runs,
    as `views.partitions.MainLatest` keeps it) no main run is read but for the chosen points."""
    mine = read(_whole, [run_id])
    cols = list(IDENTITY_COLUMNS)
    if latest is None:
        mains = catalog.filter(
            (pl.col(RunCol.BRANCH) == MAIN) & (pl.col(RunCol.RUN_ID) != run_id)
        ).get_column(RunCol.RUN_ID)
        narrow = read(lambda lf: lf.select(cols), [run_id, *mains.to_list()])
    else:
        # The run's own rows come from its read; of the kept rows, those that share a
        # configuration column and load with one of the run's points (the matching joins on
        # them), so the frame carried on is the size of the run's.
        keys = [c for c in MATCH_COLUMNS if c not in (Col.RUN_ID, Col.POINT_ID, Col.MODEL_PREFIX)]
        others = latest.filter(pl.col(Col.RUN_ID) != run_id).join(
            mine.select(keys).unique(), on=keys, how="semi", nulls_equal=True
        )
        narrow = pl.concat([mine.select(cols), others], how="diagonal")
    stored = pl.concat([mine, narrow.filter(pl.col(Col.RUN_ID) != run_id)], how="diagonal")
    choice = main_baseline_choice(narrow, catalog, run_id)
    if choice is None:
        return stored, mine.clear()
    picked = narrow[choice.get_column(CHOICE_ROW)].select(Col.RUN_ID, Col.POINT_ID)
    ids = picked.get_column(Col.POINT_ID).unique().to_list()
    rows = read(
        lambda lf: lf.filter(pl.col(Col.POINT_ID).is_in(ids)),
        picked.get_column(Col.RUN_ID).unique(maintain_order=True).to_list(),
    ).unique([Col.RUN_ID, Col.POINT_ID], keep="first", maintain_order=True)
    chosen = (
        picked.with_row_index(_ORDER)
        .join(rows, on=[Col.RUN_ID, Col.POINT_ID], how="left")
        .sort(_ORDER)
        .select(mine.columns)
    )
    return stored, baseline_points(chosen, choice)


def main_runs_used(stored: pl.DataFrame, base: pl.DataFrame, catalog: pl.DataFrame) -> str:
    """Which main-branch runs a main baseline took its points from, for the page to say."""
    if not base.height:
        return "no main-branch run in the store measured a configuration of this run"
    used = baseline_sources(stored, base).group_by("source_run").len().sort("source_run")
    when = dict(
        zip(
            catalog.get_column(RunCol.RUN_ID),
            catalog.get_column(RunCol.CREATED_AT).cast(pl.String),
            strict=True,
        )
    )
    runs = [f"{r} ({str(when.get(r) or '')[:10] or 'undated'}, {n} point{'s' if n != 1 else ''})"
            for r, n in used.iter_rows()]  # fmt: skip
    return "main baseline: the latest main-branch result per configuration, from " + ", ".join(runs)


def build_baseline(
    view: RunView,
    run_points: pl.DataFrame,
    names: pl.DataFrame,
    catalog: pl.DataFrame,
    read: Read,
    read_evals: Callable[[list[str]], pl.DataFrame],
    costed: Costed,
    latest: Callable[[], pl.DataFrame | None] = lambda: None,
) -> Baseline | None:
    """The baseline of a view (None without `baseline=`).

    Args:
        view: the run view (`baseline`, the filters, x, y, slo).
        run_points: the view's filtered points (cost columns filled).
        names: the view's arm names.
        catalog: the store's runs catalog.
        read: reads the rows of some runs that a query keeps (as `Store.collect`).
        read_evals: reads the eval rows of some runs (accuracy in the uplift table).
        costed: fills the cost columns of points (the view's `hwcost`).
        latest: the main runs' rows a main baseline can choose (`main_points`' `latest`).
    """
    if not view.baseline or not view.runs:
        return None
    run_id = view.runs[0]
    notes: list[str] = []
    if len(view.runs) > 1:
        notes.append(f"the baseline is compared with the first run of the view, {run_id}")
    mine = run_points.filter(pl.col(Col.RUN_ID) == run_id)
    if view.baseline == MAIN:
        stored, base = main_points(catalog, read, run_id, latest())
        base_id = BASELINE_MAIN
        if not base.height:
            notes.append(
                f"no main-branch run in the store measured a configuration of run {run_id}"
            )
    else:
        base_id = view.baseline
        # Only a run of the catalog is read: any other id names no stored file (a 300-character
        # one names a file the file system cannot even look for).
        known = base_id in set(catalog.get_column(RunCol.RUN_ID).to_list())
        stored = read(_whole, [base_id]) if known else read(_whole, [run_id]).clear()
        base = stored
        if base_id == run_id:
            notes.append("the baseline is the run itself: pick another run, or main")
            base = stored.clear()
        elif not base.height:
            notes.append(f"baseline run {base_id} is not in the store (or has no points)")
    base = costed(base.filter(filter_expr(view)))
    pts = pl.concat([mine, base.select(mine.columns)], how="vertical_relaxed")
    slo = parse_slo(view.slo)
    evals = comparison_evals(
        read_evals, base_id, run_id, (stored, base) if view.baseline == MAIN else None
    )
    cmp = compare_runs(pts, base_id, run_id, x=view.x, y=view.y, slo=slo, evals=evals)
    # The same analysis compare_runs makes (per-run groups, nothing dominated kept), for the
    # frontiers drawn and the gaps shaded, so the shading and the table are the same numbers.
    a = analyze_points(pts, view.x, view.y, DEFAULT_GROUP, max_dominated_by=0, slo=slo)
    plane = _plane(a, base, names, base_id)
    fronts = {(dict(f.key)[Col.RUN_ID], dict(f.key)[Col.ARM_ID]): f for f in a.arm_frontiers}
    gaps = []
    for arm in cmp.arms.get_column(Col.ARM_ID).to_list() if cmp.arms.height else []:
        fb, fr = fronts.get((base_id, arm)), fronts.get((run_id, arm))
        gap = frontier_gap(fb, fr) if fb is not None and fr is not None else None
        if gap is not None:
            gaps.append(
                ArmGap(str(arm), gap.lo, gap.hi, gap.xs, gap.baseline, gap.treatment,
                       gap.area_delta_pct, gap.mean_delta_pct)
            )  # fmt: skip
    if view.baseline == MAIN:
        markdown = baseline_markdown(cmp, stored, base, catalog, run_id)
    else:
        markdown = comparison_markdown(cmp)
    return Baseline(
        requested=view.baseline,
        base_id=base_id,
        run_id=run_id,
        points=base,
        plane=plane,
        frontiers=tuple(f for f in a.arm_frontiers if dict(f.key).get(Col.RUN_ID) == base_id),
        comparison=cmp,
        gaps=tuple(gaps),
        markdown=markdown,
        notes=tuple(notes),
    )


def _plane(a: Analysis, base: pl.DataFrame, names: pl.DataFrame, base_id: str) -> pl.DataFrame:
    """The baseline's rows of the analysis with the hover columns and arm names (arms the view
    does not have are named by their label)."""
    plane = table_plane(a.table.filter(pl.col(Col.RUN_ID) == base_id), base, names)
    return plane.with_columns(pl.coalesce(pl.col(ARM_NAME), pl.col(Col.ARM_LABEL)).alias(ARM_NAME))
