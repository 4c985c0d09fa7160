"""The pinned-point panel draws a point's GPU telemetry and states its measured energy."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from dash import dcc, html

from dashboard.pages import run
from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store
from views.query.state import RunView
from views.source import DataSource

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "gpu_metrics"
T0 = 1786553852.0


def _walk(node: Any) -> list[Any]:
    out = [node]
    kids = getattr(node, "children", None)
    for k in kids if isinstance(kids, list) else [kids] if kids is not None else []:
        out.extend(_walk(k))
    return out


def _store(tmp_path: Path) -> Store:
    # the real result's window moved into the real telemetry's (assembled here only)
    src = tmp_path / "run_1"
    src.mkdir()
    doc = json.loads((FIX / "sglang_mtp_tp4_conc64_isl8192_osl1024.json").read_text())
    doc["benchmark_start_time_unix"], doc["benchmark_end_time_unix"] = T0 + 0.5, T0 + 1.5
    (src / "result.json").write_text(json.dumps(doc))
    shutil.copy(FIX / "amd_smi_mi355x_excerpt.csv", src / "gpu_metrics.csv")
    st = Store(tmp_path / "store")
    ingest_paths([src], st, run_id="r1", defaults={"hw": "mi355x", "tp": 8})
    return st


def test_measured_energy_is_a_y_axis(tmp_path: Path) -> None:
    st = _store(tmp_path)
    view, notes = RunView.parse("unofficialRun=r1&y=measured_joules_per_token")
    assert notes == []
    plane = DataSource(st).run_data(view).main_plane
    assert plane.get_column("y").to_list() == pytest.approx([1928.75 / 5319000])


def test_pinned_point_shows_gpu_power_and_measured_energy(tmp_path: Path) -> None:
    st = _store(tmp_path)
    pid = st.points(["r1"]).item(0, Col.POINT_ID)
    view = RunView(runs=("r1",), point=pid)
    panel = html.Div(run.p.detail_panel(DataSource(st).run_data(view), view))
    nodes = _walk(panel)
    energy = next(n for n in nodes if getattr(n, "id", None) == "pinned-energy")
    text = "".join(str(c) for c in _walk(energy) if isinstance(c, str))
    # 1928.75 J / (4,729,073 + 589,927) tokens = 3.626e-4 J/token; modelled (MI355X, 2.65
    # kW/GPU): 2650 W / tput_per_gpu, difference measured - modelled
    assert "measured 0.0003626 J/token (GPU boards, from gpu_metrics, 1.93 kW" in text
    # tput_per_gpu = 19153.818964 / 8 = 2394.2274 tok/s/GPU: 2650 / 2394.2274 = 1.1068 J/token
    assert "modelled 1.107 J/token (all-in provisioned kW/GPU, hardware.yaml)" in text
    assert "measured - modelled = -1.106 J/token (-100.0%)" in text
    graph = next(n for n in nodes if isinstance(n, dcc.Graph))
    titles = [a["text"] for a in graph.figure.layout.annotations]
    assert titles[:2] == ["gpu:power_w", "gpu:util_pct"]
    power = [t for t in graph.figure.data if t.xaxis in ("x", None)]
    assert len(power) == 8  # one line per GPU
    by_gpu = {t.name: list(t.y) for t in power}
    assert by_gpu["gpu=0"] == [238.0, 239.0, 238.0]
    assert by_gpu["gpu=2"] == [246.0, 246.0, 246.0]
