"""More real InferenceX aggregates from forks (tests/fixtures/wild/inferencex/PROVENANCE.md), read
end to end through the pipeline:

* two AgentX v3 nested rows (`request_metrics` blocks) a fork committed from local runs
  (wufann/InferenceX `local_results/`: DeepSeek-V4-Pro, SGLang, MTP, HiCache, MI355X TP8);
* two browser downloads of a run's `results_bmk` artifact committed as the .zip files themselves
  (ajith-sirra-amd/InferenceMAX_Rocm_Team `results/0601/results_bmk (7).zip`,
  `results/0603/results_bmk (16).zip`), flat `process_agentic_result.py` v0.2/v0.3 rows.

Every expected number is copied from the file by hand; the arithmetic is in the comments. None of
these shapes has a p99 (v3 blocks stop at p95, v0.2/v0.3 rows too), so p99_ttft is asserted absent
and p95/p90 TTFT (seconds, as written) stand in for the tail.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store

WILD = Path(__file__).resolve().parents[1] / "fixtures" / "wild" / "inferencex"
V3 = WILD / "wufann_dsv4_local_results"
ZIPS = WILD / "rocm_team_results_bmk_zips"
ZIP7 = ZIPS / "results_bmk (7).zip"
ZIP16 = ZIPS / "results_bmk (16).zip"
UNZIPPED7 = WILD / "rocm_team_results_bmk_download"


def _points(tmp_path: Path, paths: list[Path], count: int, **defaults: Any) -> list[dict[str, Any]]:
    st = Store(tmp_path / "store")
    rep = ingest_paths(paths, st, run_id="w", defaults=defaults or None)
    assert rep.rejected == [] and rep.ignored == [] and rep.accepted == count
    return list(st.points(["w"]).sort(Col.SOURCE_PATH, Col.CONC).iter_rows(named=True))


# conc -> (tput_per_gpu, total_tput, median_intvty, median_ttft, p95_ttft, ok, total, duration)
V3_ROWS = {
    # per_gpu.total_tput_tps 15196.21766 = total.tokens_per_second 121569.74129 / 8 (TP8)
    # = 15196.2176612; intvty.p50 50.59206 ~ 1 / itl.p50 0.01977 = 50.58
    32: (15196.21766, 121569.74129, 50.59206, 0.61853, 2.47364, 3079, 3433, 3623.7707),
    # 154921.16355 / 8 = 19365.1454437 -> 19365.14544; 1 / 0.02616 = 38.23 ~ p50 38.22164
    48: (19365.14544, 154921.16355, 38.22164, 0.70114, 3.32465, 4109, 4640, 3626.5548),
}


def test_agentx_v3_rows_a_fork_committed(tmp_path: Path) -> None:
    pts = _points(tmp_path, [V3], 2)
    assert [p[Col.CONC] for p in pts] == [32, 48]
    for p in pts:
        per_gpu, total, intvty, ttft50, ttft95, ok, n, duration = V3_ROWS[p[Col.CONC]]
        assert p[Col.SCHEMA_VARIANT] == "agentic_v3"
        assert (p[Col.MODEL], p[Col.MODEL_PREFIX]) == ("deepseek-ai/DeepSeek-V4-Pro", "dsv4")
        assert (p[Col.HW], p[Col.FRAMEWORK], p[Col.PRECISION]) == ("mi355x", "sglang", "fp4")
        assert (p[Col.TP], p[Col.EP], p[Col.PP], p[Col.NUM_GPUS]) == (8, 1, 1, 8)
        assert p[Col.SPEC_DECODING] == "mtp"
        assert (p[Col.KV_OFFLOADING], p[Col.KV_OFFLOAD_BACKEND]) == ("dram", "hicache")
        assert p[Col.KV_OFFLOAD_BACKEND_VERSION] == "0"  # {"name": "hicache", "version": "0"}
        assert p[Col.TPUT_PER_GPU] == per_gpu
        assert p[Col.TOTAL_TPUT] == total
        assert p[Col.TOTAL_TPUT] == pytest.approx(per_gpu * 8, rel=1e-9)
        # v3: latency.intvty.p50 is 1 / p50 ITL (the slow tail), kept as written
        assert p[Col.MEDIAN_INTVTY] == intvty
        assert p[Col.INTVTY_DEFINITION] == "inv_itl_percentile"
        assert p[Col.MEDIAN_INTVTY] == pytest.approx(1 / p[Col.MEDIAN_ITL], rel=1e-3)
        # TTFT in seconds as written (ttft.p50, ttft.p95); no p99 block in a v3 row
        assert (p[Col.MEDIAN_TTFT], p[Col.P95_TTFT]) == (ttft50, ttft95)
        assert p[Col.P99_TTFT] is None
        # records_profiled / records_total; records_error_dropped 0 -> error rate 0
        assert (p[Col.NUM_REQUESTS_SUCCESSFUL], p[Col.NUM_REQUESTS_TOTAL]) == (ok, n)
        assert p[Col.ERROR_RATE] == 0.0
        assert p[Col.DURATION] == duration
    # the same arm (only the load differs); conc 48's `"image": ""` is unknown, not a value
    assert pts[0][Col.ARM_ID] == pts[1][Col.ARM_ID]
    assert pts[0][Col.ARM_LABEL] == "TP8 EP1 | MTP | kv dram/hicache"
    assert pts[0][Col.IMAGE] == "rocm/sgl-dev:v0.5.17-rocm720-mi35x-20260820"
    assert pts[1][Col.IMAGE] is None


def test_a_browser_zip_of_results_bmk_with_one_row(tmp_path: Path) -> None:
    (p,) = _points(tmp_path, [ZIP7], 1)
    assert p[Col.SOURCE_PATH] == "results_bmk (7).zip/agg_bmk.json"
    assert p[Col.SCHEMA_VARIANT] == "agentic_flat"
    assert (p[Col.MODEL], p[Col.CONC], p[Col.TP], p[Col.NUM_GPUS]) == (
        "amd/MiniMax-M2.5-MXFP4",
        16,
        1,
        1,
    )
    # The artifact as downloaded says "hw": "", "framework": "", "precision": "" (the run's
    # workflow left them unset): unknown, so no hardware and no framework are invented.
    assert (p[Col.HW], p[Col.HW_LABEL], p[Col.FRAMEWORK], p[Col.PRECISION]) == (
        None,
        None,
        None,
        None,
    )
    assert p[Col.KV_OFFLOADING] == "lmcache"
    # tput_per_gpu = total_tput_tps at TP1 = 16865.48518091639
    assert p[Col.TPUT_PER_GPU] == 16865.48518091639
    # v0.2/v0.3 rows: mean/p75/p90/p95 only, so no median and no p99
    assert p[Col.MEDIAN_INTVTY] is None and p[Col.P99_TTFT] is None
    assert p[Col.MEAN_INTVTY] == 11.989591257047255
    assert p[Col.INTVTY_DEFINITION] == "percentile_of_inverse"
    assert (p[Col.MEAN_TTFT], p[Col.P90_TTFT]) == (27.149974573223332, 48.563459151800004)


def test_the_zip_and_its_unzipped_copy_agree_but_for_hw(tmp_path: Path) -> None:
    """The fork also committed the zip unzipped, with `hw` typed in by hand ("mi355x")."""
    zipped = _points(tmp_path / "z", [ZIP7], 1)[0]
    unzipped = _points(tmp_path / "u", [UNZIPPED7], 1)[0]
    assert (zipped[Col.HW], unzipped[Col.HW]) == (None, "mi355x")
    for col in (
        Col.CONC,
        Col.TP,
        Col.TPUT_PER_GPU,
        Col.OUTPUT_TPUT,
        Col.MEAN_TTFT,
        Col.P90_TTFT,
        Col.P95_TTFT,
        Col.MEAN_INTVTY,
        Col.P90_INTVTY,
        Col.NUM_REQUESTS_SUCCESSFUL,
        Col.DURATION,
    ):
        assert zipped[col] == unzipped[col], col


def test_set_fills_what_the_download_left_empty(tmp_path: Path) -> None:
    (p,) = _points(tmp_path, [ZIP7], 1, hw="mi355x", framework="vllm", precision="fp4")
    assert (p[Col.HW], p[Col.FRAMEWORK], p[Col.PRECISION]) == ("mi355x", "vllm", "fp4")
    # filled, not a clash with the file's empty strings
    assert not any("differs" in w for w in p[Col.WARNINGS] or [])


# (conc, offloading) -> (tput_per_gpu, mean_ttft, p90_ttft, mean_intvty, successful)
ZIP16_ROWS = {
    # row 5: total_tput_tps 48445.50497815435 / 4 (TP4) = 12111.3762445385875
    (32, "none"): (12111.376244538587, 4.5663012074601, 9.242931863699997, 9.226060154811629, 802),
    # row 12: 37728.042058579136 / 4 = 9432.010514644784
    (128, "hicache"): (
        9432.010514644784,
        274.63099742327915,
        365.3736202865,
        5.138315838319988,
        566,
    ),
}


def test_a_browser_zip_of_a_whole_offload_sweep(tmp_path: Path) -> None:
    pts = _points(tmp_path, [ZIP16], 14)
    by_key = {(p[Col.CONC], p[Col.KV_OFFLOADING]): p for p in pts}
    # 7 concurrencies x HiCache on/off, one row each
    assert set(by_key) == {
        (c, o) for c in (16, 32, 40, 48, 56, 64, 128) for o in ("none", "hicache")
    }
    for p in pts:
        assert p[Col.SOURCE_PATH] == "results_bmk (16).zip/agg_bmk.json"
        assert (p[Col.MODEL], p[Col.MODEL_PREFIX]) == ("Qwen/Qwen3.5-397B-A17B-FP8", "qwen3.5")
        assert (p[Col.HW], p[Col.FRAMEWORK], p[Col.PRECISION]) == ("mi355x", "sglang", "fp8")
        assert (p[Col.TP], p[Col.NUM_GPUS]) == (4, 4)
        assert p[Col.MEDIAN_INTVTY] is None and p[Col.P99_TTFT] is None
    for key, (per_gpu, ttft, p90, intvty, ok) in ZIP16_ROWS.items():
        p = by_key[key]
        assert p[Col.TPUT_PER_GPU] == per_gpu
        assert p[Col.TOTAL_TPUT] == pytest.approx(per_gpu * 4, rel=1e-9)
        assert (p[Col.MEAN_TTFT], p[Col.P90_TTFT]) == (ttft, p90)
        assert p[Col.MEAN_INTVTY] == intvty
        assert p[Col.NUM_REQUESTS_SUCCESSFUL] == ok


def test_both_zips_in_one_ingest_are_two_runs_downloads(tmp_path: Path) -> None:
    """Two `results_bmk (N).zip` with different bytes are two runs' downloads: both kept."""
    pts = _points(tmp_path, [ZIPS], 15)
    assert sorted({p[Col.SOURCE_PATH] for p in pts}) == [
        "results_bmk (16).zip/agg_bmk.json",
        "results_bmk (7).zip/agg_bmk.json",
    ]
