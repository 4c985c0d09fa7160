"""How the app delivers its pages: compressed responses, preloads, shared analysis, grid rows."""

from __future__ import annotations

import gzip
import math
import re
from datetime import UTC, date, datetime
from typing import Any

import polars as pl
from flask_compress.compat import compression  # zstd: the stdlib's from 3.14, else backports

from dashboard import components as c
from dashboard.app import layout_url
from dashboard.compress import StaticCompressor, accepted
from views.query.state import RunView
from views.source import DataSource

try:
    import brotlicffi as brotli
except ImportError:
    import brotli

PLOTLY = "/assets/plotly-basic-4.1.1.min.js"


def test_grid_rows_are_what_jsonable_gives_per_cell() -> None:
    frame = pl.DataFrame(
        {
            "f": [1.5, float("nan"), float("inf"), None, -float("inf")],
            "f32": pl.Series([0.25, float("nan"), None, 1.0, 2.0], dtype=pl.Float32),
            "i": [1, None, 3, 4, 5],
            "s": ["a", None, "<b>", "", "é"],
            "d": [date(2026, 1, 2), None, date(2026, 1, 3), None, date(2026, 1, 4)],
            "t": [datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), None, None, None, None],
            "l": [[1.0, 2.0], None, [], [3.0], None],
            "b": [True, False, None, True, False],
        }
    )
    per_cell = [{k: c.jsonable(v) for k, v in r.items()} for r in frame.iter_rows(named=True)]
    assert c.rows(frame) == per_cell
    assert c.rows(frame)[0]["t"] == "2026-01-02T03:04:05+00:00" and c.rows(frame)[1]["f"] is None
    assert all(math.isfinite(r["f"]) for r in c.rows(frame) if r["f"] is not None)
    assert c.rows(frame.clear()) == []


def test_views_that_differ_only_in_at_ab_or_x2_share_the_main_analysis(source: DataSource) -> None:
    view = RunView(runs=("dsr1",))
    base = source.run_data(view)
    for other in (
        view.replace(at=40.0),
        view.replace(ab="kv_offloading"),
        view.replace(x2="p90_ttft"),
    ):
        data = source.run_data(other)
        assert data is not base
        assert data.analysis is base.analysis and data.points is base.points
    assert source.run_data(view.replace(x2="p90_ttft")).second is not base.second
    assert source.run_data(view.replace(ab="kv_offloading")).deltas is not base.deltas
    assert source.run_data(view.replace(offload=("dram",))).analysis is not base.analysis


def test_the_page_preloads_its_layout_dependencies_and_chart_chunks(client: Any) -> None:
    run = client.get("/inference?unofficialRun=dsr1").get_data(as_text=True)
    head = run.split("</head>")[0]
    # the layout request names its page (assets/00-layout-page.js encodes it the same way)
    layout = "/_dash-layout?page=%2Finference%3FunofficialRun%3Ddsr1"
    for href in (layout, "/_dash-dependencies"):
        assert f'<link rel="preload" href="{href}" as="fetch" crossorigin="anonymous">' in head
    assert 'href="/_dash-component-suites/dash/dcc/async-graph.js" as="script"' in head
    index = client.get("/").get_data(as_text=True)
    assert 'href="/_dash-layout?page=%2F"' in index and "async-graph.js" not in index


