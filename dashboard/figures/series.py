"""Small multiples of a point's time series: GPU telemetry (power, utilisation, clocks), then
server metrics (KV cache, prefix hits, queues, ...)."""

from __future__ import annotations

import json
import math

import plotly.graph_objects as go
import polars as pl
from plotly.subplots import make_subplots

from dashboard.figures.style import FONT, OKABE_ITO, inert
from ingest.contract.schema import SeriesCol

_SERIES_ORDER = (
    "gpu:power_w",
    "gpu:util_pct",
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
