"""The runs index, `/`: search and filter the store's runs; open one, overlay several, compare two."""

from __future__ import annotations

from typing import Any

import polars as pl
from dash import ALL, Dash, Input, Output, State, dcc, html

from analysis.tables import Table
from dashboard import components as c
from dashboard import forged
from dashboard.context import AppContext
from dashboard.ids import INDEX_CONTROL, Id, control
from dashboard.pages.run_panels import dropdown
from ingest.contract.col import Col
from ingest.contract.schema import RunCol
from views import urls
from views.query.state import IndexView
from views.tables import index_table

COLUMNS = (
    RunCol.RUN_ID, RunCol.TITLE, RunCol.BRANCH, RunCol.STATUS, RunCol.CONCLUSION, RunCol.CREATED_AT,
    Col.MODEL_PREFIX, Col.HW, Col.FRAMEWORK, Col.PRECISION, Col.SCENARIO, RunCol.POINT_COUNT,
    RunCol.REJECT_COUNT, RunCol.SOURCE,
)  # fmt: skip
HREF = "_href"
# Runs per page of the grid: the server sends one page (3,000 runs were 1.6 MB of layout).
PAGE_SIZE = 100


def _values(catalog: pl.DataFrame, col: str) -> list[str]:
    if col not in catalog.columns:
        return []
    vals = catalog.get_column(col).drop_nulls().cast(pl.String).str.split(", ").explode()
    return sorted(v for v in vals.unique().to_list() if v)


def grid_rows(frame: pl.DataFrame) -> list[dict[str, Any]]:
    """Grid rows with the link of each run's page."""
    return [{**r, HREF: urls.runs(str(r[RunCol.RUN_ID]))} for r in c.rows(frame)]


