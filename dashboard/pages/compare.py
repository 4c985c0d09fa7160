"""The compare page, `/compare?base=<id>&candidate=<id>`: per-arm frontier overlay, uplift per
arm, per-concurrency deltas, unmatched arms and the markdown block for a PR."""

from __future__ import annotations

import copy
from typing import Any

from dash import ALL, Dash, Input, Output, State, dcc, html

from analysis.comparison.baseline import MAIN
from dashboard import components as c
from dashboard import forged
from dashboard.context import AppContext
from dashboard.figures import compare, style
from dashboard.ids import COMPARE_CONTROL, Id, control
from dashboard.pages.run_panels import GRAPH_CONFIG, choices, dropdown, slo_control
from dashboard.run_picker import register_search, run_options
from views import urls
from views.compare_data import CompareData
from views.query.choices import PALETTE_CHOICES, X_CHOICES, y_choices
from views.query.state import CompareView
from views.tables import compare_table
from views.unknown_runs import not_found_text, requested_runs


def compare_figure(data: CompareData, view: CompareView) -> Any:
    """The overlay chart of a comparison as `view` shows it: the data is kept for every view
    that differs only in its log axes (its own view is the first one's), so the axes are the
    view's."""
    v = view
    fig = data.memo(f"figure|{v.logx}|{v.logy}", lambda: compare.compare_figure(
        data.plane, data.analysis.arm_frontiers, base=data.base_id, candidate=v.candidate or "",
        x=v.x, y=v.y, arm_order=data.arm_order, logx=v.logx, logy=v.logy,
    ))  # fmt: skip
    # The figure is built once per comparison and axes; a palette repaints a copy of it.
    return fig if v.palette == "okabe" else style.repaint(copy.deepcopy(fig), v.palette)


ENVELOPE_TABLE = "compare-envelope"


def _pct(v: object) -> str:
    # as the PR markdown writes it (analysis.comparison.compare), so the page and the block read the same
    return f"{v:+.1f}%" if isinstance(v, int | float) else "–"


def envelope_table(data: CompareData) -> Any:
    """Each comparison group's envelope uplift: the number a reviewer quotes."""
    groups = data.comparison.groups
    if not groups.height:
        return html.Div("no comparison group is in both runs", className="empty")
    keys = [k for k in groups.columns[: groups.columns.index("x_lo")]]
    head = html.Tr(
        [
            html.Th("group"),
            html.Th(f"{data.view.x} range"),
            html.Th("uplift"),
            html.Th("mean Δ at measured x"),
        ]
    )
    rows = [
        html.Tr(
            [
                html.Td(", ".join(f"{k}={r[k]}" for k in keys if r[k] is not None)),
                html.Td(f"{r['x_lo']:.2f}–{r['x_hi']:.2f}" if r["x_lo"] is not None else "–"),
                html.Td(html.B(_pct(r["uplift_pct"])), className="uplift"),
                html.Td(_pct(r["mean_delta_pct"])),
            ]
        )
        for r in groups.iter_rows(named=True)
    ]
    return html.Table([head, *rows], id=ENVELOPE_TABLE, className="at-table")


def body(app: AppContext, view: CompareView) -> list[Any]:
    """Everything below the controls."""
    if not (view.base and view.candidate):
        return [html.Div("Pick a base run and a candidate run.", className="hint")]
    # base=main is the latest main-branch results, not a run
    runs = [r for r in (view.base, view.candidate) if r != MAIN]
    unknown = not_found_text(runs, set(app.source.store.run_ids()))
    if unknown:
        return [c.notes([f"Not found: {unknown}"])]
    data = app.source.compare_data(view)
    q = view.query()
    uplift, per, only = (
        compare_table(data, name) for name in ("uplift", "compare_points", "unmatched")
    )
    return [
        html.Div(c.notes(data.notes), id=Id.COMPARE_NOTES),
        html.Div(
            [
                dcc.Graph(
                    id=Id.COMPARE_CHART,
                    figure=compare_figure(data, view),
                    config=GRAPH_CONFIG,
                    style={"height": "470px"},
                )
            ],
            className="card chart-card",
        ),
        c.section(
            "Envelope uplift per comparison group (the best of all arms, at matched x)",
            envelope_table(data),
        ),
        c.section(
            "Frontier uplift per arm (candidate vs base at matched x)",
            c.grid(Id.UPLIFT_GRID, uplift, status_columns=())
            if uplift.frame.height
            else html.Div("no arm is in both runs", className="empty"),
            extra=c.export_links("uplift", q),
        ),
        c.section(
            "Per-concurrency deltas",
            c.grid(
                Id.COMPARE_POINTS_GRID,
                per,
                status_columns=("base_verdict", "candidate_verdict"),
                height=300,
            )
            if per.frame.height
            else html.Div("no matched points", className="empty"),
            extra=c.export_links("compare_points", q),
        ),
        c.section(
            "Arms in only one run",
            c.grid(Id.UNMATCHED_GRID, only, status_columns=(), height=200)
            if only.frame.height
            else html.Div("every arm is in both runs", className="empty"),
            extra=c.export_links("unmatched", q),
        ),
        c.section(
            "Markdown for the PR",
            html.Pre(data.markdown, id=Id.COMPARE_MARKDOWN_TEXT, tabIndex="0"),
            html.Details(
                [
                    html.Summary("preview"),
                    dcc.Markdown(data.markdown, dangerously_allow_html=False, className="md"),
                ]
            ),
            extra=dcc.Clipboard(
                target_id=Id.COMPARE_MARKDOWN_TEXT, title="copy the markdown", className="clip"
            ),
        ),
    ]


