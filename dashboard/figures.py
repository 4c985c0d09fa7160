"""Figure builders: they draw what `analysis/` decided and never decide anything themselves.

Colours are the Okabe-Ito palette (colour-blind safe), one per arm; marker shapes tell runs apart;
dominated points are faded, post-cliff points hollow, invalid points grey crosses. Every string from
a result file is escaped before plotly sees it (plotly renders a few HTML tags in labels and hovers).

Figures are plain dicts (plotly's object model validates every property, which costs seconds at
thousands of traces). Past `WEBGL_THRESHOLD` points the scatter traces are WebGL; past
`MAX_SERIES` (arm, run) series the chart is drawn "dense": one trace per verdict with per-point
arm colours, because a legend of hundreds of arms helps nobody (filter by arm to get one back).
"""

from __future__ import annotations

import html
import json
import math
from collections.abc import Sequence
from typing import Any

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from analysis import Frontier
from dashboard.state import X2_CHOICES, X_CHOICES, Y_CHOICES, choice_label
from dashboard.tables import ARM_NAME
from ingest.schema import SPECS, Col, SeriesCol

Figure = dict[str, Any]
OKABE_ITO = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
# Past eight arms: Paul Tol's "muted" scheme, also colour-blind safe, then the cycle repeats.
TOL_MUTED = (
    "#332288",
    "#88CCEE",
    "#44AA99",
    "#117733",
    "#999933",
    "#DDCC77",
    "#CC6677",
    "#882255",
    "#AA4499",
)
PALETTE = OKABE_ITO + TOL_MUTED
RUN_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "pentagon", "hexagon", "star", "cross")
RUN_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
ENVELOPE_COLOR = "#7f7f7f"
INVALID_COLOR = "#9a9a9a"
WEBGL_THRESHOLD = 1000
LABEL_LIMIT = 400
MAX_SERIES = 40
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
SEP = "~"  # legend-group token separator: arm~run (never in a run id)
VERDICTS = ("frontier", "dominated", "post_cliff", "invalid")
VERDICT_OPACITY = {"frontier": 1.0, "dominated": 0.35, "post_cliff": 0.9, "invalid": 0.6}


def inert(value: object) -> str:
    """A string plotly will show as text, never as markup."""
    return html.escape("" if value is None else str(value), quote=False)


def _inert(expr: pl.Expr) -> pl.Expr:
    return (
        expr.cast(pl.String)
        .fill_null("")
        .str.replace_all("&", "&amp;", literal=True)
        .str.replace_all("<", "&lt;", literal=True)
        .str.replace_all(">", "&gt;", literal=True)
    )


def arm_color(index: int) -> str:
    """Colour of the arm with this index."""
    return PALETTE[index % len(PALETTE)]


def axis_title(col: str) -> str:
    """'Interactivity, median (tok/s/user)': menu label plus unit."""
    label = choice_label((*X_CHOICES, *X2_CHOICES, *Y_CHOICES), col)
    unit = SPECS[Col(col)].unit if col in SPECS else ""
    return f"{label} ({unit})" if unit else label


def token(arm_id: object, run_id: object) -> str:
    """Legend-group token of an arm in a run (what `hide=` lists)."""
    return f"{arm_id}{SEP}{run_id}"


def base_layout(
    title: str, x: str, y: str, logx: bool, logy: bool, revision: str
) -> dict[str, Any]:
    """The shared chart layout: light theme, units on both axes, zoom kept across updates."""
    axis = {"gridcolor": "#e3e3e3", "zeroline": False, "linecolor": "#888", "ticks": "outside"}
    return {
        "title": {"text": title, "x": 0.01, "font": {"size": 15}},
        "font": {"family": FONT, "size": 12, "color": "#222"},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "margin": {"l": 64, "r": 12, "t": 44, "b": 52},
        "height": 470,
        "hovermode": "closest",
        "hoverlabel": {"font": {"family": FONT, "size": 12}, "align": "left"},
        "legend": {
            "title": {"text": "Arms (click to hide)"},
            "font": {"size": 11},
            "groupclick": "togglegroup",
            "itemsizing": "constant",
        },
        "xaxis": {**axis, "title": {"text": axis_title(x)}, "type": "log" if logx else "linear"},
        "yaxis": {
            **axis,
            "title": {"text": axis_title(y)},
            "type": "log" if logy else "linear",
            "rangemode": "normal" if logy else "tozero",
        },
        "uirevision": revision,
    }


