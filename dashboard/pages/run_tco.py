"""The run page's TCO calculator tab and the per-GPU assumption badges (issue 27).

The targets (`tco_intvty`, `tco_tput`, `tco_cost`) are URL state and sit in the initial layout
(like the pruned list's options), so they are always part of the view; the per-GPU power and
cost the fleet is priced with are `hwcost=` (editable in the overlays row) over
`data/hardware.yaml`, shown as one badge per hardware of the view.
"""

from __future__ import annotations

from typing import Any

from dash import dcc, html

from analysis.cost import CLASS_TITLES
from dashboard import components as c
from dashboard.ids import Id, control
from dashboard.pages.badges import assumption_badges
from dashboard.pages.run_panels import choices, dropdown
from ingest.contract.col import Col
from views.query.choices import COST_CLASS_CHOICES
from views.query.state import RunView
from views.run_data import RunData
from views.tables import run_table

TCO_COLUMNS = (
    "arm_name", Col.HW.value, "tput_per_gpu_at_target", "gpus_per_instance", "instances", "gpus",
    "usd_per_hour", "usd_per_year", "power_kw", "usd_per_mtok", "power_kw_per_gpu",
    "usd_per_gpu_hour", "intvty_lo", "intvty_hi", "note",
)  # fmt: skip


def _number(field: str, label: str, value: float | None, placeholder: str) -> html.Div:
    return html.Div(
        [
            html.Label(label),
            dcc.Input(
                id=control(field),
                type="number",
                min=0,
                step="any",
                value=value,
                debounce=True,
                placeholder=placeholder,
                style={"width": "130px"},
            ),
        ],
        className="control narrow",
    )


def tco_controls(view: RunView) -> html.Div:
    """The calculator's targets and cost class."""
    return html.Div(
        [
            _number("tco_intvty", "Target interactivity (tok/s/user)", view.tco_intvty, "e.g. 40"),
            _number("tco_tput", "Fleet throughput (tok/s, total)", view.tco_tput, "e.g. 100000"),
            dropdown("tco_cost", "GPU-hour cost", choices(COST_CLASS_CHOICES), view.tco_cost),
        ],
        className="axis-row",
    )


def tco_body(data: RunData, view: RunView) -> list[Any]:
    """The TCO tab: assumptions, then each arm's fleet, cheapest first."""
    if view.tco_intvty is None or view.tco_tput is None:
        return [
            html.Div(
                "Set a target interactivity and a fleet throughput: each arm's frontier is read "
                "there (PCHIP, no extrapolation) and sized in whole instances, priced with the "
                "per-GPU figures below.",
                className="muted small",
            ),
            assumption_badges(data, view.tco_cost),
        ]
    table = run_table(data, "tco")
    best = table.frame.filter(table.frame["usd_per_hour"].is_not_null())
    headline = (
        f"Cheapest: {best.item(0, 'arm_name')}, {best.item(0, 'gpus')} GPUs, "
        f"${best.item(0, 'usd_per_hour'):,.2f}/h, {best.item(0, 'power_kw'):,.1f} kW"
        if best.height and best.item(0, "power_kw") is not None
        else "No arm of this view can serve the target with known figures."
    )
    return [
        html.Div(
            [
                html.B(
                    f"{view.tco_tput:g} tok/s at {view.tco_intvty:g} tok/s/user, "
                    f"{CLASS_TITLES[view.tco_cost]}"  # type: ignore[index]
                ),
                " ",
                c.export_links("tco", view.query()),
            ],
            className="small",
        ),
        assumption_badges(data, view.tco_cost),
        html.Div(headline, className="small", id=Id.TCO_HEADLINE),
        c.grid(Id.TCO_GRID, table, TCO_COLUMNS, height=300, status_columns=()),
    ]
