"""Flat agentic aggregates from an InferenceX fork (ajith-sirra-amd/InferenceMAX_Rocm_Team, see
tests/fixtures/wild/inferencex/PROVENANCE.md): a browser download `results_bmk (7)/agg_bmk.json`
and two per-point `bmk_agentic_*` JSONs of a GLM-5.1 SGLang HiCache sweep, read end to end through
the pipeline. The v0.2/v0.3 rows carry mean/p75/p90/p95 (no median) and their own `*_intvty`.
Every expected number is copied from the file by hand."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "inferencex"
DOWNLOAD = WILD / "rocm_team_results_bmk_download"
GLM = WILD / "rocm_team_glm5.1_mi355x_sglang_hicache"
_RUN = "glm5.1_tp2_conc16_offload{}_fp4_sglang_tp2-ep1-dpafalse_disagg-false_spec-none_conc16_mi355x-amds_{}"
HICACHE = _RUN.format("hicache", "08")
NONE = _RUN.format("none", "05")


def _points(tmp_path: Path, root: Path, count: int) -> list[dict[str, Any]]:
    st = Store(tmp_path / "store")
    rep = ingest_paths([root], st, run_id="w")
    assert rep.rejected == [] and rep.accepted == count
    return list(st.points(["w"]).sort(Col.SOURCE_PATH).iter_rows(named=True))


def test_a_browser_download_of_results_bmk(tmp_path: Path) -> None:
    (p,) = _points(tmp_path, DOWNLOAD, 1)
    assert p[Col.SOURCE_PATH] == "results_bmk (7)/agg_bmk.json"
    assert p[Col.SCHEMA_VARIANT] == "agentic_flat"
    assert (p[Col.MODEL], p[Col.HW]) == ("amd/MiniMax-M2.5-MXFP4", "mi355x")
    assert (p[Col.TP], p[Col.NUM_GPUS], p[Col.CONC]) == (1, 1, 16)
    assert (p[Col.KV_OFFLOADING], p[Col.SCENARIO]) == ("lmcache", "agentic-coding")
    # tput_per_gpu = total_tput_tps at TP1; output_tput_tps; input_tput_tps
    assert p[Col.TPUT_PER_GPU] == 16865.48518091639
    assert p[Col.OUTPUT_TPUT] == 89.18120738358031
    assert p[Col.INPUT_TPUT] == 16776.30397353281
    # seconds as written; no median in a v0.2/v0.3 row
    assert (p[Col.MEAN_TTFT], p[Col.P90_TTFT]) == (27.149974573223332, 48.563459151800004)
    assert p[Col.MEDIAN_TTFT] is None and p[Col.MEDIAN_INTVTY] is None
    # mean_intvty is the row's own (mean of per-request 1/ITL), not 1 / mean_itl (10.94)
    assert p[Col.MEAN_INTVTY] == 11.989591257047255
    assert p[Col.INTVTY_DEFINITION] == "percentile_of_inverse"
    assert p[Col.MEAN_ITL] == 0.09142650835204363
    assert p[Col.NUM_REQUESTS_SUCCESSFUL] == 300
    assert p[Col.DURATION] == 1827.784179899


# offload -> (tput_per_gpu, output_tput_tps, mean_ttft, p90_ttft, mean_intvty, successful, duration)
GLM_ROWS = {
    HICACHE: (
        6329.964651059201,
        110.78219360185643,
        49.47797443243859,
        92.3591071548,
        23.125649116381453,
        57,
        408.495251165,
    ),
    NONE: (
        2148.763784934991,
        39.245662155911816,
        183.96319790064368,
        233.4920969268,
        11.447968687343609,
        87,
        1818.697814715,
    ),
}


def test_per_point_bmk_agentic_files_of_an_offload_ab(tmp_path: Path) -> None:
    pts = {Path(p[Col.SOURCE_PATH]).stem: p for p in _points(tmp_path, GLM, 2)}
    assert set(pts) == set(GLM_ROWS)
    for name, (per_gpu, out, ttft, p90, intvty, ok, duration) in GLM_ROWS.items():
        p = pts[name]
        assert (p[Col.MODEL], p[Col.HW], p[Col.FRAMEWORK]) == (
            "amd/GLM-5.1-MXFP4",
            "mi355x",
            "sglang",
        )
        assert (p[Col.PRECISION], p[Col.TP], p[Col.NUM_GPUS], p[Col.CONC]) == ("fp4", 2, 2, 16)
        assert p[Col.TPUT_PER_GPU] == per_gpu
        assert p[Col.TOTAL_TPUT] == pytest.approx(per_gpu * 2)  # total_tput_tps over 2 GPUs
        assert p[Col.OUTPUT_TPUT] == out
        assert (p[Col.MEAN_TTFT], p[Col.P90_TTFT]) == (ttft, p90)
        assert p[Col.MEAN_INTVTY] == intvty
        assert p[Col.NUM_REQUESTS_SUCCESSFUL] == ok
        assert p[Col.DURATION] == duration
    assert pts[HICACHE][Col.KV_OFFLOADING] == "hicache"
    assert pts[NONE][Col.KV_OFFLOADING] == "none"
