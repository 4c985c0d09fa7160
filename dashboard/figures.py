"""Figure builders: they draw what `analysis/` decided and never decide anything themselves.

Past `style.WEBGL_THRESHOLD` points the scatter traces are WebGL; past `style.MAX_SERIES`
(arm, run) series the chart is drawn "dense": one trace per verdict with per-point arm colours,
because a legend of hundreds of arms helps nobody (filter by arm to get one back).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl
from dash import Patch

from analysis import Frontier
from dashboard.state import X_CHOICES
from dashboard.style import (
    ENVELOPE_COLOR,
    INVALID_COLOR,
    LABEL_LIMIT,
    MAX_SERIES,
    OKABE_ITO,
    RUN_DASHES,
    RUN_SYMBOLS,
    SEP,
    VERDICTS,
    WEBGL_THRESHOLD,
    Fields,
    Figure,
    arm_color,
    axis_title,
    base_layout,
    drawable,
    fields_trace,
    hovertemplate,
    inert,
    legend_trace,
    line_trace,
    name_column,
    point_fields,
    points_trace,
    token,
)
from ingest.schema import Col

__all__ = [
    "Figure",
    "compare_figure",
    "display_patch",
    "frontier_figure",
    "hidden_after_restyle",
    "pinned_xy",
    "revision",
    "trace_tokens",
]


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
    rows = drawable(plane, frontier_only)
    kind = "scattergl" if rows.height > WEBGL_THRESHOLD else "scatter"
    text = labels if labels != "none" and rows.height <= LABEL_LIMIT else None
    template = hovertemplate(x, y, compact=kind == "scattergl")
    traces: list[dict[str, Any]] = []
    listed: set[str] = set()  # one legend entry per run's envelopes (they toggle together)
    for fr in group_frontiers:
        run = dict(fr.key).get(Col.RUN_ID, "all")
        tok = f"envelope{SEP}{run}"
        name = inert(f"group envelope · run {run}" if multi else "group envelope")
        traces.append(
            line_trace(
                fr.xs,
                fr.ys,
                name=name,
                color=ENVELOPE_COLOR,
                width=7,
                tok=tok,
                hidden=tok in hide,
                opacity=0.28,
                showlegend=tok not in listed,
                legendrank=2000,
            )
        )
        listed.add(tok)
    name_col = name_column(rows)
    f = point_fields(
        rows, run_index=run_index, compact=kind == "scattergl", labels=text,
        extra=(Col.ARM_ID, Col.RUN_ID, name_col),
    )  # fmt: skip
    series = _series(f)
    if len(series) > MAX_SERIES:
        traces += _dense(f, arm_frontiers, kind=kind, arm_order=arm_order, template=template)
    else:
        lines = {
            (dict(fr.key).get(Col.ARM_ID), dict(fr.key).get(Col.RUN_ID)): fr for fr in arm_frontiers
        }
        names, xs = f[name_col], f["x"]
        order = sorted(series, key=lambda k: (str(names[series[k][0]]), str(k[1])))
        for arm_id, run_id in order:
            # Along x (NaN last, as polars sorts), ties in row order.
            ix = sorted(series[(arm_id, run_id)], key=lambda i: (xs[i] != xs[i], xs[i]))
            tok, color = token(arm_id, run_id), arm_color(arm_order.get(str(arm_id), 0))
            label = str(names[series[(arm_id, run_id)][0]])
            name = inert(f"{label} · run {run_id}" if multi else label)
            line = lines.get((arm_id, run_id))
            if line is not None:
                dash = RUN_DASHES[run_index.get(str(run_id), 0) % len(RUN_DASHES)]
                traces.append(
                    line_trace(
                        line.xs,
                        line.ys,
                        name=name,
                        color=color,
                        dash=dash,
                        tok=tok,
                        hidden=tok in hide,
                    )
                )
            verdicts = f["verdict"]
            points = fields_trace(
                f,
                ix,
                kind=kind,
                name=name,
                color=[INVALID_COLOR if verdicts[i] == "invalid" else color for i in ix],
                labels=text is not None,
                template=template,
                tok=tok,
                hidden=tok in hide,
            )
            points["showlegend"] = False
            symbol = RUN_SYMBOLS[run_index.get(str(run_id), 0) % len(RUN_SYMBOLS)]
            traces += [points, legend_trace(name, color, symbol, tok, hidden=tok in hide)]
    xs, ys = pinned_xy(rows, pinned)
    traces.append({"type": "scatter", "x": xs, "y": ys, "mode": "markers", "name": "pinned point",
                   "marker": {"symbol": "circle-open", "size": 22, "color": "#000", "line": {"width": 2.5}},
                   "hoverinfo": "skip", "showlegend": False, "meta": "pinned"})  # fmt: skip
    layout = base_layout(title, x, y, logx, logy, revision=revision(runs, x, y, logx, logy))
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
                "text": _nothing_drawn(plane, x, y),
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


def _nothing_drawn(plane: pl.DataFrame, x: str, y: str) -> str:
    """Why a chart is empty: no point passes the filters, or none has a usable x or y."""
    if plane.height:
        lacking = [
            axis_title(metric).split(" (")[0]
            for metric, col in ((x, "x"), (y, "y"))
            if plane.filter(pl.col(col).is_not_null() & (pl.col(col) > 0)).height == 0
        ]
        if lacking:
            return (
                f"none of the {plane.height} points has {' or '.join(lacking)}: pick another axis"
            )
    return "no points to draw for these filters"


def _series(f: Fields) -> dict[Any, list[int]]:
    """Row indices of each (arm, run) series, in order of first appearance."""
    return _positions(zip(f[Col.ARM_ID], f[Col.RUN_ID], strict=True))


def _positions(keys: Iterable[Any]) -> dict[Any, list[int]]:
    """The indices at which each key occurs, keys in order of first appearance."""
    out: dict[Any, list[int]] = {}
    for i, key in enumerate(keys):
        out.setdefault(key, []).append(i)
    return out


def _dense(
    f: Fields,
    arm_frontiers: Sequence[Frontier],
    *,
    kind: str,
    arm_order: dict[str, int],
    template: str,
) -> list[dict[str, Any]]:
    """Many series: one trace per verdict (per-point arm colours) and one line trace per colour."""
    colors = {a: arm_color(i) for a, i in arm_order.items()}
    out = []
    by_color: dict[str, tuple[list[float | None], list[float | None]]] = {}
    for fr in arm_frontiers:
        xs, ys = by_color.setdefault(
            colors.get(str(dict(fr.key).get(Col.ARM_ID)), OKABE_ITO[0]), ([], [])
        )
        xs.extend([*fr.xs, None])
        ys.extend([*fr.ys, None])
    for color, (xs, ys) in by_color.items():
        out.append(line_trace(xs, ys, name="arm frontiers", color=color, width=1.2, opacity=0.6))
    by_verdict = _positions(f["verdict"])
    arms = f[Col.ARM_ID]
    for verdict in VERDICTS:
        ix = by_verdict.get(verdict)
        if ix:
            fill = (
                [INVALID_COLOR] * len(ix)
                if verdict == "invalid"
                else [colors.get(arms[i], OKABE_ITO[0]) for i in ix]
            )
            out.append(
                fields_trace(
                    f,
                    ix,
                    kind=kind,
                    name=f"{verdict} ({len(ix)})",
                    color=fill,
                    labels=False,
                    template=template,
                )
            )
    return out


def pinned_xy(rows: pl.DataFrame, pinned: str | None) -> tuple[list[float], list[float]]:
    """Where the pinned point's ring goes (nowhere when it is not drawn)."""
    pin = rows.filter(pl.col(Col.POINT_ID) == pinned) if pinned else rows.clear()
    return pin.get_column("x").to_list(), pin.get_column("y").to_list()