def hovertemplate(x: str, y: str) -> str:
    """The hover of a point: arm, run, conc, both axes, verdict and why, requests, AL, config."""
    ux, uy = SPECS[Col(x)].unit, SPECS[Col(y)].unit
    return (
        "<b>%{customdata[2]}</b><br>run %{customdata[1]} · conc %{customdata[3]}<br>"
        f"{x}: %{{x:.4g}} {ux}<br>{y}: %{{y:.5g}} {uy}<br>"
        "verdict: <b>%{customdata[4]}</b> — %{customdata[5]}<br>"
        "requests ok/total: %{customdata[6]} · error rate %{customdata[7]}<br>"
        "AL: %{customdata[8]}<br>%{customdata[9]}<extra></extra>"
    )


def _num(col: str, digits: int) -> pl.Expr:
    v = pl.col(col).cast(pl.Float64)
    return (
        pl.when(v.is_null() | v.is_nan())
        .then(pl.lit("–"))
        .otherwise(v.round_sig_figs(digits).cast(pl.String))
    )


def _name(rows: pl.DataFrame) -> str:
    """The column naming arms: the view's disambiguated names when present, else the label."""
    return ARM_NAME if ARM_NAME in rows.columns else Col.ARM_LABEL


def customdata(rows: pl.DataFrame) -> list[tuple[str, ...]]:
    """Hover fields of each row, escaped (see `hovertemplate` for their order)."""
    al = pl.col(Col.AL_MEASURED).cast(pl.Float64)
    al_text = (
        pl.when(al.is_null())
        .then(pl.lit("not measured"))
        .otherwise(
            pl.format(
                "{} tokens/step ({})",
                al.round_sig_figs(3).cast(pl.String),
                _inert(pl.col(Col.AL_SOURCE)),
            )
        )
    )
    synthetic = pl.col(Col.SYNTHETIC_AL).cast(pl.Float64)
    al_text = (
        pl.when(synthetic.is_not_null())
        .then(pl.format("{} · synthetic {}", al_text, synthetic.round_sig_figs(3).cast(pl.String)))
        .otherwise(al_text)
    )
    gpus = pl.format("{} GPUs", pl.col(Col.NUM_GPUS).cast(pl.String).fill_null("?"))
    config = pl.concat_str(
        [_inert(pl.col(c)) for c in (Col.HW, Col.FRAMEWORK, Col.PRECISION)]
        + [gpus, _inert(pl.col(Col.IMAGE))],
        separator=" · ",
    )
    fields = [
        _inert(pl.col(Col.POINT_ID)), _inert(pl.col(Col.RUN_ID)), _inert(pl.col(_name(rows))),
        pl.col(Col.CONC).cast(pl.String).fill_null(""), _inert(pl.col("verdict")), _inert(pl.col("reason")),
        pl.format("{}/{}", _num(Col.NUM_REQUESTS_SUCCESSFUL, 6), _num(Col.NUM_REQUESTS_TOTAL, 6)),
        _num(Col.ERROR_RATE, 3), al_text.fill_null("not measured"), config.str.replace_all(" ·  · ", " · ", literal=True),
    ]  # fmt: skip
    out = rows.select(e.alias(f"c{i}") for i, e in enumerate(fields))
    return out.rows()


