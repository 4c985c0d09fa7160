"""The static-plotly floor: a minimal page drawing the anchor points with the run page's bundle.

Issue 18 asks for a same-run anchor of the browser figure, so that its ratio means something on a
shared machine: a page that does nothing but load the plotly bundle the run page loads (the same
file from `dashboard/assets`) and draw the same 117 points with one `Plotly.newPlot` (one marker
trace per arm, the run page's chart size). It is what any plotly page pays before its first point.
It is served by a small threaded HTTP server on loopback, gzip-compressed as the app compresses
its scripts, and loaded in the same fresh-browser way, interleaved with the run page.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import polars as pl

from ingest.contract.col import Col

ASSETS = Path(__file__).resolve().parents[1] / "dashboard" / "assets"
CHART_ID = "anchor-chart"  # the probe keys plots by the nearest id containing "chart"
PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>static plotly anchor</title></head>
<body><div id="{chart}" style="height:470px"></div>
<script src="/{bundle}"></script><script src="/points.js"></script><script src="/draw.js"></script>
</body></html>
"""
DRAW = """(function () {
  var traces = window.ANCHOR_POINTS.map(function (arm) {
    return { type: "scatter", mode: "markers", name: arm.name, x: arm.x, y: arm.y, marker: { size: 9 } };
  });
  Plotly.newPlot("CHART_ID", traces, { height: 470, margin: { l: 64, r: 12, t: 44, b: 52 },
    xaxis: { title: { text: "Interactivity, median (tok/s/user)" } },
    yaxis: { title: { text: "Total tok/s/GPU" }, rangemode: "tozero" } });
})();
""".replace("CHART_ID", CHART_ID)


def points_by_arm(points: pl.DataFrame) -> list[dict[str, Any]]:
    """The anchor run's points as one {name, x, y} series per arm (interactivity, tput/GPU)."""
    rows = points.select(Col.ARM_ID, Col.MEDIAN_INTVTY, Col.TPUT_PER_GPU).drop_nulls()
    return [
        {
            "name": str(arm),
            "x": group.get_column(Col.MEDIAN_INTVTY).to_list(),
            "y": group.get_column(Col.TPUT_PER_GPU).to_list(),
        }
        for (arm,), group in rows.sort(Col.ARM_ID).group_by(Col.ARM_ID, maintain_order=True)
    ]


def _files(series: list[dict[str, Any]], bundle: str) -> dict[str, tuple[bytes, str]]:
    return {
        "/": (PAGE.format(chart=CHART_ID, bundle=bundle).encode(), "text/html; charset=utf-8"),
        f"/{bundle}": ((ASSETS / bundle).read_bytes(), "text/javascript"),
        "/points.js": (
            f"window.ANCHOR_POINTS = {json.dumps(series)};\n".encode(),
            "text/javascript",
        ),
        "/draw.js": (DRAW.encode(), "text/javascript"),
    }


@contextlib.contextmanager
def serve(series: list[dict[str, Any]], bundle: str) -> Iterator[str]:
    """Serve the anchor page on a free loopback port; yields its URL."""
    files = {
        path: (body, gzip.compress(body, 6), kind)
        for path, (body, kind) in _files(series, bundle).items()
    }

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            found = files.get(self.path.split("?")[0])
            if found is None:
                self.send_error(404)
                return
            body, packed, kind = found
            zipped = "gzip" in self.headers.get("Accept-Encoding", "")
            self.send_response(200)
            self.send_header("Content-Type", kind)
            self.send_header("Cache-Control", "no-store")
            if zipped:
                self.send_header("Content-Encoding", "gzip")
            self.send_header("Content-Length", str(len(packed if zipped else body)))
            self.end_headers()
            self.wfile.write(packed if zipped else body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, name="anchor-page", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
