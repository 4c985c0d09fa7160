"""`/embed?<the run page's query>` (issue 14, item 7): the run page's main chart and nothing
else, for an iframe in a write-up.

A plain HTML page, not a Dash page: the plotly bundle from the app's assets, the figure as a JSON
data block (`type="application/json"`, never run) and `embed.js`, which draws it. No inline
script, so the page keeps the app's Content-Security-Policy; it is the one route whose
`frame-ancestors` allows other sites (`EMBED_FRAME_ANCESTORS`) and that sends no
`X-Frame-Options` (dashboard/app.py).
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

from flask import Response

from dashboard.pages.run_charts import main_figure
from views import urls
from views.query.state import RunView
from views.source import DataSource
from views.unknown_runs import not_found_text

EMBED_FRAME_ANCESTORS = "*"
EMBED_SCRIPT = "embed.js"


def _finite(v: Any) -> Any:
    """NaN and infinities as null (JSON has neither), through dicts, lists and tuples."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_finite(x) for x in v]
    return v


def _json_block(doc: object) -> str:
    """JSON safe inside a <script type="application/json"> element."""
    text = json.dumps(_finite(doc), separators=(",", ":"), allow_nan=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _page(title: str, body: str, *, plotly: str | None = None, script: str | None = None) -> str:
    scripts = "".join(
        f'<script src="{html.escape(s)}"></script>' for s in (plotly, script) if s is not None
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="same-origin"><link rel="icon" href="data:,">'
        f"<title>{html.escape(title)}</title>"
        "<style>html,body{margin:0;height:100%;font-family:system-ui,sans-serif}"
        "#chart{width:100%;height:100%;min-height:420px}.msg{padding:1em;color:#555}</style>"
        f"</head><body>{body}{scripts}</body></html>"
    )


def response(source: DataSource, query: str, plotly_src: str, script_src: str) -> Response:
    """The embed page of a run-page query (a message page, 400/404, when it draws nothing)."""
    view, _notes = RunView.parse(query)
    unknown = not_found_text(RunView.requested_runs(query), set(source.store.run_ids()))
    if unknown is not None:
        body = f'<p class="msg">Not found: {html.escape(unknown)}.</p>'
        return Response(_page("paretolens", body), 404, content_type="text/html; charset=utf-8")
    if not view.runs:
        body = '<p class="msg">No run: add unofficialRun=&lt;run id&gt; (the run page query).</p>'
        return Response(_page("paretolens", body), 400, content_type="text/html; charset=utf-8")
    data = source.run_data(view)
    fig = main_figure(data, view)
    fig["layout"].pop("height", None)
    fig["layout"]["autosize"] = True
    link = urls.run(view)
    doc = {"figure": fig, "link": link}
    body = (
        f'<div id="chart" role="img" aria-label="{html.escape(str(fig["layout"]["title"]["text"]))}"></div>'
        f'<script type="application/json" id="figure">{_json_block(doc)}</script>'
    )
    page = _page(
        f"paretolens · {', '.join(view.runs)}",
        body,
        plotly=plotly_src,
        script=script_src,
    )
    return Response(page, content_type="text/html; charset=utf-8")
