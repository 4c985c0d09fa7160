"""The static first chart answers a hover (issue 28): each point of the SVG carries the text
plotly's hover label shows for it, and a small script in the page shows it before plotly loads.

The fast tests compare every static point's hover text and id with the interactive figure's
data (its customdata and coordinates) over several page states, and check plotly's number
formats (`toPrecision`) on values worked by hand. The browser test hovers a static point with the
plotly bundle blocked and reads numbers computed from the sample run's result file, then loads
the page normally and checks that nothing moved when the live chart took over.
"""

from __future__ import annotations

import html
import json
import math
import re
import xml.etree.ElementTree as ET
from typing import Any

import pytest

from dashboard.prerender import chart_svg
from tests.dashboard.browser import open_page, wait, wait_chart
from tests.dashboard.conftest import FIXTURES
from tests.dashboard.test_static_chart import (
    GRAPHS,
    STATES,
    SVG,
    _layout_figure,
    _static,
    static_charts,
)

RUN_DIR = FIXTURES / "agentic_agg" / "dsr1_b200_multiturn_pareto_input"
# the TP4 EP4 vLLM point at 128 users with KV offload to DRAM
POINT_FILE = (
    "agg_dsr1_tp4_users128_offloadon_fp4_vllm_tp4-ep4-dpafalse_disagg-false_spec-none_conc128"
    "_b200-dgxc-slurm_5.json"
)


def _hovers(root: ET.Element) -> dict[str, list[tuple[float, float, str]]]:
    """Point id -> (x fraction, y fraction, hover text) of each static point carrying a hover."""
    out: dict[str, list[tuple[float, float, str]]] = {}
    for el in root.iter():
        if el.attrib.get("class") != "point" or "data-h" not in el.attrib:
            continue
        keys = ("cx", "cy") if el.tag == f"{SVG}circle" else ("x", "y")
        fx, fy = (float(el.attrib[k].rstrip("%")) / 100 for k in keys)
        out.setdefault(el.attrib["data-p"], []).append((fx, fy, el.attrib["data-h"]))
    return out


def _near(text: str, value: float, digits: int) -> bool:
    """`text` is `value` to `digits` significant digits."""
    got = float(text.replace("\u2212", "-"))
    return math.isclose(got, value, rel_tol=0.51 * 10 ** (1 - digits), abs_tol=1e-12)


@pytest.mark.parametrize("graph", GRAPHS)
@pytest.mark.parametrize("query", STATES)
def test_every_static_point_carries_plotlys_hover_text(client: Any, query: str, graph: str) -> None:
    root = _static(client, query)
    assert root is not None
    chart = static_charts(root)[graph]
    svg = chart.find(f".//{SVG}svg[@class='sc-svg']")
    assert svg is not None
    xa = chart_svg.Axis(svg.attrib["data-x-type"], *map(float, svg.attrib["data-x-range"].split()), 1.0)  # fmt: skip
    ya = chart_svg.Axis(svg.attrib["data-y-type"], *map(float, svg.attrib["data-y-range"].split()), 1.0)  # fmt: skip
    hovers = _hovers(chart)
    fig = _layout_figure(client, query, graph)
    checked = 0
    for t in fig["data"]:
        if t.get("visible", True) is not True or "hovertemplate" not in t:
            continue
        for x, y, cd in zip(t["x"], t["y"], t["customdata"], strict=True):
            candidates = hovers[html.unescape(cd[0])]
            fx, fy, text = min(candidates, key=lambda c: abs(c[0] - xa.frac(x)) + abs(c[1] - (1 - ya.frac(y))))  # fmt: skip
            assert math.isclose(fx, xa.frac(x), abs_tol=1e-5) and math.isclose(fy, 1 - ya.frac(y), abs_tol=1e-5)  # fmt: skip
            lines = text.split("\n")
            # the arm, the run and conc, both axes, the verdict: as the template writes them
            assert lines[0] == html.unescape(cd[2])
            assert lines[1] == f"run {html.unescape(cd[1])} · conc {cd[3]}"
            xm = re.fullmatch(r"(\w+): (\S+) .*", lines[2])
            ym = re.fullmatch(r"(\w+): (\S+) .*", lines[3])
            assert xm and ym, lines
            assert _near(xm.group(2), x, 4) and _near(ym.group(2), y, 5), (lines, x, y)
            assert lines[4].startswith(f"verdict: {html.unescape(cd[4])}")
            assert "<" not in text or "<" in html.unescape("".join(map(str, cd)))
            checked += 1
    assert checked == sum(len(v) for v in hovers.values()) > 0


def test_numbers_are_written_as_plotly_writes_them() -> None:
    # d3-format's .4g is JavaScript's toPrecision(4): trailing zeros kept, ties away from zero,
    # exponent form past the precision, d3's minus sign
    cases = {
        (12.8160, 4): "12.82",
        (1376.8038837562208, 5): "1376.8",
        (100.0, 5): "100.00",
        (1234.5, 4): "1235",
        (12345.0, 4): "1.235e+4",
        (0.000123456, 4): "0.0001235",
        (1.234e-7, 3): "1.23e-7",
        (-2.5, 1): "\u22123",
        (9.99999, 4): "10.00",
    }
    for (v, p), text in cases.items():
        assert chart_svg._js_precision(v, p) == text, (v, p)