def display_patch(
    *, tokens: Sequence[str], hidden: Sequence[str], pinned: tuple[list[float], list[float]],
    logx: bool, logy: bool, axes_changed: bool, revision: str,
) -> Patch:  # fmt: skip
    """The update of a drawn chart for display-only changes (log axes, hidden arms, the pin):
    a few properties instead of the whole figure, so a 5,000-point chart stays quick."""
    patch = Patch()
    if axes_changed:
        patch["layout"]["xaxis"]["type"] = "log" if logx else "linear"
        patch["layout"]["yaxis"]["type"] = "log" if logy else "linear"
        patch["layout"]["yaxis"]["rangemode"] = "normal" if logy else "tozero"
        patch["layout"]["xaxis"]["autorange"] = True
        patch["layout"]["yaxis"]["autorange"] = True
        patch["layout"]["uirevision"] = revision
    hide = set(hidden)
    for i, tok in enumerate(tokens):
        if tok == "pinned":
            patch["data"][i]["x"], patch["data"][i]["y"] = pinned
        elif tok:
            patch["data"][i]["visible"] = "legendonly" if tok in hide else True
    return patch


def revision(runs: Sequence[str], x: str, y: str, logx: bool, logy: bool) -> str:
    """The chart's uirevision: zoom survives updates until the runs, axes or scales change."""
    return f"{','.join(runs)}|{x}|{y}|{logx}|{logy}"


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
    name_col = name_column(rows)
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
                traces.append(
                    line_trace(line.xs, line.ys, name=name, color=color, dash=dash, tok=tok)
                )
            trace = points_trace(
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