def _symbols(rows: pl.DataFrame, run_index: dict[str, int]) -> list[str]:
    base = rows.get_column(Col.RUN_ID).replace_strict(
        {r: RUN_SYMBOLS[i % len(RUN_SYMBOLS)] for r, i in run_index.items()},
        default=RUN_SYMBOLS[0],
        return_dtype=pl.String,
    )
    verdict = rows.get_column("verdict")
    return (
        pl.DataFrame({"b": base, "v": verdict})
        .select(
            pl.when(pl.col("v") == "invalid").then(pl.lit("x-thin-open"))
            .when(pl.col("v") == "post_cliff").then(pl.col("b") + "-open")
            .otherwise(pl.col("b"))
        )
        .to_series()
        .to_list()
    )  # fmt: skip


def _labels(rows: pl.DataFrame, mode: str) -> list[str]:
    col = Col.CONC if mode == "conc" else Col.NUM_GPUS
    return rows.get_column(col).cast(pl.String).fill_null("").to_list()


def _points(
    rows: pl.DataFrame,
    *,
    kind: str,
    name: str,
    color: Any,
    run_index: dict[str, int],
    labels: str | None,
    template: str,
    tok: str = "",
    hidden: bool = False,
) -> dict[str, Any]:
    verdicts = rows.get_column("verdict").to_list()
    trace: dict[str, Any] = {
        "type": kind, "x": rows.get_column("x").to_list(), "y": rows.get_column("y").to_list(),
        "mode": "markers+text" if labels else "markers", "name": name,
        "marker": {"color": color, "symbol": _symbols(rows, run_index), "size": 9,
                   "opacity": [VERDICT_OPACITY.get(v, 1.0) for v in verdicts],
                   "line": {"width": 1.5, "color": color}},
        "customdata": customdata(rows), "hovertemplate": template, "legendgroup": tok, "meta": tok,
        "visible": "legendonly" if hidden else True,
    }  # fmt: skip
    if labels:
        trace.update(
            text=_labels(rows, labels),
            textposition="top center",
            textfont={"size": 10, "color": "#333"},
        )
    return trace


def _line(
    xs: Sequence[float | None],
    ys: Sequence[float | None],
    *,
    name: str,
    color: str,
    dash: str = "solid",
    width: float = 2,
    tok: str = "",
    hidden: bool = False,
    **kw: Any,
) -> dict[str, Any]:
    return {
        "type": "scatter", "x": list(xs), "y": list(ys), "mode": "lines", "name": name, "showlegend": False,
        "hoverinfo": "skip", "line": {"color": color, "width": width, "dash": dash}, "legendgroup": tok,
        "meta": tok, "visible": "legendonly" if hidden else True, **kw,
    }  # fmt: skip


def _drawable(plane: pl.DataFrame, frontier_only: bool) -> pl.DataFrame:
    x, y = pl.col("x"), pl.col("y")
    rows = plane.filter(x.is_not_null() & y.is_not_null() & (x > 0) & (y > 0))
    if frontier_only:
        rows = rows.filter((pl.col("verdict") == "frontier") | pl.col("on_arm_frontier"))
    return rows


