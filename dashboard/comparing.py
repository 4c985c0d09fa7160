"""The data of the compare page: a base run against a candidate run, for the page and its
exports (one object per view, computed once)."""

from __future__ import annotations

from functools import cached_property

import polars as pl

from analysis import Analysis, RunComparison, analyze_points, compare_runs, comparison_markdown
from analysis.cost import cost_columns, load_hardware
from dashboard.facets import arm_names, arm_order
from dashboard.planes import chart_plane
from dashboard.state import CompareView
from ingest.store import Store


class CompareData:
    """A base run against a candidate run, for the compare page and its exports."""

    def __init__(self, store: Store, view: CompareView) -> None:
        self.store = store
        self.view = view

    @cached_property
    def points(self) -> pl.DataFrame:
        """Points of both runs."""
        runs = [r for r in (self.view.base, self.view.candidate) if r]
        # The cost and energy columns filled, so the cost y choices draw here too (issue 14).
        return cost_columns(self.store.points(runs), load_hardware())

    @cached_property
    def comparison(self) -> RunComparison:
        """Per-arm uplift, per-conc deltas, unmatched arms."""
        assert self.view.base and self.view.candidate
        return compare_runs(
            self.points, self.view.base, self.view.candidate, x=self.view.x, y=self.view.y
        )

    @cached_property
    def analysis(self) -> Analysis:
        """Both runs on the x/y plane (per-run groups), for the overlay chart."""
        return analyze_points(self.points, x=self.view.x, y=self.view.y)

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
        """The markdown block for a PR comment."""
        return comparison_markdown(self.comparison)
