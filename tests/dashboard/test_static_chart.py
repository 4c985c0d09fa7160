"""The run page's static first chart (issue 18): what its HTML draws is what plotly draws.

The fast tests read the page HTML and the `/_dash-layout` the same page asks for through the Flask
test client, map every static point back to data coordinates and compare it with the interactive
figure's points (value, symbol, colour, opacity). The browser tests load the page with its scripts
blocked (the static chart alone) and then normally, and compare where the points and the chart are
on screen.
"""

from __future__ import annotations

import json
import math
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from dashboard.app import create_app, layout_url
from dashboard.prerender import chart_svg, page_html
from ingest.pipeline import ingest_paths
from ingest.store import Store
from tests.dashboard.browser import open_page, wait, wait_chart
from tests.dashboard.conftest import FIXTURES, RUNS

SVG = "{http://www.w3.org/2000/svg}"
STATES = (
    "unofficialRun=dsr1",
    "unofficialRun=dsr1&y=output_tput_per_gpu&logx=1",
    "unofficialRun=dsr1&offload=dram&frontier=1",
    "unofficialRun=dsr1,dsr1-rerun&logy=1",
    "unofficialRun=mtp&at=40",
)


def _static(client: Any, query: str) -> ET.Element | None:
    page = client.get(f"/inference?{query}").get_data(as_text=True)
    start = page.find('<div id="static-page"')
    if start < 0:
        return None
    end = page.index('<div id="react-entry-point"', start)
    # the one script of the overlay, hover.js, sits right after the first chart (it answers a
    # hover once that chart is parsed); anything else that is a script stays, for the checks
    overlay = page[start:end]
    assert overlay.count(page_html.HOVER_TAG) == 1
    assert overlay[: overlay.index(page_html.HOVER_TAG)].count('class="static-chart') == 1
    overlay = overlay.replace(page_html.HOVER_TAG, "")
    # the markup is XHTML-clean (escaped text, quoted attributes, closed tags) and carries SVG
    text = overlay.replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1)
    text = re.sub(r"<svg (?!xmlns)", f'<svg xmlns="{SVG[1:-1]}" ', text)
    return ET.fromstring(text.replace(" inert", ' inert=""').replace(" checked/", ' checked=""/'))


def _layout_figure(client: Any, query: str, graph_id: str = "main-chart") -> dict[str, Any]:
    resp = client.get(layout_url(f"/inference?{query}"))
    found = _find(json.loads(resp.get_data(as_text=True)), graph_id)
    assert found is not None, f"no {graph_id} in the layout"
    return found


# The static charts of the overlay, in page order: the main chart, then the one below it.
GRAPHS = ("main-chart", "second-chart")


def static_charts(root: ET.Element) -> dict[str, ET.Element]:
    """Graph id -> the overlay's static chart standing in for it."""
    charts = [e for e in root.iter() if e.attrib.get("class") == "static-chart"]
    return dict(zip(GRAPHS, charts, strict=False))


def _find(node: Any, graph_id: str) -> dict[str, Any] | None:
    if isinstance(node, list):
        return next((f for n in node if (f := _find(n, graph_id)) is not None), None)
    if not isinstance(node, dict):
        return None
    props = node.get("props", {})
    if props.get("id") == graph_id and isinstance(props.get("figure"), dict):
        return dict(props["figure"])
    return _find(props.get("children"), graph_id)


def _pick(v: Any, i: int, default: Any) -> Any:
    return (
        (v[i] if i < len(v) else default) if isinstance(v, list) else (default if v is None else v)
    )


def figure_points(fig: dict[str, Any]) -> list[tuple[float, float, str, str, float]]:
    """(x, y, symbol, colour, opacity) of every point plotly draws from a figure."""
    logx = fig["layout"]["xaxis"].get("type") == "log"
    logy = fig["layout"]["yaxis"].get("type") == "log"
    out = []
    for t in fig["data"]:
        if t.get("visible", True) is not True or "markers" not in t.get("mode", "markers"):
            continue
        m = t.get("marker", {})
        for i, (x, y) in enumerate(zip(t.get("x") or [], t.get("y") or [], strict=False)):
            if not all(isinstance(v, (int, float)) and math.isfinite(v) for v in (x, y)):
                continue
            if (logx and x <= 0) or (logy and y <= 0):
                continue
            op = float(_pick(m.get("opacity"), i, 1.0)) * float(t.get("opacity", 1.0))
            out.append(
                (
                    x,
                    y,
                    str(_pick(m.get("symbol"), i, "circle")),
                    str(_pick(m.get("color"), i, "")),
                    op,
                )
            )
    return sorted(out)


