"""A plotly figure dict drawn as static SVG, for the page HTML before plotly has loaded.

The run page's HTML carries its first chart as markup (issue 18): the browser paints the points
long before plotly, Dash and React have run, and the interactive chart replaces it at the same
place once it has drawn (`dashboard/assets/paretolens.js`). The markup is made from the very
figure dict the layout hands to `dcc.Graph`, so the two cannot disagree on what is drawn.

What it draws: scatter / scattergl traces (markers with their symbol, colour, opacity and outline;
lines with their colour, width and dash; text labels), the axes as plotly would autorange them
(5 % plus the marker radius of padding, `rangemode="tozero"`, log axes), ticks and grid lines,
the title, axis titles and the legend, and a vertical line shape with its label (the "rank arms
at x" marker). A figure with anything else (filled areas, other shapes or annotations) is not
drawn: `chart_markup` returns None and the page waits for plotly as before.

Each drawn point carries the text plotly's hover label would show for it (`data-h`: the trace's
`hovertemplate` filled in with `hover_text`, plain text, one line per `<br>`) and its point id
(`data-p`, the first customdata field), for `hover.js` to answer hover and click before plotly
has loaded. The points of a trace sit in one group carrying the paint most of them share; a point
writes only what differs, so a 5,000-point chart stays small. Any page size is drawn.

Every string of the figure is text from result files or escaped for plotly already: it is
unescaped once and escaped again for XML here, never pasted into markup.
"""

from __future__ import annotations

import functools
import html
import itertools
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from xml.sax.saxutils import escape, quoteattr

__all__ = ["Axis", "axes_of", "chart_markup", "drawable_traces"]

# plotly's geometry: marker pad = max(size / 1.6, 3) px, 5 % of the axis length on each side of a
# padded trace; ticks aim at one per 80 px (x) or 40 px (y), 4 to 9 of them.
EXTRA_PAD = 0.05
TICK_PX = {"x": 80.0, "y": 40.0}
# The x axis length the padding assumes (the main chart at a 1440 px wide window); the marker
# pad is the only length-dependent part, so another width moves the range by a pixel or two.
NOMINAL_X_PX = 800.0
SUPPORTED_SHAPES = {"line"}
DASHES = {"solid": "", "dot": "2,3", "dash": "6,4", "longdash": "10,5", "dashdot": "6,3,2,3",
          "longdashdot": "10,4,2,4"}  # fmt: skip


@dataclass(frozen=True)
class Axis:
    """One axis as drawn: its type, range (in log10 units on a log axis) and length in px."""

    kind: str
    lo: float
    hi: float
    length: float

    def frac(self, v: float) -> float:
        """Where a data value sits along the axis, 0 at `lo`, 1 at `hi`."""
        u = math.log10(v) if self.kind == "log" else v
        return (u - self.lo) / (self.hi - self.lo)

    def value(self, frac: float) -> float:
        """The data value at a fraction of the axis (the inverse of `frac`)."""
        u = self.lo + frac * (self.hi - self.lo)
        return float(10**u) if self.kind == "log" else u


def _visible(trace: dict[str, Any]) -> bool:
    return trace.get("visible", True) is True


def _num(v: Any, log: bool) -> float | None:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        return None
    if log and v <= 0:
        return None
    return float(v)


def drawable_traces(fig: dict[str, Any]) -> list[dict[str, Any]]:
    """The traces the chart draws (visible scatter traces)."""
    return [t for t in fig.get("data", []) if _visible(t)]


def _marker_pad(trace: dict[str, Any]) -> float:
    size = (trace.get("marker") or {}).get("size", 6)
    size = max(size) if isinstance(size, list) and size else size
    return max(float(size if isinstance(size, (int, float)) else 6) / 1.6, 3.0)


