"""A run page's top part, down to its charts, as plain HTML for the page the server answers.

`page_markup` walks the very component tree `/_dash-layout` will send (the shell, banners, filter
panel, axis controls, the main chart's card and what follows it down to the second chart) and
writes it as HTML with the same tags and classes, so the stylesheet lays it out where the Dash
page will put it; the charts are drawn by `dashboard.prerender.chart_svg` from the figures their
`dcc.Graph`s carry. Dash components that only React can draw (dropdowns, checklists) get a
stand-in of the same size. The walk stops after the last chart drawn: nothing below it moves
the charts.

The block is an overlay (`#static-page`, above the Dash page, `pointer-events: none` but on the
charts, which answer hover and click: `hover.js`). Everything but the charts is `inert` (no
focusable copies of the page's controls, no duplicate ids: ids are never written); each chart is
a named `role="img"`.

The order of a page with the overlay (`scripts_after_paint`): the HTML is painted with both
charts, hoverable at once; the scripts' tags carry a type the browser neither fetches nor runs,
and `assets/boot.js` preloads their bytes after the first frame but runs them (in their order,
then Dash's renderer) only on the user's first intent: a press, key, wheel, touch or focus
outside what the static charts answer, a drag on a chart, the pointer leaving a chart toward the
controls or reaching one, or a scroll. Dash then renders underneath, `paretolens.js` removes the
overlay once plotly has drawn both charts at the same place, and replays the click or key that
woke the page on the live element there. A page whose address names a table (`tab=`) runs them in the task after the
first frame. Run synchronously at the end of the body, as Dash writes them, they held the first
paint until they had been parsed and run; run after the first paint, they still kept the page
busy for about 540 ms (plotly's evaluation, React's first render, two chart draws) that a user
who only looks and hovers never needed. The layout and chunk preloads stay: holding them back
cost the live page's first chart 250 ms and won nothing.
"""

from __future__ import annotations

import base64
import hashlib
import re
import threading
import time
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from dashboard.prerender import chart_svg

__all__ = [
    "HOVER_CSP",
    "HOVER_TAG",
    "OVERLAY_ID",
    "Prerendered",
    "find_graph",
    "inline_styles",
    "page_markup",
    "scripts_after_paint",
]

OVERLAY_ID = "static-page"
HTML_NS = "dash_html_components"
# The one landmark a page has once; the overlay's copy is a plain block (the rest of the overlay
# is inert, so out of the accessibility tree anyway).
TAGS = {"main": "div", "form": "div"}
ATTRS = ("title", "href", "type", "value", "placeholder")
VOID = {"input", "br", "hr", "img"}
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")
# The script tags Dash writes (`Dash._generate_scripts_html`) and the renderer it starts with
# them; boot.js starts the same renderer, so a page whose Dash was given hooks keeps its tags.
_SCRIPT_TAG = re.compile(r'<script src="([^"<>]+)"></script>')
DEFAULT_RENDERER = "var renderer = new DashRenderer();"
AFTER_PAINT = "paretolens/after-paint"
# The static chart's hover and click (hover.js), inlined right after the first chart in the overlay: it answers the first
# hover with no request; the page's Content-Security-Policy allows it by its hash.
_HOVER_JS = (Path(__file__).with_name("hover.js")).read_text(encoding="utf-8")
HOVER_TAG = f"<script>{_HOVER_JS}</script>"
HOVER_CSP = (
    "'sha256-" + base64.b64encode(hashlib.sha256(_HOVER_JS.encode()).digest()).decode() + "'"
)


def inline_styles(css: str, assets: Path, prefix: str) -> str:
    """Dash's stylesheet links (`css`) to the app's own assets (URL `prefix` + file name, under
    `assets`) as `<style>` elements, so the first paint of a page with a static chart waits for
    no request: a stylesheet request queued behind the page's preloads at the server (its
    `/_dash-layout` holds the interpreter) held it. Links to anything else stay links."""

    def inline(m: re.Match[str]) -> str:
        path = assets / m.group(1)
        if "/" in m.group(1) or not path.is_file():
            return m.group(0)
        text = path.read_text(encoding="utf-8").replace("</", "<\\/")
        return f"<style data-href={quoteattr(m.group(1))}>{text}</style>"

    pattern = rf'<link rel="stylesheet" href="{re.escape(prefix)}([^"?/]+\.css)(?:\?[^"]*)?">'
    return re.sub(pattern, inline, css)


