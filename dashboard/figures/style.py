"""How the charts look: the palette, escaping, the shared layout, hover text and trace pieces.

Colours are the Okabe-Ito palette (colour-blind safe; Paul Tol's "muted" past eight arms), one
per arm; marker shapes tell runs apart; dominated points are faded, post-cliff points hollow,
invalid points grey crosses. Every string from a result file is escaped before plotly sees it
(plotly renders a few HTML tags in labels and hovers). Traces are plain dicts: plotly's object
model validates every property, which costs seconds at thousands of traces.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

import polars as pl

from analysis.cost import LABELS as COST_LABELS
from analysis.cost import axis_label as cost_axis_label
from ingest.contract.col import Col
from ingest.contract.schema import spec_of, unit
from views.facets import ARM_NAME
from views.planes import HARNESS, HARNESS_VERSION, PARALLELISM, TOPOLOGY
from views.query.choices import X2_CHOICES, X_CHOICES, choice_label, y_choices

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
# The `palette=` URL option (issue 27): the colours the arms take instead of PALETTE's, index by
# index. "tol": Paul Tol's "bright" scheme (colour-blind safe, more saturated), then "muted";
# "contrast": nine dark colours, each at least 5:1 against the white background (WCAG AA for
# text), told apart by hue and lightness (a projector, a printout, low vision).
TOL_BRIGHT = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB")
HIGH_CONTRAST = (
    "#004488", "#B71C1C", "#117733", "#000000", "#AA3377", "#994F00", "#007A7A", "#4A148C",
    "#6B6B00",
)  # fmt: skip
PALETTES: dict[str, tuple[str, ...]] = {
    "okabe": PALETTE,
    "tol": TOL_BRIGHT + TOL_MUTED,
    "contrast": HIGH_CONTRAST,
}
RUN_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "pentagon", "hexagon", "star", "cross")
RUN_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
ENVELOPE_COLOR = "#7f7f7f"
INVALID_COLOR = "#9a9a9a"
WEBGL_THRESHOLD = 1000
LABEL_LIMIT = 400
MAX_SERIES = 40
FONT = "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif"
SEP = "~"  # legend-group token separator: arm~run (never in a run id)
# A point that breaks the page's SLO: one crossed circle whatever its run, never an open marker
# like a post-cliff one or a faded one like a dominated one (issue 27 item 6).
SLO_SYMBOL = "circle-x-open"
VERDICTS = ("frontier", "dominated", "post_cliff", "invalid", "out_of_slo")
VERDICT_OPACITY = {
    "frontier": 1.0,
    "dominated": 0.35,
    "post_cliff": 0.9,
    "invalid": 0.6,
    "out_of_slo": 0.45,
}


def inert(value: object) -> str:
    """A string plotly will show as text, never as markup."""
    return html.escape("" if value is None else str(value), quote=False)


def inert_expr(expr: pl.Expr) -> pl.Expr:
    """`inert` in polars: the text with `&`, `<` and `>` escaped, in one pass over it (null:
    empty)."""
    return expr.cast(pl.String).fill_null("").str.replace_many(["&", "<", ">"], _ESCAPED)


_ESCAPED = ["&amp;", "&lt;", "&gt;"]


def arm_color(index: int) -> str:
    """Colour of the arm with this index."""
    return PALETTE[index % len(PALETTE)]


def axis_title(col: str) -> str:
    """'Interactivity, median (tok/s/user)': menu label plus unit."""
    if col in {str(c) for c in COST_LABELS}:
        return cost_axis_label(col)  # what it measures, the cost class or power figure, the unit
    label = choice_label((*X_CHOICES, *X2_CHOICES, *y_choices()), col)
    spec = spec_of(col)
    u = spec.unit if spec is not None else ""
    return f"{label} ({u})" if u else label


def token(arm_id: object, run_id: object) -> str:
    """Legend-group token of an arm in a run (what `hide=` lists)."""
    return f"{arm_id}{SEP}{run_id}"


# Longest line of a chart title and of a y-axis title (characters) before it wraps: plotly never
# wraps a title, so a long local model path ran past the chart and a cost axis title past its
# top into the chart title (issue 27 item 8).
TITLE_CHARS = 95
Y_TITLE_CHARS = 52


def wrap_title(text: str, width: int) -> str:
    """`text` with `<br>` where a line would pass `width` characters: before a parenthesis (a
    unit or a cost class), else at a space, else after a `/` (a model path), else anywhere."""
    lines: list[str] = []
    rest = text
    while len(rest) > width:
        cut = rest.rfind(" (", width // 3, width + 1)
        cut = cut if cut > 0 else rest.rfind(" ", 0, width + 1)
        if cut <= 0:
            cut = rest.rfind("/", 0, width)
            cut = cut + 1 if cut > 0 else width
        lines.append(rest[:cut].rstrip())
        rest = rest[cut:].lstrip()
    return "<br>".join([*lines, rest])


def base_layout(
    title: str, x: str, y: str, logx: bool, logy: bool, revision: str, y_title: str | None = None
) -> dict[str, Any]:
    """The shared chart layout: light theme, units on both axes, zoom kept across updates."""
    axis = {"gridcolor": "#e3e3e3", "zeroline": False, "linecolor": "#888", "ticks": "outside"}
    title = wrap_title(title, TITLE_CHARS)
    y_text = wrap_title(y_title or axis_title(y), Y_TITLE_CHARS)
    extra_t, extra_l = 19 * title.count("<br>"), 15 * y_text.count("<br>")
    return {
        "title": {"text": title, "x": 0.01, "font": {"size": 15}},
        "font": {"family": FONT, "size": 12, "color": "#222"},
        "paper_bgcolor": "#ffffff",
        "plot_bgcolor": "#ffffff",
        "margin": {"l": 64 + extra_l, "r": 12, "t": 44 + extra_t, "b": 52},
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
            "title": {"text": y_text},
            "type": "log" if logy else "linear",
            "rangemode": "normal" if logy else "tozero",
        },
        "uirevision": revision,
    }


def hovertemplate(x: str, y: str, compact: bool = False) -> str:
    """The hover of a point: arm, run, conc, both axes, verdict and why, requests, AL, config
    (compact: without the why and the config, for charts of thousands of points)."""
    ux, uy = unit(x), unit(y)
    why = "" if compact else " — %{customdata[5]}"
    config = "" if compact else "<br>%{customdata[9]}<br>%{customdata[10]}"
    return (
        "<b>%{customdata[2]}</b><br>run %{customdata[1]} · conc %{customdata[3]}<br>"
        f"{x}: %{{x:.4g}} {ux}<br>{y}: %{{y:.5g}} {uy}<br>"
        f"verdict: <b>%{{customdata[4]}}</b>{why}<br>"
        "requests successful/total: %{customdata[6]} · error rate %{customdata[7]}<br>"
        f"AL: %{{customdata[8]}}{config}<extra></extra>"
    )


def _num(col: str, digits: int) -> pl.Expr:
    v = pl.col(col).cast(pl.Float64)
    return (
        pl.when(v.is_null() | v.is_nan())
        .then(pl.lit("–"))
        .otherwise(v.round_sig_figs(digits).cast(pl.String))
    )


def name_column(rows: pl.DataFrame) -> str:
    """The column naming arms: the view's disambiguated names when present, else the label."""
    return ARM_NAME if ARM_NAME in rows.columns else Col.ARM_LABEL