def _autorange(
    extremes: list[tuple[float, float]], kind: str, length: float, tozero: bool
) -> tuple[float, float]:
    """plotly's autorange: the narrowest range keeping every value `pad` px inside the axis."""
    if not extremes:
        return (0.0, 1.0)
    vals = [(math.log10(v) if kind == "log" else v, p) for v, p in extremes]
    lo = min(vals, key=lambda vp: (vp[0], -vp[1]))
    hi = max(vals, key=lambda vp: (vp[0], vp[1]))
    if tozero and kind != "log":
        lo = (0.0, 0.0) if lo[0] >= 0 else lo
        hi = (0.0, 0.0) if hi[0] <= 0 else hi
    if hi[0] == lo[0]:
        v = lo[0]
        return (v - 1.0, v + 1.0) if not (tozero and v == 0) else (0.0, 1.0)
    best = None
    for v0, p0 in [*vals, lo]:
        for v1, p1 in [*vals, hi]:
            if v1 <= v0:
                continue
            m = (v1 - v0) / max(length - p0 - p1, 1.0)
            if best is None or m > best[0]:
                best = (m, v0, p0, v1, p1)
    assert best is not None
    m, v0, p0, v1, p1 = best
    return v0 - m * p0, v1 + m * p1


def _extremes(traces: Iterable[dict[str, Any]], axis: str, log: bool, length: float) -> list[tuple[float, float]]:  # fmt: skip
    out: list[tuple[float, float]] = []
    for t in traces:
        mode = str(t.get("mode", "markers"))
        padded = "markers" in mode or "text" in mode
        pad = (_marker_pad(t) + EXTRA_PAD * length) if padded else 0.0
        vals = [v for v in (_num(v, log) for v in t.get(axis) or []) if v is not None]
        if vals:
            out += [(min(vals), pad), (max(vals), pad)]
    return out


def axes_of(fig: dict[str, Any], width: float = NOMINAL_X_PX) -> tuple[Axis, Axis]:
    """The x and y axes plotly would draw for a figure (autoranged unless a range is set)."""
    lay = fig.get("layout", {})
    margin = lay.get("margin", {})
    height = float(lay.get("height", 450)) - margin.get("t", 100) - margin.get("b", 80)
    traces = drawable_traces(fig)
    out = []
    for name, length in (("x", width), ("y", height)):
        ax = lay.get(f"{name}axis", {})
        kind = "log" if ax.get("type") == "log" else "linear"
        ext = _extremes(traces, name, kind == "log", length)
        if name == "x":
            for s in lay.get("shapes") or []:
                ext += [(v, 0.0) for v in (_num(s.get("x0"), kind == "log"),) if v is not None]
        rng = ax.get("range")
        if (
            isinstance(rng, list)
            and len(rng) == 2
            and all(isinstance(r, (int, float)) for r in rng)
        ):
            lo, hi = float(rng[0]), float(rng[1])
        else:
            lo, hi = _autorange(ext, kind, length, ax.get("rangemode") == "tozero")
        out.append(Axis(kind, lo, hi, length))
    return out[0], out[1]


def _round_up(v: float, steps: Sequence[float]) -> float:
    return next((s for s in steps if s >= v), steps[-1])


def _fmt(v: float, step: float) -> str:
    if abs(v) < step * 1e-9:
        return "0"
    if abs(v) >= 1e4:
        for div, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
            if abs(v) >= div:
                return _fmt(v / div, step / div) + suffix
    digits = max(0, -math.floor(math.log10(step) + 1e-9)) if step < 1 else 0
    return f"{v:,.{digits}f}".replace(",", "")


