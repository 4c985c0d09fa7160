"""The run page, `/inference?unofficialRun=<id>[,<id>...]`: frontier charts, verdicts, AL, deltas.

The whole page, first chart included, is in the initial layout (no callback before the first
draw); an SVG second chart too, drawn with the main one; a WebGL second chart's figure is asked
for once the main chart is drawn (`on_second`) and drawn a step at a time (deferred.js); the
open table once the tables are scrolled into view (`on_tables`: until then neither the grid
library nor a grid is built). Every control writes the URL; callbacks parse the controls into a
`RunView`, ask the data layer for the (cached) analysis and hand it to the figure builders
(`run_charts`)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any

from dash import ALL, ClientsideFunction, Dash, Input, Output, State, dcc, html, no_update
from dash.development.base_component import Component
from dash.exceptions import PreventUpdate
from pydantic import SecretStr

from analysis.comparison.baseline import MAIN as MAIN_BASELINE
from dashboard import components as c
from dashboard import encode, forged
from dashboard.context import AppContext
from dashboard.figures import updates
from dashboard.ids import Id, control
from dashboard.pages import launch, missing, overlays, run_tco
from dashboard.pages import run_panels as p
from dashboard.pages import run_tables as t
from dashboard.pages.run_charts import (
    AXES,
    chart_patch,
    chart_update,
    main_figure,
    main_tokens,
    second_figure,
    second_frame,
    second_tokens,
)
from dashboard.run_picker import register_search, run_options
from ingest.contract.schema import RejectCol, RunCol
from views import urls
from views.cache import ByteLRU, FileLRU
from views.query.choices import FILTERS
from views.query.state import RunView
from views.run_data import RunData
from views.unknown_runs import not_found_text

TAB_BOXES = (
    ("points", Id.POINTS_BOX),
    ("al", Id.AL_BOX),
    ("deltas", Id.DELTAS_BOX),
    ("pruned", Id.PRUNED_BOX),
    ("tco", Id.TCO_BOX),
    ("rejects", Id.REJECTS_BOX),
    ("launch", Id.LAUNCH_BOX),
)
# The grids arrive when the tables come near the screen (paretolens.js loads the grid library
# and sets TABLES_VISIBLE), so their JavaScript never competes with the page's load; the open
# tab's box keeps the grid's height meanwhile (app.css), so nothing moves when it arrives.
LOADING = html.Div("loading the table…", className="muted small")
# The table tabs' bodies (launch is in the initial layout); only the open one is built.
TABLE_BODIES = {
    "points": t.points_body,
    "al": t.al_body,
    "deltas": t.deltas_body,
    "pruned": t.pruned_body,
    "tco": run_tco.tco_body,
    "rejects": t.rejects_body,
}
TABLE_KEYS = (*TABLE_BODIES, "at")
# Launching reads the points ticked in the points grid, so the launch tab needs that grid too.
TABS_NEEDED = {"launch": ("launch", "points")}
# The encoded answers of the chart callbacks kept per server process (`cached_answers`), and in
# the state directory the server processes of a deployment share.
ANSWER_BYTES = 64 << 20
SHARED_ANSWER_BYTES = 128 << 20


def page_notes(data: RunData, notes: list[str]) -> Any:
    """URL values that were dropped, runs not in the store, points not drawn."""
    msgs = list(notes)
    msgs += data.not_drawn(data.main_plane)
    return c.notes(msgs)


def unshown_values(data: RunData, view: RunView, known: set[str]) -> tuple[RunView, list[str]]:
    """The view without the values its controls cannot show (a `hide` token or a `baseline` no
    legend or run has: the dropdown would drop them, and the page would rewrite its URL without
    a word), and a notice for each; filter values no point has are kept (the menu lists them
    with a count of 0) and named too."""
    notes: list[str] = []
    tokens = {o["value"] for o in p.hide_options(data)}
    unknown = [h for h in view.hide if h not in tokens]
    notes += [
        f"ignored hide={h[:60]}: no arm, envelope or baseline of this view has it" for h in unknown
    ]
    base = view.baseline
    if base and base != MAIN_BASELINE and (base not in known or base == view.runs[0]):
        why = "it is the run itself" if base == view.runs[0] else f"run {base} is not in the store"
        notes.append(f"ignored baseline={base}: {why}; pick another run, or main")
        base = ""
    for name, _, _ in FILTERS:
        have = {o.value for o in data.facets.get(name, [])}
        notes += [
            f"{name}={v[:60]}: no point of these runs has it, so this filter keeps nothing of it"
            for v in getattr(view, name)
            if v not in have
        ]
    if unknown or base != view.baseline:
        view = view.replace(hide=tuple(h for h in view.hide if h in tokens), baseline=base)
    return view, notes


def exports_bar(view: RunView) -> html.Div:
    """Downloads of the page's main tables for the current view."""
    q = view.query()
    return html.Div(
        [
            c.export_links("points", q, label="Points"),
            c.export_links("pruned", q, label="Pruned list"),
        ],
        className="small",
        style={"display": "flex", "gap": "18px", "flexWrap": "wrap"},
    )