def scripts_after_paint(scripts: str, renderer: str, boot_url: str) -> str | None:
    """Dash's script tags (`scripts`) made to run after the first paint: typed `AFTER_PAINT` (a
    type the browser neither fetches nor runs), which boot.js runs in order, and the tag of
    `boot_url` last, with the id of the renderer tag it stands for. None when something in
    `scripts` is not a plain script tag (an inline script would have to run in between) or the
    renderer is not Dash's default one: the page keeps Dash's tags."""
    rest = _SCRIPT_TAG.sub("", scripts)
    if "<script" in rest or renderer != DEFAULT_RENDERER or not _SCRIPT_TAG.search(scripts):
        return None
    tags = _SCRIPT_TAG.sub(rf'<script type="{AFTER_PAINT}" src="\1"></script>', scripts)
    return f'{tags.strip()}\n<script id="_dash-renderer" src="{boot_url}"></script>'


def _props(comp: Any) -> dict[str, Any]:
    return dict(comp.to_plotly_json().get("props", {}))


def _is_component(v: Any) -> bool:
    return hasattr(v, "to_plotly_json") and hasattr(v, "_namespace")


def find_graph(tree: Any, graph_id: str) -> Any | None:
    """The `dcc.Graph` with id `graph_id` in a component tree, or None."""
    if isinstance(tree, (list, tuple)):
        return next((g for c in tree if (g := find_graph(c, graph_id)) is not None), None)
    if not _is_component(tree):
        return None
    if type(tree).__name__ == "Graph" and getattr(tree, "id", None) == graph_id:
        return tree
    return find_graph(getattr(tree, "children", None), graph_id)


def _style(style: Any) -> str:
    if not isinstance(style, dict):
        return ""
    return ";".join(f"{_CAMEL.sub('-', str(k)).lower()}:{v}" for k, v in style.items())


class _Writer:
    def __init__(self, charts: dict[str, str]) -> None:
        self.charts = charts  # graph id -> its static markup, in page order
        self.left = set(charts)
        self.done = False  # every chart is written: every later sibling is left out

    def holds_chart(self, node: Any) -> bool:
        return any(find_graph(node, g) is not None for g in self.left)

    def node(self, node: Any, inert: bool) -> str:
        if self.done:
            return ""
        if isinstance(node, (list, tuple)):
            return "".join(self.node(n, inert) for n in node)
        if node is None or isinstance(node, bool):
            return ""
        if not _is_component(node):
            return escape(str(node))
        mark = ""
        if not inert and not self.holds_chart(node):
            inert, mark = True, " inert"
        kind = type(node).__name__
        props = _props(node)
        if node._namespace == HTML_NS:
            return self.element(kind.lower(), props, inert, mark)
        return self.stand_in(kind, props, inert, mark)

    def element(self, tag: str, props: dict[str, Any], inert: bool, mark: str) -> str:
        out_tag = TAGS.get(tag, tag)
        cls = str(props.get("className") or "")
        attrs = (f" class={quoteattr(cls)}" if cls else "") + mark
        style = _style(props.get("style"))
        attrs += f" style={quoteattr(style)}" if style else ""
        for a in ATTRS:
            v = props.get(a)
            if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                attrs += f" {a}={quoteattr(str(v))}"
        if out_tag in VOID:
            return f"<{out_tag}{attrs}/>"
        return f"<{out_tag}{attrs}>{self.node(props.get('children'), inert)}</{out_tag}>"

    def stand_in(self, kind: str, props: dict[str, Any], inert: bool, mark: str) -> str:
        if kind == "Graph":
            style = quoteattr(_style(props.get("style")))
            if props.get("id") in self.left:
                self.left.discard(props["id"])
                self.done = not self.left
                return f'<div class="sk-graph" style={style}>{self.charts[props["id"]]}</div>'
            return f'<div class="sk-graph"{mark} style={style}></div>'
        if kind in ("Store", "Location", "Interval", "Download", "Tooltip", "ConfirmDialog"):
            return ""
        if kind == "Dropdown":
            multi = " sk-multi" if props.get("multi") else ""
            return f'<div class="sk-dropdown{multi}"{mark}>{escape(_shown(props))}</div>'
        if kind in ("Checklist", "RadioItems"):
            chosen = props.get("value")
            chosen = set(chosen) if isinstance(chosen, list) else {chosen}
            inline = ' class="sk-inline"' if props.get("inline") else ""
            items = "".join(
                f'<label{inline}><input type="{"checkbox" if kind == "Checklist" else "radio"}"'
                f"{' checked' if value in chosen else ''}/>{escape(text)}</label>"
                for value, text in _options(props.get("options"))
            )
            style = _style(props.get("style"))
            return f'<div class="sk-checks"{mark}{f" style={quoteattr(style)}" if style else ""}>{items}</div>'  # fmt: skip
        if kind == "Input":
            value = props.get("value")
            shown = "" if value is None else f" value={quoteattr(str(value))}"
            style = _style(props.get("style"))
            return f'<input type="text"{mark}{shown}{f" style={quoteattr(style)}" if style else ""}/>'  # fmt: skip
        if kind == "Link":
            return self.element("a", props, inert, mark)
        if kind == "Clipboard":
            return f'<span class="clip"{mark}>⧉</span>'
        if kind == "Markdown":
            return f"<div{mark}>{escape(str(props.get('children') or ''))}</div>"
        if kind == "Loading":
            return self.node(props.get("children"), inert)
        return ""  # grids, tabs and the like: below the chart, or drawn by React only