def ticks(ax: Axis, which: str) -> list[tuple[float, str, bool]]:
    """(fraction along the axis, label, major) of each tick, as plotly's auto ticks place them."""
    nt = min(max(ax.length / TICK_PX[which], 4), 9) + 1
    rough = abs(ax.hi - ax.lo) / nt
    out: list[tuple[float, str, bool]] = []
    if ax.kind == "log":
        lo, hi = min(ax.lo, ax.hi), max(ax.lo, ax.hi)
        if rough > 0.7:
            every = math.ceil(rough)
            vals = [(float(10**e), True) for e in range(math.ceil(lo), math.floor(hi) + 1, every)]
        else:
            digits = (1, 2, 5) if rough > 0.3 else tuple(range(1, 10))
            vals = [
                (d * 10.0**e, d == 1)
                for e in range(math.floor(lo), math.floor(hi) + 1)
                for d in digits
                if lo <= math.log10(d * 10.0**e) <= hi
            ]
        for v, major in vals:
            label = _fmt(v, v) if major else str(round(v / 10 ** math.floor(math.log10(v))))
            out.append((ax.frac(v), label, major))
        return out
    base: float = 10.0 ** math.floor(math.log10(rough)) if rough > 0 else 1.0
    step = base * _round_up(rough / base, (2, 5, 10))
    first = math.ceil(min(ax.lo, ax.hi) / step - 1e-9)
    last = math.floor(max(ax.lo, ax.hi) / step + 1e-9)
    for k in range(first, last + 1):
        v = k * step
        out.append((ax.frac(v), _fmt(v, step), True))
    return out


def _text(s: Any) -> str:
    """Figure text (escaped for plotly's pseudo-HTML) as escaped XML text."""
    # a title's line breaks (style.wrap_title) stay line breaks
    return escape(html.unescape(str(s if s is not None else ""))).replace("&lt;br&gt;", "<br>")


def _attr(s: Any) -> str:
    return quoteattr(html.unescape(str(s if s is not None else "")))


def _pick(v: Any, i: int, default: Any) -> Any:
    if isinstance(v, list):
        return v[i] if i < len(v) and v[i] is not None else default
    return default if v is None else v


def _pct(f: float) -> str:
    return f"{f * 100:.4f}%"


SYMBOLS = {  # unit shapes (radius 1) for <symbol viewBox="-1 -1 2 2">
    "circle": "M1,0A1,1 0 1,1 -1,0A1,1 0 1,1 1,0Z",
    "square": "M-0.85,-0.85H0.85V0.85H-0.85Z",
    "diamond": "M0,-1.15L1.15,0L0,1.15L-1.15,0Z",
    "triangle-up": "M0,-1.1L1.05,0.75H-1.05Z",
    "pentagon": "M0,-1.05L1,-0.32L0.62,0.85H-0.62L-1,-0.32Z",
    "hexagon": "M0,-1.05L0.91,-0.52V0.52L0,1.05L-0.91,0.52V-0.52Z",
    "star": "M0,-1.1L0.3,-0.35L1.05,-0.35L0.45,0.15L0.65,0.95L0,0.45L-0.65,0.95L-0.45,0.15"
    "L-1.05,-0.35L-0.3,-0.35Z",
    "cross": "M-0.35,-1H0.35V-0.35H1V0.35H0.35V1H-0.35V0.35H-1V-0.35H-0.35Z",
    "x-thin": "M-0.8,-0.8L0.8,0.8M0.8,-0.8L-0.8,0.8",
}


def _symbol(name: str) -> tuple[str, bool, bool]:
    """(base shape, open, dot) of a plotly symbol name."""
    parts = str(name).split("-")
    is_open, dot = "open" in parts, "dot" in parts
    base = "-".join(p for p in parts if p not in ("open", "dot"))
    return (base if base in SYMBOLS else "circle"), is_open or base == "x-thin", dot


def _defs() -> str:
    return "<defs>" + "".join(
        f'<symbol id="sc-{k}" viewBox="-1 -1 2 2" overflow="visible">'
        f'<path d="{d}" vector-effect="non-scaling-stroke"/></symbol>'
        for k, d in SYMBOLS.items()
    ) + "</defs>"  # fmt: skip


