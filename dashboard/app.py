"""The Dash app: routing, the page shell, security headers.

`create_app(store, settings)` builds one independent app (its own data source, caches and
callbacks: nothing is registered globally). The page a browser asked for is rendered into the
initial layout: the layout request names its page by its `page` parameter (`layout_url`; the
page's preload link carries it and the page's script `assets/00-layout-page.js` adds it to Dash's
request), so the first chart arrives with the layout instead of after a callback round trip. A
layout request that names no page (Dash's own check of the layout on its first request, a client
that does not add it) gets the shell, whose one-off router callback fills the page in from its
own location; the Referer header is never read. The run page's HTML itself carries
the page's top with its first chart drawn as static SVG (`dashboard/page_html.py`), painted
before any script runs and replaced in place once plotly has drawn; the tree rendered for it is
the one the page's `/_dash-layout` request then gets.

The app reads no environment: its store, settings and golden AL tables are handed to
`create_app` by whoever builds it (`paretolens serve`, `paretolens.wsgi` for
`waitress-serve paretolens.wsgi:server`, a test), as datasette's CLI builds `Datasette(...)`.
"""

from __future__ import annotations

import gc
import importlib
import importlib.util
import logging
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import flask
import polars as pl
from dash import Dash, Input, Output, State, html
from werkzeug.middleware.proxy_fix import ProxyFix

from dashboard import components as c
from dashboard import compress, encode, routes
from dashboard.context import AppContext, app_context
from dashboard.figures.style import WEBGL_THRESHOLD
from dashboard.ids import Id
from dashboard.pages import compare, embed, history, index, jobs, missing, points, run
from dashboard.prerender import page_html
from dashboard.settings import AppSettings, LocalSettings, allowed_hosts
from ingest.contract.schema import RunCol
from ingest.store import Store
from views import urls
from views.cache import LRU
from views.query.state import CompareView, RunView
from views.source import DataSource

ASSETS = Path(__file__).resolve().parent / "assets"
log = logging.getLogger("paretolens.dashboard")

Page = Callable[[AppContext, str], Any]
PAGES: dict[str, tuple[str, Page]] = {
    urls.INDEX_PATH: ("runs", index.layout),
    urls.RUN_PATH: ("run", run.layout),
    urls.POINTS_PATH: ("run", points.layout),
    urls.COMPARE_PATH: ("compare", compare.layout),
    urls.JOBS_PATH: ("jobs", jobs.layout),
    urls.HISTORY_PATH: ("runs", history.layout),
}


_POLYFILL = re.compile(r'<script src="[^"]*/deps/polyfill@[^"]*"></script>\s*')
_DASH_TABLE = re.compile(r'<script src="[^"]*/dash_table/[^"]*"></script>\s*')
_AG_GRID = re.compile(r'<script src="([^"]*/dash_ag_grid/[^"]*)"></script>')
# The run page's first view has no grid: the grid library (1.3 MB) is only preloaded there, and
# paretolens.js runs it when the tables come near the screen, just before they are asked for.
LAZY_GRID_PATHS = (urls.RUN_PATH,)
# plotly partial bundles (official dist files, assets_ignore keeps Dash from loading both):
# "basic" has the SVG scatter (1.2 MB), "gl2d" adds WebGL scatter (1.5 MB; the full bundle is 4.8).
PLOTLY_BUNDLES = {"basic": "plotly-basic-4.1.1.min.js", "gl2d": "plotly-gl2d-4.1.1.min.js"}
ChartsOf = Callable[[str, str], str | None]
StaticOf = Callable[[str, str], str]
# dcc's lazily loaded chunks a chart page needs right away (webpack asks for them only once the
# layout is rendered); the page preloads them. The ag-grid chunk follows the grid library.
DCC_CHUNKS = "_dash-component-suites/dash/dcc/"
CHART_CHUNKS = ("async-graph.js", "async-dropdown.js")
CHART_PATHS = (urls.RUN_PATH, urls.COMPARE_PATH, urls.HISTORY_PATH)
AG_GRID_CHUNK = "_dash-component-suites/dash_ag_grid/async-community.js"
BOOT_SCRIPT = "boot.js"  # runs a static-chart page's scripts on the user's first intent
# The second chart's x axis length at a 1440 px wide window (its half of the two columns, less
# its margins): the static copy pads its markers for it, as plotly does.
SECOND_X_PX = 560.0
WARM_THREAD = "paretolens-warm"  # compresses the static files once the app is built


