"""The data of the compare page: a base run against a candidate run, for the page and its
exports (one object per view, computed once).

`base=main` compares the candidate with the latest main-branch result per configuration, ISL/OSL
and load (`analysis.comparison.baseline.latest_main_baseline`, as the run page's `baseline=main`): the
baseline's points carry the run id `baseline:main`, and `notes` says which main runs they came
from. The accuracy of each arm in both runs (the store's evals) is joined on by `compare_runs`.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property, partial
from typing import TypeVar, cast

import polars as pl

from analysis.comparison.baseline import BASELINE_MAIN, MAIN, baseline_markdown
from analysis.comparison.compare import RunComparison, compare_runs, comparison_markdown
from analysis.cost import cost_columns, load_hardware
from analysis.frontier.prune import Analysis, analyze_points
from analysis.frontier.slo import parse_slo
from ingest.contract.col import Col
from ingest.eval_store import read_evals
from ingest.store import Store
from views.accuracy import accuracy_notes, comparison_evals
from views.baseline import Read, main_points, main_runs_used
from views.facets import arm_names, arm_order
from views.planes import chart_plane
from views.query.state import CompareView

T = TypeVar("T")


class CompareData:
    """A base run against a candidate run, for the compare page and its exports."""

    def __init__(
        self,
        store: Store,
        view: CompareView,
        catalog: Callable[[], pl.DataFrame] | None = None,
        main_read: Read | None = None,
        main_latest: Callable[[], pl.DataFrame | None] | None = None,
    ) -> None:
        """`catalog`: the runs catalog (default: read from the store); `main_read`: reads the
        points of runs for `base=main` (default: `store.collect`; the data source's skips runs
        that cannot hold a baseline point); `main_latest`: the main runs' rows a main baseline
        can choose (`views.partitions.MainLatest.frame`; None or absent: read the main runs)."""
        self.store = store
        self.view = view
        self._catalog = catalog or store.runs
        self._main_read = main_read or store.collect
        self._main_latest = main_latest or (lambda: None)
        self._memo: dict[str, object] = {}

    def memo(self, name: str, make: Callable[[], T]) -> T:
        """What the page builds from this data (its figure), built once per data."""
        if name not in self._memo:
            self._memo[name] = make()
        return cast(T, self._memo[name])

    @property
    def is_main(self) -> bool:
        """Whether the base is the main-branch baseline (`base=main`)."""
        return self.view.base == MAIN

    @property
    def base_id(self) -> str:
        """The run id of the base side (`baseline:main` for `base=main`)."""
        return BASELINE_MAIN if self.is_main else self.view.base or ""

    @cached_property
    def _main(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        assert self.view.candidate
        latest = self._main_latest()
        # With the kept main rows, what is read is the candidate's run and the runs of the
        # points chosen, all of which can hold a baseline point: nothing for the reader to skip.
        read = self._main_read if latest is None else self.store.collect
        return main_points(self._catalog(), read, self.view.candidate, latest)

    @cached_property
    def points(self) -> pl.DataFrame:
        """Points of both runs (for `base=main`: the candidate's and its baseline's)."""
        if self.is_main:
            stored, base = self._main
            mine = stored.filter(pl.col(Col.RUN_ID) == self.view.candidate)
            pts = pl.concat([mine, base.select(mine.columns)], how="vertical_relaxed")
        else:
            pts = self.store.points([r for r in (self.view.base, self.view.candidate) if r])
        # The cost and energy columns filled, so the cost y choices draw here too (issue 14).
        return cost_columns(pts, load_hardware())

    @cached_property
    def evals(self) -> pl.DataFrame:
        """The eval rows of both sides (for `base=main`, those of the main runs used)."""
        assert self.view.candidate
        return comparison_evals(
            partial(read_evals, self.store),
            self.base_id,
            self.view.candidate,
            self._main if self.is_main else None,
        )

    @cached_property
    def notes(self) -> list[str]:
        """What the page says about its base: the main-branch runs used, accuracy flags."""
        out = []
        if self.is_main:
            stored, base = self._main
            out.append(main_runs_used(stored, base, self._catalog()))
        cmp = self.comparison
        out += accuracy_notes(cmp.arms, "differs beyond the combined standard error")
        return out

    @cached_property
    def comparison(self) -> RunComparison:
        """Per-arm uplift, per-conc deltas, unmatched arms."""
        assert self.view.candidate
        return compare_runs(
            self.points, self.base_id, self.view.candidate, x=self.view.x, y=self.view.y,
            evals=self.evals, slo=parse_slo(self.view.slo),
        )  # fmt: skip

    @cached_property
    def analysis(self) -> Analysis:
        """Both runs on the x/y plane (per-run groups), for the overlay chart."""
        return analyze_points(
            self.points, x=self.view.x, y=self.view.y, slo=parse_slo(self.view.slo)
        )

    @cached_property
    def plane(self) -> pl.DataFrame:
        """What the overlay chart draws."""
        return chart_plane(self.analysis, self.points, self.names)

    @cached_property
    def names(self) -> pl.DataFrame:
        """`arm_id`, `arm_name` of every arm of both runs."""
        return arm_names(self.points)

    @cached_property
    def arm_order(self) -> dict[str, int]:
        """Arm id -> colour index."""
        return arm_order(self.names)

    @cached_property
    def markdown(self) -> str:
        """The markdown block for a PR comment (for `base=main`, with the main runs used)."""
        if self.is_main:
            stored, base = self._main
            assert self.view.candidate
            return baseline_markdown(
                self.comparison, stored, base, self._catalog(), self.view.candidate
            )
        return comparison_markdown(self.comparison)