def banners(data: RunData, view: RunView) -> list[html.Div]:
    """One banner per run, with its rejected files and rows."""
    out = []
    for i, run in enumerate(data.catalog.iter_rows(named=True)):
        rid = run[RunCol.RUN_ID]
        rest = tuple(r for r in view.runs if r != rid)
        remove = urls.run(view.replace(runs=rest, hide=(), point=None)) if rest else None
        rejects = data.rejects.filter(data.rejects.get_column(RejectCol.RUN_ID) == rid)
        full = urls.export("rejects", "csv", view.query())
        out.append(c.run_banner(run, rejects, i, remove, full))
    return out


def layout(app: AppContext, query: str) -> Any:
    """The run page for a query string."""
    view, notes = RunView.parse(query)
    requested = RunView.requested_runs(query)
    if not view.runs:
        text = not_found_text(requested, ())
        return missing.not_found(text) if text else missing.no_run()
    data = app.source.run_data(view)
    if len(data.missing) == len(view.runs):
        return missing.layout(app, view)
    unknown = not_found_text(requested, set(app.source.store.run_ids()))
    notes = [*notes, *([f"Not found: {unknown}; the other runs are shown"] if unknown else [])]
    shown, more = unshown_values(data, view, set(app.source.store.run_ids()))
    if shown != view:
        view, data = shown, app.source.run_data(shown)
    notes = [*notes, *more]
    # the baseline picker lists the same runs (and the baseline, which may be an old one)
    baseline = [view.baseline] if view.baseline and view.baseline != MAIN_BASELINE else []
    run_opts = run_options(app.source.catalog(), [*view.runs, *baseline])
    main = main_figure(data, view)
    # An SVG second chart draws with the page, in the commit that draws the main one; a WebGL
    # one (the same points as the main chart's: WebGL too) is asked for once the main chart is
    # drawn and drawn a step at a time (deferred.js), its analysis out of the first layout.
    gl = any(trace.get("type") == "scattergl" for trace in main["data"])
    second = None if gl else second_figure(data, view)
    # ("stored": False: the figure is in the chart, not in SECOND_FIGURE, which a patch updates)
    tokens = None if second is None else {**second_tokens(second, view), "stored": False}
    tabs: list[tuple[str, Any, Id]] = [(name, LOADING, box) for name, box in TAB_BOXES]
    tabs[-1] = ("launch", launch.panel(app, data, view), Id.LAUNCH_BOX)
    return html.Div(
        [
            html.Div(page_notes(data, notes), id=Id.NOTES),
            dcc.Store(id=Id.TRACE_TOKENS, data=main_tokens(main)),
            dcc.Store(id=Id.TABLES_READY),
            dcc.Store(id=Id.SECOND_FIGURE),  # filled in by on_second
            dcc.Store(id=Id.SECOND_TOKENS, data=tokens),
            dcc.Store(id=Id.SECOND_WANTED),
            dcc.Store(id=Id.TABLES_VISIBLE),
            # the arm ranking below is built here: on_tables builds it again only for a new view
            dcc.Store(id=Id.TABLES_SHOWN, data={"at": view.data_key()}),
            *banners(data, view),
            html.Div(
                [
                    p.sidebar(view, data),
                    html.Div(
                        [
                            p.axis_row(view, run_opts),
                            p.chart_card(Id.MAIN_CHART, main, Id.PNG_MAIN, Id.SVG_MAIN),
                            html.Div(
                                [
                                    html.Div(t.at_readout(data, view), id=Id.AT_TABLE),
                                    html.Div(exports_bar(view), id=Id.EXPORTS),
                                ],
                                className="card",
                            ),
                            html.Div(
                                [
                                    p.chart_card(
                                        Id.SECOND_CHART,
                                        second_frame(data, view) if second is None else second,
                                        Id.PNG_SECOND,
                                        Id.SVG_SECOND,
                                    ),
                                    html.Div(
                                        p.detail_panel(data, view), id=Id.DETAIL, className="card"
                                    ),
                                ],
                                className="two-col",
                            ),
                            html.Div(
                                c.tabs(
                                    view.tab,
                                    tabs,
                                    {
                                        "deltas": t.ab_control(view),
                                        "pruned": t.prune_controls(
                                            view, list(app.source.master_configs())
                                        ),
                                        "tco": run_tco.tco_controls(view),
                                    },
                                ),
                                id=Id.TABLES,
                            ),
                        ]
                    ),
                ],
                className="run-layout",
            ),
        ]
    )