def static_points(root: ET.Element) -> list[tuple[float, float, str, str, float]]:
    """The same, read back from the static chart's SVG (positions mapped to data values)."""
    svg = root.find(f".//{SVG}svg[@class='sc-svg']")
    assert svg is not None
    xlo, xhi = map(float, svg.attrib["data-x-range"].split())
    ylo, yhi = map(float, svg.attrib["data-y-range"].split())
    xa = chart_svg.Axis(svg.attrib["data-x-type"], xlo, xhi, 1.0)
    ya = chart_svg.Axis(svg.attrib["data-y-type"], ylo, yhi, 1.0)
    out = []
    for group in svg.iter(f"{SVG}g"):
        if group.attrib.get("class") != "sc-points":
            continue
        for use in group:
            if use.attrib.get("class") != "point":
                continue
            attr = {**group.attrib, **use.attrib}  # the group's paint unless the point has its own
            keys = ("cx", "cy") if use.tag == f"{SVG}circle" else ("x", "y")
            fx, fy = (float(attr[k].rstrip("%")) / 100 for k in keys)
            stroke, fill = attr["stroke"], attr["fill"]
            out.append(
                (
                    xa.value(fx),
                    ya.value(1 - fy),
                    attr["data-symbol"],
                    stroke if fill == "none" else fill,
                    float(attr["opacity"]),
                )
            )
    return sorted(out)


def _same(a: list[tuple[Any, ...]], b: list[tuple[Any, ...]]) -> None:
    assert len(a) == len(b)
    for p, q in zip(a, b, strict=True):
        assert p[2:4] == q[2:4], (p, q)
        assert math.isclose(p[4], q[4], abs_tol=0.002), (p, q)
        for u, v in zip(p[:2], q[:2], strict=True):
            assert math.isclose(u, v, rel_tol=2e-4, abs_tol=1e-6), (p, q)


@pytest.mark.parametrize("query", STATES)
def test_static_chart_draws_the_figures_points(client: Any, query: str) -> None:
    root = _static(client, query)
    assert root is not None, f"no static chart for {query}"
    _layout_figure(client, query)  # the layout request the page makes (served the same tree)
    charts = static_charts(root)
    assert list(charts) == list(GRAPHS)  # both charts of the first layout are drawn
    for graph, chart in charts.items():
        fig = _layout_figure(client, query, graph)  # a fresh render of the same view
        expected, drawn = figure_points(fig), static_points(chart)
        assert expected, f"the state draws no points in {graph}"
        _same(drawn, expected)
        assert f"({len(expected)} points" in chart.attrib["aria-label"]


def test_a_hidden_arm_is_not_drawn(client: Any) -> None:
    fig = _layout_figure(client, STATES[0])
    arm = next(t["meta"] for t in fig["data"] if t.get("mode") == "markers+text")
    query = f"unofficialRun=dsr1&hide={arm}"
    root = _static(client, query)
    assert root is not None
    hidden = _layout_figure(client, query)
    drawn = static_points(root)
    _same(drawn, figure_points(hidden))
    assert len(drawn) < len(figure_points(fig))


def test_what_it_cannot_draw_it_does_not_claim(client: Any) -> None:
    # a baseline shades the uplift between two runs: plotly draws that page, not the HTML
    assert _static(client, "unofficialRun=dsr1-rerun&baseline=dsr1") is None
    assert _static(client, "unofficialRun=dsr1") is not None
    assert _static(client, "unofficialRun=no-such-run") is None


def test_the_layout_request_gets_the_tree_once(monkeypatch: pytest.MonkeyPatch) -> None:
    kept = page_html.Prerendered(ttl=10.0, size=2)
    kept.put(("/inference", "a"), "tree a")
    assert kept.take(("/inference", "b")) is None
    assert kept.take(("/inference", "a")) == "tree a"
    assert kept.take(("/inference", "a")) is None  # handed out once
    for q in ("1", "2", "3"):
        kept.put(("/inference", q), q)
    assert kept.take(("/inference", "1")) is None  # the oldest made room
    now = time.monotonic()
    monkeypatch.setattr(page_html.time, "monotonic", lambda: now + 11)
    assert kept.take(("/inference", "3")) is None  # stale


def test_every_string_is_escaped(client: Any) -> None:
    page = client.get("/inference?unofficialRun=mtp").get_data(as_text=True)
    assert '<div id="static-page"' in page
    assert "<img src=x" not in page  # the stray file's name, listed in the run banner
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    root = _static(client, "unofficialRun=mtp")
    assert root is not None and not root.findall(".//script")
    # no copy of a page id: only the overlay's own marker shapes have one
    assert all(e.attrib["id"].startswith("sc-") for e in root.findall(".//*[@id]"))


def test_only_the_chart_is_outside_inert_parts(client: Any) -> None:
    root = _static(client, "unofficialRun=dsr1")
    assert root is not None
    focusable = ("a", "button", "input", "select", "textarea", "details")

    def walk(el: ET.Element, inert: bool) -> list[str]:
        inert = inert or "inert" in el.attrib
        own = [el.tag] if not inert and el.tag in focusable else []
        return own + [t for c in el for t in walk(c, inert)]

    assert walk(root, False) == []