def _options(options: Any) -> list[tuple[Any, str]]:
    out = []
    for o in options or []:
        if isinstance(o, dict):
            out.append((o.get("value"), str(o.get("label", o.get("value")))))
        else:
            out.append((o, str(o)))
    return out


def _shown(props: dict[str, Any]) -> str:
    value, labels = props.get("value"), dict(_options(props.get("options")))
    values = value if isinstance(value, list) else ([] if value is None else [value])
    text = ", ".join(str(labels.get(v, v)) for v in values)
    return text or str(props.get("placeholder") or "")


def page_markup(
    tree: Any, graph_id: str, *, label: str, more: tuple[tuple[str, str, float], ...] = ()
) -> str | None:
    """The overlay HTML of a page's component tree down to the chart `graph_id`, or None when
    the tree has no such chart or the chart cannot be drawn statically. `more` names further
    charts (graph id, label, plot width in px) drawn statically too when the tree has them and
    they can be drawn: the overlay then runs down to the last of them."""
    graph = find_graph(tree, graph_id)
    if graph is None or not isinstance(getattr(graph, "figure", None), dict):
        return None
    chart = chart_svg.chart_markup(graph.figure, label=label)
    if chart is None:
        return None
    # hover.js right after the first chart: it answers a hover as soon as that chart is parsed,
    # not once the rest of the overlay (a second chart of as many points) has been.
    charts = {graph_id: chart + HOVER_TAG}
    for other_id, other_label, width in more:
        other = find_graph(tree, other_id)
        fig = getattr(other, "figure", None)
        drawn = chart_svg.chart_markup(fig, label=other_label, width=width) if isinstance(fig, dict) else None  # fmt: skip
        if drawn is not None:
            charts[other_id] = drawn
    body = _Writer(charts).node(tree, False)
    return f'<div id="{OVERLAY_ID}" class="static-page">{body}</div>'


class Prerendered:
    """Page trees rendered for a page's HTML (its static first chart), kept for the
    `/_dash-layout` request the same page sends a moment later, so the two agree and the server
    renders the page once. Each is handed out once, within `ttl` seconds."""

    def __init__(self, ttl: float = 10.0, size: int = 32) -> None:
        self.ttl, self.size = ttl, size
        self._lock = threading.Lock()
        self._trees: dict[tuple[object, ...], tuple[float, Any]] = {}

    def put(self, key: tuple[object, ...], tree: Any) -> None:
        """Keep a tree for the layout request of page `key` (path, query, store version)."""
        with self._lock:
            now = time.monotonic()
            self._trees = {k: v for k, v in self._trees.items() if now - v[0] < self.ttl}
            if len(self._trees) >= self.size:
                self._trees.pop(next(iter(self._trees)))
            self._trees[key] = (now, tree)

    def take(self, key: tuple[object, ...]) -> Any | None:
        """The tree kept for page `key`, if fresh (it is not handed out again)."""
        with self._lock:
            got = self._trees.pop(key, None)
        return got[1] if got is not None and time.monotonic() - got[0] < self.ttl else None
