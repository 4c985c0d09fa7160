"""Every real result file in tests/fixtures ingests, or is refused with its reason (issue: ingest)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# -- serving-benchmark harnesses (issue 24, part A): GuideLLM, inference-perf, llmperf --
HARNESSES_A = {
    "guidellm": 6,  # 0.3: JSON + its YAML twin, 2 users' runs; 2 benchmarks of a 0.8 report
    "inference_perf": 14,  # 2 KubeCon demo sweeps x 7 stages (their 2 all-stage summaries consumed)
    "llmperf": 9,  # 6-concurrency sweep (summary + responses) + 3 leaderboard summaries
}
HARNESSES_A_RATE_POINTS = 14 + 3  # inference-perf stages + 3 GuideLLM constant rates
# -- end harnesses part A --


def test_the_whole_fixture_tree(tmp_path: Path) -> None:
    st = Store(tmp_path)
    rep = ingest_paths([FIXTURES], st, run_id="all")
    # The only result that cannot be a point is the local run that completed 0 of 640 requests.
    assert [(r.path, r.field) for r in rep.rejected] == [
        (
            "inferencex/raw_bench_serving/local-results/minimax-eagle3-conc64/minimaxm2.5_8k1k_conc64.json",
            "completed",
        ),
        # ---- issue 24, part B: known tools' outputs that give no point, refused by name ----
        (
            "wild/aiperf_failed/all_requests_timed_out/profile_export_aiperf.json",
            "error_request_count",
        ),
        ("wild/mlperf_loadgen/mlperf_log_detail.txt", ""),
        ("wild/mlperf_loadgen/mlperf_log_summary.txt", ""),
        # ---- end issue 24, part B ----
    ]
    # One run: a measurement held twice is one point, repeats of a configuration and load are
    # one point with their count (ingest/normalize/measurements.py).
    counts = dict(st.points(["all"]).group_by(Col.SCHEMA_VARIANT).len().iter_rows())
    assert (
        counts
        == {
            "agentic_flat": 113,  # dsr1 B200 multi-turn (44 files) + 3 rows from a ROCm-team fork
            # + 15 rows in the two real results_bmk zips (1 + 14) + the GLM-5.1 download's 12
            # points (its aggregate and 2 files of the older GLM fixture are copies of them)
            # + the MiniMax point beside its server log + the two Kimi-K2.5 sources (2 x 20,
            # in two directories: kept apart)
            "agentic_v3": 12,  # Kimi-K2.7 TP4 and TP8 sweeps, 5 files each, + 2 DSV4 (wufann fork)
            # 6 TPU v7 (InferenceX-app); the 3 Kimi-K2.5 MTP process_result aggregates are the
            # same measurements as their raw files in raw_bench_serving, stored once
            # + the InferenceX app API capture's 25 rows (wild/inferencex_app_api: DeepSeek-R1
            # FP8 B300 with and without MTP, and the rest of its tail)
            "agg_fixed_v1": 6 + 25,
            "aiperf": 5,  # 3 wild runs (0.10 x 2, pre-1.0) + raw InferenceX trees without aggregate
            "aiperf_legacy": 1,  # the upstream aiperf example run
            # 16 multinode + 3 Kimi raw + 10 local runs + 43 wild vLLM + 1 renamed Kimi raw copy,
            # less 2 repeats of local re-runs saved beside each other (conc64/_rerun, _retry);
            # the renamed copy is a copy of its raw file
            "bench_serving_ms": 72,  # + 1 beside the gpu_metrics excerpt
            "bench_serving_random_s": 169,
            "genai_perf": 6,  # wild GenAI-Perf exports (2 repos, both input_config generations)  # GLM-5 52 + MiniMax-M2.5 72 + Qwen3.5 45
            "multiturn_summary": 46,  # rows of experiment_summary.csv
            # wild SGLang bench_serving JSONL lines: 9 + 7 offline lines, 2 of them one repeat
            "sglang_bench_serving": 15,
            "together_runner": 9,  # 13 files; dsr1 B200 tuned re-run at 4 loads: 4 x 2 repeats
            "vllm_capture": 2  # the two console result blocks (conc 32, 64)
            + 3,  # issue 24 B: the vLLM request-rate sweep (10, 30, inf) in a captured log
            "vllm_bench_sweep": 15,  # wild `vllm bench sweep serve` variants (repeats merged)
            # ---- issue 24, part B ----
            "trtllm_bench_json": 2,  # two trtllm-bench 1.2.0 --report_json latency runs
            "trtllm_bench_console": 2,  # two trtllm-bench 0.16.0 console logs
            "genai_bench": 9,  # two genai-bench experiment folders (3 + 6 run files)
            "sglang_bench_console": 18,  # two SGLang cookbook pages, 9 console blocks each
            # ---- end issue 24, part B ----
        }
        | HARNESSES_A
        | {"guidellm": 5}  # in one run the 0.3 report's YAML twin is its JSON's measurement
    )
    # Nothing vanished: every file is stored, rejected, or named as auxiliary.
    # 421 before issues 24 and 23, + issue 24 part A and B fixtures, + 48 for issue 23: its
    # fixtures' 49 new points net of the copies and repeats they hold, less the GuideLLM YAML
    # twin stored once
    # + 1: gpu_metrics; + 25: the InferenceX app API capture (issue 27)
    expected = 421 + sum(HARNESSES_A.values()) + 34 + 48 + 1 + 25
    assert rep.accepted == expected and rep.duplicates == 0
    ignored = {i.path for i in rep.ignored}
    assert "inferencex/golden_al/minimaxm3_eagle3_gqa.yaml" in ignored
    again = ingest_paths([FIXTURES], st, run_id="all")
    assert (again.accepted, again.duplicates) == (0, expected)
    points = st.points(["all"])
    # Every point has a load: a concurrency, or a request rate (54 request-rate sweep points
    # + 6 SGLang offline lines at rate inf (issue 23, one of them two repeats),
    # + 5 from issue 24 part B: 2 trtllm-bench throughput logs at rate inf, 3 vLLM log blocks).
    no_conc = points.filter(pl.col(Col.CONC).is_null())
    assert (
        no_conc.height == 60 + HARNESSES_A_RATE_POINTS + 5
        and no_conc.get_column(Col.REQUEST_RATE).null_count() == 0
    )
    assert points.get_column(Col.POINT_ID).n_unique() == points.height