def frontier_figure(
    plane: pl.DataFrame, arm_frontiers: Sequence[Frontier], group_frontiers: Sequence[Frontier], *,
    x: str, y: str, runs: Sequence[str], arm_order: dict[str, int], hidden: Sequence[str] = (),
    frontier_only: bool = False, labels: str = "conc", logx: bool = False, logy: bool = False,
    pinned: str | None = None, at: float | None = None, title: str = "", legend: bool = True,
) -> Figure:  # fmt: skip
    """Throughput against an x metric: points per (arm, run), arm frontiers, group envelopes.

    Args:
        plane: analysis table rows to draw (`x`, `y`, `verdict`, `reason`, identity and hover
            columns), already filtered to the view.
        arm_frontiers, group_frontiers: polylines from the same analysis.
        hidden: legend tokens (`token(arm, run)`, `envelope~run`) drawn as legend-only.
    """
    run_index = {r: i for i, r in enumerate(runs)}
    multi, hide = len(runs) > 1, set(hidden)
    rows = _drawable(plane, frontier_only)
    kind = "scattergl" if rows.height > WEBGL_THRESHOLD else "scatter"
    text = labels if labels != "none" and rows.height <= LABEL_LIMIT else None
    template = hovertemplate(x, y)
    traces: list[dict[str, Any]] = []
    for fr in group_frontiers:
        run = dict(fr.key).get(Col.RUN_ID, "all")
        tok = f"envelope{SEP}{run}"
        name = inert(f"group envelope · run {run}" if multi else "group envelope")
        traces.append(
            _line(
                fr.xs,
                fr.ys,
                name=name,
                color=ENVELOPE_COLOR,
                width=7,
                tok=tok,
                hidden=tok in hide,
                opacity=0.28,
                showlegend=True,
                legendrank=2000,
            )
        )
    series = rows.partition_by(Col.ARM_ID, Col.RUN_ID, as_dict=True, maintain_order=True)
    if len(series) > MAX_SERIES:
        traces += _dense(
            rows,
            arm_frontiers,
            kind=kind,
            run_index=run_index,
            arm_order=arm_order,
            template=template,
        )
    else:
        lines = {
            (dict(f.key).get(Col.ARM_ID), dict(f.key).get(Col.RUN_ID)): f for f in arm_frontiers
        }
        name_col = _name(rows)
        order = sorted(series, key=lambda k: (str(series[k].item(0, name_col)), str(k[1])))
        for arm_id, run_id in order:
            part = series[(arm_id, run_id)].sort("x")
            tok, color = token(arm_id, run_id), arm_color(arm_order.get(str(arm_id), 0))
            label = str(part.item(0, name_col))
            name = inert(f"{label} · run {run_id}" if multi else label)
            line = lines.get((arm_id, run_id))
            if line is not None:
                dash = RUN_DASHES[run_index.get(str(run_id), 0) % len(RUN_DASHES)]
                traces.append(
                    _line(
                        line.xs,
                        line.ys,
                        name=name,
                        color=color,
                        dash=dash,
                        tok=tok,
                        hidden=tok in hide,
                    )
                )
            traces.append(
                _points(
                    part,
                    kind=kind,
                    name=name,
                    color=[
                        INVALID_COLOR if v == "invalid" else color
                        for v in part.get_column("verdict")
                    ],
                    run_index=run_index,
                    labels=text,
                    template=template,
                    tok=tok,
                    hidden=tok in hide,
                )
            )
    if pinned:
        pin = rows.filter(pl.col(Col.POINT_ID) == pinned)
        if pin.height:
            traces.append({"type": "scatter", "x": pin.get_column("x").to_list(), "y": pin.get_column("y").to_list(), "mode": "markers", "name": "pinned point",
                           "marker": {"symbol": "circle-open", "size": 22, "color": "#000", "line": {"width": 2.5}}, "hoverinfo": "skip", "showlegend": False, "meta": "pinned"})  # fmt: skip
    layout = base_layout(
        title, x, y, logx, logy, revision=f"{','.join(runs)}|{x}|{y}|{logx}|{logy}"
    )
    layout["showlegend"] = legend
    if len(series) > MAX_SERIES:
        layout["legend"]["title"]["text"] = (
            f"{len(series)} arm series: filter by arm for a per-arm legend"
        )
    notes = []
    if at is not None and x in {str(c) for c, _ in X_CHOICES}:
        layout["shapes"] = [
            {
                "type": "line",
                "x0": at,
                "x1": at,
                "yref": "paper",
                "y0": 0,
                "y1": 1,
                "line": {"color": "#444", "dash": "dot", "width": 1.5},
            }
        ]
        notes.append(
            {
                "x": at,
                "yref": "paper",
                "y": 1.0,
                "text": f"{at:g}",
                "showarrow": False,
                "yanchor": "bottom",
                "font": {"size": 11},
            }
        )
    if not rows.height:
        notes.append(
            {
                "text": "no points to draw for these filters",
                "xref": "paper",
                "yref": "paper",
                "x": 0.5,
                "y": 0.5,
                "showarrow": False,
                "font": {"size": 14, "color": "#666"},
            }
        )
    layout["annotations"] = notes
    return {"data": traces, "layout": layout}


