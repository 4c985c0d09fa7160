"""The run page's table tabs: points, AL checks, A/B deltas, the pruned list, rejects; and the
ranking of arms at a target interactivity."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl
from dash import html

from dashboard import components as c
from dashboard import urls
from dashboard.data import RunData
from dashboard.facets import ARM_NAME
from dashboard.ids import Id
from dashboard.pages.run_panels import choices, dropdown
from dashboard.state import AB_CHOICES, RunView
from dashboard.tables import KEY_POINT_COLUMNS, run_table
from ingest.schema import SPECS, Col


def at_readout(data: RunData, view: RunView) -> Any:
    """Arms ranked by their frontier's throughput at the target x."""
    if view.at is None:
        return html.Div(
            "Enter a value in “Rank arms at x =” to rank every arm by its frontier throughput there (PCHIP along the frontier, no extrapolation).",
            className="muted small",
        )
    t = data.at_target
    unit_y = SPECS[Col(view.y)].unit
    body = []
    for i, r in enumerate(t.iter_rows(named=True), 1):
        y = r["y"]
        cell = (
            f"{y:,.1f} {unit_y}"
            if y is not None
            else f"outside its measured range ({r['x_lo']:.3g}–{r['x_hi']:.3g})"
        )
        body.append(
            html.Tr(
                [
                    html.Td(str(i) if y is not None else "–"),
                    html.Td(str(r[ARM_NAME] or r[Col.ARM_ID])),
                    html.Td(str(r[Col.RUN_ID])),
                    html.Td(cell),
                ]
            )
        )
    head = html.Tr(
        [
            html.Th("rank"),
            html.Th("arm"),
            html.Th("run"),
            html.Th(f"{view.y} at {view.x} = {view.at:g}"),
        ]
    )
    table = (
        html.Table([head, *body], className="at-table")
        if body
        else html.Div("no arm frontier in this view", className="empty")
    )
    return html.Div([table, c.export_links("at", view.query())])


def _grid_or_empty(
    grid_id: Any, table: Any, columns: Sequence[str] | None, empty: str, **kw: Any
) -> Any:
    return (
        c.grid(grid_id, table, columns, **kw)
        if table.frame.height
        else html.Div(empty, className="empty")
    )


def points_body(data: RunData, view: RunView) -> list[Any]:
    """The points tab: key columns with verdicts; click a row to pin it."""
    q = view.query()
    t = run_table(data, "points")
    return [
        html.Div(
            [c.export_links("points", q), " · ", html.A("every column →", href=urls.points(view))],
            className="small",
        ),
        c.grid(Id.POINTS_GRID, t, KEY_POINT_COLUMNS, height=360, row_id=Col.POINT_ID),
    ]


AL_COLUMNS = (
    Col.RUN_ID, Col.ARM_LABEL, Col.CONC, "verdict", Col.AL_MEASURED, "al_expected",
    "al_expected_source", "reason", "al_pinned", "al_golden", "golden_table", "draft_variant",
    "thinking_mode_used", Col.AL_SOURCE,
)  # fmt: skip


def al_body(data: RunData, view: RunView) -> list[Any]:
    """The AL-checks tab."""
    t = run_table(data, "al")
    return [
        html.Div(c.export_links("al", view.query()), className="small"),
        _grid_or_empty(
            Id.AL_GRID, t, AL_COLUMNS, "no speculative-decoding points in this view", height=300
        ),
    ]


def _delta_columns(frame: pl.DataFrame) -> list[str]:
    """Concurrency and the two arms first, then per metric its delta, baseline and treatment."""
    lead = [
        "flag",
        "confounds",
        Col.CONC,
        Col.REQUEST_RATE,
        Col.ISL,
        Col.OSL,
        "baseline_arm_label",
        "treatment_arm_label",
        "baseline_value",
        "treatment_value",
    ]
    stems = [c.removesuffix("_delta_pct") for c in frame.columns if c.endswith("_delta_pct")]
    metrics = [f"{m}{s}" for m in stems for s in ("_delta_pct", "_baseline", "_treatment")]
    tail = [
        "al_measured_baseline", "al_measured_treatment", "baseline_verdict", "treatment_verdict",
        "baseline_run_id", "treatment_run_id",
    ]  # fmt: skip
    return [c for c in [*lead, *metrics, *tail] if c in frame.columns]


