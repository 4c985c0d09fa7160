"""The run page's panels: controls, chart cards, the pinned-point detail, the table tabs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl
from dash import dcc, html

from dashboard import components as c
from dashboard import figures, urls
from dashboard.data import Option, RunData
from dashboard.ids import CONTROL, Id, control
from dashboard.state import (
    AB_CHOICES,
    ENVELOPE_CHOICES,
    FILTERS,
    LABEL_CHOICES,
    TOGGLES,
    X2_CHOICES,
    X_CHOICES,
    Y_CHOICES,
    RunView,
)
from dashboard.tables import ARM_NAME, KEY_POINT_COLUMNS
from ingest.schema import SPECS, Col, RunCol

GRAPH_CONFIG = {
    "displaylogo": False,
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "toImage"],
    "scrollZoom": False,
}


def _choices(choices: Sequence[tuple[object, str]]) -> list[dict[str, str]]:
    return [{"label": label, "value": str(v)} for v, label in choices]


def _facet_options(opts: Sequence[Option], selected: Sequence[str]) -> list[dict[str, str]]:
    out = [{"label": f"{o.label} ({o.count})", "value": o.value} for o in opts]
    have = {o.value for o in opts}
    return out + [{"label": f"{v} (0)", "value": v} for v in selected if v not in have]


def dropdown(
    field: str,
    label: str,
    options: list[dict[str, str]],
    value: Any,
    *,
    multi: bool = False,
    placeholder: str | None = None,
    kind: str = CONTROL,
    css: str = "control",
) -> html.Div:
    """A labelled dropdown bound to one URL-state field."""
    return html.Div(
        [
            html.Label(label),
            dcc.Dropdown(
                id=control(field, kind),
                options=options,
                value=value,
                multi=multi,
                clearable=multi,
                placeholder=placeholder,
                searchable=True,
            ),
        ],
        className=css,
        id=f"ctl-{kind}-{field}",
    )


def hide_options(data: RunData) -> list[dict[str, str]]:
    """Legend tokens a user can hide: every (arm, run) and each run's envelope."""
    multi = len(data.view.runs) > 1
    pairs = (
        data.all_points.select(Col.ARM_ID, Col.RUN_ID)
        .unique()
        .join(data.names, on=Col.ARM_ID)
        .sort(ARM_NAME, Col.RUN_ID)
        .select(Col.ARM_ID, Col.RUN_ID, ARM_NAME)
    )
    out = [
        {"label": f"{label} · {run}" if multi else label, "value": figures.token(arm, run)}
        for arm, run, label in pairs.iter_rows()
    ]
    envelopes = ["all"] if data.view.envelope == "all" else list(data.view.runs)
    out += [
        {
            "label": f"group envelope · {r}" if multi else "group envelope",
            "value": f"envelope{figures.SEP}{r}",
        }
        for r in envelopes
    ]
    return out


def sidebar(view: RunView, data: RunData) -> html.Aside:
    """Filters and display toggles."""
    filters = [
        dropdown(
            name,
            label,
            _facet_options(data.facets.get(name, []), getattr(view, name)),
            list(getattr(view, name)),
            multi=True,
            placeholder="all",
        )
        for name, label, _ in FILTERS
    ]
    display = [
        html.Div(
            [
                html.Label("Display"),
                dcc.Checklist(
                    id=control("toggles"),
                    options=_choices(TOGGLES),
                    value=view.controls()["toggles"],
                    labelStyle={"display": "block"},
                ),
            ],
            className="control",
        ),
        html.Div(
            [
                html.Label("Point labels"),
                dcc.RadioItems(
                    id=control("labels"),
                    options=_choices(LABEL_CHOICES),
                    value=view.labels,
                    inline=True,
                ),
            ],
            className="control",
        ),
        html.Div(
            [
                html.Label("Group envelope"),
                dcc.RadioItems(
                    id=control("envelope"),
                    options=_choices(ENVELOPE_CHOICES),
                    value=view.envelope,
                    inline=True,
                ),
            ],
            className="control",
        ),
        dropdown(
            "hide",
            "Hidden in charts (or click the legend)",
            hide_options(data),
            list(view.hide),
            multi=True,
            placeholder="none",
        ),
        dcc.Input(id=control("point"), type="hidden", value=view.point or ""),
    ]
    return html.Aside([*filters, html.Hr(), *display], className="card sidebar")


