"""Per-GPU assumption badges: the kW/GPU and $/GPU-h a cost, energy or TCO figure is computed
with, one badge per hardware of the view (issue 27), beside the cost and energy charts and in the
TCO calculator."""

from __future__ import annotations

from dash import html

from analysis.cost import CLASS_TITLES, parse_hwcost
from dashboard.ids import Id
from ingest.contract.col import Col
from views.query.state import RunView
from views.run_data import COST_NAMES, RunData


def assumption_badges(data: RunData, cost_class: str | None = None) -> html.Div | None:
    """One badge per hardware of the view: the kW/GPU and $/GPU-h in force, its source, and
    whether `hwcost=` overrode it (None when the view has no hardware)."""
    hws = sorted({str(h) for h in data.points.get_column(Col.HW).drop_nulls().to_list()})
    if not hws:
        return None
    hw_file = data.source.hardware
    over = parse_hwcost(data.view.hwcost)
    badges = []
    for hw in hws:
        spec = hw_file.hardware.get(hw) or hw_file.hardware.get(hw.split("-")[0].split("_")[0])
        mine = over.get(hw)
        power = mine.power_kw if mine and mine.power_kw else spec.power_kw if spec else None
        classes = [cost_class] if cost_class else list(CLASS_TITLES)
        costs = []
        for k in classes:
            v = getattr(mine, k, None) if mine else None
            v = v if v is not None else getattr(spec.usd_per_gpu_hour, k) if spec else None
            costs.append(f"${v:.2f}/GPU-h {k}" if v is not None else f"no {k} cost")
        text = f"{spec.label if spec else hw}: " + (
            f"{power:g} kW/GPU" if power is not None else "no power figure"
        )
        text += " · " + " · ".join(costs)
        if mine:
            text += " (hwcost)"
        source = (
            f"{hw_file.sources[spec.power_source].title}; {hw_file.sources[spec.cost_source].title}"
            if spec
            else "not in data/hardware.yaml: give figures with hwcost"
        )
        badges.append(html.Span(text, className="badge assumption", title=source))
    return html.Div(badges, className="assumption-badges", id=Id.ASSUMPTIONS)


def for_view(data: RunData, view: RunView) -> html.Div | None:
    """The badges when the chart's y is a cost or energy column (None otherwise)."""
    return assumption_badges(data) if view.y in COST_NAMES else None
