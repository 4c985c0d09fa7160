"""Layout pieces shared by the pages: grids, export links, run banners, notes, the page shell.

Text from result files is only ever a child of an html component or a grid cell value, which
React renders as text; links from result files go through `urls.safe_href`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

import dash_ag_grid as dag
import polars as pl
from dash import ClientsideFunction, Dash, Input, Output, State, dcc, html

from analysis.tables import Table
from dashboard.figures.style import RUN_SYMBOLS
from dashboard.ids import Id, control
from dashboard.reject_list import listed
from ingest.contract.schema import RejectCol, RunCol
from views import urls
from views.exports import EXPORTS
from views.query.choices import TABS

# Verdict and AL-check colours: Okabe-Ito tints, always alongside the word itself.
STATUS_STYLES: dict[str, dict[str, str]] = {
    "frontier": {"backgroundColor": "#cde8df", "color": "#00513c"},
    "dominated": {"color": "#6b6b6b"},
    "post_cliff": {"backgroundColor": "#fbe1c6", "color": "#7a3b00"},
    "invalid": {"backgroundColor": "#f6d0c0", "color": "#7f2500"},
    "out_of_slo": {"backgroundColor": "#e4dcf1", "color": "#3f2a6b"},
    "ok": {"backgroundColor": "#cde8df", "color": "#00513c"},
    "warn": {"backgroundColor": "#fbe9b7", "color": "#6a4a00"},
    "fail": {"backgroundColor": "#f6d0c0", "color": "#7f2500"},
    "not_measured": {"backgroundColor": "#ececec", "color": "#555"},
}
SYMBOL_GLYPHS = {
    "circle": "●",
    "square": "■",
    "diamond": "◆",
    "triangle-up": "▲",
    "pentagon": "⬟",
    "hexagon": "⬢",
    "star": "★",
    "cross": "✚",
}


def jsonable(value: Any) -> Any:
    """A cell value the browser can take (dates as ISO text, NaN as empty)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


def rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Grid rows of a frame: the values `jsonable` gives, one polars expression per float
    column (non-finite to null) and one Python pass per date column instead of a call per cell."""
    schema = frame.schema
    floats = [k for k, t in schema.items() if t.is_float()]
    dates = [k for k, t in schema.items() if isinstance(t, pl.Datetime | pl.Date)]
    if floats:
        frame = frame.with_columns(
            pl.when(pl.col(k).is_finite()).then(pl.col(k)).alias(k) for k in floats
        )
    out = frame.to_dicts()
    for k in dates:
        for r in out:
            v = r[k]
            if v is not None:
                r[k] = v.isoformat()
    return out


def column_defs(
    table: Table, columns: Sequence[str] | None = None, status_columns: Sequence[str] = ("verdict",)
) -> list[dict[str, Any]]:
    """Grid columns with the unit in every header and the schema description as tooltip."""
    out: list[dict[str, Any]] = []
    schema = table.frame.schema
    for col in columns or table.frame.columns:
        if col not in schema:
            continue
        spec: dict[str, Any] = {
            "field": col,
            "headerName": table.header(col),
            "headerTooltip": table.description(col) or None,
        }
        if schema[col].is_float():
            spec["valueFormatter"] = {
                "function": "params.value == null ? '' : d3.format('.5~g')(params.value)"
            }
            spec["filter"] = "agNumberColumnFilter"
        elif schema[col].is_integer():
            spec["filter"] = "agNumberColumnFilter"
        elif isinstance(schema[col], pl.List):
            spec["valueFormatter"] = {
                "function": "params.value == null ? '' : params.value.join('; ')"
            }
        if col in status_columns:
            spec["cellStyle"] = {
                "styleConditions": [
                    {"condition": f"params.value == '{k}'", "style": v}
                    for k, v in STATUS_STYLES.items()
                ]
            }
        out.append(spec)
    return out


def shown(
    frame: pl.DataFrame, defs: Sequence[Mapping[str, Any]], row_id: str | None
) -> pl.DataFrame:
    """The columns a grid shows (and its row id): the browser gets nothing it does not draw
    (the points table has over a hundred columns, the points grid shows nineteen)."""
    keep = [d["field"] for d in defs]
    if row_id and row_id not in keep and row_id in frame.columns:
        keep.append(row_id)
    return frame.select(keep)


# Past this many rows a grid's columns are not measured to fit their cells, and a deferred grid
# gets its rows a main-thread task after it is built (issue 18 item 4).
BIG_GRID = 1000


def grid(
    grid_id: Any,
    table: Table,
    columns: Sequence[str] | None = None,
    *,
    height: int = 380,
    status_columns: Sequence[str] = ("verdict",),
    with_rows: bool = True,
    row_id: str | None = None,
    fit_columns: bool = True,
    to_width: bool = False,
) -> dag.AgGrid:
    """A sortable, filterable grid of a table (rows may be filled in later by a callback:
    `deferred_grid`)."""
    options: dict[str, Any] = {
        "suppressFieldDotNotation": True,
        "enableCellTextSelection": True,
        "ensureDomOrder": True,
        "tooltipShowDelay": 300,
        "animateRows": False,
        "rowSelection": {"mode": "multiRow", "enableClickSelection": False} if row_id else None,
    }
    kwargs: dict[str, Any] = {}
    if row_id:
        kwargs["getRowId"] = f"params.data.{row_id}"
    defs = column_defs(table, columns, status_columns)
    return dag.AgGrid(
        id=grid_id,
        columnDefs=defs,
        rowData=rows(shown(table.frame, defs, row_id)) if with_rows else [],
        defaultColDef={"sortable": True, "filter": True, "resizable": True, "minWidth": 90}
        | ({"flex": 1, "minWidth": 70} if to_width else {}),
        dashGridOptions={k: v for k, v in options.items() if v is not None},
        # Measuring every column costs a long main-thread task on big tables.
        # (fit_columns False: a page that must not move once drawn keeps the columns' widths)
        # (to_width: every column on screen, sharing the grid's width from the first draw, so
        # nothing moves once drawn: the runs index)
        columnSize="autoSize"
        if fit_columns and not to_width and table.frame.height <= BIG_GRID
        else None,
        style={"height": f"{height}px", "width": "100%"},
        className="grid",
        **kwargs,
    )


def deferred_grid(
    grid_id: Any,
    rows_id: Any,
    table: Table,
    columns: Sequence[str] | None = None,
    *,
    row_id: str | None = None,
    **kw: Any,
) -> list[Any]:
    """`grid`, and when the table is big (over `BIG_GRID` rows) the grid built without its rows
    (AG Grid shows its loading overlay) beside a store holding them, which the page's
    client-side callback hands to the grid one task later (dashboard/assets/deferred.js): AG
    Grid's construction and its row model of thousands of rows are each a long main-thread task,
    together one too long to keep the page responsive."""
    g = grid(grid_id, table, columns, row_id=row_id, **kw)
    if table.frame.height <= BIG_GRID:
        return [g]
    rows_later = g.rowData
    del g.rowData  # not sent: AG Grid shows its loading overlay, not "no rows"
    return [g, dcc.Store(id=rows_id, data=rows_later)]


def export_links(table: str, query: str, label: str = "Export") -> html.Span:
    """Download links of one table for the page's query, in the formats its export offers
    (`views.exports.Export.links`)."""
    return html.Span(
        [html.Span(f"{label}: ", className="muted")]
        + [
            html.A(
                fmt.link_text,
                href=urls.export(table, fmt.suffix or fmt.name, query),
                className="export",
                download="",
            )
            for fmt in EXPORTS[table].links
        ],
        className="exports",
    )


def notes(messages: Sequence[str]) -> html.Div | None:
    """A notice box (dropped URL values, points not drawn, ...) or nothing."""
    if not messages:
        return None
    return html.Div([html.Div(m) for m in messages], className="notes", role="status")


def _when(value: object) -> str:
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M UTC")
    return str(value or "")


def run_banner(
    run: Mapping[str, Any],
    rejects: pl.DataFrame,
    index: int,
    remove_href: str | None,
    full_href: str | None = None,
) -> html.Div:
    """One run's metadata (branch, sha, created, status, link) and its rejected files and rows
    (the first BANNER_LISTED of each kind by name, the rest counted; `full_href`: all of them)."""
    symbol = SYMBOL_GLYPHS.get(RUN_SYMBOLS[index % len(RUN_SYMBOLS)], "●")
    link = urls.safe_href(run.get(RunCol.HTML_URL))
    sha = str(run.get(RunCol.HEAD_SHA) or "")
    commit = urls.github_commit(run.get(RunCol.REPO), sha)
    status = " / ".join(str(v) for v in (run.get(RunCol.STATUS), run.get(RunCol.CONCLUSION)) if v)
    facts: list[Any] = [
        html.Span(f"{symbol} run ", className="muted"),
        html.B(str(run[RunCol.RUN_ID])),
        html.Span(str(run.get(RunCol.TITLE) or ""), className="title"),
    ]
    for label, value in (
        ("branch", run.get(RunCol.BRANCH)),
        ("status", status),
        ("created", _when(run.get(RunCol.CREATED_AT))),
        ("points", run.get(RunCol.POINT_COUNT)),
    ):
        if value not in (None, ""):
            facts.append(
                html.Span([html.Span(f"{label} ", className="muted"), str(value)], className="fact")
            )
    if sha:
        short = sha[:10]
        facts.append(
            html.Span(
                [
                    html.Span("sha ", className="muted"),
                    html.A(short, href=commit, target="_blank", rel="noopener noreferrer")
                    if commit
                    else short,
                ],
                className="fact",
            )
        )
    if link:
        facts.append(
            html.A(
                "View run ↗",
                href=link,
                target="_blank",
                rel="noopener noreferrer",
                className="fact",
            )
        )
    if remove_href:
        facts.append(
            html.A(
                "✕ remove from view",
                href=remove_href,
                className="fact remove",
                title="drop this run from the overlay",
            )
        )
    children: list[Any] = [html.Div(facts, className="banner-facts")]
    ignored = rejects.filter(pl.col(RejectCol.OUTCOME).fill_null("rejected") == "ignored")
    rejects = rejects.filter(pl.col(RejectCol.OUTCOME).fill_null("rejected") != "ignored")
    n = rejects.height
    if ignored.height:
        children.append(
            html.Details(
                [
                    html.Summary(
                        f"{ignored.height} file{'s' if ignored.height != 1 else ''} read with "
                        "nothing to store — show why"
                    ),
                    html.Ul(
                        listed(
                            ignored,
                            lambda r: html.Li(
                                [html.Code(str(r[RejectCol.PATH])), f" — {r[RejectCol.REASON]}"]
                            ),
                            full_href,
                        ),
                        className="rejects",
                    ),
                ],
                className="banner-ignored small",
            )
        )
    if n:
        items = listed(
            rejects,
            lambda r: html.Li(
                [
                    html.Code(str(r[RejectCol.PATH])),
                    f" — {r[RejectCol.FIELD] + ': ' if r[RejectCol.FIELD] else ''}{r[RejectCol.REASON]}",
                    html.Span(f" ({r[RejectCol.READER]})", className="muted"),
                ]
            ),
            full_href,
        )
        children.append(
            html.Details(
                [
                    html.Summary(
                        f"⚠ {n} rejected file{'s' if n != 1 else ''} or row{'s' if n != 1 else ''} (not in the charts) — show why"
                    ),
                    html.Ul(items, className="rejects"),
                ],
                className="banner-rejects",
            )
        )
    else:
        children.append(html.Div("no rejected files or rows", className="muted small"))
    return html.Div(children, className="banner")


def page_header(active: str) -> html.Header:
    """The top bar with the app's pages."""
    links = (
        ("runs", "Runs", urls.index()),
        ("compare", "Compare", urls.COMPARE_PATH),
        ("jobs", "Jobs", urls.jobs()),
    )
    return html.Header(
        [
            html.A(
                [html.Span("pareto", className="brand-a"), html.Span("lens", className="brand-b")],
                href=urls.index(),
                className="brand",
            ),
            html.Nav(
                [
                    html.A(label, href=href, className="active" if key == active else "")
                    for key, label, href in links
                ]
            ),
        ],
        className="topbar",
    )