def axis_row(view: RunView, run_options: list[dict[str, str]]) -> html.Div:
    """Runs, axes and the target interactivity, above the charts."""
    return html.Div(
        [
            dropdown(
                "runs",
                "Runs (overlay)",
                run_options,
                list(view.runs),
                multi=True,
                css="control wide",
            ),
            dropdown("y", "Y: throughput per GPU", _choices(Y_CHOICES), view.y),
            dropdown("x", "X: interactivity", _choices(X_CHOICES), view.x, css="control wide"),
            dropdown("x2", "Second chart X", _choices(X2_CHOICES), view.x2),
            html.Div(
                [
                    html.Label("Rank arms at x ="),
                    dcc.Input(
                        id=control("at"),
                        type="number",
                        min=0,
                        step="any",
                        value=view.at,
                        debounce=True,
                        placeholder="e.g. 40",
                        style={"width": "110px"},
                    ),
                ],
                className="control narrow",
            ),
            html.Div([c.copy_link()], className="control narrow"),
        ],
        className="axis-row",
    )


def chart_card(graph_id: Id, fig: Any, png: Id, svg: Id) -> html.Div:
    """A chart with PNG and SVG download buttons."""
    return html.Div(
        [
            html.Div(
                [
                    html.Button("PNG", id=png, className="btn", title="download the chart as PNG"),
                    html.Button("SVG", id=svg, className="btn", title="download the chart as SVG"),
                ],
                className="chart-tools",
            ),
            dcc.Graph(
                id=graph_id,
                figure=fig,
                config=GRAPH_CONFIG,
                responsive=True,
                style={"height": "470px"},
            ),
        ],
        className="card chart-card",
    )


def _value(v: object) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "–"
    if isinstance(v, float):
        return f"{v:.6g}"
    if isinstance(v, list):
        return ", ".join(_value(x) for x in v) or "–"
    return str(v)


def detail_panel(data: RunData, view: RunView) -> list[Any]:
    """The pinned point: verdict and why, provenance, every column, server-metric time series."""
    unpin = html.Button("unpin", id=Id.UNPIN, className="btn", style={"display": "none"})
    if not view.point:
        return [
            html.Div(
                "Click a point in a chart (or a row of the points table) to pin its details here.",
                className="hint",
            ),
            unpin,
        ]
    row = data.point(view.point)
    if row is None:
        return [
            html.Div(
                f"Point {view.point} is not in this view (filtered out, or from another run).",
                className="hint",
            ),
            unpin,
        ]
    run = data.catalog.filter(pl.col(RunCol.RUN_ID) == row[Col.RUN_ID])
    link = urls.safe_href(run.item(0, RunCol.HTML_URL)) if run.height else None
    verdict = str(row.get("verdict") or "")
    head = html.Div(
        [
            html.B(str(row[Col.ARM_LABEL])),
            html.Span(f"run {row[Col.RUN_ID]} · conc {row[Col.CONC]}", className="muted"),
            html.Span(verdict, className=f"badge {verdict}"),
            html.Button("unpin", id=Id.UNPIN, className="btn"),
        ],
        className="detail-head",
    )
    source = [
        html.Span("source: ", className="muted"),
        html.Code(f"{row.get(Col.ARTIFACT) or ''} / {row.get(Col.SOURCE_PATH) or ''}"),
        html.Span(f" ({row.get(Col.SCHEMA_VARIANT) or 'unknown format'})", className="muted"),
    ]
    if link:
        source += [
            " ",
            html.A(
                "artifacts on GitHub ↗",
                href=f"{link}#artifacts",
                target="_blank",
                rel="noopener noreferrer",
            ),
        ]
    series = figures.series_figure(data.source.series(str(row[Col.RUN_ID]), view.point))
    kv = html.Table(
        [
            html.Tr(
                [
                    html.Td(k if not _unit(k) else f"{k} ({_unit(k)})", title=_describe(k)),
                    html.Td(_value(v)),
                ]
            )
            for k, v in row.items()
        ],
        className="kv",
    )
    return [
        head,
        html.Div(
            [html.Span("why: ", className="muted"), str(row.get("reason") or "")], className="small"
        ),
        html.Div(source, className="small"),
        dcc.Graph(figure=series, config=GRAPH_CONFIG)
        if series is not None
        else html.Div("no server-metric time series for this point", className="muted small"),
        html.H4("Every column"),
        html.Div(kv, className="kv-scroll"),
    ]