def control_values(values: list[Any], ids: list[dict[str, Any]]) -> dict[str, Any]:
    """Pattern-matched control values keyed by their URL-state field (`forged.control_values`)."""
    return forged.control_values(values, ids)


class RunCallbacks:
    """The run page's callbacks as plain methods (registered by `register`, called by tests)."""

    def __init__(self, app: AppContext) -> None:
        self.app = app

    def on_controls(
        self, values: list[Any], ids: list[dict[str, Any]], search: str | None, tokens: Any
    ) -> tuple[Any, ...]:
        """Any control: write the URL and update the main chart (a new run set reloads the page;
        display-only changes patch the drawn chart instead of sending it again). The second
        chart is `on_second`'s."""
        view, notes = RunView.from_controls(control_values(values, ids))
        old, _ = RunView.parse(search or "")
        if view.runs != old.runs:
            return no_update, urls.run(view.replace(hide=(), point=None)), *[no_update] * 4
        data, changed = self.app.source.run_data(view), view.changed(old)
        update = chart_update(changed, "main")
        figs: tuple[Any, Any]
        if update == "none":
            figs = (no_update, no_update)
        elif update == "patch" and isinstance(tokens, dict):
            axes = bool(changed & AXES)
            figs = (chart_patch(data, view, tokens, "main", axes_changed=axes), no_update)
        else:
            main = main_figure(data, view)
            figs = (main, main_tokens(main))
        return "?" + view.query(), no_update, *figs, exports_bar(view), page_notes(data, notes)

    def on_second(
        self, values: list[Any], ids: list[dict[str, Any]], ready: Any, built: Any
    ) -> tuple[Any, Any]:
        """The second chart's figure on a control change (to SECOND_FIGURE, which deferred.js
        hands to the chart a frame later, and not before the main chart is drawn), as a patch
        when only the display changed and SECOND_FIGURE holds the drawn figure (`stored`: an
        SVG second chart's first figure is in the chart, not in the store). `built`
        (SECOND_TOKENS) names the view it was drawn for: the first layout carries the page's
        own figure and its tokens (an SVG chart); without them (None: a WebGL chart, whose
        analysis and JSON stay out of the first layout) the whole figure, once the main chart is
        drawn (`ready`, SECOND_WANTED)."""
        if not ready and built is None:
            raise PreventUpdate
        view, _ = RunView.from_controls(control_values(values, ids))
        old = RunView.parse(built["query"])[0] if isinstance(built, dict) else None
        if old is not None and view.runs != old.runs:
            raise PreventUpdate  # the page reloads (on_controls)
        data = self.app.source.run_data(view)
        if len(data.missing) == len(view.runs):
            raise PreventUpdate
        changed = view.changed(old) if old is not None else None
        update = chart_update(changed, "second")
        if update == "none":
            raise PreventUpdate
        if update == "patch" and changed is not None and built.get("stored", True):
            axes = bool(changed & AXES)
            patch = chart_patch(data, view, built, "second", axes_changed=axes)
            return patch, {**built, "query": view.query()}
        fig = second_figure(data, view)
        return fig, second_tokens(fig, view)

    def on_tables(
        self, values: list[Any], ids: list[dict[str, Any]], visible: Any, shown: Any
    ) -> tuple[Any, ...]:
        """The open table tab and the arm ranking, when what they show changed. A tab is built
        once the tables have been scrolled into view (`visible`, TABLES_VISIBLE: before that a
        control change updates only the ranking) and when it is opened (the launch tab also
        needs the points grid, whose ticked rows it launches); hidden tabs built for an
        earlier view go back to "loading" so that opening them builds them again. `shown` (the
        TABLES_SHOWN store) maps each built tab, and "at", to the data key it was built for."""
        view, _ = RunView.from_controls(control_values(values, ids))
        key = view.data_key()
        built = (
            {k: v for k, v in shown.items() if k in TABLE_KEYS} if isinstance(shown, dict) else {}
        )
        bodies: dict[str, Any] = dict.fromkeys(TABLE_BODIES, no_update)
        data: RunData | None = None
        wanted = TABS_NEEDED.get(view.tab, (view.tab,)) if visible else ()
        for name in wanted:
            if name in TABLE_BODIES and built.get(name) != key:
                data = data or self.app.source.run_data(view)
                bodies[name] = TABLE_BODIES[name](data, view)
                built[name] = key
        for name in TABLE_BODIES:
            if name not in wanted and name in built and built[name] != key:
                bodies[name] = LOADING
                del built[name]
        at: Any = no_update
        if built.get("at") != key:
            at = t.at_readout(data or self.app.source.run_data(view), view)
            built["at"] = key
        if built == shown:
            raise PreventUpdate
        return (*bodies.values(), at, built)

    def on_point(self, _point: str, values: list[Any], ids: list[dict[str, Any]]) -> list[Any]:
        """The pinned-point panel."""
        view, _ = RunView.from_controls(control_values(values, ids))
        return p.detail_panel(self.app.source.run_data(view), view)

    @staticmethod
    def on_chart_click(click: forged.ClickData | None) -> Any:
        """Clicking a point pins it."""
        return (
            str(click["points"][0]["customdata"][0]) if click and click.get("points") else no_update
        )

    @staticmethod
    def on_row_click(cell: dict[str, Any] | None) -> Any:
        """Clicking a points-table row pins that point."""
        return str((cell or {}).get("rowId") or "") or no_update

    @staticmethod
    def on_unpin(n: int | None) -> Any:
        """The unpin button. The detail panel draws a new button with each pinned point, and a
        newly drawn input fires its callback once: only a real click unpins."""
        return "" if n else no_update

    @staticmethod
    def on_legend(
        restyle: Any, tokens: dict[str, list[str]] | None, hidden: list[str] | None
    ) -> list[str]:
        """A legend click hides or shows an arm (and writes `hide=`)."""
        return updates.hidden_after_restyle(restyle, (tokens or {}).get("main", []), hidden or [])


