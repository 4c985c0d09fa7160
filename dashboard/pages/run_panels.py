"""The run page's panels: controls, chart cards, the pinned-point detail, the table tabs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl
from dash import dcc, html

from analysis.cost import energy_check
from analysis.tables import column_description, column_unit, headed
from dashboard import components as c
from dashboard.figures import series, style
from dashboard.ids import CONTROL, Id, control
from dashboard.pages import overlays
from ingest.contract.col import Col
from ingest.contract.schema import RunCol
from ingest.normalize.measurements import point_repeats
from views import urls
from views.facets import ARM_NAME, Option
from views.query.choices import (
    ENVELOPE_CHOICES,
    FILTERS,
    LABEL_CHOICES,
    PALETTE_CHOICES,
    TOGGLES,
    X2_CHOICES,
    X_CHOICES,
    y_choices,
)
from views.query.state import RunView
from views.run_data import RunData

GRAPH_CONFIG: dcc.Graph.Config = {
    "displaylogo": False,
    "modeBarButtonsToRemove": ["select2d", "lasso2d", "toImage"],
    "scrollZoom": False,
}


def choices(choices: Sequence[tuple[object, str]]) -> list[dict[str, str]]:
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
    """Legend tokens a user can hide: every (arm, run), each run's envelope, the baseline."""
    multi = len(data.view.runs) > 1
    pairs = (
        data.all_points.select(Col.ARM_ID, Col.RUN_ID)
        .unique()
        .join(data.names, on=Col.ARM_ID)
        .sort(ARM_NAME, Col.RUN_ID)
        .select(Col.ARM_ID, Col.RUN_ID, ARM_NAME)
    )
    out = [
        {"label": f"{label} · {run}" if multi else label, "value": style.token(arm, run)}
        for arm, run, label in pairs.iter_rows()
    ]
    envelopes = ["all"] if data.view.envelope == "all" else list(data.view.runs)
    out += [
        {
            "label": f"group envelope · {r}" if multi else "group envelope",
            "value": f"envelope{style.SEP}{r}",
        }
        for r in envelopes
    ]
    b = data.baseline  # issue 14: the baseline hides as one legend entry
    if b is not None:
        out.append({"label": f"baseline {b.requested}", "value": b.token})
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
                    options=choices(TOGGLES),
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
                    options=choices(LABEL_CHOICES),
                    value=view.labels,
                    inline=True,
                ),
            ],
            className="control",
        ),
        html.Div(
            [
                html.Label("Colours"),
                dcc.RadioItems(
                    id=control("palette"),
                    options=choices(PALETTE_CHOICES),
                    value=view.palette,
                    labelStyle={"display": "block"},
                ),
            ],
            className="control",
        ),
        html.Div(
            [
                html.Label("Group envelope"),
                dcc.RadioItems(
                    id=control("envelope"),
                    options=choices(ENVELOPE_CHOICES),
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
            dropdown("y", "Y: throughput, cost or energy", choices(y_choices()), view.y),
            dropdown("x", "X: interactivity", choices(X_CHOICES), view.x, css="control wide"),
            dropdown("x2", "Second chart X", choices(X2_CHOICES), view.x2),
            html.Div(
                [
                    html.Label("Rank arms at x ="),
                    dcc.Input(
                        id=control("at"),
                        type="number",
                        min=0,
                        # dcc.Input's +/- clamp to max whenever min is set, and an unset max
                        # makes the stepped value NaN (dash 4.4): give it one no x reaches.
                        max=1e9,
                        step="any",
                        value=view.at,
                        debounce=True,
                        placeholder="e.g. 40",
                        style={"width": "110px"},
                    ),
                ],
                className="control narrow",
            ),
            slo_control(
                control("slo"),
                view.slo,
                "points that break a limit are out_of_slo: marked and left out of the frontier, "
                "the ranking and the pruned list",
            ),
            *overlays.controls(view, run_options),  # issue 14: baseline=, hwcost=
            html.Div([c.copy_link()], className="control narrow"),
        ],
        className="axis-row",
    )


def slo_control(control_id: Any, value: str, title: str) -> html.Div:
    """The latency/error limits input (`slo=`) of the run and compare pages."""
    return html.Div(
        title=title,
        children=[
            html.Label("SLO (latencies in s)"),
            dcc.Input(
                id=control_id,
                type="text",
                value=value,
                debounce=True,
                placeholder="p90_ttft<=2,p90_tpot<=0.05",
                style={"width": "220px"},
            ),
        ],
        className="control",
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


# The measured columns a repeat table shows first (when the repeats state them).
_REPEAT_FIRST = (
    Col.TOTAL_TPUT,
    Col.OUTPUT_TPUT,
    Col.TPUT_PER_GPU,
    Col.MEDIAN_TTFT,
    Col.P99_TTFT,
    Col.MEDIAN_TPOT,
    Col.MEDIAN_INTVTY,
    Col.DURATION,
)


def repeats_block(row: dict[str, Any]) -> list[Any]:
    """A point made of several measurements: their count, the spread of their total throughput,
    and each measurement with its source (as `paretolens points --repeats` lists them)."""
    reps = point_repeats(row)
    if not reps:
        return []
    spread = row.get(Col.REPEAT_SPREAD)
    said = f"the mean of {row.get(Col.REPEATS) or len(reps)} measurements at this load"
    if isinstance(spread, float) and not math.isnan(spread):
        said += f"; total throughput spread {spread:.4%} ((max - min) / mean)"
    stated = {k for r in reps for k, v in r.items() if v is not None}
    cols = [str(c) for c in _REPEAT_FIRST if str(c) in stated]
    cols += sorted(k for k in stated - {*cols, "source_path", "point_id"})
    table = html.Table(
        [
            html.Tr(
                [html.Th("#"), html.Th("source")]
                + [html.Th(headed(k, column_unit(k)), title=column_description(k)) for k in cols]
            ),
            *(
                html.Tr(
                    [html.Td(str(i)), html.Td(html.Code(str(r.get("source_path") or "")))]
                    + [html.Td(_value(r.get(k))) for k in cols]
                )
                for i, r in enumerate(reps, 1)
            ),
        ],
        className="kv",
    )
    return [
        html.H4(f"Repeats ({len(reps)})"),
        html.Div([html.Span("repeats: ", className="muted"), said], className="small"),
        html.Div(table, className="kv-scroll", id="pinned-repeats"),
    ]


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
    source: list[Any] = [
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
    metrics = series.series_figure(data.source.series(str(row[Col.RUN_ID]), view.point))
    kv = html.Table(
        [
            html.Tr(
                [
                    html.Td(headed(k, column_unit(k)), title=column_description(k)),
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
        html.Div(
            [html.Span("accuracy: ", className="muted"), str(row.get("accuracy") or "no evals")],
            className="small",
        ),
        html.Div(source, className="small"),
        html.Div(
            [html.Span("energy: ", className="muted"), energy_check(row) or "no GPU telemetry"],
            className="small",
            id="pinned-energy",
        ),
        dcc.Graph(figure=metrics, config=GRAPH_CONFIG)
        if metrics is not None
        else html.Div("no server-metric time series for this point", className="muted small"),
        *repeats_block(row),
        html.H4("Every column"),
        html.Div(kv, className="kv-scroll"),
    ]
