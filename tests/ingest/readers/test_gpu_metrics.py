"""InferenceX gpu_metrics.csv: GPU telemetry as time series and measured energy per token.

Energy numbers are worked by hand from the real amd-smi excerpt
(`tests/fixtures/wild/gpu_metrics/`): per GPU, the power at 1786553852, ...853 and ...854 s is
g0 238/239/238 W, g1 242, g2 246, g3 242, g4 241, g5 239, g6 239, g7 241 W (constant).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from ingest.contract.col import Col
from ingest.contract.schema import SeriesCol
from ingest.errors import ParseError
from ingest.normalize.energy import integrate_gpu, measure
from ingest.pipeline import ingest_paths
from ingest.readers.gpu_metrics import GpuMetricsReader, read_samples
from ingest.store import Store
from tests.ingest.readers._support import FIXTURES, source

AMD = "wild/gpu_metrics/amd_smi_mi355x_excerpt.csv"
BENCH = "wild/gpu_metrics/sglang_mtp_tp4_conc64_isl8192_osl1024.json"
T0 = 1786553852.0


def test_amd_excerpt_samples() -> None:
    src = source(AMD)
    assert GpuMetricsReader().sniff(src, None)
    vendor, s = read_samples(src)
    assert vendor == "amd"
    assert sorted(s["gpu:power_w"]) == [str(g) for g in range(8)]
    assert s["gpu:power_w"]["0"] == [(T0, 238.0), (T0 + 1, 239.0), (T0 + 2, 238.0)]
    assert s["gpu:power_w"]["2"] == [(T0, 246.0), (T0 + 1, 246.0), (T0 + 2, 246.0)]
    assert s["gpu:sm_clock_mhz"]["4"] == [(T0, 102.0), (T0 + 1, 101.0), (T0 + 2, 109.0)]
    assert s["gpu:mem_clock_mhz"]["7"][0] == (T0, 2000.0)
    assert s["gpu:util_pct"]["3"] == [(T0, 0.0), (T0 + 1, 0.0), (T0 + 2, 0.0)]
    assert s["gpu:temp_c"]["6"] == [(T0, 42.0), (T0 + 1, 42.0), (T0 + 2, 42.0)]


def test_series_rows_relative_time() -> None:
    res = GpuMetricsReader().read(source(AMD), None)
    power = [r for r in res.series if r["metric"] == "gpu:power_w"]
    assert len(power) == 24  # 8 GPUs x 3 samples
    g1 = [(r["t"], r["value"]) for r in power if json.loads(r["labels"]) == {"gpu": "1"}]
    assert g1 == [(0.0, 242.0), (1.0, 242.0), (2.0, 242.0)]
    assert res.scope["window"] == [T0, T0 + 2]


def test_energy_by_hand_inside_samples() -> None:
    # window 852.5..853.5: each GPU 0.125*p852 + 0.75*p853 + 0.125*p854;
    # g0 = 29.75 + 179.25 + 29.75 = 238.75; the others are constant.
    _, s = read_samples(source(AMD))
    got = measure(s["gpu:power_w"], T0 + 0.5, T0 + 1.5)
    assert got.energy_j == pytest.approx(238.75 + 242 + 246 + 242 + 241 + 239 + 239 + 241)
    assert got.energy_j == pytest.approx(1928.75)
    assert got.power_w == pytest.approx(1928.75)  # over one second
    assert got.gpus == 8


def test_energy_by_hand_on_samples() -> None:
    # window 852..854: g0 (238+239)/2 + (239+238)/2 = 477; others 2 x p: 3380; total 3857 J
    _, s = read_samples(source(AMD))
    got = measure(s["gpu:power_w"], T0, T0 + 2)
    assert got.energy_j == pytest.approx(3857.0)
    assert got.power_w == pytest.approx(1928.5)


def test_energy_refuses_uncovered_window() -> None:
    _, s = read_samples(source(AMD))
    got = measure(s["gpu:power_w"], T0 + 1, T0 + 3)
    assert got.energy_j is None
    assert "do not cover the window" in got.reason and got.reason.startswith("GPU 0")
    assert measure(s["gpu:power_w"], None, None).reason == "the point records no benchmark window"


def test_integrate_gap_refused() -> None:
    with pytest.raises(ValueError, match="5 s gap"):
        integrate_gpu([(0.0, 100.0), (5.0, 100.0)], 1.0, 2.0)
    assert integrate_gpu([(0.0, 100.0), (1.0, 300.0)], 0.0, 1.0) == pytest.approx(200.0)


NVIDIA = (
    "timestamp, index, power.draw [W], temperature.gpu, clocks.current.sm [MHz], "
    "clocks.current.memory [MHz], utilization.gpu [%], utilization.memory [%]\n"
    "2026/03/01 00:00:00.000, 0, 400.00 W, 65, 1980 MHz, 3996 MHz, 95 %, 80 %\n"
    "2026/03/01 00:00:01.000, 0, 600.00 W, 66, 1965 MHz, 3996 MHz, 97 %, 81 %\n"
)


def test_nvidia_layout_units_and_clock() -> None:
    # the InferenceX nvidia-smi query's header; values with units, local time read as UTC
    src = source("gpu_metrics.csv", NVIDIA.encode())
    vendor, s = read_samples(src)
    t = 1772323200.0  # 2026-03-01T00:00:00Z
    assert vendor == "nvidia"
    assert s["gpu:power_w"]["0"] == [(t, 400.0), (t + 1, 600.0)]
    assert s["gpu:sm_clock_mhz"]["0"] == [(t, 1980.0), (t + 1, 1965.0)]
    assert s["gpu:mem_util_pct"]["0"] == [(t, 80.0), (t + 1, 81.0)]
    assert measure(s["gpu:power_w"], t, t + 1).energy_j == pytest.approx(500.0)


def test_bad_cell_named() -> None:
    bad = NVIDIA.replace("600.00 W", "six hundred")
    with pytest.raises(ParseError) as err:
        read_samples(source("gpu_metrics.csv", bad.encode()))
    assert "line 3, power.draw [W]" in str(err.value) and "six hundred" in str(err.value)


def test_joined_point_gets_measured_energy(tmp_path: Path) -> None:
    # The real result's window moved into the telemetry's (assembled in this test only).
    run = tmp_path / "run_1"
    run.mkdir()
    doc = json.loads((FIXTURES / BENCH).read_text())
    doc["benchmark_start_time_unix"], doc["benchmark_end_time_unix"] = T0 + 0.5, T0 + 1.5
    (run / "sglang_mtp_tp4_conc64_isl8192_osl1024.json").write_text(json.dumps(doc))
    shutil.copy(FIXTURES / AMD, run / "gpu_metrics.csv")
    store = Store(tmp_path / "store")
    report = ingest_paths([run], store, run_id="r1")
    assert report.accepted == 1, report
    pts = store.points(["r1"])
    row = pts.row(0, named=True)
    tokens = 4729073 + 589927  # total_input_tokens + total_output_tokens of the file
    assert row[Col.MEASURED_ENERGY_J] == pytest.approx(1928.75)
    assert row[Col.MEASURED_POWER_W] == pytest.approx(1928.75)
    assert row[Col.MEASURED_JOULES_PER_TOKEN] == pytest.approx(1928.75 / tokens)
    assert row[Col.AVG_POWER_W] == pytest.approx(1928.75 / 8)
    series = store.timeseries(["r1"])
    power = series.filter(pl.col(SeriesCol.METRIC) == "gpu:power_w")
    assert power.height == 24
    assert set(series.get_column(SeriesCol.POINT_ID).unique()) == {row[Col.POINT_ID]}


def test_real_pair_window_mismatch_says_why(tmp_path: Path) -> None:
    run = tmp_path / "run_2"
    shutil.copytree(FIXTURES / "wild/gpu_metrics", run)
    store = Store(tmp_path / "store")
    report = ingest_paths([run], store, run_id="r2")
    assert report.accepted == 1
    row = store.points(["r2"]).row(0, named=True)
    assert row[Col.MEASURED_ENERGY_J] is None
    why = [n.reason for n in report.notes if "no measured energy" in n.reason]
    assert len(why) == 1 and "do not cover the window 1786025370.69" in why[0]


def test_the_sidecars_are_recognised_and_not_stored() -> None:
    from ingest.readers.auxiliary import AuxiliaryReader

    aux = AuxiliaryReader()
    for name, kind in (
        ("gpu_metrics_energy_start.csv", "gpu_energy_counters"),
        ("gpu_metrics_energy_end.csv", "gpu_energy_counters"),
        ("gpu_metrics_identity.json", "gpu_identity"),
    ):
        src = source(f"wild/gpu_metrics/{name}")
        doc = json.loads(src.text()) if name.endswith(".json") else None
        found = aux.kind(src, doc)
        assert found is not None and found.name == kind, name
        assert not GpuMetricsReader().sniff(src, doc)


def test_window_from_a_joined_raw_result() -> None:
    # An aggregate without a window (the real InferenceX agg file of tests/fixtures/inferencex)
    # takes the window of a raw result joined to it (here the real result, window moved).
    from ingest.readers.base import ReadResult
    from ingest.report import IngestReport
    from ingest.rows import _measured_energy

    agg = source(
        "inferencex/agg_fixed_seq/agg_kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_"
        "spec-mtp_conc4_MI355-gbt350-odcdh5-wbb3.json"
    )
    doc = json.loads((FIXTURES / BENCH).read_text())
    doc["benchmark_start_time_unix"], doc["benchmark_end_time_unix"] = T0, T0 + 2
    raw = source("raw.json", json.dumps(doc).encode())
    gpu = GpuMetricsReader().read(source(AMD), None)
    report = IngestReport()
    point = {Col.TOTAL_INPUT_TOKENS: 1000, Col.TOTAL_OUTPUT_TOKENS: 1000}
    got = _measured_energy(
        [(source(AMD), gpu), (raw, ReadResult())], point, agg, (0, 1), report, "r"
    )
    assert got[Col.MEASURED_ENERGY_J] == pytest.approx(3857.0)
    assert got[Col.MEASURED_JOULES_PER_TOKEN] == pytest.approx(3857.0 / 2000)
    alone = _measured_energy([(source(AMD), gpu)], point, agg, (0, 1), report, "r")
    assert alone == {} and "records no benchmark window" in report.notes[-1].reason