def plain_components(fn: Callable[..., tuple[Any, ...]]) -> Callable[..., tuple[Any, ...]]:
    """`fn` with the Dash components it returns as the plain JSON values they encode to.

    Dash encodes a callback's answer with plotly's encoder, which hands it to orjson as it is
    unless orjson cannot write something in it (a Dash component); then it walks every value of
    the answer in Python first, a 1,000-point figure's included (some 60 ms of a filter change
    on such a run). With the components already plain, the answer goes to orjson at once: the
    same bytes, the figure not walked."""

    @wraps(fn)
    def answer(*args: Any) -> tuple[Any, ...]:
        return tuple(
            json.loads(encode.to_json(v)) if isinstance(v, Component) else v for v in fn(*args)
        )

    return answer


def cached_answers(
    fn: Callable[..., tuple[Any, ...]],
    cache: ByteLRU,
    version: Callable[[], Any],
    shared: FileLRU | None = None,
    scope: bytes = b"",
) -> Callable[..., tuple[Any, ...]]:
    """`fn` answering from `cache` what it answered before to the same arguments at the same
    store `version`, its outputs kept encoded (`orjson.Fragment`s: Dash's encoder writes them
    as they are, so an answer is the same bytes whether it is computed or found); with `shared`,
    also from the answers the deployment's other server processes computed (files in their
    shared state directory, under a name that digests `scope` too: the code and the settings
    the answers were made with, and the store).

    The chart callbacks' answers depend only on their arguments (the controls, the URL, the
    page's tokens) and on the store's committed version, which every request reads once
    (`Store.pinned`) and which any commit, by any process, changes: a server process finds
    only answers of the data it would read now. Many users ask for the same ones (a PR run
    with the same filters); a 1,000-point run's two charts are 0.3-0.5 MB of JSON, and the
    caches hold at most their limits' bytes. `fn` raising (PreventUpdate) is not kept."""

    import orjson  # the `fast` extra: `register` keeps no answers without it

    @wraps(fn)
    def answer(*args: Any) -> tuple[Any, ...]:
        try:
            body = orjson.dumps(args, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:  # arguments orjson cannot write (an integer past 64 bits): not kept
            return fn(*args)
        digest = hashlib.blake2b(body).digest()
        key = (fn.__name__, version(), digest)
        found: tuple[orjson.Fragment | None, ...] | None = cache.peek(key)
        if found is not None:
            return tuple(no_update if f is None else f for f in found)
        name = ""
        parts: list[bytes | None] | None = None
        if shared is not None:
            name = hashlib.blake2b(repr((scope, *key)).encode(), digest_size=20).hexdigest()
            blob = shared.get(name)
            parts = None if blob is None else unpack_parts(blob)
        if parts is None:
            parts = [None if v is no_update else encode.to_json(v).encode() for v in fn(*args)]
            if shared is not None:
                shared.put(name, pack_parts(parts))
        found = tuple(None if p is None else orjson.Fragment(p) for p in parts)
        cache.put(key, found, sum(len(p) for p in parts if p is not None) + 200)
        return tuple(no_update if f is None else f for f in found)

    return answer


def pack_parts(parts: list[bytes | None]) -> bytes:
    """An answer's encoded outputs as one value (None: no update): a JSON line of their lengths
    (null for None), then the outputs one after another."""
    head = json.dumps([None if p is None else len(p) for p in parts]).encode()
    return b"\n".join([head, b"".join(p for p in parts if p is not None)])


def unpack_parts(blob: bytes) -> list[bytes | None] | None:
    """`pack_parts`' outputs back (None when the value is not one it wrote whole)."""
    head, sep, body = blob.partition(b"\n")
    try:
        lengths = json.loads(head) if sep else None
    except ValueError:
        return None
    if not isinstance(lengths, list) or not all(
        n is None or (isinstance(n, int) and n >= 0) for n in lengths
    ):
        return None
    if sum(n for n in lengths if n is not None) != len(body):
        return None
    parts: list[bytes | None] = []
    at = 0
    for n in lengths:
        parts.append(None if n is None else body[at : at + n])
        at += n or 0
    return parts


def answer_scope(app: AppContext) -> bytes:
    """What the answers a server process computes depend on besides their arguments and the
    store version: this code (every module's name, size and time of the packages the pages are
    built from), the settings (their names and values, a secret only as whether one is set) and
    the store (its place and its table's id). Processes of one deployment agree on it; another
    version of paretolens, or a server with other settings sharing the state directory, does
    not."""
    import analysis
    import dashboard
    import ingest
    import views

    code = []
    for pkg in (analysis, dashboard, ingest, views):
        root = Path(next(iter(pkg.__path__)))
        for path in sorted(root.rglob("*.py")):
            st = path.stat()
            code.append((str(path.relative_to(root.parent)), st.st_size, st.st_mtime_ns))
    settings = {
        k: (v is not None) if isinstance(v, SecretStr) or "token" in k else str(v)
        for k, v in sorted(vars(app.settings).items())
    }
    store = app.source.store
    return repr((code, settings, store.uri, store.table_id())).encode()


def register(dash_app: Dash, app: AppContext) -> None:
    """Register the run page's callbacks (the chart callbacks' answers cached in up to
    `ANSWER_BYTES` bytes; 0: not cached)."""
    cb = RunCallbacks(app)
    # Kept answers are orjson fragments, which only orjson (the `fast` extra) writes as they are.
    answers = ByteLRU(ANSWER_BYTES if importlib.util.find_spec("orjson") is not None else 0)
    # The deployment's server processes share what each computed (their state directory).
    state = app.settings.state_dir
    shared = FileLRU(state / "answers", SHARED_ANSWER_BYTES) if state is not None else None
    scope = answer_scope(app) if shared is not None and answers.limit else b""

    def charts(fn: Callable[..., tuple[Any, ...]]) -> Callable[..., tuple[Any, ...]]:
        if not answers.limit:
            return fn
        return cached_answers(fn, answers, app.source.store.version, shared, scope)

    controls = (Input(control(ALL), "value"), State(control(ALL), "id"))
    point = Output(control("point"), "value", allow_duplicate=True)
    register_search(dash_app, app, control("runs"))
    register_search(dash_app, app, control("baseline"), [overlays.MAIN_OPTION])
    dash_app.callback(
        Output(Id.LOCATION, "search"), Output(Id.NAV, "href"), Output(Id.MAIN_CHART, "figure"),
        Output(Id.TRACE_TOKENS, "data"), Output(Id.EXPORTS, "children"), Output(Id.NOTES, "children"),
        *controls, State(Id.LOCATION, "search"), State(Id.TRACE_TOKENS, "data"), prevent_initial_call=True,
    )(charts(plain_components(cb.on_controls)))  # fmt: skip
    dash_app.callback(
        Output(Id.SECOND_FIGURE, "data"), Output(Id.SECOND_TOKENS, "data"), *controls,
        Input(Id.SECOND_WANTED, "data"), State(Id.SECOND_TOKENS, "data"), prevent_initial_call=True,
    )(charts(cb.on_second))  # fmt: skip
    dash_app.callback(
        *[Output(dict(TAB_BOXES)[name], "children") for name in TABLE_BODIES], Output(Id.AT_TABLE, "children"),
        Output(Id.TABLES_SHOWN, "data"), *controls, Input(Id.TABLES_VISIBLE, "data"), State(Id.TABLES_SHOWN, "data"),
        prevent_initial_call=True,
    )(cb.on_tables)  # fmt: skip
    dash_app.callback(
        Output(Id.DETAIL, "children"), Input(control("point"), "value"), State(control(ALL), "value"),
        State(control(ALL), "id"), prevent_initial_call=True,
    )(cb.on_point)  # fmt: skip
    for graph in (Id.MAIN_CHART, Id.SECOND_CHART):
        dash_app.callback(point, Input(graph, "clickData"), prevent_initial_call=True)(
            cb.on_chart_click
        )
    dash_app.callback(point, Input(Id.POINTS_GRID, "cellClicked"), prevent_initial_call=True)(
        cb.on_row_click
    )
    dash_app.callback(point, Input(Id.UNPIN, "n_clicks"), prevent_initial_call=True)(cb.on_unpin)
    dash_app.callback(
        Output(control("hide"), "value"), Input(Id.MAIN_CHART, "restyleData"), State(Id.TRACE_TOKENS, "data"),
        State(control("hide"), "value"), prevent_initial_call=True,
    )(cb.on_legend)  # fmt: skip
    # The second chart and a big points grid's rows each draw in a task of their own, a frame
    # after what came before them (dashboard/assets/deferred.js).
    dash_app.clientside_callback(
        ClientsideFunction("paretolens_deferred", "secondWanted"), Output(Id.SECOND_WANTED, "data"),
        Input(Id.TABLES_READY, "data"), State(Id.SECOND_TOKENS, "data"), prevent_initial_call=True,
    )  # fmt: skip
    dash_app.clientside_callback(
        ClientsideFunction("paretolens_deferred", "secondChart"), Output(Id.SECOND_CHART, "figure"),
        Output(Id.SECOND_CHART, "config"), Input(Id.TABLES_READY, "data"), Input(Id.SECOND_FIGURE, "data"),
        State(Id.SECOND_CHART, "config"), prevent_initial_call=True,
    )  # fmt: skip
    dash_app.clientside_callback(
        ClientsideFunction("paretolens_deferred", "gridRows"), Output(Id.POINTS_GRID, "rowData"),
        Input(Id.POINTS_ROWS, "data"), State(Id.POINTS_GRID, "id"),
    )  # fmt: skip
    c.register_chart_downloads(
        dash_app,
        (
            (Id.PNG_MAIN, Id.SVG_MAIN, Id.MAIN_CHART),
            (Id.PNG_SECOND, Id.SVG_SECOND, Id.SECOND_CHART),
        ),
    )
    launch.register(dash_app, app)
