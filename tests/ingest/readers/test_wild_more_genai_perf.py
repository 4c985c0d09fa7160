"""Real GenAI-Perf exports from public repositories (tests/fixtures/wild/genai_perf, PROVENANCE.md):
both `input_config` generations (argparse namespace and config object with
`perf_analyzer.stimulus`) from wellflat/k8s-dev, and a non-streaming concurrency sweep with its
`_genai_perf.csv` twins from Egham-7/adaptive, read end to end through the pipeline. Every expected
number below is taken from the file by hand (ms / 1000 for seconds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ingest.contract.col import Col
from ingest.pipeline import ingest_paths
from ingest.store import Store

WILD = Path(__file__).resolve().parents[2] / "fixtures" / "wild" / "genai_perf"
OLD = "wellflat_k8s-dev_gpt-oss-20b_e3e57ba/profile_export_genai_perf.json"
NEW = "wellflat_k8s-dev_gpt-oss-20b_e17e8f5/profile_export_genai_perf.json"


def _adaptive(conc: int) -> str:
    return (
        f"adaptive_go_api/simple_medium_response_c{conc}_artifacts/"
        f"auto-openai-chat-concurrency{conc}/simple_medium_response_c{conc}_genai_perf.json"
    )


@pytest.fixture(scope="module")
def points(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    st = Store(tmp_path_factory.mktemp("store"))
    rep = ingest_paths([WILD], st, run_id="w")
    assert rep.rejected == []
    # 2 wellflat exports + 4 adaptive exports; the 4 CSV twins are consumed with their JSON
    assert rep.accepted == 6
    assert sorted(a.path for a in rep.auxiliary) == sorted(
        _adaptive(c).replace(".json", ".csv") for c in (1, 10, 25, 50)
    )
    return {r[Col.SOURCE_PATH]: r for r in st.points(["w"]).iter_rows(named=True)}


def test_argparse_era_export_of_a_streaming_vllm_run(points: dict[str, dict[str, Any]]) -> None:
    p = points[OLD]
    assert p[Col.SCHEMA_VARIANT] == "genai_perf"
    assert p[Col.MODEL] == "openai/gpt-oss-20b"  # input_config.model[0]
    assert (p[Col.CONC], p[Col.REQUEST_RATE]) == (1, None)  # input_config.concurrency
    assert p[Col.OUTPUT_TPUT] == 25.824770552328115  # output_token_throughput.avg
    assert p[Col.MEDIAN_TTFT] == pytest.approx(2.088661403)  # time_to_first_token.p50 2088.66 ms
    # inter_token_latency.p50 = 7.0842575 ms is the TPOT; interactivity = 1000 / 7.0842575
    assert p[Col.MEDIAN_TPOT] == pytest.approx(0.0070842575)
    assert p[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 7.0842575)  # 141.158 tok/s/user
    assert (p[Col.NUM_REQUESTS_SUCCESSFUL], p[Col.NUM_REQUESTS_TOTAL]) == (66, 66)
    # synthetic_input_tokens_mean 150, output_tokens_mean 400
    assert (p[Col.ISL], p[Col.OSL]) == (150, 400)
    # input = request_throughput.avg x input_sequence_length.avg = 0.31455262548511714 x 152.5
    assert p[Col.INPUT_TPUT] == pytest.approx(0.31455262548511714 * 152.5)
    assert p[Col.TOTAL_TPUT] == pytest.approx(0.31455262548511714 * 152.5 + 25.824770552328115)
    assert p[Col.TPUT_PER_GPU] is None  # no GPU count anywhere in the export


def test_config_object_era_export_with_gpu_telemetry(points: dict[str, dict[str, Any]]) -> None:
    p = points[NEW]
    assert p[Col.MODEL] == "openai/gpt-oss-20b"  # input_config.model_names[0]
    assert (p[Col.CONC], p[Col.REQUEST_RATE]) == (1, None)  # perf_analyzer.stimulus.concurrency
    assert p[Col.OUTPUT_TPUT] == 12.095750218698175
    assert p[Col.MEDIAN_TTFT] == pytest.approx(1.416927935)
    assert p[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 7.6727289999999995)
    # GenAI-Perf's own output_token_throughput_per_user.p50 is the same number
    assert p[Col.MEDIAN_INTVTY] == pytest.approx(130.33172421442228)
    assert (p[Col.NUM_REQUESTS_SUCCESSFUL], p[Col.NUM_REQUESTS_TOTAL]) == (35, 35)
    # input.synthetic_tokens.mean 150, input.output_tokens.mean 300
    assert (p[Col.ISL], p[Col.OSL]) == (150, 300)
    assert p[Col.INPUT_TPUT] == pytest.approx(0.4701030011153585 * 152.65714285714284)
    meta = json.loads(p[Col.METADATA])
    assert (meta["streaming"], meta["stimulus"]) == (True, {"concurrency": 1})


# conc -> (output_token_throughput.avg, time_to_first_token.p50 ms, request_count.avg,
#          request_throughput.avg)
ADAPTIVE = {
    1: (51.62535327554503, 18994.885885, 6, 0.06395872798952512),
    10: (408.8289965516585, 8457.4495335, 26, 0.9143702288467201),
    25: (967.0629516003207, 7282.0282369999995, 67, 2.337670662669895),
    50: (1719.7149564081406, 8570.558886499999, 138, 4.7935821278242585),
}


@pytest.mark.parametrize("conc", sorted(ADAPTIVE))
def test_non_streaming_concurrency_sweep(points: dict[str, dict[str, Any]], conc: int) -> None:
    p = points[_adaptive(conc)]
    out, ttft_ms, count, req_tput = ADAPTIVE[conc]
    assert p[Col.MODEL] == "auto"  # the router's model name
    assert (p[Col.CONC], p[Col.REQUEST_RATE]) == (conc, None)
    assert p[Col.OUTPUT_TPUT] == out
    # without streaming GenAI-Perf writes TTFT = request latency (same p50) and no ITL
    assert p[Col.MEDIAN_TTFT] == pytest.approx(ttft_ms / 1000)
    assert p[Col.MEDIAN_E2EL] == pytest.approx(ttft_ms / 1000)
    assert p[Col.MEDIAN_TPOT] is None and p[Col.MEDIAN_INTVTY] is None
    assert (p[Col.NUM_REQUESTS_SUCCESSFUL], p[Col.NUM_REQUESTS_TOTAL]) == (count, count)
    # input.synthetic_tokens.mean 550; output_tokens.mean "" (not set): no OSL
    assert (p[Col.ISL], p[Col.OSL]) == (550, None)
    assert p[Col.INPUT_TPUT] == pytest.approx(req_tput * 550.0)  # every prompt is 550 tokens
    assert json.loads(p[Col.METADATA])["streaming"] is False