def test_hover_text_is_plain_text() -> None:
    trace = {
        "x": [1.5], "y": [2.0], "customdata": [["id&lt;1&gt;", "&lt;img src=x onerror=alert(1)&gt;"]],
        "hovertemplate": "<b>%{customdata[1]}</b><br>x %{x:.2f} · %{customdata[0]}<extra></extra>",
    }  # fmt: skip
    assert chart_svg.hover_text(trace, 0) == "<img src=x onerror=alert(1)>\nx 1.50 · id<1>"
    markup = chart_svg.chart_markup(
        {"data": [{**trace, "type": "scatter", "mode": "markers"}], "layout": {}}, label="c"
    )
    assert markup is not None and "<img" not in markup
    assert 'data-h="&lt;img src=x onerror=alert(1)&gt;&#10;x 1.50 · id&lt;1&gt;"' in markup
    assert chart_svg.hover_text({**trace, "hoverinfo": "skip"}, 0) is None
    assert chart_svg.hover_text({**trace, "hovertemplate": "%{marker.size}"}, 0) is None


LAYOUT_SHIFT = (
    "var done = arguments[arguments.length - 1];"
    "new PerformanceObserver(function (list, obs) {"
    " var s = 0; list.getEntries().forEach(function (e) { if (!e.hadRecentInput) { s += e.value; } });"
    " obs.disconnect(); done(s); }).observe({type: 'layout-shift', buffered: true});"
    "setTimeout(function () { done(0); }, 2000);"
)
TIP = (
    "var t = document.querySelector('#static-page .sc-tip');"
    "return t && t.style.display !== 'none' ? t.textContent : null;"
)


@pytest.mark.browser
def test_static_chart_answers_a_hover_before_plotly(driver: Any, live_url: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    data = json.loads((RUN_DIR / POINT_FILE).read_text())
    intvty, tput = 1 / data["median_itl"], data["tput_per_gpu"]  # 12.816..., 1376.80...
    url = f"{live_url}/inference?unofficialRun=dsr1"
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*plotly*"]})
    try:
        driver.get(url)
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#static-page .point[data-h]"))
        point = next(
            p
            for p in driver.find_elements(By.CSS_SELECTOR, "#static-page .point[data-h]")
            if p.get_attribute("data-h").startswith("TP4 EP4 | no spec | kv dram\nrun dsr1 · conc 128\n")
        )  # fmt: skip
        ActionChains(driver).move_to_element(point).perform()
        text = wait(driver, lambda d: d.execute_script(TIP))
        assert driver.execute_script("return typeof window.Plotly") == "undefined"
        lines = text.split("\n")
        assert lines[:4] == [
            "TP4 EP4 | no spec | kv dram",
            "run dsr1 · conc 128",
            f"median_intvty: {intvty:.4g} tok/s/user",  # 12.82
            f"tput_per_gpu: {tput:.5g} tok/s/GPU",  # 1376.8
        ]
        assert lines[5] == "requests successful/total: 150/284 · 134 warm-up, not profiled · error rate –"  # fmt: skip
        # a click pins it: the label stays when the pointer leaves the chart
        ActionChains(driver).click(point).perform()
        ActionChains(driver).move_by_offset(0, -400).perform()
        assert driver.execute_script(TIP) == text
        pin = data_p(point)
        assert driver.execute_script("return window.paretolensStaticPin") == pin
        # the live page takes over (here without plotly, once it gives up waiting for the
        # chart) and pins the same point: the address and the detail panel say so
        wait(driver, lambda d: f"point={pin}" in d.current_url, timeout=60)
        # the address changes first; the detail panel is the pin callback's answer
        wait(driver, lambda d: "1376.8" in d.find_element(By.ID, "detail").text, timeout=30)
    finally:
        driver.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        driver.execute_cdp_cmd("Network.disable", {})
    # loaded normally, the live chart replaces the static one without moving anything
    open_page(driver, url)
    wait_chart(driver)  # the live chart drawn, the static page gone
    shift = driver.execute_async_script(LAYOUT_SHIFT)
    assert shift < 0.1, shift


def data_p(el: Any) -> str:
    return str(el.get_attribute("data-p"))


def test_a_5000_point_chart_is_drawn_and_stays_small() -> None:
    # the 2,000-value limit is gone: 5,000 WebGL-sized points in 10 traces, each point with its
    # hover text; a point writes only its position, size and what differs from its trace's paint
    n = 500
    traces = [
        {
            "type": "scattergl", "mode": "markers", "name": f"arm {k}",
            "x": [1.0 + i for i in range(n)], "y": [float(k * n + i) for i in range(n)],
            "marker": {"color": f"#00{k}0{k}0", "symbol": ["circle"] * (n - 1) + ["diamond"], "size": 9},
            "customdata": [[f"p{k}-{i}", "run"] for i in range(n)],
            "hovertemplate": "%{customdata[0]}<br>x %{x:.4g}<extra></extra>",
        }
        for k in range(10)
    ]  # fmt: skip
    markup = chart_svg.chart_markup({"data": traces, "layout": {}}, label="c")
    assert markup is not None and "(5000 points;" in markup
    assert markup.count('class="point"') == 5000
    assert markup.count('data-symbol="diamond"') == 10  # the one point per trace that differs
    assert 'data-h="p3-499&#10;x 500.0"' in markup
    hover_bytes = sum(len(f' data-h="p{k}-{i}&#10;x {chart_svg._js_precision(1.0 + i, 4)}" data-p="p{k}-{i}"') for k in range(10) for i in range(n))  # fmt: skip
    assert (len(markup) - hover_bytes) / 5000 < 80