def _unit(col: str) -> str:
    try:
        return SPECS[Col(col)].unit
    except ValueError:
        return ""


def _describe(col: str) -> str:
    try:
        return SPECS[Col(col)].description
    except ValueError:
        return ""


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
    t = data.table("points")
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
    t = data.table("al")
    return [
        html.Div(c.export_links("al", view.query()), className="small"),
        _grid_or_empty(
            Id.AL_GRID, t, AL_COLUMNS, "no speculative-decoding points in this view", height=300
        ),
    ]


def _delta_columns(frame: pl.DataFrame) -> list[str]:
    """Concurrency and the two arms first, then per metric its delta, baseline and treatment."""
    lead = [
        Col.CONC,
        "baseline_arm_label",
        "treatment_arm_label",
        "baseline_value",
        "treatment_value",
    ]
    stems = [c.removesuffix("_delta_pct") for c in frame.columns if c.endswith("_delta_pct")]
    metrics = [f"{m}{s}" for m in stems for s in ("_delta_pct", "_baseline", "_treatment")]
    tail = [
        "al_measured_baseline", "al_measured_treatment", "baseline_verdict", "treatment_verdict",
        "confounds", "baseline_run_id", "treatment_run_id",
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
        _choices(AB_CHOICES),
        view.ab,
        css="control",
    )


def deltas_body(data: RunData, view: RunView) -> list[Any]:
    """The A/B tab: equal-concurrency deltas with confounds, and the frontier delta."""
    q = view.query()
    t, f = data.table("deltas"), data.table("deltas_frontier")
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
        html.H4("Run the full sweep on exactly these points"),
        html.Pre(data.pruned_cli, id=Id.PRUNED_CLI),
        html.Details(
            [
                html.Summary("InferenceX search-space YAML"),
                html.Pre(data.pruned_yaml, id=Id.PRUNED_YAML),
            ],
            open=False,
        ),
        c.grid(Id.PRUNED_GRID, data.table("pruned"), PRUNED_COLUMNS, height=300),
    ]


def rejects_body(data: RunData, view: RunView) -> list[Any]:
    """The rejected-files tab."""
    t = data.table("rejects")
    return [
        html.Div(c.export_links("rejects", view.query()), className="small"),
        _grid_or_empty(
            Id.REJECTS_GRID,
            t,
            ("run_id", "path", "field", "reason", "reader", "sha256", "at"),
            "nothing was rejected: every file was read",
            height=260,
            status_columns=(),
        ),
    ]


def run_options(catalog: pl.DataFrame, selected: Sequence[str]) -> list[dict[str, str]]:
    """Every run of the store for the overlay picker."""
    out = [
        {
            "label": f"{r[RunCol.RUN_ID]} — {r[RunCol.TITLE] or r[RunCol.BRANCH] or ''}"[:90],
            "value": str(r[RunCol.RUN_ID]),
        }
        for r in catalog.iter_rows(named=True)
    ]
    have = {o["value"] for o in out}
    return out + [{"label": f"{r} (not in store)", "value": r} for r in selected if r not in have]
