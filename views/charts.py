"""What a frontier chart shows, decided before it is drawn (optuna's `_get_pareto_front_info`
then `_get_pareto_front_plot(info)`): `FrontierChart` holds the rows, the polylines and every
display choice of one chart; `dashboard.figures.frontier.frontier_figure(info)` only draws it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from analysis.frontier.polylines import Frontier
from views.baseline import Baseline
from views.query.state import RunView
from views.run_data import RunData


@dataclass(frozen=True, eq=False)
class FrontierChart:
    """One throughput-vs-x chart: points per (arm, run), arm frontiers, group envelopes.

    Attributes:
        plane: analysis table rows to draw (`x`, `y`, `verdict`, `reason`, identity and hover
            columns), already filtered to the view.
        arm_frontiers, group_frontiers: polylines from the same analysis.
        x, y: the axes' columns; runs: the runs drawn, in the view's order (marker symbols);
        arm_order: an arm's colour index.
        hidden: legend tokens (`token(arm, run)`, `envelope~run`) drawn as legend-only.
        frontier_only: only the points on their arm's frontier; labels: what labels a point
            (`conc`, `gpus`, `parallelism`, `none`); logx, logy: log axes.
        pinned: the point the detail panel shows, ringed; at: the "rank arms at x" line.
        title: the chart's title (drawn text); legend: whether the chart has a legend.
        baseline: a baseline drawn under the run: its arm frontiers solid, the compared run's
            dashed with ✕ markers (as InferenceX), the uplift per arm shaded between the two.
        y_title: the y-axis title, when not the column's menu label and unit (cost columns).
    """

    plane: pl.DataFrame
    arm_frontiers: Sequence[Frontier]
    group_frontiers: Sequence[Frontier]
    x: str
    y: str
    runs: Sequence[str]
    arm_order: dict[str, int]
    hidden: Sequence[str] = ()
    frontier_only: bool = False
    labels: str = "conc"
    logx: bool = False
    logy: bool = False
    pinned: str | None = None
    at: float | None = None
    title: str = ""
    legend: bool = True
    baseline: Baseline | None = None
    y_title: str | None = None


def main_chart(data: RunData, view: RunView, title: str = "") -> FrontierChart:
    """The run page's throughput-vs-interactivity chart of a view."""
    a = data.analysis
    return FrontierChart(
        data.main_plane, a.arm_frontiers, a.group_frontiers, x=view.x, y=view.y, runs=view.runs,
        arm_order=data.arm_order, hidden=view.hide, frontier_only=view.frontier_only,
        labels=view.labels, logx=view.logx, logy=view.logy, pinned=view.point, at=view.at,
        title=title, baseline=data.baseline, y_title=data.y_title(),
    )  # fmt: skip


def second_chart(data: RunData, view: RunView, title: str = "") -> FrontierChart:
    """The run page's throughput-vs-latency chart of a view (no legend, no baseline, no
    "rank arms at x" line)."""
    a = data.second
    return FrontierChart(
        data.second_plane, a.arm_frontiers, a.group_frontiers, x=view.x2, y=view.y,
        runs=view.runs, arm_order=data.arm_order, hidden=view.hide,
        frontier_only=view.frontier_only, labels=view.labels, logx=view.logx, logy=view.logy,
        pinned=view.point, legend=False, title=title, y_title=data.y_title(),
    )  # fmt: skip