MAIN_CARD = ".run-layout > div > .chart-card"
BOX = (
    "var e = document.querySelector(arguments[0]); if (!e) { return null; }"
    "var r = e.getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.width, r.height];"
)
BOXES = (
    "return Array.from(document.querySelectorAll(arguments[0])).map(function (e) {"
    " var r = e.getBoundingClientRect(); return [r.left + scrollX, r.top + scrollY, r.width, r.height]; });"
)
CENTRES = (
    "return Array.from(document.querySelectorAll(arguments[0])).map(function (e) {"
    " var r = e.getBoundingClientRect(); return [r.left + scrollX + r.width / 2, r.top + scrollY + r.height / 2]; });"
)


def _matched(a: list[list[float]], b: list[list[float]], tol: float) -> bool:
    rest = list(b)
    for x, y in a:
        best = min(rest, key=lambda p: (p[0] - x) ** 2 + (p[1] - y) ** 2)
        if math.hypot(best[0] - x, best[1] - y) > tol:
            return False
        rest.remove(best)
    return not rest


@pytest.mark.browser
@pytest.mark.parametrize("query", STATES[:3])
def test_static_chart_is_replaced_in_place(driver: Any, live_url: str, query: str) -> None:
    url = f"{live_url}/inference?{query}"
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*.js"]})
    try:
        driver.get(url)  # no script runs: what the HTML alone shows before hydration
        wait(driver, lambda d: d.execute_script(BOX, "#static-page .static-chart"))
        before = driver.execute_script(BOX, "#static-page .static-chart")
        plot_before = driver.execute_script(BOX, "#static-page .sc-plot")
        # the main chart's points (the second chart's card sits in the two columns below it)
        static_pts = driver.execute_script(
            CENTRES, f"#static-page {MAIN_CARD} .scatterlayer .point"
        )
        panel_before = driver.execute_script(BOXES, "#static-page .sidebar > .control")
    finally:
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        driver.execute_cdp_cmd("Network.disable", {})
    assert static_pts
    open_page(driver, url)
    wait_chart(driver)  # the live chart drawn, the static page gone
    after = driver.execute_script(BOX, "#main-chart")
    plot_after = driver.execute_script(BOX, "#main-chart .nsewdrag")
    live_pts = driver.execute_script(CENTRES, "#main-chart .scatterlayer .point")
    # the filter panel beside the chart does not move either (its checklists and radio items
    # laid out as Dash draws them: 28 px rows, inline ones side by side)
    panel_after = driver.execute_script(BOXES, "#react-entry-point .sidebar > .control")
    assert len(panel_before) == len(panel_after) > 0
    for b, a in zip(panel_before, panel_after, strict=True):
        assert abs(b[1] - a[1]) <= 4 and abs(b[3] - a[3]) <= 2, (panel_before, panel_after)
    assert all(abs(u - v) <= 3 for u, v in zip(before, after, strict=True)), (before, after)
    assert all(abs(u - v) <= 3 for u, v in zip(plot_before, plot_after, strict=True)), (
        plot_before,
        plot_after,
    )
    assert len(static_pts) == len(live_pts)
    assert _matched(static_pts, live_pts, tol=4.0), (
        "the static points are not where plotly draws them"
    )


def test_a_page_is_rendered_once_per_version_of_what_it_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run page's HTML and layout are rendered once and served again until an ingest (or a
    master config) changes what the page reads; then the page is rendered anew and shows it."""
    from dashboard import app as app_module

    store = Store(tmp_path / "store")
    rel, meta = RUNS["dsr1"]
    ingest_paths([FIXTURES / rel], store, run_id="dsr1", run_meta=meta)
    client = create_app(store).server.test_client()
    renders: list[tuple[str, str]] = []
    real = app_module.render
    monkeypatch.setattr(  # a spy: the real renderer runs and is counted
        app_module, "render", lambda ctx, path, q: renders.append((path, q)) or real(ctx, path, q)
    )
    page = "/inference?unofficialRun=dsr1"

    def visit() -> tuple[str, bytes]:
        """The page's static overlay (the rest of its HTML holds a per-request id) and layout."""
        html = client.get(page).get_data(as_text=True)
        overlay = html[
            html.index('<div id="static-page"') : html.index('<div id="react-entry-point"')
        ]
        layout = client.get(layout_url(page))
        return overlay, layout.get_data()

    first, again = visit(), visit()
    assert first == again and "<svg" in first[0]
    assert renders == [("/inference", "unofficialRun=dsr1")]  # the second visit rendered nothing
    rel, meta = RUNS["dsr1-rerun"]
    ingest_paths([FIXTURES / rel], store, run_id="dsr1-rerun", run_meta=meta)
    after = visit()
    assert len(renders) == 2 and after != first
    assert b"dsr1-rerun" in after[1] and b"dsr1-rerun" not in first[1]  # the runs picker lists it
    (store.root / "master-configs").mkdir(exist_ok=True)
    (store.root / "master-configs" / "nightly.yaml").write_text("dsr1-fp8-b200-sglang: {}\n")
    assert visit() != after and len(renders) == 3