FRONTIER_DELTA_COLUMNS = (
    "baseline_arm_label", "treatment_arm_label", "mean_delta_pct", "area_delta_pct", "x_lo", "x_hi",
    "note", "baseline_value", "treatment_value", "baseline_run_id", "treatment_run_id",
)  # fmt: skip


def ab_control(view: RunView) -> html.Div:
    """The A/B axis picker (in the initial layout, so its value is always part of the view)."""
    return dropdown(
        "ab",
        "A/B axis (arms that differ only in it are paired)",
        choices(AB_CHOICES),
        view.ab,
        css="control",
    )


def deltas_body(data: RunData, view: RunView) -> list[Any]:
    """The A/B tab: equal-concurrency deltas with confounds, and the frontier delta."""
    q = view.query()
    t, f = run_table(data, "deltas"), run_table(data, "deltas_frontier")
    return [
        html.Div(
            [
                html.Span(c.export_links("deltas", q, label="Per conc"), className="small"),
                html.Span(
                    c.export_links("deltas_frontier", q, label="Frontier"), className="small"
                ),
            ],
            className="inline-form",
        ),
        html.H4(f"At equal concurrency, {view.ab}: treatment vs baseline"),
        _grid_or_empty(
            Id.DELTAS_GRID,
            t,
            _delta_columns(t.frame),
            f"no two arms in this view differ only in {view.ab}",
            height=300,
            status_columns=("baseline_verdict", "treatment_verdict"),
        ),
        html.H4("Frontier vs frontier at matched x (PCHIP, common range only)"),
        _grid_or_empty(
            Id.DELTAS_FRONTIER_GRID,
            f,
            FRONTIER_DELTA_COLUMNS,
            "no pairs",
            height=170,
            status_columns=(),
        ),
    ]


PRUNED_COLUMNS = (
    "kept",
    "keep_reason",
    Col.RUN_ID,
    Col.ARM_LABEL,
    Col.CONC,
    "verdict",
    "reason",
    "x",
    "y",
)


def pruned_body(data: RunData, view: RunView) -> list[Any]:
    """The pruned-list tab: the CLI line, the search-space YAML, kept and dropped points."""
    q = view.query()
    p = data.pruned
    summary = f"{p.kept.height} of {p.kept.height + p.dropped.height} points kept in {len(p.arms)} arm{'s' if len(p.arms) != 1 else ''} (the group-frontier points of {view.x} vs {view.y})"
    return [
        html.Div(
            [
                html.B(summary),
                " ",
                c.export_links("pruned", q, urls.PRUNED_FORMATS),
            ],
            className="small",
        ),
        html.H4(
            "Run the full sweep on exactly these points"
            if not data.pruned_cli.startswith("#")
            else "No single test-config line runs exactly these points"
        ),
        html.Pre(data.pruned_cli, id=Id.PRUNED_CLI),
        html.Details(
            [
                html.Summary("InferenceX search-space YAML"),
                html.Pre(data.pruned_yaml, id=Id.PRUNED_YAML),
            ],
            open=False,
        ),
        c.grid(Id.PRUNED_GRID, run_table(data, "pruned"), PRUNED_COLUMNS, height=300),
    ]


def rejects_body(data: RunData, view: RunView) -> list[Any]:
    """The rejected-files tab."""
    t = run_table(data, "rejects")
    return [
        html.Div(c.export_links("rejects", view.query()), className="small"),
        _grid_or_empty(
            Id.REJECTS_GRID,
            t,
            ("run_id", "outcome", "path", "field", "reason", "reader", "sha256", "at"),
            "nothing was rejected or ignored: every file gave points or joined one",
            height=260,
            status_columns=(),
        ),
    ]
