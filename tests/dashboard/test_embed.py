"""Issue 14, item 7: `/embed?<run page query>` serves the main chart alone, and is the one route
other sites may frame."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from dashboard.pages import run as run_page
from views.query.state import RunView
from views.source import DataSource

Q = "unofficialRun=dsr1&at=30&logy=1"


def _figure(body: bytes) -> dict[str, Any]:
    found = re.search(rb'<script type="application/json" id="figure">(.*?)</script>', body, re.S)
    assert found
    return json.loads(found.group(1))  # type: ignore[no-any-return]


def test_embed_headers_allow_framing_there_only(client: Any) -> None:
    resp = client.get(f"/embed?{Q}")
    assert resp.status_code == 200
    csp = resp.headers["Content-Security-Policy"]
    assert "frame-ancestors *" in csp and "'none'" not in csp.split("frame-ancestors")[1]
    assert "X-Frame-Options" not in resp.headers
    assert resp.headers["X-Content-Type-Options"] == "nosniff"
    assert "script-src 'self'" in csp  # still no inline script
    for path in ("/", f"/inference?{Q}", f"/export/points.csv?{Q}", "/_dash-layout", "/nope"):
        other = client.get(path)
        assert "frame-ancestors 'none'" in other.headers["Content-Security-Policy"], path
        assert other.headers["X-Frame-Options"] == "DENY", path


def test_embed_is_one_chart_and_nothing_else(client: Any, source: DataSource) -> None:
    body = client.get(f"/embed?{Q}").data
    assert body.count(b'id="chart"') == 1
    assert b"_dash-" not in body and b"topbar" not in body and b"<script>" not in body
    scripts = re.findall(rb'<script src="([^"]+)"', body)
    assert [s.rsplit(b"/", 1)[-1].split(b"?")[0] for s in scripts] == [
        b"plotly-basic-4.1.1.min.js",
        b"embed.js",
    ]
    doc = _figure(body)
    view = RunView.parse(Q)[0]
    page = run_page.main_figure(source.run_data(view), view)
    assert [t.get("name") for t in doc["figure"]["data"]] == [t.get("name") for t in page["data"]]
    assert doc["figure"]["layout"]["yaxis"]["type"] == "log"
    assert doc["link"] == f"/inference?{view.query()}"


def test_embed_of_no_run_or_a_missing_run(client: Any) -> None:
    assert client.get("/embed").status_code == 400
    resp = client.get("/embed?unofficialRun=not-there")
    assert resp.status_code == 404 and b"not in the store" in resp.data


def test_embed_script_is_not_loaded_by_dash_pages(client: Any) -> None:
    assert b"embed.js" not in client.get(f"/inference?{Q}").data
    with client.get("/assets/embed.js") as resp:
        assert resp.status_code == 200


@pytest.mark.browser
def test_browser_embed_draws_the_chart(driver: Any, live_url: str) -> None:
    from tests.dashboard.browser import chart_points, console_errors, wait

    driver.get(f"{live_url}/embed?{Q}")
    assert wait(driver, lambda d: chart_points(d, "chart"))
    assert console_errors(driver) == []
