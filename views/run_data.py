"""`RunData`: everything the run page, the points page and their exports show for one view.

A `RunData` is built once per (view, store version) by `views.source.DataSource` and cached; the
charts, the grids and every export read its fields, so the numbers on the page and in the
downloads are the same objects (compute once, render many). It is a cache, not a calculator:
frontiers, verdicts, cliffs, pruned lists, the ticked-points selection, the arm ranking at x, AL
checks, deltas and the accuracy per arm are calls into `analysis/`. It reads the store through
the `Source` protocol (what of `DataSource` it uses), so this module does not import the data
source that builds it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any, Protocol, TypeVar, cast

import polars as pl

from analysis import tco
from analysis.acceptance import GoldenTable, check_acceptance
from analysis.comparison.baseline import MAIN
from analysis.comparison.deltas import Deltas, compute_deltas
from analysis.comparison.ranking import rank_at
from analysis.cost import (
    COST_COLUMNS,
    CostClass,
    Costs,
    HardwareFile,
    axis_label,
    cost_assumptions,
    parse_hwcost,
)
from analysis.frontier.prune import Analysis, analyze_points
from analysis.frontier.slo import parse_slo
from analysis.sweep.export import SearchSpace, comment, dispatch_command, search_space
from analysis.sweep.pruned import PrunedList, prune_list, pruned_json, selection_list
from analysis.sweep.sweep_config import SweepConfig
from ingest.contract.col import Col
from ingest.contract.schema import DEFAULT_GROUP, RejectCol, RunCol
from ingest.store import Store
from views.accuracy import accuracy_table, eval_columns, evals_version
from views.baseline import Baseline, Read, build_baseline
from views.cache import LRU, store_version
from views.facets import ARM_NAME, Option, arm_names, arm_order, facets, filter_expr
from views.master_configs import yaml_problem
from views.planes import chart_plane, point_hover, verdict_points
from views.query.affects import DATA_PARTS, Part, fields_affecting, fields_sparing
from views.query.state import RunView

T = TypeVar("T")
# View fields that change only how the data is drawn (not part of the data cache key).
CACHE_IGNORED = fields_sparing(RunView, *DATA_PARTS)
# The view fields each shared part of a RunData depends on (see RunData._shared), from the
# fields' `affects` markers: a change of `at`, `ab` or `x2` recomputes only what reads it,
# never the analysis of the main plane.
RUN_FIELDS = fields_affecting(RunView, Part.RUNS)
POINT_FIELDS = fields_affecting(RunView, Part.POINTS)
MAIN_FIELDS = fields_affecting(RunView, Part.MAIN)
SECOND_FIELDS = fields_affecting(RunView, Part.SECOND)
DELTA_FIELDS = fields_affecting(RunView, Part.DELTAS)
BASELINE_FIELDS = fields_affecting(RunView, Part.BASELINE)
# The cost and energy columns (issue 14): null in the store, filled for the view's points.
COST_NAMES = frozenset(str(c) for c in COST_COLUMNS)
PRUNED_FIELDS = fields_affecting(RunView, Part.PRUNED)


class Source(Protocol):
    """What a RunData reads of its data source (`views.source.DataSource`)."""

    store: Store
    parts: LRU

    @property
    def hardware(self) -> HardwareFile: ...

    @property
    def golden(self) -> tuple[GoldenTable, ...]: ...

    def costs(self, points: pl.DataFrame, hwcost: str) -> Costs: ...

    def runs(self) -> pl.DataFrame: ...

    def main_read(self, run_id: str) -> Read: ...

    def main_latest_frame(self) -> pl.DataFrame | None: ...

    def rejects(self) -> pl.DataFrame: ...

    def evals(self, runs: Sequence[str]) -> pl.DataFrame: ...

    def master_config(self, name: str) -> SweepConfig: ...

    def series(self, run_id: str, point_id: str) -> pl.DataFrame: ...


def data_version(store: Store, runs: Sequence[str]) -> tuple[Any, ...]:
    """The store files a run view reads: its points, the catalog, the rejects and its evals."""
    return (*store_version(store, runs), *evals_version(store, runs))


class RunData:
    """Everything the run page, the points page and their exports show for one view.

    Each part is computed once per RunData, and the costly ones are shared through the data
    source with every view that agrees on the fields the part reads (`_shared`): the page's
    layout, its callbacks and its exports of one view read the same objects, and a view that
    only changes `at`, `ab` or `x2` reuses the analysis of the main plane.
    """

    def __init__(
        self, source: Source, view: RunView, version: tuple[Any, ...] | None = None
    ) -> None:
        self.source = source
        self.view = view
        self.version = data_version(source.store, view.runs) if version is None else version

    def _shared(self, part: str, fields: Sequence[str], make: Callable[[], T]) -> T:
        key = (part, tuple(getattr(self.view, f) for f in fields), self.version)
        return self.source.parts.get(key, make)

    @cached_property
    def catalog(self) -> pl.DataFrame:
        """Catalog rows of the view's runs, in the view's order (the same for every filter: made
        once per runs and store version)."""
        return self._shared("catalog", RUN_FIELDS, self._catalog)

    def _catalog(self) -> pl.DataFrame:
        runs = self.source.runs()
        order = {r: i for i, r in enumerate(self.view.runs)}
        return (
            runs.filter(pl.col(RunCol.RUN_ID).is_in(list(self.view.runs)))
            .with_columns(pl.col(RunCol.RUN_ID).replace_strict(order, default=None).alias("__o"))
            .sort("__o")
            .drop("__o")
        )

    @cached_property
    def missing(self) -> tuple[str, ...]:
        """Requested run ids the store does not have."""
        have = set(self.catalog.get_column(RunCol.RUN_ID).to_list())
        return tuple(r for r in self.view.runs if r not in have)

    @cached_property
    def all_points(self) -> pl.DataFrame:
        """Every point of the view's runs (before filters)."""
        return self._shared(
            "all_points", RUN_FIELDS, lambda: self.source.store.points(list(self.view.runs))
        )

    @cached_property
    def costed(self) -> Costs:
        """The points the filters keep, with the cost and energy columns filled (`hwcost`), and
        which hardware lacked figures."""
        return self._shared(
            "points",
            POINT_FIELDS,
            lambda: self.source.costs(
                self.all_points.filter(filter_expr(self.view)), self.view.hwcost
            ),
        )

    @cached_property
    def points(self) -> pl.DataFrame:
        """The points the filters keep (cost and energy columns filled)."""
        return self.costed.frame

    @property
    def baseline(self) -> Baseline | None:
        """The view's baseline (`baseline=`) against its first run, with the per-arm uplift; the
        main-branch baseline reads other runs, so it is keyed on the whole store's version."""
        if not self.view.baseline:
            return None
        key = (
            "baseline",
            tuple(getattr(self.view, f) for f in BASELINE_FIELDS),
            store_version(self.source.store, None),
            evals_version(self.source.store, self.view.runs),
        )
        main = self.view.baseline == MAIN and self.view.runs
        return self.source.parts.get(
            key,
            lambda: build_baseline(
                self.view,
                self.points,
                self.names,
                self.source.runs(),
                self.source.main_read(self.view.runs[0]) if main else self.source.store.collect,
                self.source.evals,
                lambda frame: self.source.costs(frame, self.view.hwcost).frame,
                self.source.main_latest_frame,
            ),
        )

    def y_title(self, y: str | None = None) -> str | None:
        """The y-axis title of a cost or energy column (cost class, power figure, overridden
        hardware, unit); None for the other columns (their menu label and unit)."""
        col = y or self.view.y
        if col not in COST_NAMES:
            return None
        return axis_label(col, tuple(parse_hwcost(self.view.hwcost)))

    def cost_notes(self) -> list[str]:
        """The cost caption: where the figures come from and which hardware lacks them."""
        if self.view.y not in COST_NAMES and not self.view.hwcost:
            return []
        hw = self.source.hardware
        head, used = cost_assumptions(
            hw, self.points.get_column(Col.HW).drop_nulls().unique().sort().to_list(),
            self.view.y, parse_hwcost(self.view.hwcost),
        )  # fmt: skip
        # only the sources of the figures this page uses, each with the one it came through
        used |= {v for s in used if (v := hw.sources[s].via) is not None}
        sources = "; ".join(
            f"{hw.sources[s].title} ({hw.sources[s].url or hw.sources[s].repo})"
            for s in sorted(used)
        )
        if sources:
            head += f" Sources: {sources}."
        if self.view.hwcost:
            head += f" Overridden in the URL (hwcost): {self.view.hwcost}."
        return [head, *self.costed.notes()]

    @cached_property
    def facets(self) -> dict[str, list[Option]]:
        """Filter options from the unfiltered points."""
        return self._shared("facets", RUN_FIELDS, lambda: facets(self.all_points, self.names))

    @cached_property
    def names(self) -> pl.DataFrame:
        """`arm_id`, `arm_name` of every arm of the view's runs."""
        return self._shared("names", RUN_FIELDS, lambda: arm_names(self.all_points))

    @cached_property
    def arm_order(self) -> dict[str, int]:
        """Arm id -> colour index, stable under filtering (sorted by name)."""
        return self._shared("arm_order", RUN_FIELDS, lambda: arm_order(self.names))

    @property
    def group_by(self) -> tuple[str, ...]:
        """Comparison groups: per run by default, or across the overlaid runs."""
        if self.view.envelope == "all":
            return tuple(c for c in DEFAULT_GROUP if c != Col.RUN_ID)
        return DEFAULT_GROUP

    @cached_property
    def analysis(self) -> Analysis:
        """Verdicts and frontiers on the main plane (x vs y)."""
        return self._shared(
            "analysis",
            MAIN_FIELDS,
            lambda: analyze_points(
                self.points,
                x=self.view.x,
                y=self.view.y,
                group_by=self.group_by,
                slo=parse_slo(self.view.slo),
            ),
        )

    @cached_property
    def second(self) -> Analysis:
        """Verdicts and frontiers on the second plane (latency vs y)."""
        return self._shared(
            "second",
            SECOND_FIELDS,
            lambda: analyze_points(
                self.points,
                x=self.view.x2,
                y=self.view.y,
                group_by=self.group_by,
                slo=parse_slo(self.view.slo),
            ),
        )

    @cached_property
    def hover(self) -> pl.DataFrame:
        """The hover columns and labels of the points, which both charts' planes join on."""
        return self._shared("hover", POINT_FIELDS, lambda: point_hover(self.points))

    @cached_property
    def main_plane(self) -> pl.DataFrame:
        """What the main chart draws: analysis rows plus hover columns."""
        return self._shared(
            "main_plane",
            MAIN_FIELDS,
            lambda: chart_plane(self.analysis, self.points, self.names, self.hover),
        )

    @cached_property
    def second_plane(self) -> pl.DataFrame:
        """What the second chart draws."""
        return self._shared(
            "second_plane",
            SECOND_FIELDS,
            lambda: chart_plane(self.second, self.points, self.names, self.hover),
        )

    @cached_property
    def acceptance(self) -> pl.DataFrame:
        """AL checks of the spec-decoding points (ok / warn / fail / not_measured)."""
        return self._shared(
            "acceptance", POINT_FIELDS, lambda: check_acceptance(self.points, self.source.golden)
        )

    @cached_property
    def deltas(self) -> Deltas:
        """A/B deltas on the view's axis at equal concurrency, with their confounds."""
        return self._shared(
            "deltas",
            DELTA_FIELDS,
            lambda: compute_deltas(
                self.points,
                axis=self.view.ab,
                x=self.view.x,
                y=self.view.y,
                group_by=self.group_by,
                evals=self.evals,
            ),
        )

    @cached_property
    def evals(self) -> pl.DataFrame:
        """The eval rows of the view's runs (the store's `evals` table)."""
        return self.source.evals(self.view.runs)

    @cached_property
    def accuracy(self) -> pl.DataFrame:
        """Per run, arm and task of the view's points: the headline accuracy (`eval_*` columns,
        the `accuracy` text); empty when the runs have no evals."""
        return self._shared(
            "accuracy", POINT_FIELDS, lambda: accuracy_table(self.points, self.evals, self.names)
        )

    @cached_property
    def points_table(self) -> pl.DataFrame:
        """The points table: the verdict points with their arm's accuracy (`EVAL_COLUMNS`)."""
        return eval_columns(self.verdict_points, self.accuracy)

    @cached_property
    def master(self) -> tuple[SweepConfig | None, str | None]:
        """The view's master config (`master=`), or None and why it is not used."""
        if not self.view.master:
            return None, None
        try:
            return self.source.master_config(self.view.master), None
        except ValueError as exc:
            return None, f"master={self.view.master} not used: {exc}"

    @cached_property
    def pruned(self) -> PrunedList:
        """The points worth the full sweep (from the main-plane verdicts), with the view's prune
        options (`neighbours`, `arm_frontier`, `master`) as `paretolens prune` takes them."""
        return self._shared(
            "pruned",
            (*MAIN_FIELDS, *PRUNED_FIELDS),
            lambda: prune_list(
                self.analysis,
                neighbours=self.view.neighbours,
                include_arm_frontier=self.view.arm_frontier,
                master=self.master[0],
            ),
        )

    @cached_property
    def pruned_space(self) -> SearchSpace | str:
        """The kept arms as a master-config snippet, or why they cannot be one."""
        try:
            return search_space(self.pruned)
        except ValueError as exc:
            return f"cannot export this pruned list as a master-config snippet: {exc}"

    @cached_property
    def pruned_yaml(self) -> str:
        """The pruned list as an InferenceX search-space snippet (or why it cannot be one)."""
        space = self.pruned_space
        return comment(space) if isinstance(space, str) else space.yaml()

    @cached_property
    def pruned_check(self) -> str | None:
        """Why the YAML shown would not be a valid master config (None: it is one). The text
        itself is read back and validated, so what a user copies is what was checked."""
        if isinstance(self.pruned_space, str):
            return self.pruned_space
        return yaml_problem(self.pruned_yaml)

    @cached_property
    def pruned_cli(self) -> str:
        """The `test-config ...` line that runs the pruned list."""
        return dispatch_command(self.pruned)

    @cached_property
    def rejects(self) -> pl.DataFrame:
        """Rejected files and rows of the view's runs."""
        runs = list(self.view.runs)
        return (
            self.source.rejects()
            .filter(pl.col(RejectCol.RUN_ID).is_in(runs))
            .sort(RejectCol.RUN_ID, RejectCol.PATH)
        )

    @cached_property
    def verdict_points(self) -> pl.DataFrame:
        """Filtered points with their main-plane verdict columns."""
        return self._shared(
            "verdict_points",
            MAIN_FIELDS,
            lambda: verdict_points(self.analysis, self.points, self.names),
        )

    @cached_property
    def pruned_doc(self) -> dict[str, Any]:
        """The pruned list as the JSON document `paretolens prune --format json` prints."""
        return pruned_json(self.pruned)

    def selection(self, point_ids: Sequence[str]) -> PrunedList:
        """Some points of the view as a pruned list (for launching exactly those)."""
        return selection_list(self.verdict_points, point_ids)

    @cached_property
    def tco(self) -> pl.DataFrame:
        """The TCO calculator's fleets per arm (`analysis.tco`); empty until both targets are set."""
        v = self.view
        if v.tco_intvty is None or v.tco_tput is None:
            return pl.DataFrame(schema=tco.SCHEMA)
        target = tco.Target(v.tco_intvty, v.tco_tput, cast(CostClass, v.tco_cost))
        table = tco.fleet_table(self.points, target, self.source.hardware, parse_hwcost(v.hwcost))
        return table.join(self.names, on=Col.ARM_ID, how="left").select(
            Col.ARM_ID, ARM_NAME, *[c for c in table.columns if c != Col.ARM_ID]
        )

    @cached_property
    def at_target(self) -> pl.DataFrame:
        """Each arm frontier's y at the target x (`at`), PCHIP along the frontier, no extrapolation."""
        t = rank_at(self.analysis.arm_frontiers, self.view.at)
        return t.join(self.names, on=Col.ARM_ID, how="left").select(
            Col.RUN_ID,
            Col.ARM_ID,
            ARM_NAME,
            *[c for c in t.columns if c not in (Col.RUN_ID, Col.ARM_ID)],
        )

    def not_drawn(self, plane: pl.DataFrame) -> list[str]:
        """Why points are missing from a chart (no axis value), so nothing vanishes silently."""
        bad = plane.filter(_NOT_DRAWN)
        if bad.height == 0:
            return []
        counts = bad.group_by("reason").len().sort("len", "reason", descending=[True, False])
        return [f"{n} point{'s' if n != 1 else ''} not drawn: {r}" for r, n in counts.iter_rows()]

    def point(self, point_id: str) -> dict[str, Any] | None:
        """One point with its verdict columns and its arm's accuracy, or None when it is not in
        the view."""
        rows = self.points_table.filter(pl.col(Col.POINT_ID) == point_id)
        return rows.row(0, named=True) if rows.height else None


# A plane row with no axis value to draw (built once: an expression is immutable).
_NOT_DRAWN = pl.col("x").is_null() | pl.col("y").is_null() | (pl.col("x") <= 0) | (pl.col("y") <= 0)
