"""Figure builders: they draw what `analysis/` decided and never decide anything themselves.

Past `style.WEBGL_THRESHOLD` points the scatter traces are WebGL; past `style.MAX_SERIES`
(arm, run) series the chart is drawn "dense": one trace per verdict with per-point arm colours,
because a legend of hundreds of arms helps nobody (filter by arm to get one back).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import polars as pl

from analysis.frontier.polylines import Frontier
from dashboard.figures.style import (
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
    token,
)
from dashboard.figures.updates import (
    pinned_xy,
    revision,
    uplift_note_name,
)
from ingest.contract.col import Col
from views.baseline import Baseline
from views.charts import FrontierChart
from views.planes import PARALLELISM
from views.query.choices import X_CHOICES

# The chart builders of every page, importable from here (the compare chart and the chart updates
# live in their own rooms: dashboard.figures.compare, dashboard.figures.updates).
__all__ = [
    "frontier_figure",
]


def frontier_figure(info: FrontierChart) -> Figure:
    """Draw a frontier chart (`views.charts.FrontierChart`: its rows, polylines and display
    choices, decided before drawing): points per (arm, run), arm frontiers, group envelopes, the
    baseline under the run and the pinned point."""
    plane, arm_frontiers, group_frontiers = info.plane, info.arm_frontiers, info.group_frontiers
    x, y, runs, arm_order, hidden = info.x, info.y, info.runs, info.arm_order, info.hidden
    frontier_only, labels, logx, logy = info.frontier_only, info.labels, info.logx, info.logy
    pinned, at, title, legend = info.pinned, info.at, info.title, info.legend
    baseline, y_title = info.baseline, info.y_title
    run_index = {r: i for i, r in enumerate(runs)}
    multi, hide = len(runs) > 1, set(hidden)
    rows = drawable(plane, frontier_only)
    kind = "scattergl" if rows.height > WEBGL_THRESHOLD else "scatter"
    text = labels if labels != "none" and rows.height <= LABEL_LIMIT else None
    template = hovertemplate(x, y, compact=kind == "scattergl")
    traces: list[dict[str, Any]] = []
    # A run's group envelopes look alike and toggle together: one trace per run, the envelopes
    # separated by gaps (a big page has dozens; each trace costs plotly a draw of its own).
    envelopes: dict[object, tuple[list[float | None], list[float | None]]] = {}
    for fr in group_frontiers:
        gx, gy = envelopes.setdefault(dict(fr.key).get(Col.RUN_ID, "all"), ([], []))
        if gx:
            gx.append(None)
            gy.append(None)
        gx.extend(fr.xs)
        gy.extend(fr.ys)
    for run, (gx, gy) in envelopes.items():
        tok = f"envelope{SEP}{run}"
        name = inert(f"group envelope · run {run}" if multi else "group envelope")
        traces.append(
            line_trace(
                gx,
                gy,
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
    name_col = name_column(rows)
    f = point_fields(
        rows, run_index=run_index, compact=kind == "scattergl", labels=text,
        extra=(Col.ARM_ID, Col.RUN_ID, name_col, PARALLELISM),
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
            first = series[(arm_id, run_id)][0]
            label = str(names[first])
            if labels == "parallelism":  # InferenceX's Parallelism Labels: on legends too
                label = legend_label(label, f[PARALLELISM][first])
            name = inert(f"{label} · run {run_id}" if multi else label)
            line = lines.get((arm_id, run_id))
            over = baseline is not None and str(run_id) == baseline.run_id
            if line is not None:
                dash = RUN_DASHES[run_index.get(str(run_id), 0) % len(RUN_DASHES)]
                dash = "dash" if over else dash
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
            if over:  # the run over a baseline: ✕ markers (InferenceX's unofficial-run style)
                points["marker"]["symbol"] = [
                    s if s.startswith("x-thin") else "x" + s.removeprefix(symbol)
                    for s in points["marker"]["symbol"]
                ]
                symbol = "x"
            traces += [points, legend_trace(name, color, symbol, tok, hidden=tok in hide)]
    if baseline is not None:
        traces += baseline_traces(
            baseline, arm_order, template, kind, hidden=baseline.token in hide
        )
    xs, ys = pinned_xy(rows, pinned)
    traces.append({"type": "scatter", "x": xs, "y": ys, "mode": "markers", "name": "pinned point",
                   "marker": {"symbol": "circle-open", "size": 22, "color": "#000", "line": {"width": 2.5}},
                   "hoverinfo": "skip", "showlegend": False, "meta": "pinned"})  # fmt: skip
    layout = base_layout(
        title, x, y, logx, logy, revision=revision(runs, x, y, logx, logy), y_title=y_title
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
    if baseline is not None:
        notes += uplift_annotations(baseline, arm_order, hidden=baseline.token in hide)
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


def legend_label(name: str, parallelism: object) -> str:
    """An arm's legend entry prefixed with its InferenceX parallelism label (`DEP8 · ...`),
    unless the name already holds it as a word (`TP8 EP1 | no spec` is TP8 already)."""
    par = str(parallelism or "")
    if not par or par in name.replace("|", " ").split():
        return name
    return f"{par} · {name}"


def _pct(v: float | None) -> str:
    return "no area" if v is None else f"{v:+.1f}%"


def baseline_traces(
    b: Baseline, arm_order: dict[str, int], template: str, kind: str, *, hidden: bool = False
) -> list[dict[str, Any]]:
    """A baseline under the run: per arm its frontier (solid), its points (faded circles) and the
    shaded gap to the run's frontier on their common x range (PCHIP values at the measured x).
    Every trace carries the baseline's legend token (`b.token`, one legend group): a legend
    click hides it all and is written to `hide=`."""
    out: list[dict[str, Any]] = []
    group = {"legendgroup": b.token, "meta": b.token, "visible": "legendonly" if hidden else True}
    tag = "main" if b.requested == "main" else b.base_id
    rows = drawable(b.plane, False)
    names = dict(zip(rows.get_column(Col.ARM_ID), rows.get_column(name_column(rows)), strict=True))
    for gap in b.gaps:
        color = arm_color(arm_order.get(gap.arm_id, 0))
        out.append({
            "type": "scatter", "x": [*gap.xs, *reversed(gap.xs)], "y": [*gap.run, *reversed(gap.base)],
            "mode": "lines", "fill": "toself", "fillcolor": _tint(color), "line": {"width": 0, "color": color},
            "name": inert(f"uplift {_pct(gap.uplift_pct)}"), "showlegend": False, "hoverinfo": "text",
            "text": inert(f"{names.get(gap.arm_id, gap.arm_id)}: {_pct(gap.uplift_pct)} over baseline {tag} "
                          f"at matched x {gap.lo:.4g}–{gap.hi:.4g} (mean Δ {_pct(gap.mean_delta_pct)})"),
            **group,
        })  # fmt: skip
    for fr in b.frontiers:
        arm = str(dict(fr.key).get(Col.ARM_ID))
        color = arm_color(arm_order.get(arm, 0))
        name = inert(f"{names.get(arm, fr.label)} · baseline {tag}")
        out.append(
            line_trace(fr.xs, fr.ys, name=name, color=color, width=2.5, tok=b.token, hidden=hidden)
        )
    if rows.height:
        f = point_fields(rows, run_index={}, compact=kind == "scattergl", labels=None,
                         extra=(Col.ARM_ID,))  # fmt: skip
        arms = f[Col.ARM_ID]
        ix = list(range(rows.height))
        trace = fields_trace(
            f, ix, kind=kind, name=inert(f"baseline {tag}"),
            color=[arm_color(arm_order.get(str(arms[i]), 0)) for i in ix],
            labels=False, template=template, tok=b.token, hidden=hidden,
        )  # fmt: skip
        trace["marker"]["size"] = 7
        out.append(trace)
    out.append(
        {"type": "scatter", "x": [None], "y": [None], "mode": "lines+markers",
         "name": inert(f"baseline {tag} (solid) · run (dashed, ✕)"), "hoverinfo": "skip",
         "line": {"color": "#555", "width": 2.5}, "marker": {"color": "#555", "symbol": "circle"}, **group}
    )  # fmt: skip
    return out


def uplift_annotations(
    b: Baseline, arm_order: dict[str, int], *, hidden: bool = False
) -> list[dict[str, Any]]:
    """The uplift of each arm over the baseline, written on its shaded area (not shown while the
    baseline is hidden from the legend)."""
    out = []
    for gap in b.gaps:
        mid = (gap.lo + gap.hi) / 2
        ys = [*gap.base, *gap.run]
        out.append({
            "x": mid, "y": (min(ys) + max(ys)) / 2, "text": _pct(gap.uplift_pct), "showarrow": False,
            "font": {"size": 12, "color": arm_color(arm_order.get(gap.arm_id, 0))},
            "bgcolor": "rgba(255,255,255,0.75)", "name": uplift_note_name(b.token, gap.arm_id),
            "visible": not hidden,
        })  # fmt: skip
    return out


def _tint(color: str, alpha: float = 0.22) -> str:
    r, g, b = (int(color[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


_PER_GPU = (Col.TPUT_PER_GPU, Col.OUTPUT_TPUT_PER_GPU, Col.INPUT_TPUT_PER_GPU)


def _nothing_drawn(plane: pl.DataFrame, x: str, y: str) -> str:
    """Why a chart is empty: no point passes the filters, or none has a usable x or y."""
    if plane.height:
        lacking = [
            axis_title(metric).split(" (")[0]
            for metric, col in ((x, "x"), (y, "y"))
            if plane.filter(pl.col(col).is_not_null() & (pl.col(col) > 0)).height == 0
        ]
        if lacking and y in _PER_GPU and plane.filter(pl.col("y").is_not_null()).height == 0:
            # Per-GPU throughput needs a GPU count; the totals over all GPUs do not.
            return (
                f"none of the {plane.height} points records its GPU count, so there is no "
                f"{axis_title(y).split(' (')[0]}: choose a total throughput (all GPUs) as y, "
                "or ingest with --set num_gpus=N"
            )
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