def _count(col: str) -> pl.Expr:
    return pl.col(col).cast(pl.Int64).cast(pl.String).fill_null("–")


def _requests(profiled: bool) -> pl.Expr:
    """`43/47 · 4 warm-up, not profiled`: successful of the total the file states, as integers,
    and the requests the measurement window left out (AgentX totals count warm-up records;
    `profiled`: the rows have `num_requests_profiled`)."""
    total = pl.col(Col.NUM_REQUESTS_TOTAL)
    text = pl.format("{}/{}", _count(Col.NUM_REQUESTS_SUCCESSFUL), _count(Col.NUM_REQUESTS_TOTAL))
    if not profiled:
        return text
    left_out = (total.cast(pl.Int64) - pl.col("num_requests_profiled").cast(pl.Int64)).fill_null(0)
    return (
        pl.when(left_out > 0)
        .then(pl.format("{} · {} warm-up, not profiled", text, left_out.cast(pl.String)))
        .otherwise(text)
    )


def customdata_exprs(rows: pl.DataFrame, compact: bool = False) -> list[pl.Expr]:
    """The hover fields of a row as expressions `c0`..`c9`, escaped (see `hovertemplate` for
    their order; compact leaves the why and the config empty)."""
    have = set(rows.columns)
    return list(
        _customdata(
            name_column(rows),
            HARNESS in have,
            "num_requests_profiled" in have,
            PARALLELISM in have and TOPOLOGY in have,
            compact,
        )
    )


