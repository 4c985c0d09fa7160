"""The run page's two charts: their figures, their legend tokens and the display-only patches
of drawn charts. The main chart is in the page's first layout, and so is an SVG second chart
(drawn in the same commit); a WebGL second chart's figure is asked for once the main chart is
drawn (`RunCallbacks.on_second`), so its analysis stays out of the layout, and it draws in the
frame's placeholder (`second_frame`)."""

from __future__ import annotations

import math
from typing import Any, Literal

from dash import Patch

from dashboard.figures import frontier, style, updates
from ingest.contract.col import Col
from views.charts import main_chart, second_chart
from views.query.affects import Part, fields_affecting, fields_sparing
from views.query.state import RunView
from views.run_data import RunData


def chart_title(data: RunData, view: RunView, x: str) -> str:
    """A chart's title: its axes, the runs and the models, so a downloaded PNG or SVG says what
    it shows (escaped: model names come from result files)."""
    axes = f"{style.axis_title(view.y).split(' (')[0]} vs {style.axis_title(x).split(' (')[0]}"
    models = sorted({str(m) for m in data.points.get_column(Col.MODEL_PREFIX).drop_nulls()})
    if not models:
        models = sorted({str(m) for m in data.points.get_column(Col.MODEL).drop_nulls()})
    runs = f"run{'s' if len(view.runs) > 1 else ''} {', '.join(view.runs)}"
    parts = [axes, runs, ", ".join(models[:4]) + (" …" if len(models) > 4 else "")]
    return style.inert(" · ".join(p for p in parts if p))


def at_label_x(at: float, logx: bool) -> float:
    """Where the "rank arms at x" label goes: plotly places annotations on a log axis by the
    log of the value (shapes by the value itself), so a label at 40 on a log axis would stretch
    the axis to 1e40."""
    return math.log10(at) if logx else at


def _place_at_label(fig: style.Figure, view: RunView) -> style.Figure:
    if view.at is not None and view.logx:
        for note in fig["layout"].get("annotations") or []:
            if note.get("x") == view.at and note.get("yref") == "paper" and "xref" not in note:
                note["x"] = at_label_x(view.at, True)
    return fig


def with_export_notes(fig: style.Figure, data: RunData) -> style.Figure:
    """The figure with what its PNG/SVG download prints under the chart (`layout.meta`, which
    plotly keeps and never draws): the cost and energy figures and sources the axes use; the
    attribution line (`style.attribute`) follows them."""
    meta = fig.setdefault("layout", {}).setdefault("meta", {})
    meta["export_notes"] = [*data.cost_notes()[:1]]
    return fig


def main_figure(data: RunData, view: RunView) -> style.Figure:
    """The throughput-vs-interactivity chart of a view."""
    a = data.analysis
    fig = _place_at_label(_main_figure(data, view, a), view)
    return with_export_notes(style.attribute(style.repaint(fig, view.palette), view.runs), data)


def _main_figure(data: RunData, view: RunView, a: Any) -> style.Figure:
    return frontier.frontier_figure(main_chart(data, view, chart_title(data, view, view.x)))


def second_figure(data: RunData, view: RunView) -> style.Figure:
    """The throughput-vs-latency chart of a view."""
    fig = frontier.frontier_figure(second_chart(data, view, chart_title(data, view, view.x2)))
    return with_export_notes(style.attribute(style.repaint(fig, view.palette), view.runs), data)


# Fields whose change leaves a chart alone, and those a patch of the drawn chart can show (from
# the fields' `affects` markers in views/query/state.py): the main chart is not redrawn for a new
# x2, nor the second chart for a new x or "rank arms at" value.
FIGURE_NEUTRAL = {
    "main": fields_sparing(RunView, Part.MAIN_CHART, Part.CHART_STYLE),
    "second": fields_sparing(RunView, Part.SECOND_CHART, Part.CHART_STYLE),
}
PATCHABLE = frozenset(fields_affecting(RunView, Part.CHART_STYLE))
AXES = frozenset({"logx", "logy"})
Chart = Literal["main", "second"]


def chart_update(changed: set[str] | None, which: Chart) -> Literal["none", "patch", "figure"]:
    """What a change of these view fields asks of a drawn chart (`which`): nothing, a display
    patch (`chart_patch`, with `axes_changed` when `changed & AXES`) or a new figure (`changed`
    None: nothing is drawn yet)."""
    if changed is None:
        return "figure"
    neutral = FIGURE_NEUTRAL[which]
    if changed <= neutral:
        return "none"
    return "patch" if changed <= neutral | PATCHABLE else "figure"


def second_frame(data: RunData, view: RunView) -> style.Figure:
    """The second chart before its figure arrives: `second_figure`'s layout without traces,
    built without the second chart's analysis (the figure follows the first chart's draw)."""
    layout = style.base_layout(
        chart_title(data, view, view.x2), view.x2, view.y, view.logx, view.logy,
        revision=updates.revision(view.runs, view.x2, view.y, view.logx, view.logy),
        y_title=data.y_title(),
    )  # fmt: skip
    layout["showlegend"] = False
    layout["annotations"] = []  # the second chart has no notes (no "rank arms at x" line)
    return with_export_notes(style.attribute({"data": [], "layout": layout}, view.runs), data)


def main_tokens(fig: style.Figure) -> dict[str, list[str]]:
    """The main chart's legend tokens (per trace, per annotation), for patches and legend clicks."""
    return {"main": updates.trace_tokens(fig), "main_notes": updates.note_tokens(fig)}


def second_tokens(fig: style.Figure, view: RunView) -> dict[str, Any]:
    """The second chart's tokens, with the view its figure was drawn for."""
    return {
        "query": view.query(),
        "second": updates.trace_tokens(fig),
        "second_notes": updates.note_tokens(fig),
    }


def chart_patch(
    data: RunData, view: RunView, tokens: dict[str, Any], which: Chart, *, axes_changed: bool
) -> Patch:
    """A display-only update of the drawn main (`which` "main") or second chart."""
    plane, x = (data.main_plane, view.x) if which == "main" else (data.second_plane, view.x2)
    patch = updates.display_patch(
        tokens=tokens.get(which, []), hidden=view.hide, pinned=updates.pinned_xy(plane, view.point),
        logx=view.logx, logy=view.logy, axes_changed=axes_changed,
        revision=updates.revision(view.runs, x, view.y, view.logx, view.logy),
        notes=tokens.get(f"{which}_notes", []),
    )  # fmt: skip
    if which == "main" and axes_changed and view.at is not None:
        # The "rank arms at x" label is the main chart's first annotation (see _place_at_label).
        patch["layout"]["annotations"][0]["x"] = at_label_x(view.at, view.logx)
    return patch