def layout(app: AppContext, query: str) -> Any:
    """The compare page."""
    view, notes = CompareView.parse(query)
    invalid = [
        r for r in requested_runs(urls.COMPARE_PATH, query) if r not in (view.base, view.candidate)
    ]
    if invalid:
        notes = [*notes, f"Not found: {not_found_text(invalid, ())}"]
    picked = [r for r in (view.base, view.candidate) if r and r != MAIN]
    runs = run_options(app.source.catalog(), picked)
    bases = [MAIN_OPTION, *runs]
    controls = html.Div(
        [
            dropdown(
                "base", "Base run", bases, view.base, kind=COMPARE_CONTROL, css="control wide"
            ),
            dropdown(
                "candidate",
                "Candidate run",
                runs,
                view.candidate,
                kind=COMPARE_CONTROL,
                css="control wide",
            ),
            dropdown("y", "Y", choices(y_choices()), view.y, kind=COMPARE_CONTROL),
            dropdown(
                "x", "X", choices(X_CHOICES), view.x, kind=COMPARE_CONTROL, css="control wide"
            ),
            html.Div(
                [
                    html.Label("Axes"),
                    dcc.Checklist(
                        id=control("toggles", COMPARE_CONTROL),
                        options=[
                            {"label": "log x", "value": "logx"},
                            {"label": "log y", "value": "logy"},
                        ],
                        value=view.controls()["toggles"],
                        inline=True,
                    ),
                ],
                className="control",
            ),
            dropdown(
                "palette",
                "Colours",
                choices(PALETTE_CHOICES),
                view.palette,
                kind=COMPARE_CONTROL,
                css="control wide",
            ),
            slo_control(
                control("slo", COMPARE_CONTROL),
                view.slo,
                "points that break a limit are out_of_slo: left out of both frontiers and of the "
                "uplift",
            ),
            html.Div([c.copy_link()], className="control narrow"),
        ],
        className="axis-row",
    )
    return html.Div(
        [
            c.notes(notes),
            html.Div([html.H2("Compare runs"), controls], className="card"),
            html.Div(body(app, view), id=Id.COMPARE_BODY),
        ]
    )


MAIN_OPTION = {"label": "latest main-branch result per configuration", "value": MAIN}


def register(dash_app: Dash, app: AppContext) -> None:
    """Controls write the URL and re-draw the comparison; the run pickers search the store."""
    register_search(dash_app, app, control("base", COMPARE_CONTROL), [MAIN_OPTION])
    register_search(dash_app, app, control("candidate", COMPARE_CONTROL))

    dash_app.callback(
        Output(Id.LOCATION, "search", allow_duplicate=True), Output(Id.COMPARE_BODY, "children"),
        Input(control(ALL, COMPARE_CONTROL), "value"), State(control(ALL, COMPARE_CONTROL), "id"), prevent_initial_call=True,
    )(CompareCallbacks(app).on_compare)  # fmt: skip


class CompareCallbacks:
    """The compare page's callback as a plain method."""

    def __init__(self, app: AppContext) -> None:
        self.app = app

    def on_compare(self, values: list[Any], ids: list[dict[str, Any]]) -> tuple[str, list[Any]]:
        """Controls write the URL and redraw the comparison."""
        view, _ = CompareView.from_controls(forged.control_values(values, ids))
        return "?" + view.query(), body(self.app, view)