def _dense(
    rows: pl.DataFrame,
    arm_frontiers: Sequence[Frontier],
    *,
    kind: str,
    run_index: dict[str, int],
    arm_order: dict[str, int],
    template: str,
) -> list[dict[str, Any]]:
    """Many series: one trace per verdict (per-point arm colours) and one line trace per colour."""
    colors = {a: arm_color(i) for a, i in arm_order.items()}
    out = []
    by_color: dict[str, tuple[list[float | None], list[float | None]]] = {}
    for f in arm_frontiers:
        xs, ys = by_color.setdefault(
            colors.get(str(dict(f.key).get(Col.ARM_ID)), OKABE_ITO[0]), ([], [])
        )
        xs.extend([*f.xs, None])
        ys.extend([*f.ys, None])
    for color, (xs, ys) in by_color.items():
        out.append(_line(xs, ys, name="arm frontiers", color=color, width=1.2, opacity=0.6))
    for verdict in VERDICTS:
        part = rows.filter(pl.col("verdict") == verdict)
        if part.height:
            point_colors = part.get_column(Col.ARM_ID).replace_strict(
                colors, default=OKABE_ITO[0], return_dtype=pl.String
            )
            color = (
                [INVALID_COLOR] * part.height if verdict == "invalid" else point_colors.to_list()
            )
            out.append(
                _points(
                    part,
                    kind=kind,
                    name=f"{verdict} ({part.height})",
                    color=color,
                    run_index=run_index,
                    labels=None,
                    template=template,
                )
            )
    return out


def trace_tokens(fig: Figure) -> list[str]:
    """The legend token of every trace of a figure, by trace index."""
    return [str(t.get("meta") or "") for t in fig["data"]]


def hidden_after_restyle(restyle: Any, tokens: Sequence[str], hidden: Sequence[str]) -> list[str]:
    """The hidden legend tokens after a plotly legend click (`restyleData`)."""
    if (
        not restyle
        or not isinstance(restyle, list)
        or len(restyle) < 2
        or not isinstance(restyle[0], dict)
    ):
        return list(hidden)
    vis = restyle[0].get("visible")
    if vis is None:
        return list(hidden)
    indices = restyle[1] if isinstance(restyle[1], list) else [restyle[1]]
    values = vis if isinstance(vis, list) else [vis] * len(indices)
    out = dict.fromkeys(hidden)
    for i, idx in enumerate(indices):
        if not isinstance(idx, int) or not 0 <= idx < len(tokens) or tokens[idx] in ("", "pinned"):
            continue
        v = values[i] if i < len(values) else values[-1]
        if v == "legendonly":
            out[tokens[idx]] = None
        else:
            out.pop(tokens[idx], None)
    return list(out)


_SERIES_ORDER = (
    "kv_cache_usage",
    "prefix_cache",
    "num_requests_running",
    "num_requests_waiting",
    "generation_tokens",
    "prompt_tokens",
    "preemption",
)


def _series_rank(metric: str) -> tuple[int, str]:
    return next(
        ((i, metric) for i, key in enumerate(_SERIES_ORDER) if key in metric),
        (len(_SERIES_ORDER), metric),
    )


def _labels_text(raw: object) -> str:
    try:
        labels = json.loads(str(raw)) if raw else {}
    except ValueError:
        return str(raw)
    if not isinstance(labels, dict):
        return str(raw)
    return ", ".join(f"{k}={v}" for k, v in labels.items() if k not in ("model_name", "engine"))