class _Dash(Dash):
    """Dash with a leaner page: no babel polyfill (every browser Dash 4 supports has what it
    polyfills; the one thing Dash's bundles still call, regeneratorRuntime, ships in the assets,
    25 kB instead of 100 kB), no dash_table bundle (unused), the grid library deferred on the run
    page, and the smallest plotly bundle the page's charts need (none on pages without a chart;
    dcc.Graph uses window.Plotly)."""

    charts_of: ChartsOf = staticmethod(lambda path, query: "gl2d")
    static_of: StaticOf = staticmethod(lambda path, query: "")

    def _setup_plotlyjs(self) -> None:
        self._plotlyjs_url = ""

    def serve_layout(self) -> Any:
        # plotly's encoder's bytes without its Python walk of every figure (dashboard/encode.py)
        return self.backend.make_response(
            encode.to_json(self.get_layout()), mimetype="application/json"
        )

    def interpolate_index(
        self,
        metas: Any = "",
        title: Any = "",
        css: Any = "",
        config: Any = "",
        scripts: Any = "",
        app_entry: Any = "",
        favicon: Any = "",
        renderer: Any = "",
    ) -> str:
        if flask.has_request_context():
            # The page's first chart, drawn in the HTML (dashboard/page_html.py), beside the
            # entry point React renders into (React would clear anything inside it); the scripts
            # then start once it has been painted.
            path = flask.request.path
            static = self.static_of(path, flask.request.query_string.decode("utf-8", "replace"))
            later = static and page_html.scripts_after_paint(
                scripts, self.renderer, self.get_asset_url(BOOT_SCRIPT)
            )
            if later:
                scripts, renderer = later, ""
                css = page_html.inline_styles(css, ASSETS, self.get_asset_url(""))
            app_entry = static + app_entry  # hover.js is in `static`, after its first chart
        page = super().interpolate_index(  # type: ignore[no-untyped-call]  # Dash's own, untyped
            metas=metas + self._preloads(), title=title, css=css, config=config,
            scripts=scripts, app_entry=app_entry, favicon=favicon, renderer=renderer,
        )  # fmt: skip
        # The page's language, for screen readers (Dash's template has none).
        return str(page).replace("<html>", '<html lang="en">', 1)

    def _preloads(self) -> str:
        """What the page will ask for once its scripts have run, asked for with them instead:
        the layout (the server renders it, first chart included, while the browser is busy with
        the scripts), the callback list and, on chart pages, the chart and dropdown chunks of
        dcc. The requests match the renderer's own (same URL, CORS mode, same-origin
        credentials), so the browser hands it the preloaded responses."""
        prefix = self.config.requests_pathname_prefix
        layout = f"{prefix}_dash-layout"
        if flask.has_request_context():  # the URL the page's own layout request will have
            path = flask.request.path
            query = flask.request.query_string.decode("utf-8", "replace")
            if (path.rstrip("/") or "/") not in PAGES:
                query = ""  # no page of the app (a 404): what was typed after `?` is not echoed
            layout = layout_url(path + (f"?{query}" if query else ""), prefix)
        links = [
            f'<link rel="preload" href="{href}" as="fetch" crossorigin="anonymous">'
            for href in (layout, f"{prefix}_dash-dependencies")
        ]
        if flask.has_request_context():
            path = flask.request.path
            query = flask.request.query_string.decode("utf-8", "replace")
            if path in CHART_PATHS and self.charts_of(path, query) is not None:
                links += [
                    f'<link rel="preload" href="{prefix}{DCC_CHUNKS}{chunk}" as="script">'
                    for chunk in CHART_CHUNKS
                ]
        return "\n".join(links)

    def _generate_scripts_html(self) -> str:
        html_ = _DASH_TABLE.sub("", _POLYFILL.sub("", super()._generate_scripts_html()))
        if not flask.has_request_context():
            return html_
        path, query = flask.request.path, flask.request.query_string.decode("utf-8", "replace")
        if path in LAZY_GRID_PATHS:
            html_ = _AG_GRID.sub(
                r'<link rel="preload" as="script" href="\1" data-lazy-script>', html_
            )
        bundle = self.charts_of(path, query)
        if bundle is not None:
            tag = f'<script src="{self.get_asset_url(PLOTLY_BUNDLES[bundle])}"></script>'
            html_ = f"{tag}\n{html_}"
        return html_


