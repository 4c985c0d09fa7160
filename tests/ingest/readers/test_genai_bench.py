"""genai-bench experiment folders found in a public repository (tests/fixtures/wild/genai_bench,
PROVENANCE.md there), read end to end through the pipeline. Every expected value is taken by hand
from the run files' `aggregated_metrics` (the arithmetic is in the comments)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "genai_bench"
QWEN = WILD / "qwen3-30b-a3b_training_job"
GPT_OSS = WILD / "gpt-oss-120b_trtllm"


def _points(tmp_path: Path, root: Path, count: int) -> dict[int, dict[str, Any]]:
    """The points of one experiment folder, keyed by concurrency."""
    st = Store(tmp_path / "store")
    rep = ingest_paths([root], st, run_id="gb")
    assert [r.path for r in rep.rejected if not r.path.endswith("PROVENANCE.md")] == []
    rows = list(st.points(["gb"]).iter_rows(named=True))
    assert len(rows) == count
    return {r[Col.CONC]: r for r in rows}


def test_streaming_sweep_on_one_h100(tmp_path: Path) -> None:
    pts = _points(tmp_path, QWEN, 6)
    assert sorted(pts) == [2, 4, 8, 16, 32, 64]  # experiment_metadata.num_concurrency
    for p in pts.values():
        assert p[Col.SCHEMA_VARIANT] == "genai_bench"
        assert p[Col.MODEL] == "Qwen3-30B-A3B-Instruct-2507-FP8"  # api_model_name: the served name
        assert (p[Col.HW], p[Col.NUM_GPUS], p[Col.REQUEST_RATE]) == ("h100", 1, None)
        # traffic scenario N(2000,200)/(200,20): the means, with a warning
        assert (p[Col.ISL], p[Col.OSL]) == (2000, 200)
        assert any("N(2000,200)/(200,20)" in w for w in p[Col.WARNINGS])
        meta = json.loads(p[Col.METADATA])
        assert (meta["harness"], meta["harness_version"]) == ("genai-bench", "0.0.2")
    c2, c64 = pts[2], pts[64]
    # num_concurrency_2 file: 65 of 65 requests, mean_output_throughput_tokens_per_s 207.74...
    assert (c2[Col.NUM_REQUESTS_SUCCESSFUL], c2[Col.NUM_REQUESTS_TOTAL]) == (65, 65)
    assert c2[Col.OUTPUT_TPUT] == pytest.approx(207.741974349415)
    assert c2[Col.TPUT_PER_GPU] == pytest.approx(2228.369743877389)  # total over 1 GPU
    assert c2[Col.MEDIAN_TTFT] == pytest.approx(0.1898169293999672)  # stats.ttft.p50, seconds
    assert c2[Col.P99_TTFT] == pytest.approx(0.2672089373320341)
    assert c2[Col.MEDIAN_TPOT] == pytest.approx(0.008444489719338172)
    assert c2[Col.MEDIAN_INTVTY] == pytest.approx(1 / 0.008444489719338172)  # 118.4 tok/s/user
    assert c64[Col.OUTPUT_TPUT] == pytest.approx(887.3150977543385)
    assert c64[Col.MEDIAN_TTFT] == pytest.approx(4.479512528050691)
    assert c64[Col.MEDIAN_TPOT] == pytest.approx(0.02230309071717162)
    assert c64[Col.DURATION] == pytest.approx(14.381587817333639)


def test_non_streaming_sweep_with_server_errors(tmp_path: Path) -> None:
    pts = _points(tmp_path, GPT_OSS, 3)
    assert sorted(pts) == [1, 2, 4]
    c1, c4 = pts[1], pts[4]
    for p in pts.values():
        assert p[Col.MODEL] == "openai/gpt-oss-120b"
        assert p[Col.FRAMEWORK] == "trt"  # server_version "TRT-LLM", no server_engine
        assert (p[Col.ISL], p[Col.OSL]) == (8000, 700)  # D(8000,700): fixed lengths
        # --disable-streaming: the 1 ms TTFT placeholder is not a measurement
        assert p[Col.MEDIAN_TTFT] is None and p[Col.MEAN_TTFT] is None
        assert any("--disable-streaming" in w for w in p[Col.WARNINGS])
    # 61 completed of 69, error_codes_frequency {"500": 8} (error_rate is written as 0)
    assert (c1[Col.NUM_REQUESTS_SUCCESSFUL], c1[Col.NUM_REQUESTS_TOTAL]) == (61, 69)
    assert c1[Col.ERROR_RATE] == pytest.approx(8 / 69)
    assert json.loads(c1[Col.METADATA])["error_codes_frequency"] == {"500": 8}
    assert c1[Col.OUTPUT_TPUT] == pytest.approx(353.0226682194258)
    assert c1[Col.MEDIAN_TPOT] == pytest.approx(0.0023977899370489853)
    assert c4[Col.OUTPUT_TPUT] == pytest.approx(1104.1009408492728)
    assert c4[Col.MEDIAN_TPOT] == pytest.approx(0.003025241834050931)
    assert (c4[Col.NUM_REQUESTS_SUCCESSFUL], c4[Col.NUM_REQUESTS_TOTAL]) == (105, 128)
    # the metadata's command line (it held an API key) is never copied
    assert "cmd" not in json.loads(c4[Col.METADATA])


def test_run_files_in_milliseconds_are_scaled(tmp_path: Path) -> None:
    folder = tmp_path / "ms"
    shutil.copytree(QWEN, folder)
    run = folder / "N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json"
    doc = json.loads(run.read_text())
    doc["_time_unit"] = "ms"
    stats = doc["aggregated_metrics"]["stats"]
    for lat in ("ttft", "tpot", "e2e_latency"):
        stats[lat] = {k: v * 1000 for k, v in stats[lat].items()}
    run.write_text(json.dumps(doc))
    pts = _points(tmp_path, folder, 6)
    assert pts[2][Col.MEDIAN_TTFT] == pytest.approx(0.1898169293999672)


def test_a_folder_whose_runs_all_failed_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "failed"
    folder.mkdir()
    shutil.copy(QWEN / "experiment_metadata.json", folder)
    src = QWEN / "N2000_200_200_20_text-to-text_num_concurrency_2_time_63s.json"
    doc = json.loads(src.read_text())
    agg = doc["aggregated_metrics"]
    agg.update(num_completed_requests=0, num_error_requests=65, error_codes_frequency={"503": 65})
    (folder / src.name).write_text(json.dumps(doc))
    st = Store(tmp_path / "store")
    rep = ingest_paths([folder], st, run_id="gb")
    assert [(r.field, r.reason) for r in rep.rejected] == [
        (
            "aggregated_metrics.num_completed_requests",
            "genai-bench 0.0.2 run: all 65 requests failed (HTTP 503); no point",
        )
    ]


def test_the_summary_workbook_and_plots_are_joined_not_refused(tmp_path: Path) -> None:
    # genai-bench writes `<folder>_summary.xlsx` and `traffic_scenario_*.png` / `interim_*.png`
    # beside the runs (the real folder has them; their bytes are stand-ins here).
    folder = tmp_path / "with_plots"
    shutil.copytree(QWEN, folder)
    (folder / "baseten_training_benchmark_summary.xlsx").write_bytes(b"PK\x03\x04 workbook")
    (folder / "traffic_scenario_TTFT vs Output Throughput of Server.png").write_bytes(b"\x89PNG")
    (folder / "interim_N2000_200_200_20_output_speed_vs_throughput.png").write_bytes(b"\x89PNG")
    st = Store(tmp_path / "store")
    rep = ingest_paths([folder], st, run_id="gb")
    assert rep.rejected == []
    joined = {o.path for o in rep.auxiliary}
    assert {
        "baseten_training_benchmark_summary.xlsx",
        "traffic_scenario_TTFT vs Output Throughput of Server.png",
        "interim_N2000_200_200_20_output_speed_vs_throughput.png",
    } <= {Path(p).name for p in joined}


def test_a_folder_without_run_files_is_named(tmp_path: Path) -> None:
    folder = tmp_path / "unfinished"
    folder.mkdir()
    shutil.copy(QWEN / "experiment_metadata.json", folder)
    st = Store(tmp_path / "store")
    rep = ingest_paths([folder], st, run_id="gb")
    ((path, reason, reader),) = [(r.path, r.reason, r.reader) for r in rep.rejected]
    assert (path, reader) == ("experiment_metadata.json", "genai_bench")
    assert reason.startswith("genai-bench experiment folder without a run file")