def series_figure(series: pl.DataFrame, max_panels: int = 9) -> go.Figure | None:
    """Small multiples of a point's server-metric time series (None when it has none)."""
    if series.height == 0:
        return None
    metrics = sorted(series.get_column(SeriesCol.METRIC).unique().to_list(), key=_series_rank)[
        :max_panels
    ]
    cols = min(3, len(metrics))
    rows = math.ceil(len(metrics) / cols)
    fig = make_subplots(
        rows=rows,
        cols=cols,
        subplot_titles=[inert(m) for m in metrics],
        horizontal_spacing=0.07,
        vertical_spacing=0.16 if rows > 1 else 0.1,
    )
    for i, metric in enumerate(metrics):
        part = series.filter(pl.col(SeriesCol.METRIC) == metric)
        for j, (labels, grp) in enumerate(part.group_by(SeriesCol.LABELS, maintain_order=True)):
            name = inert(_labels_text(labels[0]))
            fig.add_trace(
                go.Scatter(
                    x=grp.get_column(SeriesCol.T).to_list(), y=grp.get_column(SeriesCol.VALUE).to_list(), mode="lines", name=name,
                    line={"color": OKABE_ITO[j % len(OKABE_ITO)], "width": 1.5}, showlegend=False,
                    hovertemplate=f"{inert(metric)} {name}<br>t=%{{x:.1f}} s: %{{y:.4g}}<extra></extra>",
                ),
                row=i // cols + 1, col=i % cols + 1,
            )  # fmt: skip
    fig.update_layout(
        height=190 * rows,
        margin={"l": 40, "r": 10, "t": 36, "b": 30},
        font={"family": FONT, "size": 11},
        paper_bgcolor="#ffffff",
        plot_bgcolor="#ffffff",
    )
    fig.update_xaxes(gridcolor="#eee", title_text="t (s)", title_font={"size": 10})
    fig.update_yaxes(gridcolor="#eee")
    fig.update_annotations(font_size=11)
    return fig


def compare_figure(
    plane: pl.DataFrame, arm_frontiers: Sequence[Frontier], *, base: str, candidate: str, x: str, y: str,
    arm_order: dict[str, int], logx: bool = False, logy: bool = False,
) -> Figure:  # fmt: skip
    """Per-arm frontiers of a base run (dashed, hollow) against a candidate run (solid, filled)."""
    template = hovertemplate(x, y)
    roles = ((base, "base", "dash", "circle-open"), (candidate, "candidate", "solid", "circle"))
    lines = {(dict(f.key).get(Col.ARM_ID), dict(f.key).get(Col.RUN_ID)): f for f in arm_frontiers}
    rows = plane.filter(
        pl.col("x").is_not_null() & pl.col("y").is_not_null() & (pl.col("verdict") != "invalid")
    )
    series = rows.partition_by(Col.ARM_ID, Col.RUN_ID, as_dict=True, maintain_order=True)
    name_col = _name(rows)
    arms = rows.select(Col.ARM_ID, name_col).unique().sort(name_col, Col.ARM_ID)
    traces: list[dict[str, Any]] = []
    for arm_id, arm_label in arms.iter_rows():
        color = arm_color(arm_order.get(arm_id, 0))
        for run, role, dash, symbol in roles:
            part = series.get((arm_id, run))
            if part is None:
                continue
            part, tok, name = part.sort("x"), token(arm_id, run), inert(f"{arm_label} · {role}")
            line = lines.get((arm_id, run))
            if line is not None:
                traces.append(_line(line.xs, line.ys, name=name, color=color, dash=dash, tok=tok))
            trace = _points(
                part,
                kind="scatter",
                name=name,
                color=color,
                run_index={},
                labels=None,
                template=template,
                tok=tok,
            )
            trace["marker"]["symbol"] = symbol
            traces.append(trace)
    layout = base_layout(
        f"Base {inert(base)} (dashed) vs candidate {inert(candidate)} (solid)",
        x,
        y,
        logx,
        logy,
        revision=f"{base}|{candidate}|{x}|{y}",
    )
    layout["legend"]["title"]["text"] = "Arms"
    return {"data": traces, "layout": layout}