@cache
def _customdata(
    name_col: str, harness_known: bool, profiled: bool, topology: bool, compact: bool
) -> tuple[pl.Expr, ...]:
    """`customdata_exprs` for rows with these columns, built once per kind of rows (an
    expression is immutable)."""
    al = pl.col(Col.AL_MEASURED).cast(pl.Float64)
    al_text = (
        pl.when(al.is_null())
        .then(pl.lit("not measured"))
        .otherwise(
            pl.format(
                "{} tokens/step ({})",
                al.round_sig_figs(3).cast(pl.String),
                inert_expr(pl.col(Col.AL_SOURCE)),
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
    harness = (
        [inert_expr(pl.concat_str([pl.col(HARNESS), pl.col(HARNESS_VERSION)], separator=" ", ignore_nulls=True))]
        if harness_known
        else []
    )  # fmt: skip
    config = pl.concat_str(
        [inert_expr(pl.col(c)) for c in (Col.HW, Col.FRAMEWORK, Col.PRECISION)]
        + [gpus, inert_expr(pl.col(Col.IMAGE)), *harness],
        separator=" · ",
    )
    fields = [
        inert_expr(pl.col(Col.POINT_ID)), inert_expr(pl.col(Col.RUN_ID)), inert_expr(pl.col(name_col)),
        pl.col(Col.CONC).cast(pl.String).fill_null(""), inert_expr(pl.col("verdict")), inert_expr(pl.col("reason")),
        _requests(profiled),
        _num(Col.ERROR_RATE, 3), al_text.fill_null("not measured"), config.str.replace_all(" ·  · ", " · ", literal=True),
    ]  # fmt: skip
    # 10: the parallelism label and every topology field (issue 14, item 5)
    if topology:
        fields.append(
            pl.format("{}: {}", inert_expr(pl.col(PARALLELISM)), inert_expr(pl.col(TOPOLOGY)))
        )
    else:
        fields.append(pl.lit(""))
    if compact:
        fields[5] = fields[9] = fields[10] = pl.lit("")
    return tuple(e.alias(f"c{i}") for i, e in enumerate(fields))


def _symbol_expr(run_index: dict[str, int]) -> pl.Expr:
    return _symbols(tuple(run_index.items()))


@lru_cache(maxsize=256)  # keyed by the URL's runs: bounded
def _symbols(run_index: tuple[tuple[str, int], ...]) -> pl.Expr:
    """`_symbol_expr`, built once per set of runs."""
    base = pl.col(Col.RUN_ID).replace_strict(
        {r: RUN_SYMBOLS[i % len(RUN_SYMBOLS)] for r, i in run_index},
        default=RUN_SYMBOLS[0],
        return_dtype=pl.String,
    )
    v = pl.col("verdict")
    return (
        pl.when(v == "invalid").then(pl.lit("x-thin-open"))
        .when(v == "post_cliff").then(base + "-open")
        .when(v == "out_of_slo").then(pl.lit(SLO_SYMBOL))
        .otherwise(base)
    )  # fmt: skip


@lru_cache(maxsize=16)
def _label_expr(mode: str) -> pl.Expr:
    if mode == "parallelism":
        return inert_expr(pl.col(PARALLELISM))
    col = Col.CONC if mode == "conc" else Col.NUM_GPUS
    return pl.col(col).cast(pl.String).fill_null("")


Fields = dict[str, list[Any]]


def point_fields(
    rows: pl.DataFrame,
    *,
    run_index: dict[str, int],
    compact: bool,
    labels: str | None,
    extra: Sequence[str] = (),
) -> Fields:
    """Everything the points traces of `rows` need, per row, from one polars query: `x`, `y`,
    `verdict`, `symbol`, `customdata` (tuples, see `customdata_exprs`), `label` (with `labels`)
    and the `extra` columns as they are. Traces then pick rows by index (`fields_trace`)."""
    exprs = [pl.col("x"), pl.col("y"), pl.col("verdict"), _symbol_expr(run_index).alias("symbol")]
    hover_exprs = customdata_exprs(rows, compact)
    exprs += hover_exprs
    if labels:
        exprs.append(_label_expr(labels).alias("label"))
    exprs += [pl.col(c).alias(f"extra:{c}") for c in extra]
    out = rows.select(exprs)
    cols = {c: out.get_column(c).to_list() for c in out.columns}
    hover = [cols.pop(f"c{i}") for i in range(len(hover_exprs))]
    cols["customdata"] = list(zip(*hover, strict=True)) if rows.height else []
    for c in extra:
        cols[c] = cols.pop(f"extra:{c}")
    return cols


def fields_trace(
    f: Fields,
    ix: Sequence[int],
    *,
    kind: str,
    name: str,
    color: Any,
    labels: bool,
    template: str,
    tok: str = "",
    hidden: bool = False,
) -> dict[str, Any]:
    """A points trace of the rows `ix` of `point_fields` output."""
    x, y, symbol, hover = f["x"], f["y"], f["symbol"], f["customdata"]
    verdicts = [f["verdict"][i] for i in ix]
    trace: dict[str, Any] = {
        "type": kind, "x": [x[i] for i in ix], "y": [y[i] for i in ix],
        "mode": "markers+text" if labels else "markers", "name": name,
        "marker": {"color": color, "symbol": [symbol[i] for i in ix], "size": 9,
                   "opacity": [VERDICT_OPACITY.get(v, 1.0) for v in verdicts],
                   "line": {"width": 1.5, "color": color}},
        "customdata": [hover[i] for i in ix], "hovertemplate": template, "legendgroup": tok, "meta": tok,
        "visible": "legendonly" if hidden else True,
    }  # fmt: skip
    if labels:
        text = f["label"]
        trace.update(
            text=[text[i] for i in ix],
            textposition="top center",
            textfont={"size": 10, "color": "#333"},
        )
    return trace


def points_trace(
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
    """A points trace of every row of `rows`."""
    f = point_fields(rows, run_index=run_index, compact=kind == "scattergl", labels=labels)
    return fields_trace(
        f, range(rows.height), kind=kind, name=name, color=color, labels=bool(labels),
        template=template, tok=tok, hidden=hidden,
    )  # fmt: skip


def line_trace(
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


def drawable(plane: pl.DataFrame, frontier_only: bool) -> pl.DataFrame:
    rows = plane.filter(_DRAWABLE)
    if frontier_only:
        rows = rows.filter(_ON_A_FRONTIER)
    return rows


_DRAWABLE = (
    pl.col("x").is_not_null() & pl.col("y").is_not_null() & (pl.col("x") > 0) & (pl.col("y") > 0)
)
_ON_A_FRONTIER = (pl.col("verdict") == "frontier") | pl.col("on_arm_frontier")


def legend_trace(
    name: str, color: str, symbol: str, tok: str, *, hidden: bool = False
) -> dict[str, Any]:
    """A legend entry drawn at full strength (a series' own swatch would copy its first point's
    fading); it shares the series' legend group, so clicking it toggles the whole series."""
    return {
        "type": "scatter", "x": [None], "y": [None], "mode": "markers", "name": name,
        "marker": {"color": color, "symbol": symbol, "size": 9}, "hoverinfo": "skip",
        "legendgroup": tok, "meta": tok, "visible": "legendonly" if hidden else True,
    }  # fmt: skip


def _swap(value: Any, table: dict[str, str]) -> Any:
    if isinstance(value, str):
        return table.get(value.upper(), value)
    if isinstance(value, list | tuple):
        return [_swap(v, table) for v in value]
    return value


def repaint(fig: Figure, palette: str) -> Figure:
    """The figure with the arms' colours taken from another palette (`PALETTES`), index by
    index: every PALETTE colour of a trace's marker, line or label, or of a note, becomes the
    colour at the same index of `palette` (envelope, invalid and verdict greys stay)."""
    if palette == "okabe" or palette not in PALETTES:
        return fig
    new = PALETTES[palette]
    table = {c.upper(): new[i % len(new)] for i, c in enumerate(PALETTE)}
    for trace in fig.get("data", []):
        for part in ("marker", "line", "textfont"):
            spec = trace.get(part)
            if isinstance(spec, dict) and "color" in spec:
                spec["color"] = _swap(spec["color"], table)
        marker = trace.get("marker")
        if isinstance(marker, dict) and isinstance(marker.get("line"), dict):
            marker["line"]["color"] = _swap(marker["line"].get("color"), table)
    for note in fig.get("layout", {}).get("annotations") or []:
        font = note.get("font")
        if isinstance(font, dict) and "color" in font:
            font["color"] = _swap(font["color"], table)
    return fig


def attribute(fig: Figure, runs: Sequence[str]) -> Figure:
    """The attribution the chart's PNG and SVG downloads carry (paretolens.js adds the page's
    address and the date and writes it under the chart): the tool and the runs drawn."""
    shown = ", ".join(str(r) for r in runs[:6]) + (
        f" and {len(runs) - 6} more" if len(runs) > 6 else ""
    )
    text = (
        f"Made with paretolens from the published results of run {shown}"
        if runs
        else "Made with paretolens"
    )
    meta = fig.setdefault("layout", {}).setdefault("meta", {})
    if isinstance(meta, dict):
        meta["attribution"] = inert(text)
    return fig