def _js_precision(v: float, p: int) -> str:
    """`v.toPrecision(p)` as JavaScript writes it (plotly's `%{x:.4g}`: d3-format's `g` keeps
    trailing zeros; a tie rounds away from zero), with d3's minus sign."""
    if v == 0:
        return "0" if p <= 1 else "0." + "0" * (p - 1)
    sign = "\u2212" if v < 0 else ""
    exact = Decimal(abs(v))
    e = exact.adjusted()
    digits = str(exact.scaleb(p - 1 - e).quantize(Decimal(1), rounding=ROUND_HALF_UP))
    if len(digits) > p:  # 9.9995 -> 10.00
        e += 1
        digits = digits[:p]
    if e < -6 or e >= p:
        body = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{body}e{'+' if e >= 0 else '-'}{abs(e)}"
    if e < 0:
        return f"{sign}0.{'0' * (-e - 1)}{digits}"
    whole, frac = digits[: e + 1], digits[e + 1 :]
    return sign + whole + (f".{frac}" if frac else "")


def _js_str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float) and v.is_integer() and abs(v) < 1e21:
        return str(int(v))
    return "" if v is None else str(v)


@functools.lru_cache(maxsize=64)
def _spec(spec: str) -> tuple[int, str] | None:
    """A d3 format spec this renderer writes (`.Ng`, `.Nf`) as (N, kind); None for others."""
    m = re.fullmatch(r"\.(\d+)([gf])", spec)
    return None if m is None else (int(m.group(1)), m.group(2))


def _formatted(v: Any, spec: str | None) -> str | None:
    if spec is None or spec == "":
        return _js_str(v)
    m = _spec(spec)
    if m is None or not isinstance(v, (int, float)) or isinstance(v, bool):
        return None
    n, kind = m
    if kind == "g":
        return _js_precision(float(v), max(n, 1))
    text = f"{abs(float(v)):.{n}f}"
    return ("\u2212" if v < 0 and float(text) != 0 else "") + text


_TOKEN = re.compile(r"%\{([^}:]+)(?::([^}]*))?\}")
_TAG = re.compile(r"<(/?)(b|i|em|sup|sub|span)[^>]*>")


# A template token: ("x" | "y" | "text" | "custom", customdata index, format spec); None for a
# field this renderer does not fill.
_Field = tuple[str, int, str | None] | None


@functools.lru_cache(maxsize=256)
def _template(template: str) -> tuple[tuple[str, ...], tuple[_Field, ...]]:
    """A hovertemplate without its `<extra>` part, split once into its literal runs and the
    fields between them (`len(literals) == len(fields) + 1`)."""
    template = re.sub(r"<extra>.*?</extra>", "", template, flags=re.S)
    literals: list[str] = []
    fields: list[_Field] = []
    at = 0
    for m in _TOKEN.finditer(template):
        literals.append(template[at : m.start()])
        field, spec = m.group(1).strip(), m.group(2)
        if field in ("x", "y", "text"):
            fields.append((field, 0, spec))
        elif k := re.fullmatch(r"customdata\[(\d+)\]", field):
            fields.append(("custom", int(k.group(1)), spec))
        else:
            fields.append(None)
        at = m.end()
    literals.append(template[at:])
    return tuple(literals), tuple(fields)


def hover_text(t: dict[str, Any], i: int) -> str | None:
    """The text plotly's hover label shows for point `i` of trace `t` (its `hovertemplate` filled
    in, formats as d3-format writes them), as plain text with one line per `<br>`; None when the
    trace has no hover or a template this renderer does not fill."""
    template = t.get("hovertemplate")
    if t.get("hoverinfo") == "skip" or not isinstance(template, str):
        return None
    literals, fields = _template(template)
    custom = _pick(t.get("customdata"), i, None)
    parts = [literals[0]]
    for field, literal in zip(fields, literals[1:], strict=True):
        if field is None:
            return None
        kind, k, spec = field
        got: Any
        if kind == "custom":
            if not isinstance(custom, (list, tuple)):
                return None
            got = custom[k] if k < len(custom) else None
        else:
            got = _pick(t.get(kind), i, "" if kind == "text" else None)
        out = _formatted(got, spec)
        if out is None:
            return None
        parts += (out, literal)
    lines = re.split(r"<br\s*/?>", "".join(parts))
    return "\n".join(html.unescape(_TAG.sub("", line)) for line in lines)