def plotly_bundle(source: DataSource) -> ChartsOf:
    """Which plotly bundle a page needs: none without a chart, WebGL past `WEBGL_THRESHOLD`
    points in the runs it shows (a chart never draws more points than its runs have)."""

    def charts_of(path: str, query: str) -> str | None:
        if path == urls.RUN_PATH:
            runs: tuple[str, ...] = RunView.parse(query)[0].runs
        elif path == urls.COMPARE_PATH:
            cview = CompareView.parse(query)[0]
            runs = tuple(r for r in (cview.base, cview.candidate) if r)
        elif path == urls.HISTORY_PATH:
            return "basic"  # one point per run and arm
        else:
            return None
        cat = source.catalog()
        n = cat.filter(pl.col(RunCol.RUN_ID).is_in(list(runs))).get_column(RunCol.POINT_COUNT).sum()
        return "gl2d" if (n or 0) > WEBGL_THRESHOLD else "basic"

    return charts_of


def static_pages(ctx: AppContext, kept: page_html.Prerendered) -> StaticOf:
    """The static overlay of a run page's HTML (see dashboard/page_html.py), empty on other
    pages or when its chart cannot be drawn statically. A page is rendered once per version of
    what it reads (`DataSource.page_version`): a shared link opened again, a reload or the
    back button (which reloads) gets the page, its overlay and its layout without rendering."""
    rendered = LRU(8)

    def draw(path: str, query: str) -> tuple[str, Any]:
        active, content = render(ctx, path, query)
        tree = c.shell(content, active)
        markup = page_html.page_markup(
            tree, Id.MAIN_CHART, label="Frontier chart",
            more=((Id.SECOND_CHART, "Throughput-latency chart", SECOND_X_PX),),
        )  # fmt: skip
        return markup or "", tree

    def static_of(path: str, query: str) -> str:
        if path.rstrip("/") != urls.RUN_PATH or len(query) > MAX_QUERY_BYTES:
            return ""
        try:
            version = ctx.source.page_version(RunView.parse(query)[0].runs)
            markup, tree = rendered.get((path, query, version), lambda: draw(path, query))
        except Exception:  # the page still works without it: Dash renders it as before
            log.exception("the static first chart of %s?%s could not be drawn", path, query)
            return ""
        # Keyed by the store's version: a tree drawn before a commit is never handed out after it.
        kept.put((path, query, ctx.source.store.version()), tree)
        return markup

    return static_of


# The path `_page_of_request` gives for a page address over the length limits.
TOO_LONG = "\0too-long"


def render(app: AppContext, path: str, query: str) -> tuple[str, Any]:
    """The active nav key and the content of a page."""
    if path == TOO_LONG or len(query) > MAX_QUERY_BYTES or len(path) > MAX_PATH_BYTES:
        return "", html_too_long()
    active, page = PAGES.get(path.rstrip("/") or "/", ("", None))
    if page is None:
        return "", html_not_found(path)
    return active, page(app, query)


def html_too_long() -> Any:
    """The content of a page address over the length limits."""
    return html.Div(
        [
            html.H2("Address too long"),
            html.P(
                f"This page's address is over the limit ({MAX_PATH_BYTES} bytes of path, "
                f"{MAX_QUERY_BYTES} of query string)."
            ),
            html.A("All runs", href=urls.index()),
        ],
        className="card",
    )


def html_not_found(path: str) -> Any:
    """The content of an unknown path."""
    return html.Div(
        [
            html.H2("Not found"),
            html.P(f"No page at {path}."),
            html.A("All runs", href=urls.index()),
        ],
        className="card",
    )


# The layout request's parameter naming its page: the page's path and query, URL-encoded
# (`/_dash-layout?page=%2Finference%3FunofficialRun%3Ddsr1`, see `layout_url`).
PAGE_PARAM = "page"


def layout_url(page: str, prefix: str = "/") -> str:
    """The layout request of a page (path and query, e.g. '/inference?unofficialRun=dsr1'),
    encoded as the browser's `encodeURIComponent` does (`assets/00-layout-page.js`)."""
    return f"{prefix}_dash-layout?{PAGE_PARAM}={quote(page, safe=_URI_COMPONENT_SAFE)}"


# What `encodeURIComponent` leaves as it is besides letters, digits and `-_.~`.
_URI_COMPONENT_SAFE = "!'()*"


def _page_of_request() -> tuple[str, str] | None:
    """(path, query) of the page whose layout is asked for, named by the request itself
    (`?page=`, see `layout_url`); None when it names none or not a page of this site (the
    shell then routes itself). The Referer header is not read: a request says what it asks for."""
    if not flask.has_request_context():
        return None
    named = flask.request.args.get(PAGE_PARAM)
    if named is None:
        return None
    parts = urlsplit(named[: MAX_PATH_BYTES + MAX_QUERY_BYTES + 200])
    if parts.scheme or parts.netloc or not parts.path.startswith("/"):
        return None
    if len(parts.query) > MAX_QUERY_BYTES or len(parts.path) > MAX_PATH_BYTES:
        return TOO_LONG, ""
    return parts.path or "/", parts.query