def _get(client: Any, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of a GET, the response closed (static files are open files)."""
    resp = client.get(path, headers={k.replace("_", "-"): v for k, v in headers.items()})
    try:
        return resp.status_code, dict(resp.headers), resp.get_data()
    finally:
        resp.close()


def test_static_files_are_served_compressed_once_and_revalidate(client: Any) -> None:
    status, headers, raw = _get(client, PLOTLY)
    assert status == 200 and "Content-Encoding" not in headers
    status, headers, body = _get(client, f"{PLOTLY}?m=1", Accept_Encoding="gzip, deflate, br, zstd")
    assert headers["Content-Encoding"] == "br" and "Accept-Encoding" in headers["Vary"]
    assert brotli.decompress(body) == raw and int(headers["Content-Length"]) < len(raw) / 2
    assert headers["ETag"].endswith(':br"')
    status, _, body = _get(client, PLOTLY, Accept_Encoding="br", If_None_Match=headers["ETag"])
    assert status == 304 and not body
    _, headers, body = _get(client, PLOTLY, Accept_Encoding="gzip;q=1, br;q=0")
    assert headers["Content-Encoding"] == "gzip" and gzip.decompress(body) == raw
    assert "Content-Encoding" not in _get(client, PLOTLY, Accept_Encoding="identity")[1]


def test_fingerprints_and_queries_do_not_multiply_the_static_cache(app: Any) -> None:
    static = next(
        f for f in app.server.after_request_funcs[None] if isinstance(f, StaticCompressor)
    )
    client = app.server.test_client()
    suite = "/_dash-component-suites/dash/dcc/async-graph.js"
    for path in (suite, suite.replace(".js", ".v1_2_3m99.js"), suite.replace(".js", ".v9m1.js")):
        status, headers, _ = _get(client, path, Accept_Encoding="br")
        assert status == 200 and headers["Content-Encoding"] == "br"
    for q in range(3):
        _get(client, f"{PLOTLY}?m={q}", Accept_Encoding="br")
    keys = [k for k in static._bodies._items if k[0] in (suite, PLOTLY) and k[1] == "br"]
    assert len(keys) == 2


def test_dynamic_responses_are_compressed_as_the_browser_accepts(client: Any) -> None:
    url = layout_url("/inference?unofficialRun=dsr1")
    plain = client.get(url).get_data()
    packed = client.get(url, headers={"Accept-Encoding": "gzip, br, zstd"})
    assert packed.headers["Content-Encoding"] == "zstd"
    assert compression.zstd.decompress(packed.get_data()) == plain
    assert "Content-Encoding" not in client.get(url).headers


def test_accept_encoding_follows_q_values() -> None:
    assert accepted("gzip, deflate, br, zstd", ("br", "gzip")) == "br"
    assert accepted("gzip;q=0.5, br;q=0.4", ("br", "gzip")) == "gzip"
    assert accepted("br;q=0, *", ("br", "gzip")) == "gzip"
    assert accepted("identity", ("br", "gzip")) is None and accepted("", ("br",)) is None
    assert accepted("br;q=nope", ("br",)) is None


def test_a_page_with_a_static_chart_runs_its_scripts_after_the_first_paint(client: Any) -> None:
    index = client.get("/").get_data(as_text=True)
    # A page without a static chart keeps Dash's own tags and renderer.
    assert "paretolens/after-paint" not in index and "boot.js" not in index
    assert '<script id="_dash-renderer" type="application/javascript">var renderer' in index
    dash_tags = re.findall(r'<script src="([^"]+)"></script>', index)
    assert any("dash_renderer" in src for src in dash_tags)
    run = client.get("/inference?unofficialRun=dsr1").get_data(as_text=True)
    assert 'id="static-page"' in run and "new DashRenderer" not in run
    # The run page: the same scripts in the same order, plotly first and the grid library only
    # preloaded, all typed so the parser neither fetches nor runs them; boot.js runs them.
    typed = re.findall(r'<script type="paretolens/after-paint" src="([^"]+)"></script>', run)
    assert typed == [PLOTLY] + [s for s in dash_tags if "dash_ag_grid" not in s]
    assert '<script src="' not in run  # nothing the parser would fetch and run itself
    assert '<script id="_dash-renderer" src="/assets/boot.js"></script>' in run
    status, _, boot = _get(client, "/assets/boot.js")
    assert status == 200 and b'script[type="paretolens/after-paint"]' in boot


def test_a_page_with_a_static_chart_carries_its_stylesheet(client: Any) -> None:
    """Its first paint waits for no request: the app's stylesheet is in the HTML (the same
    bytes as /assets/app.css); other pages link it."""
    css = _get(client, "/assets/app.css")[2].decode()
    run = client.get("/inference?unofficialRun=dsr1").get_data(as_text=True)
    head = run.split("</head>")[0]
    assert f'<style data-href="app.css">{css}</style>' in head
    assert 'rel="stylesheet"' not in head and ".static-page" in css
    index = client.get("/").get_data(as_text=True)
    assert re.search(r'<link rel="stylesheet" href="/assets/app\.css\?m=[0-9.]+">', index)
    assert "<style" not in index.split("</head>")[0]