def _paint(t: dict[str, Any], i: int) -> dict[str, str]:
    m = t.get("marker") or {}
    line = m.get("line") or {}
    color = str(_pick(m.get("color"), i, "#1f77b4"))
    symbol = str(_pick(m.get("symbol"), i, "circle"))
    _, is_open, _ = _symbol(symbol)
    op = float(_pick(m.get("opacity"), i, 1.0)) * float(t.get("opacity", 1.0))
    lw = float(_pick(line.get("width"), i, 0 if not is_open else 1.5)) or (1.5 if is_open else 0)
    return {
        "fill": "none" if is_open else color,
        "stroke": color if is_open else str(_pick(line.get("color"), i, color)),
        "stroke-width": f"{lw:g}",
        "opacity": f"{op:.3g}",
        "data-symbol": symbol,
    }


def _attrs(paint: dict[str, str]) -> str:
    return " ".join(f"{k}={quoteattr(v)}" for k, v in paint.items())


def _points(t: dict[str, Any], xa: Axis, ya: Axis, out: list[str]) -> int:
    """Append trace `t`'s markers as a group (the paint most of them share on the group, a
    point's own only where it differs; each point carries its hover text in `data-h` and its id,
    the first customdata field, in `data-p`) and return how many were drawn."""
    m = t.get("marker") or {}
    size = m.get("size", 6)
    drawn: list[tuple[int, float, float]] = []
    for i, (x, y) in enumerate(zip(t.get("x") or [], t.get("y") or [], strict=False)):
        xv, yv = _num(x, xa.kind == "log"), _num(y, ya.kind == "log")
        if xv is not None and yv is not None:
            drawn.append((i, xv, yv))
    if not drawn:
        return 0
    paints = [_paint(t, i) for i, _, _ in drawn]
    common = {k: Counter(p[k] for p in paints).most_common(1)[0][0] for k in paints[0]}
    body: list[str] = []
    for (i, xv, yv), paint in zip(drawn, paints, strict=True):
        own = {k: v for k, v in paint.items() if v != common[k]}
        extra = (" " + _attrs(own)) if own else ""
        hover = hover_text(t, i)
        if hover is not None:
            extra += f" data-h={quoteattr(hover)}"
            custom = _pick(t.get("customdata"), i, None)
            if isinstance(custom, (list, tuple)) and custom:
                extra += f" data-p={quoteattr(html.unescape(str(custom[0])))}"
        symbol = paint["data-symbol"]
        shape, _, dot = _symbol(symbol)
        d = float(_pick(size, i, 6))
        cx, cy = _pct(xa.frac(xv)), _pct(1 - ya.frac(yv))
        if shape == "circle":  # the usual marker: a plain circle paints faster than a <use>
            body.append(f'<circle class="point" cx="{cx}" cy="{cy}" r="{d / 2:g}"{extra}/>')
        else:
            body.append(
                f'<use class="point" href="#sc-{shape}" x="{cx}" y="{cy}" width="{d:g}" height="{d:g}" '
                f'transform="translate({-d / 2:g},{-d / 2:g})"{extra}/>'
            )  # fmt: skip
        if dot:
            color = str(_pick(m.get("color"), i, "#1f77b4"))
            body.append(f'<circle cx="{cx}" cy="{cy}" r="1.5" fill={quoteattr(color)} stroke="none"/>')  # fmt: skip
        label = _pick(t.get("text"), i, None) if "text" in str(t.get("mode", "")) else None
        if label not in (None, ""):
            body.append(
                f'<text class="sc-label" x="{cx}" y="{cy}" stroke="none" dy="-7" '
                f'text-anchor="middle">{_text(label)}</text>'
            )
    out.append(f'<g class="sc-points" {_attrs(common)}>{"".join(body)}</g>')
    return len(drawn)