def shell(page: Any, active: str, *, pending_route: bool = False) -> html.Div:
    """The app shell around a page: locations, the top bar and the page itself."""
    children: list[Any] = [
        dcc.Location(id=Id.LOCATION, refresh=False),
        dcc.Location(id=Id.NAV, refresh=True),
        page_header(active),
        html.Main(page, id=Id.PAGE, className="page"),
    ]
    if pending_route:
        children.append(dcc.Location(id=Id.ROUTE_LOCATION, refresh=False))
    return html.Div(children)


def copy_link() -> html.Span:
    """A 'copy link' button (copies the address bar, which is the whole view)."""
    return html.Span(
        [
            dcc.Clipboard(
                id=Id.COPY_LINK, title="copy the link of this exact view", className="clip"
            ),
            html.Span("copy link", className="muted small"),
        ],
        className="copy",
    )


def section(title: str, *children: Any, extra: Any = None) -> html.Section:
    """A titled section."""
    head = [html.H3(title)] + ([extra] if extra is not None else [])
    return html.Section([html.Div(head, className="section-head"), *children], className="section")


TAB_STYLE = {"padding": "6px 10px", "lineHeight": "20px"}
TAB_SELECTED = {**TAB_STYLE, "borderTop": "3px solid #0072B2", "fontWeight": 600}


def tabs(
    selected: str, items: Sequence[tuple[str, Any, Id]], heads: Mapping[str, Any] | None = None
) -> dcc.Tabs:
    """The table tabs; the selected tab is URL state (`tab=`). `heads` are static parts shown
    above a tab's (possibly deferred) body."""
    labels = dict(TABS)
    heads = heads or {}
    return dcc.Tabs(
        id=control("tab"),
        value=selected,
        children=[
            dcc.Tab(
                label=labels[value],
                value=value,
                children=html.Div([heads.get(value), html.Div(body, id=box)], className="tab-body"),
                style=TAB_STYLE,
                selected_style=TAB_SELECTED,
            )
            for value, body, box in items
        ],
        className="tabs",
    )


def register_chart_downloads(app: Dash, buttons: Sequence[tuple[Id, Id, Id]]) -> None:
    """PNG and SVG downloads of charts, drawn in the browser by plotly (client-side callbacks)."""
    for png, svg, graph in buttons:
        for btn in (png, svg):
            app.clientside_callback(
                ClientsideFunction("paretolens", "download"),
                Output(btn, "title"),
                Input(btn, "n_clicks"),
                State(graph, "id"),
                State(btn, "children"),
                prevent_initial_call=True,
            )


def register_copy_link(app: Dash) -> None:
    """The copy-link button copies the address bar."""
    app.clientside_callback(
        ClientsideFunction("paretolens", "copyLink"),
        Output(Id.COPY_LINK, "content"),
        Input(Id.COPY_LINK, "n_clicks"),
        prevent_initial_call=True,
    )