def page_of(table: Table, view: IndexView) -> tuple[pl.DataFrame, int, int]:
    """The rows of the view's page of `table`, the page shown (past the last: the last) and
    the number of pages (at least 1)."""
    pages = max(1, -(-table.frame.height // PAGE_SIZE))
    page = min(view.page, pages)
    return table.frame.slice((page - 1) * PAGE_SIZE, PAGE_SIZE), page, pages


def pager(view: IndexView, total: int, page: int, pages: int) -> list[Any]:
    """Which runs the grid shows and links to the pages around it (nothing on one page)."""
    if pages <= 1:
        return []
    first = (page - 1) * PAGE_SIZE + 1
    last = min(total, page * PAGE_SIZE)

    def link(text: str, to: int) -> Any:
        return html.A(text, href="/?" + view.replace(page=to).query(), className="page-link")

    parts: list[Any] = [f"runs {first:,}–{last:,} of {total:,} · page {page} of {pages}"]
    if page > 1:
        parts += [" · ", link("« first", 1), " · ", link("‹ previous", page - 1)]
    if page < pages:
        parts += [" · ", link("next ›", page + 1), " · ", link(f"last ({pages}) »", pages)]
    return parts


def _grid(table: Table, rows: pl.DataFrame) -> Any:
    g = c.grid(
        Id.INDEX_GRID,
        table,
        COLUMNS,
        height=560,
        status_columns=(),
        with_rows=False,
        row_id=RunCol.RUN_ID,
        to_width=True,  # at 1,400 px every column on screen (issue 27 item 8)
    )
    g.rowData = grid_rows(rows)
    wide = {RunCol.TITLE: 3, RunCol.RUN_ID: 2, RunCol.CREATED_AT: 2, Col.MODEL_PREFIX: 2}
    for col in g.columnDefs:
        col["flex"] = wide.get(col["field"], 1)
        if col["field"] == RunCol.RUN_ID:
            col.update(cellRenderer="Link", cellRendererParams={"hrefField": HREF})
    return g


def layout(app: AppContext, query: str) -> Any:
    """The index page."""
    view, notes = IndexView.parse(query)
    catalog = app.source.catalog()
    table = index_table(app.source, view)
    rows, page, pages = page_of(table, view)
    filters = [
        html.Div(
            [
                html.Label("Search"),
                dcc.Input(
                    id=control("q", INDEX_CONTROL),
                    type="search",
                    value=view.q,
                    debounce=0.25,  # searches as you type (a quarter second after the last key)
                    placeholder="run id, title, branch, model, …",
                    style={"width": "260px"},
                ),
            ],
            className="control",
        ),
        *[
            dropdown(
                name,
                label,
                [{"label": v, "value": v} for v in _values(catalog, col)],
                list(getattr(view, name)),
                multi=True,
                placeholder="all",
                kind=INDEX_CONTROL,
            )
            for name, label, col in (
                ("model", "Model", Col.MODEL_PREFIX),
                ("hw", "Hardware", Col.HW),
                ("branch", "Branch", RunCol.BRANCH),
                ("status", "Status", RunCol.STATUS),
            )
        ],
        html.Div(
            [
                html.Label("Created (or ingested) from"),
                dcc.Input(
                    id=control("since", INDEX_CONTROL),
                    type="text",
                    value=view.since or None,
                    debounce=True,
                    placeholder="YYYY-MM-DD",
                    pattern=r"\d{4}-\d{2}-\d{2}",
                    style={"width": "130px"},
                ),
            ],
            className="control",
        ),
        html.Div(
            [
                html.Label("to"),
                dcc.Input(
                    id=control("until", INDEX_CONTROL),
                    type="text",
                    value=view.until or None,
                    debounce=True,
                    placeholder="YYYY-MM-DD",
                    pattern=r"\d{4}-\d{2}-\d{2}",
                    style={"width": "130px"},
                ),
            ],
            className="control",
        ),
    ]
    return html.Div(
        [
            c.notes(notes),
            _empty_store(app) if catalog.height == 0 else None,
            html.Div(
                [
                    html.Div(
                        [
                            html.H2(f"Runs ({catalog.height} in {app.source.store.root})"),
                            html.Span(
                                c.export_links("runs", view.replace(page=1).query()),
                                id=Id.INDEX_EXPORTS,
                            ),
                        ],
                        className="section-head",
                    ),
                    html.Div(filters, className="axis-row"),
                    html.Div(
                        html.Span("Tick runs to overlay or compare them.", className="muted small"),
                        id=Id.INDEX_ACTIONS,
                    ),
                    _grid(table, rows),
                    html.Div(
                        pager(view, table.frame.height, page, pages),
                        id=Id.INDEX_PAGER,
                        className="muted small",
                    ),
                ],
                className="card",
            ),
        ]
    )


def _empty_store(app: AppContext) -> Any:
    """What the index of a store without runs offers: the bundled sample runs, or a sweep."""
    where = f" --store {app.source.store.root}"
    return html.Div(
        [
            html.H2("This store has no runs yet"),
            html.P(
                [
                    "Load the bundled sample runs with ",
                    html.Code(f"paretolens demo{where}"),
                    " and reload this page, or ingest a sweep of yours with ",
                    html.Code(f"paretolens ingest DIR{where}"),
                    ".",
                ]
            ),
        ],
        id=Id.INDEX_EMPTY,
        className="card",
    )


def register(dash_app: Dash, app: AppContext) -> None:
    """Filters write the URL and the grid; ticked runs become overlay and compare links."""

    cb = IndexCallbacks(app)
    dash_app.callback(
        Output(Id.LOCATION, "search", allow_duplicate=True), Output(Id.INDEX_GRID, "rowData"), Output(Id.INDEX_EXPORTS, "children"),
        Output(Id.INDEX_PAGER, "children"), Input(control(ALL, INDEX_CONTROL), "value"), State(control(ALL, INDEX_CONTROL), "id"), prevent_initial_call=True,
    )(cb.on_filters)  # fmt: skip
    dash_app.callback(
        Output(Id.INDEX_ACTIONS, "children"),
        Input(Id.INDEX_GRID, "selectedRows"),
        prevent_initial_call=True,
    )(cb.on_select)


class IndexCallbacks:
    """The index page's callbacks as plain methods."""

    def __init__(self, app: AppContext) -> None:
        self.app = app

    def on_filters(self, values: list[Any], ids: list[dict[str, Any]]) -> tuple[Any, ...]:
        """Filters write the URL and refill the grid from its first page."""
        view, _ = IndexView.from_controls(forged.control_values(values, ids))
        view = view.replace(page=1)
        table = index_table(self.app.source, view)
        rows, page, pages = page_of(table, view)
        return (
            "?" + view.query(),
            grid_rows(rows),
            c.export_links("runs", view.query()),
            pager(view, table.frame.height, page, pages),
        )

    @staticmethod
    def on_select(selected: list[forged.RunRow] | None) -> Any:
        """Ticked runs: overlay them, or compare two."""
        ids = [str(r["run_id"]) for r in selected or []]
        if not ids:
            return html.Span("Tick runs to overlay or compare them.", className="muted small")
        links: list[Any] = [
            html.A(f"overlay {len(ids)} run{'s' if len(ids) > 1 else ''} →", href=urls.runs(*ids))
        ]
        if len(ids) == 2:
            links += [
                " · ",
                html.A(
                    f"compare {ids[0]} (base) → {ids[1]} (candidate) →",
                    href=urls.compare_runs(ids[0], ids[1]),
                ),
            ]
        return html.Div(links, className="small")
