"""Issue 18 item 4: a big grid is sent without its rows, which follow in a store one task later
(dashboard/assets/deferred.js); a small one keeps them."""

from __future__ import annotations

import polars as pl
from dash import dcc

from analysis.tables import Table
from dashboard import components as c
from dashboard.ids import Id


def _table(n: int) -> Table:
    frame = pl.DataFrame({"point_id": [f"p{i}" for i in range(n)], "x": [i / 3 for i in range(n)]})
    return Table(name="points", title="Points", frame=frame)


def test_a_small_grid_carries_its_rows() -> None:
    (g,) = c.deferred_grid(Id.POINTS_GRID, Id.POINTS_ROWS, _table(c.BIG_GRID), row_id="point_id")
    assert len(g.rowData) == c.BIG_GRID and g.columnSize == "autoSize"


def test_a_big_grid_gets_its_rows_from_a_store() -> None:
    table = _table(c.BIG_GRID + 1)
    g, store = c.deferred_grid(Id.POINTS_GRID, Id.POINTS_ROWS, table, row_id="point_id")
    # no rowData prop at all: AG Grid shows "loading", never "no rows"
    assert "rowData" not in g.to_plotly_json()["props"] and g.columnSize is None
    assert isinstance(store, dcc.Store) and store.id == Id.POINTS_ROWS
    assert store.data == c.grid(Id.POINTS_GRID, table, row_id="point_id").rowData
    assert store.data[1] == {"point_id": "p1", "x": 1 / 3}
