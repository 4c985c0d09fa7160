"""Issue 14, item 4: `/history?arm=<id>[,<id>]&at=<x>&x=&y=`: one configuration across runs."""

from __future__ import annotations

import io
from typing import Any

import polars as pl
import pytest

from analysis.comparison.history import arm_history
from dashboard.context import AppContext
from dashboard.pages import history, run_tables
from ingest.contract.col import Col
from views import urls
from views.query.state import HistoryView, RunView
from views.source import DataSource
from views.tables import history_frame


@pytest.fixture(scope="module")
def arm(source: DataSource) -> str:
    """An arm both dsr1 runs measured (the same fixture, ingested twice)."""
    pts = source.store.points(["dsr1"])
    return str(
        pts.filter(pl.col(Col.ARM_LABEL) == "TP8 EP8 | no spec | kv none").item(0, Col.ARM_ID)
    )


def _at(source: DataSource, arm: str) -> float:
    """An x inside the arm's frontier range (the middle of it, in run dsr1)."""
    first = history_frame(source, HistoryView(arm=(arm,), at=1.0)).row(0, named=True)
    return float((first["x_lo"] + first["x_hi"]) / 2)


def test_history_view_round_trips_and_drops_bad_values() -> None:
    view, notes = HistoryView.parse("arm=abc,def&at=40&x=p90_intvty&y=tput_per_mw")
    assert notes == []
    assert HistoryView.parse(view.query())[0] == view
    view, notes = HistoryView.parse("arm=<x>&at=-3")
    assert view.arm == () and view.at is None and len(notes) == 2


def test_page_lists_each_run_oldest_first_with_a_link(
    ctx: AppContext, source: DataSource, arm: str
) -> None:
    at = _at(source, arm)
    view = HistoryView(arm=(arm,), at=at)
    frame = history_frame(source, view)
    expected = arm_history(source.store.points(), source.store.runs(), [arm], at)
    assert frame.equals(expected)
    assert frame.get_column(Col.RUN_ID).to_list() == ["dsr1", "dsr1-rerun"]
    text = str(history.layout(ctx, view.query()))
    for rid in ("dsr1", "dsr1-rerun"):
        assert repr(urls.run(RunView(runs=(rid,), at=at))) in text
    fig = history.history_figure(frame, view)
    assert fig["data"][0]["x"][0].endswith("dsr1") and fig["data"][0]["y"][0] is not None
    assert fig["layout"]["xaxis"]["categoryarray"] == [
        f"{str(d)[:10]} · {r}" for d, r in frame.select("date", Col.RUN_ID).iter_rows()
    ]


def test_history_csv_is_the_same_table(client: Any, source: DataSource, arm: str) -> None:
    at = _at(source, arm)
    q = HistoryView(arm=(arm,), at=at).query()
    resp = client.get(f"/export/history.csv?{q}")
    assert resp.status_code == 200
    frame = pl.read_csv(io.BytesIO(resp.data))
    assert "y (tok/s/GPU)" in frame.columns and "x (tok/s/user)" in frame.columns
    want = (
        history_frame(source, HistoryView.parse(q)[0]).get_column("y").to_list()
    )  # at as the URL has it
    got = frame.get_column("y (tok/s/GPU)").to_list()
    assert [round(v, 6) for v in got] == [round(v, 6) for v in want]


def test_without_arms_or_x_the_page_says_what_to_give(ctx: AppContext) -> None:
    assert "/history?arm=" in str(history.layout(ctx, ""))


def test_run_page_ranking_rows_link_to_history(source: DataSource, arm: str) -> None:
    view = RunView(runs=("dsr1",), at=_at(source, arm))
    text = str(run_tables.at_readout(source.run_data(view), view))
    assert repr(urls.history(HistoryView(arm=(arm,), at=view.at))) in text


def test_history_page_serves_with_a_chart_bundle(client: Any, arm: str) -> None:
    resp = client.get(f"/history?arm={arm}&at=20")
    assert resp.status_code == 200
    assert b"plotly-basic" in resp.data
