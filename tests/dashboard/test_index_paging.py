"""The runs index is paged on the server: one page of runs in the layout, the others a link
away (`?page=N`, kept in the URL), and every run of the store on exactly one page."""

from __future__ import annotations

from typing import Any

import pytest
from dash import html

from dashboard.context import AppContext
from dashboard.ids import INDEX_CONTROL, Id
from dashboard.pages import index
from dashboard.pages.index import IndexCallbacks
from ingest.contract.schema import RunCol
from views.query.state import IndexView
from views.tables import index_table


def _find(node: Any, key: str) -> Any:
    """The component with id `key` in a layout tree."""
    if getattr(node, "id", None) == key:
        return node
    children = getattr(node, "children", None)
    for child in children if isinstance(children, list | tuple) else [children]:
        if child is not None and not isinstance(child, str | int | float):
            hit = _find(child, key)
            if hit is not None:
                return hit
    return None


def _links(pager: list[Any]) -> dict[str, str]:
    return {str(a.children): str(a.href) for a in pager if isinstance(a, html.A)}


def _page(ctx: AppContext, query: str) -> tuple[list[str], dict[str, str], str]:
    """(the run ids the grid shows, the pager's links by text, the pager's first line)."""
    tree = index.layout(ctx, query)
    rows = _find(tree, Id.INDEX_GRID).rowData
    pager = _find(tree, Id.INDEX_PAGER).children
    return [r[RunCol.RUN_ID] for r in rows], _links(pager), str(pager[0]) if pager else ""


def test_every_run_is_reachable_by_the_page_links(
    ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = index_table(ctx.source, IndexView()).frame.get_column(RunCol.RUN_ID).to_list()
    assert len(every) == 5  # the dashboard store's runs
    monkeypatch.setattr(index, "PAGE_SIZE", 2)
    seen: list[str] = []
    query, pages = "", []
    while True:
        ids, links, line = _page(ctx, query)
        seen += ids
        pages.append(line)
        if "next ›" not in links:
            break
        query = links["next ›"].removeprefix("/?")
    assert seen == every  # each run once, in the index's order
    assert pages == [
        "runs 1–2 of 5 · page 1 of 3",
        "runs 3–4 of 5 · page 2 of 3",
        "runs 5–5 of 5 · page 3 of 3",
    ]
    ids, links, _ = _page(ctx, "page=2")
    assert ids == every[2:4]
    assert links == {
        "« first": "/?",
        "‹ previous": "/?",
        "next ›": "/?page=3",
        "last (3) »": "/?page=3",
    }
    # Past the last page: the last page; the page keeps the filters in its links.
    assert _page(ctx, "page=99")[0] == every[4:]
    monkeypatch.setattr(index, "PAGE_SIZE", 1)
    ids, links, line = _page(ctx, "q=dsr1")
    assert ids == ["dsr1-rerun"] and line == "runs 1–1 of 2 · page 1 of 2"
    assert links == {"next ›": "/?q=dsr1&page=2", "last (2) »": "/?q=dsr1&page=2"}
    assert _page(ctx, "q=dsr1&page=2")[0] == ["dsr1"]


def test_one_page_has_no_pager_and_filters_start_at_page_one(
    ctx: AppContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    every = index_table(ctx.source, IndexView()).frame.get_column(RunCol.RUN_ID).to_list()
    ids, links, line = _page(ctx, "page=2")  # 5 runs on one page of 100
    assert ids == every and links == {} and line == ""
    monkeypatch.setattr(index, "PAGE_SIZE", 2)
    values = IndexView(q="dsr1", page=3).controls()
    search, rows, _exports, pager = IndexCallbacks(ctx).on_filters(
        list(values.values()), [{"type": INDEX_CONTROL, "field": k} for k in values]
    )
    assert search == "?q=dsr1" and [r[RunCol.RUN_ID] for r in rows] == ["dsr1-rerun", "dsr1"]
    assert pager == []  # the two dsr1 runs fit one page of 2


def test_page_is_url_state() -> None:
    view, notes = IndexView.parse("q=kimi&page=3")
    assert view.page == 3 and notes == [] and view.query() == "q=kimi&page=3"
    view, notes = IndexView.parse("page=0")
    assert view.page == 1 and len(notes) == 1
