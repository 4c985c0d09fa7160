"""The run page's issue-14 pieces: the baseline and cost-override controls, the per-arm uplift
over the baseline (table and PR markdown), the cost caption, and the "history" link of an arm.

Kept out of the run page's own modules so that those change by a line or two only.
"""

from __future__ import annotations

from typing import Any

from dash import dcc, html

from dashboard import components as c
from dashboard.ids import Id, control
from views import urls
from views.query.state import HistoryView, RunView
from views.run_data import RunData
from views.tables import run_table

MAIN_OPTION = {"label": "latest main-branch result per configuration", "value": "main"}


def controls(view: RunView, run_options: list[dict[str, str]]) -> list[html.Div]:
    """The baseline picker (`baseline=`) and the cost overrides (`hwcost=`)."""
    options = [MAIN_OPTION]
    options += [o for o in run_options if o["value"] not in view.runs[:1]]
    return [
        html.Div(
            [
                html.Label("Baseline (solid; the run dashed, ✕)"),
                dcc.Dropdown(
                    id=control("baseline"),
                    options=options,
                    value=view.baseline or None,
                    clearable=True,
                    placeholder="none",
                    searchable=True,
                ),
            ],
            className="control wide",
            id="ctl-control-baseline",
        ),
        html.Div(
            title="per-hardware all-in kW/GPU and $/GPU-hour overrides for the cost and energy "
            "axes, e.g. h200:kw=1.2,hyperscaler=2.5;b200:neocloud=3.1",
            children=[
                html.Label("Cost overrides (hwcost)"),
                dcc.Input(
                    id=control("hwcost"),
                    type="text",
                    value=view.hwcost,
                    debounce=True,
                    placeholder="h200:kw=1.2,hyperscaler=2.5",
                    style={"width": "200px"},
                ),
            ],
            className="control",
        ),
    ]


def history_link(view: RunView, arm_id: str) -> html.A:
    """The history page of one arm at the view's target x, on the view's axes."""
    hv = HistoryView(arm=(arm_id,), at=view.at, x=view.x, y=view.y, hwcost=view.hwcost)
    return html.A("history", href=urls.history(hv), title="this arm's throughput at x, run by run")


def _pct(v: object) -> str:
    return f"{v:+.1f}%" if isinstance(v, float) else "–"


def _num(v: object) -> str:
    return f"{v:.4g}" if isinstance(v, float) else "–"


def uplift_panel(data: RunData, view: RunView) -> Any:
    """The run's uplift over the baseline per arm (the numbers the chart shades), its exports
    and the PR markdown."""
    b = data.baseline
    if b is None:
        return None
    q = view.query()
    what = "the latest main-branch result per configuration" if b.requested == "main" else b.base_id
    table = run_table(data, "baseline")
    rows = [
        html.Tr(
            [
                html.Td(str(r["arm_name"] or r["arm_id"])),
                html.Td(f"{_num(r['x_lo'])}–{_num(r['x_hi'])}" if r["x_lo"] is not None else "no overlap"),
                html.Td(_pct(r["uplift_pct"]), className="uplift"),
                html.Td(_pct(r["mean_delta_pct"])),
                html.Td(str(r["matched_concs"])),
            ],
            id={"type": "uplift-row", "arm": str(r["arm_id"])},
        )
        for r in table.frame.iter_rows(named=True)
    ]  # fmt: skip
    head = html.Tr(
        [
            html.Th("arm"),
            html.Th(f"{view.x} range"),
            html.Th("uplift (area)"),
            html.Th("mean Δ at measured x"),
            html.Th("loads in both"),
        ]
    )
    return html.Div(
        [
            html.H4(f"Run {b.run_id} over baseline: {what}"),
            c.notes(list(b.notes)),
            html.Table([head, *rows], className="at-table", id=Id.BASELINE_TABLE)
            if rows
            else html.Div("no arm of the run is in the baseline", className="empty"),
            html.Div(
                f"{view.y} of the run over the baseline's frontier at matched {view.x} "
                "(PCHIP, common range only; the shaded areas)",
                className="muted small",
            ),
            c.export_links("baseline", q, label="Uplift"),
            html.Details(
                [
                    html.Summary("Markdown for the PR"),
                    dcc.Clipboard(
                        target_id=Id.BASELINE_MARKDOWN, title="copy the markdown", className="clip"
                    ),
                    html.Pre(b.markdown, id=Id.BASELINE_MARKDOWN, tabIndex="0"),
                ]
            ),
        ],
        className="baseline-panel",
    )


def cost_caption(data: RunData) -> Any:
    """Where the cost and energy figures come from and which hardware lacks them."""
    notes = data.cost_notes()
    if not notes:
        return None
    return html.Div([html.Div(n) for n in notes], className="muted small", id=Id.COST_CAPTION)


def panel(data: RunData, view: RunView) -> list[Any]:
    """Everything this module adds under the ranking of arms."""
    return [p for p in (cost_caption(data), uplift_panel(data, view)) if p is not None]