def _lines(t: dict[str, Any], xa: Axis, ya: Axis, out: list[str]) -> None:
    ln = t.get("line") or {}
    pts = [
        (xv, yv)
        for xv, yv in (
            (_num(x, xa.kind == "log"), _num(y, ya.kind == "log"))
            for x, y in zip(t.get("x") or [], t.get("y") or [], strict=False)
        )
    ]
    dash = DASHES.get(str(ln.get("dash", "solid")), "")
    style = (
        f'stroke={quoteattr(str(ln.get("color", "#444")))} stroke-width="{float(ln.get("width", 2)):g}" '
        f'opacity="{float(t.get("opacity", 1.0)):.3g}" stroke-linecap="round"'
        + (f' stroke-dasharray="{dash}"' if dash else "")
    )  # fmt: skip
    segs = []
    for (x0, y0), (x1, y1) in itertools.pairwise(pts):
        if None in (x0, y0, x1, y1):
            continue
        assert x0 is not None and y0 is not None and x1 is not None and y1 is not None
        segs.append(
            f'<line x1="{_pct(xa.frac(x0))}" y1="{_pct(1 - ya.frac(y0))}" '
            f'x2="{_pct(xa.frac(x1))}" y2="{_pct(1 - ya.frac(y1))}"/>'
        )
    if segs:
        out.append(f'<g class="sc-line" {style}>{"".join(segs)}</g>')


def _supported(fig: dict[str, Any]) -> bool:
    lay = fig.get("layout", {})
    traces = fig.get("data", [])
    if any(t.get("fill") or t.get("type") not in ("scatter", "scattergl") for t in traces):
        return False
    shapes = lay.get("shapes") or []
    if any(s.get("type") not in SUPPORTED_SHAPES or s.get("x0") != s.get("x1") for s in shapes):
        return False
    notes = lay.get("annotations") or []
    return all(n.get("yref") == "paper" and "xref" not in n for n in notes)


def _legend(fig: dict[str, Any]) -> str:
    lay = fig.get("layout", {})
    if lay.get("showlegend") is False:
        return ""
    items = [
        (t.get("legendrank", 1000), i, t)
        for i, t in enumerate(fig.get("data", []))
        if t.get("showlegend", True) is not False and t.get("visible", True) is not False
    ]
    rows: list[str] = []
    group = None
    for _, _, t in sorted(items, key=lambda r: (r[0], r[1])):
        # plotly leaves a gap (tracegroupgap, 10 px) between legend groups
        gap = " sc-group" if rows and t.get("legendgroup", "") != group else ""
        group = t.get("legendgroup", "")
        faded = ' style="opacity:.5"' if t.get("visible") == "legendonly" else ""
        if "markers" in str(t.get("mode", "")):
            m = t.get("marker") or {}
            shape, is_open, _ = _symbol(str(_pick(m.get("symbol"), 0, "circle")))
            color = quoteattr(str(_pick(m.get("color"), 0, "#444")))
            swatch = (
                f'<svg width="30" height="14" aria-hidden="true"><use href="#sc-{shape}" x="10" '
                f'y="2" width="10" height="10" fill={"none" if is_open else color} stroke={color} '
                f'stroke-width="1.5"/></svg>'
            )  # fmt: skip
        else:
            ln = t.get("line") or {}
            swatch = (
                f'<svg width="30" height="14" aria-hidden="true"><line x1="2" y1="7" x2="28" y2="7" '
                f'stroke={quoteattr(str(ln.get("color", "#444")))} stroke-width="{min(float(ln.get("width", 2)), 5):g}" '
                f'opacity="{float(t.get("opacity", 1.0)):.3g}"/></svg>'
            )  # fmt: skip
        rows.append(
            f'<div class="sc-item{gap}"{faded}>{swatch}<span>{_text(t.get("name", ""))}</span></div>'
        )
    title = ((lay.get("legend") or {}).get("title") or {}).get("text", "")
    head = f'<div class="sc-legend-title">{_text(title)}</div>' if title else ""
    return f'<div class="sc-legend">{head}{"".join(rows)}</div>'


def _axis_text(lay: dict[str, Any], name: str) -> str:
    title = (lay.get(f"{name}axis") or {}).get("title") or {}
    return _text(title.get("text", "") if isinstance(title, dict) else title)


