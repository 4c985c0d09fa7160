"""The TCO calculator tab: URL round trip, the fleets and the assumption badges (headless)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from dash import html

from dashboard.pages import run_tables, run_tco
from ingest.pipeline import ingest_paths
from ingest.store import Store
from tests.dashboard.tree import text as _text
from views.exports import export_body
from views.query.affects import Part, invalidates
from views.query.state import RunView
from views.source import DataSource

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "inferencex" / "agg_fixed_seq"


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> DataSource:
    st = Store(tmp_path_factory.mktemp("tco-tab"))
    ingest_paths([FIX], st, run_id="kimi")
    return DataSource(st)


def test_targets_round_trip_through_the_url() -> None:
    q = "unofficialRun=kimi&tab=tco&hwcost=mi355x:kw=3&tco_intvty=3&tco_tput=10000&tco_cost=neocloud"
    view, notes = RunView.parse(q)
    assert notes == []
    assert (view.tco_intvty, view.tco_tput, view.tco_cost) == (3.0, 10000.0, "neocloud")
    assert RunView.parse(view.query())[0] == view
    assert invalidates(RunView, "tco_tput") == {Part.TCO}
    back, _ = RunView.from_controls(view.controls())
    assert back == view


def test_tab_shows_fleets_and_assumptions(source: DataSource) -> None:
    view, _ = RunView.parse("unofficialRun=kimi&tab=tco&tco_intvty=3&tco_tput=10000")
    body = html.Div(run_tco.tco_body(source.run_data(view), view))
    text = _text(body)
    # 8k1k arm: 6 TP8 instances = 48 MI355X at $1.48/h each = $71.04/h, 48 x 2.65 = 127.2 kW
    assert "48 GPUs, $71.04/h, 127.2 kW" in text
    assert "AMD MI355X: 2.65 kW/GPU · $1.48/GPU-h hyperscaler" in text
    rows = source.run_data(view).tco.to_dicts()
    assert [r["gpus"] for r in rows] == [48, 184]


def test_badges_mark_overrides_and_tab_asks_for_targets(source: DataSource) -> None:
    view, _ = RunView.parse(
        "unofficialRun=kimi&tab=tco&hwcost=mi355x:kw=3,neocloud=2&tco_cost=neocloud"
    )
    text = _text(html.Div(run_tco.tco_body(source.run_data(view), view)))
    assert "Set a target interactivity and a fleet throughput" in text
    assert "AMD MI355X: 3 kW/GPU · $2.00/GPU-h neocloud (hwcost)" in text


def test_tco_export_csv(source: DataSource) -> None:
    out = export_body(source, "tco.csv", "unofficialRun=kimi&tco_intvty=3&tco_tput=10000")
    text = out.body if isinstance(out.body, str) else out.body.decode()
    header = next(line for line in text.splitlines() if line.startswith("arm_id"))
    assert "usd_per_hour ($/h)" in header and "power_kw (kW)" in header
    rows = list(csv.DictReader(line for line in text.splitlines() if not line.startswith("#")))
    assert rows[0]["gpus (GPUs)"] == "48" and rows[1]["gpus (GPUs)"] == "184"
    assert float(rows[0]["usd_per_hour ($/h)"]) == pytest.approx(71.04)


def test_badges_beside_cost_and_energy_charts_only(source: DataSource) -> None:
    cost, _ = RunView.parse("unofficialRun=kimi&y=cost_per_mtok_neocloud")
    text = _text(html.Div(run_tables.at_readout(source.run_data(cost), cost)))
    assert "AMD MI355X: 2.65 kW/GPU · $1.48/GPU-h hyperscaler · $1.90/GPU-h neocloud" in text
    plain, _ = RunView.parse("unofficialRun=kimi")
    assert "kW/GPU" not in _text(html.Div(run_tables.at_readout(source.run_data(plain), plain)))