def _security_headers(resp: flask.Response, csp: str) -> flask.Response:
    if flask.has_request_context() and flask.request.path == urls.EMBED_PATH:
        # The one page other sites may frame (issue 14): its own frame-ancestors, no
        # X-Frame-Options (which has no "allow" value); every other header as elsewhere.
        csp = csp.replace(
            "frame-ancestors 'none'", f"frame-ancestors {embed.EMBED_FRAME_ANCESTORS}"
        )
    else:
        resp.headers.setdefault("X-Frame-Options", "DENY")
    resp.headers.setdefault("Content-Security-Policy", csp)
    resp.headers.setdefault("X-Content-Type-Options", "nosniff")
    resp.headers.setdefault("Referrer-Policy", "same-origin")
    return resp


MAX_REQUEST_BYTES = 8 * 1024 * 1024
# The longest query string (a page's state) and path answered; longer gets 414. A run page with
# twenty runs and every filter set is under 2 kB.
MAX_QUERY_BYTES = 8 * 1024
MAX_PATH_BYTES = 2 * 1024


def _host_name(host: str) -> str:
    """The name of a Host header value: port, IPv6 brackets and a trailing dot dropped."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1:].partition("]")[0]
    if host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")


def _guard_request(allowed: frozenset[str] | None) -> flask.Response | None:
    """Refuse, before any work: a Host not served here (400: DNS rebinding), an over-long path
    or query string (414)."""
    req = flask.request
    if allowed is not None and _host_name(req.host) not in allowed:
        shown = req.host[:100]
        return routes.error_response(
            400,
            f"this server does not answer for host {shown!r}: open it by one of "
            f"{', '.join(sorted(allowed))}, or add the name to PARETOLENS_ALLOWED_HOSTS",
        )
    if len(req.query_string) > MAX_QUERY_BYTES:
        return routes.error_response(
            414,
            f"the query string is {len(req.query_string)} bytes, over the "
            f"{MAX_QUERY_BYTES} byte limit",
        )
    if len(req.path) > MAX_PATH_BYTES:
        return routes.error_response(
            414, f"the path is {len(req.path)} bytes, over the {MAX_PATH_BYTES} byte limit"
        )
    return None


def _one_version(store: Store, wsgi: Callable[..., Any]) -> Callable[..., Any]:
    """The WSGI app with each request inside `store.pinned()`."""

    def app(environ: Any, start_response: Any) -> Any:
        with store.pinned():
            return wsgi(environ, start_response)

    return app


def settle_heap() -> None:
    """Once a server process has built its app: collect the start-up garbage, then move every
    object left (modules, the app, its layouts and caches) out of the collector's reach
    (`gc.freeze`). A full collection then walks only what requests made since: on the history
    store one walked the 160,000 start-up objects, about 80 ms inside every few requests
    (benchmarks/findings.md, issue 26 item 5). For server processes only (`paretolens serve`,
    `paretolens.wsgi`): what is frozen is never freed, so a process that builds many apps (a
    test session) does not call it.
    """
    gc.collect()
    gc.freeze()


def create_app(
    store: Store | Path | str,
    settings: AppSettings | None = None,
    *,
    golden_dir: Path | None = None,
) -> Dash:
    """A paretolens Dash app over a store.

    Args:
        store: a Store or its directory.
        settings: what the app reads (`AppSettings`; `paretolens.settings.Settings` is one);
            None is `LocalSettings`: loopback, no token, launching off.
        golden_dir: the golden AL tables the AL checks read (None: no golden tables).
    """
    st = store if isinstance(store, Store) else Store(Path(store))
    settings = settings or LocalSettings(store=st.root)
    source = DataSource(st, golden_dir)
    ctx = app_context(source, settings)
    dash_app = _Dash(
        __name__,
        assets_folder=str(ASSETS),
        assets_ignore=r"(plotly-.*|embed|boot)\.js",
        title="paretolens",
        update_title=None,  # type: ignore[arg-type]  # Dash: None keeps the title as it is
        suppress_callback_exceptions=True,
        serve_locally=True,
        # Links to other sites send no Referer (a page's URL names its runs and filters).
        meta_tags=[{"name": "referrer", "content": "same-origin"}],
    )

    prerendered = page_html.Prerendered()

    def layout() -> Any:
        target = _page_of_request()
        if target is None:
            return c.shell(None, "", pending_route=True)
        kept = prerendered.take((*target, st.version()))
        if kept is not None:
            return kept
        active, content = render(ctx, *target)
        return c.shell(content, active)

    # Each request reads one version of the store (`Store.pinned`), whichever of its parts asks.
    dash_app.server.wsgi_app = _one_version(st, dash_app.server.wsgi_app)
    if settings.proxies:
        # Behind reverse proxies: the client's address, scheme and Host from their headers.
        n = settings.proxies
        dash_app.server.wsgi_app = ProxyFix(dash_app.server.wsgi_app, x_for=n, x_proto=n, x_host=n)
    # Bound every request body (forms, uploads, callback payloads): larger ones get 413.
    dash_app.server.config["MAX_CONTENT_LENGTH"] = MAX_REQUEST_BYTES
    hosts = allowed_hosts(settings)
    dash_app.server.before_request(lambda: _guard_request(hosts))
    dash_app.layout = layout
    dash_app.charts_of = plotly_bundle(source)
    dash_app.static_of = static_pages(ctx, prerendered)

    @dash_app.callback(
        Output(Id.PAGE, "children"),
        Input(Id.ROUTE_LOCATION, "pathname"),
        State(Id.ROUTE_LOCATION, "search"),
    )
    def route(pathname: str | None, search: str | None) -> Any:
        path = pathname if isinstance(pathname, str) and pathname else "/"
        query = search.lstrip("?") if isinstance(search, str) else ""
        return render(ctx, path, query)[1]

    for page in (run, missing, index, compare, jobs):
        page.register(dash_app, ctx)
    c.register_copy_link(dash_app)
    routes.register_routes(
        dash_app.server, source, settings, ctx.fetcher, ctx.throttle, dash_app.callback_map
    )

    def embed_page() -> flask.Response:
        query = flask.request.query_string.decode("utf-8", "replace")
        plotly = dash_app.get_asset_url(
            PLOTLY_BUNDLES[plotly_bundle(source)(urls.RUN_PATH, query) or "basic"]
        )
        return embed.response(source, query, plotly, dash_app.get_asset_url(embed.EMBED_SCRIPT))

    dash_app.server.add_url_rule(urls.EMBED_PATH, "embed", embed_page, methods=["GET"])

    routes.not_found_guard(dash_app.server, lambda: PAGES)
    routes.unknown_runs_guard(dash_app.server, lambda: set(st.run_ids()))
    csp = "; ".join(
        [
            "default-src 'self'",
            # plotly's WebGL traces compile shaders with Function(); no inline script but Dash's own.
            "script-src 'self' 'unsafe-eval' "
            + " ".join([*dash_app.csp_hashes(), page_html.HOVER_CSP]),
            "style-src 'self' 'unsafe-inline'",
            "img-src 'self' data: blob:",
            "font-src 'self' data:",
            "connect-src 'self'",
            "worker-src 'self' blob:",
            "object-src 'none'",
            "base-uri 'self'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )
    dash_app.server.after_request(lambda resp: _security_headers(resp, csp))
    compress.enable(dash_app.server)

    def warm() -> None:
        source.warm()
        # Every script and stylesheet a page can load: the index's tags (outside a run page the
        # grid library is a plain script tag), both plotly bundles, dcc's and the grid's chunks.
        with dash_app.server.test_request_context(urls.index()):
            css = dash_app._generate_css_dist_html()  # type: ignore[no-untyped-call]
            tags = dash_app._generate_scripts_html() + css
        prefix = dash_app.config.requests_pathname_prefix
        extra = [dash_app.get_asset_url(b) for b in (*PLOTLY_BUNDLES.values(), BOOT_SCRIPT)]
        extra += [f"{prefix}{DCC_CHUNKS}{c}" for c in CHART_CHUNKS] + [f"{prefix}{AG_GRID_CHUNK}"]
        compress.warm_static(dash_app.server, tags, extra)

    settle_optional_imports()
    threading.Thread(target=warm, name=WARM_THREAD, daemon=True).start()
    return dash_app


OPTIONAL_IMPORTS = ("pandas",)


def settle_optional_imports() -> None:
    """Import now, in the thread building the app, the optional modules that other libraries
    import on first use when they are installed (`OPTIONAL_IMPORTS`). polars imports pandas the
    first time it builds a Series from other data, which the warm-up thread or a request does,
    while plotly's JSON encoder takes pandas from `sys.modules` as it finds it: a request
    encoding a figure while another thread was still importing pandas met a partially
    initialised module and answered 500 (seen on `serve --workers 2` with pandas installed).
    Modules that are not installed are left alone."""
    for name in OPTIONAL_IMPORTS:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)