def chart_markup(fig: dict[str, Any], *, label: str, width: float = NOMINAL_X_PX) -> str | None:
    """The figure as an HTML block of SVG (role="img", named by `label`), or None when the
    figure uses something this renderer does not draw. `width`: the x axis length in px the
    markers' padding assumes (the chart's width on the page, less its margins)."""
    if not _supported(fig):
        return None
    lay = fig.get("layout", {})
    xa, ya = axes_of(fig, width)
    margin = lay.get("margin", {})
    body: list[str] = []
    n_points = 0
    for t in drawable_traces(fig):
        mode = str(t.get("mode", "markers"))
        if "lines" in mode:
            _lines(t, xa, ya, body)
        if "markers" in mode:
            n_points += _points(t, xa, ya, body)
    grid_lines, xlabels, ylabels = [], [], []
    for f, text, major in ticks(xa, "x"):
        grid_lines.append(f'<line x1="{_pct(f)}" x2="{_pct(f)}" y1="0" y2="100%"/>')
        cls = "" if major else ' class="sc-minor"'
        xlabels.append(f'<text{cls} x="{_pct(f)}" y="100%" dy="19" text-anchor="middle">{escape(text)}</text>')  # fmt: skip
    for f, text, _ in ticks(ya, "y"):
        grid_lines.append(f'<line x1="0" x2="100%" y1="{_pct(1 - f)}" y2="{_pct(1 - f)}"/>')
        ylabels.append(f'<text x="0" dx="-8" y="{_pct(1 - f)}" dy="4" text-anchor="end">{escape(text)}</text>')  # fmt: skip
    for s in lay.get("shapes") or []:
        v = _num(s.get("x0"), xa.kind == "log")
        if v is not None:
            grid_lines.append(f'<line class="sc-shape" x1="{_pct(xa.frac(v))}" x2="{_pct(xa.frac(v))}" y1="0" y2="100%"/>')  # fmt: skip
    for n in lay.get("annotations") or []:
        v = n.get("x")
        v = 10**v if xa.kind == "log" and isinstance(v, (int, float)) else v
        if isinstance(v, (int, float)) and (xa.kind != "log" or v > 0):
            xlabels.append(f'<text x="{_pct(xa.frac(float(v)))}" y="0" dy="-4" text-anchor="middle">{_text(n.get("text"))}</text>')  # fmt: skip
    data = (
        f'data-x-type="{xa.kind}" data-x-range="{xa.lo!r} {xa.hi!r}" '
        f'data-y-type="{ya.kind}" data-y-range="{ya.lo!r} {ya.hi!r}"'
    )
    legend = _legend(fig)
    title = (lay.get("title") or {}).get("text", "")
    left, r, t, b = (margin.get(k, d) for k, d in (("l", 80), ("r", 80), ("t", 100), ("b", 80)))
    right = "max-content" if legend else f"{r}px"
    grid = f"grid-template-columns:{left}px minmax(0,1fr) {right};grid-template-rows:{t}px minmax(0,1fr) {b}px"
    return (
        f'<div class="static-chart" role="img" tabindex="0" '
        f'aria-label={_attr(f"{label}: {title} ({n_points} points; a static picture until the interactive chart has loaded)")} '
        f'style="height:{float(lay.get("height", 450)):g}px;{grid}">'
        f'<div class="sc-title" style="height:{t}px">{_text(title)}</div>'
        f'<div class="sc-plot"><svg class="sc-svg" width="100%" height="100%" overflow="visible" {data}>{_defs()}'
        f'<g class="sc-grid">{"".join(grid_lines)}</g>'
        f'<g class="sc-ticks sc-xticks">{"".join(xlabels)}</g><g class="sc-ticks">{"".join(ylabels)}</g>'
        f'<g class="scatterlayer">{"".join(body)}</g></svg></div>'
        f'{legend}<div class="sc-xtitle">{_axis_text(lay, "x")}</div>'
        f'<div class="sc-ytitle"><span>{_axis_text(lay, "y")}</span></div></div>'
    )  # fmt: skip
