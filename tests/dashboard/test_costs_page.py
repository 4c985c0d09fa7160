"""Issue 14, item 2: cost and energy y axes on the run page, `hwcost=` overrides, the columns in
the points table and exports (units in the headers) and the caption naming the sources."""

from __future__ import annotations

import io
from typing import Any

import polars as pl
import pytest

from analysis.cost import COST_COLUMNS, LABELS, axis_label, load_hardware
from dashboard.context import AppContext
from dashboard.pages import run as run_page
from dashboard.pages import run_charts as charts
from ingest.contract.col import Col
from views.query.choices import Y_CHOICES
from views.query.state import RunView
from views.source import DataSource

B200 = load_hardware().hardware["b200"]


def test_every_cost_column_is_a_y_choice_with_its_label() -> None:
    choices = dict(Y_CHOICES)
    for col in COST_COLUMNS:
        assert choices[col] == LABELS[col]
    view, notes = RunView.parse("unofficialRun=dsr1&y=cost_per_mtok_rental3y_output")
    assert (view.y, notes) == ("cost_per_mtok_rental3y_output", [])


def test_hwcost_is_url_state_and_a_bad_value_is_dropped_with_a_notice() -> None:
    view, notes = RunView.parse("unofficialRun=dsr1&hwcost=B200:power=1.5")
    assert (view.hwcost, notes) == ("b200:kw=1.5", [])
    assert RunView.parse(view.query())[0].hwcost == "b200:kw=1.5"
    view, notes = RunView.parse("unofficialRun=dsr1&hwcost=b200:kw=-1")
    assert view.hwcost == ""
    assert notes[0].startswith("ignored hwcost=b200:kw=-1") and "positive number" in notes[0]


def test_cost_columns_are_computed_for_the_view_points(source: DataSource) -> None:
    pts = source.run_data(RunView(runs=("dsr1",))).points
    row = pts.filter(pl.col(Col.TPUT_PER_GPU).is_not_null()).row(0, named=True)
    t = row[Col.TPUT_PER_GPU]
    assert row["tput_per_mw"] == pytest.approx(t * 1000 / B200.power_kw)
    assert row["joules_per_token"] == pytest.approx(B200.power_kw * 1000 / t)
    hourly = B200.usd_per_gpu_hour.hyperscaler
    assert row["cost_per_mtok_hyperscaler"] == pytest.approx(hourly / (t * 3600 / 1e6))
    over = source.run_data(RunView(runs=("dsr1",), hwcost="b200:kw=2,hyperscaler=4")).points
    row2 = over.filter(pl.col(Col.POINT_ID) == row[Col.POINT_ID]).row(0, named=True)
    assert row2["tput_per_mw"] == pytest.approx(t * 1000 / 2)
    assert row2["cost_per_mtok_hyperscaler"] == pytest.approx(4 / (t * 3600 / 1e6))


def test_a_cost_axis_is_analysed_and_titled_with_class_power_and_overrides(
    source: DataSource,
) -> None:
    view = RunView(runs=("dsr1",), y="cost_per_mtok_neocloud", hwcost="b200:neocloud=3")
    data = source.run_data(view)
    fig = charts.main_figure(data, view)
    title = fig["layout"]["yaxis"]["title"]["text"]
    # wrapped before a parenthesis so it fits the chart's height (issue 27 item 8)
    assert title == (
        "Cost per million total tokens<br>(owning, neocloud-giant TCO $/GPU-h) [hwcost: b200]"
        "<br>($/Mtok)"
    )
    assert title.replace("<br>", " ") == axis_label("cost_per_mtok_neocloud", ["b200"])
    assert "neocloud" in title and "[hwcost: b200]" in title and "($/Mtok)" in title
    drawn = [y for t in fig["data"] if t.get("mode", "").startswith("markers") for y in t["y"]]
    assert drawn and all(y is None or y > 0 for y in drawn)
    second = charts.second_figure(data, view)
    assert second["layout"]["yaxis"]["title"]["text"] == title


def test_points_export_has_the_cost_columns_with_units(client: Any) -> None:
    resp = client.get("/export/points.csv?unofficialRun=dsr1&hwcost=b200:kw=2")
    assert resp.status_code == 200
    frame = pl.read_csv(io.BytesIO(resp.data), infer_schema_length=None)
    for header in (
        "tput_per_mw (tok/s/MW)",
        "joules_per_token (J/tok)",
        "cost_per_mtok_hyperscaler ($/Mtok)",
        "cost_per_mtok_rental3y_output ($/Mtok)",
    ):
        assert header in frame.columns
    t = frame.get_column("tput_per_gpu (tok/s/GPU)")
    mw = frame.get_column("tput_per_mw (tok/s/MW)")
    assert (mw - t * 500).abs().max() < 1e-6  # kw = 2: T x 1000 / 2
    doc = client.get("/export/points.json?unofficialRun=dsr1").get_json()
    units = {c["name"]: c["unit"] for c in doc["columns"]}
    assert units["joules_per_token"] == "J/tok" and units["cost_per_mtok_neocloud"] == "$/Mtok"


def test_caption_names_the_sources_and_the_hardware_without_figures(
    source: DataSource, ctx: AppContext
) -> None:
    data = source.run_data(RunView(runs=("dsr1",), y="tput_per_mw"))
    caption = data.cost_notes()
    assert "data/hardware.yaml" in caption[0]
    # an energy axis on a B200-only run: its power figure and the power sources only
    assert "NVIDIA B200: 2.17 kW (all-in provisioned kW/GPU)." in caption[0]
    assert "SemiAnalysis Datacenter Industry Model" in caption[0]
    assert "AI Cloud TCO Model" not in caption[0] and "provisional" not in caption[0]
    assert source.run_data(RunView(runs=("dsr1",))).cost_notes() == []
    # Hardware the file does not know: the caption says its points are null.
    text = str(run_page.layout(ctx, "unofficialRun=dsr1&y=tput_per_mw&hwcost=h20:kw=1"))
    assert "cost-caption" in text and "hwcost names hardware no point has: h20" in text
