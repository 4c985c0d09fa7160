"""vLLM benchmark_serving / `vllm bench serve` raw results (ms) and the seconds-based variant."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError
from ingest.readers.bench_serving import BenchServingRandomReader, BenchServingReader
from tests.ingest.readers._support import (
    check_only_contract_errors,
    doc_of,
    fixture_files,
    load,
    mutated,
    named,
    point,
    read_point,
)

MS = BenchServingReader()
RANDOM = BenchServingRandomReader()
GPTOSS_16 = "inferencex/raw_bench_serving/gptoss120b_multinode/concurrency_16_req_rate_inf_gpus_16_ctx_8_gen_8.json"
KIMI_RAW = "inferencex/raw_bench_serving/kimik2.5_mi355x_mtp_root/kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_MI355-gbt350-odcdh5-wbb3.json"
KIMI_AGG = "inferencex/agg_fixed_seq/agg_kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_MI355-gbt350-odcdh5-wbb3.json"
FAILED = (
    "inferencex/raw_bench_serving/local-results/minimax-eagle3-conc64/minimaxm2.5_8k1k_conc64.json"
)
LOCAL_OK = (
    "inferencex/raw_bench_serving/local-results/minimax-eagle3-conc64/minimaxm2.5_1k1k_conc64.json"
)
GLM = "inferencex/bench_serving_random/glm-5/glm5_fp8_vllm_tp8_isl1024_osl128_conc4.json"
DEP8 = (
    "inferencex/bench_serving_random/minimax-m2.5/minimax_m25_vllm_dep8_isl1024_osl128_conc16.json"
)
TEP8 = (
    "inferencex/bench_serving_random/minimax-m2.5/minimax_m25_vllm_tep8_isl1024_osl128_conc16.json"
)
QWEN = "inferencex/bench_serving_random/qwen3.5/qwen35_vllm_tp8_isl1024_osl128_conc4.json"


def test_multinode_raw_takes_the_gpu_split_from_the_file_name() -> None:
    row = read_point(MS, GPTOSS_16)
    assert row[Col.SCHEMA_VARIANT] == "bench_serving_ms"
    assert (row[Col.NUM_GPUS], row[Col.PREFILL_GPUS], row[Col.DECODE_GPUS]) == (16, 8, 8)
    assert row[Col.IS_MULTINODE] is True and row[Col.DISAGG] is True
    assert row[Col.CONC] == 16
    # tput_per_gpu = total_token_throughput / (ctx + gen GPUs) = 3451.1624296487935 / 16
    assert row[Col.TPUT_PER_GPU] == pytest.approx(3451.1624296487935 / 16)
    # output per decode GPU, input per prefill GPU (formats.md 2.3): 1725.5812148243967 / 8
    assert row[Col.OUTPUT_TPUT_PER_GPU] == pytest.approx(1725.5812148243967 / 8)
    assert row[Col.INPUT_TPUT_PER_GPU] == pytest.approx(
        (3451.1624296487935 - 1725.5812148243967) / 8
    )
    # median_intvty = 1000 / median_tpot_ms = 1000 / 9.03941193840877 = 110.6267 tok/s/user
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1000 / 9.03941193840877)
    assert row[Col.INTVTY_DEFINITION] == "inv_tpot_percentile"
    # ms -> s, including the literal-dot p99.9 key: 698.2081180762034 ms
    assert row[Col.P999_TTFT] == pytest.approx(0.6982081180762034)
    assert row[Col.MEDIAN_E2EL] == pytest.approx(9.359918448608369)
    # no input_lens in this pre-2026-06 file: 163840 input tokens / 160 completed
    assert row[Col.MEAN_INPUT_LEN] == pytest.approx(1024.0)
    assert (row[Col.NUM_REQUESTS_TOTAL], row[Col.NUM_REQUESTS_SUCCESSFUL]) == (160, 160)
    assert row[Col.ERROR_RATE] == 0.0
    assert row[Col.WARNINGS] == ["num_gpus=16 (8 ctx + 8 gen) taken from the file name"]


def test_single_node_raw_matches_its_process_result_aggregate() -> None:
    raw = read_point(MS, KIMI_RAW)
    agg = doc_of(KIMI_AGG)
    # process_result.py: tput_per_gpu = 445.0136269213033 / (tp 8 * pp 1 * pcp 1) = 55.6267
    assert raw[Col.NUM_GPUS] == 8
    assert raw[Col.TPUT_PER_GPU] == pytest.approx(445.0136269213033 / 8)
    assert raw[Col.TPUT_PER_GPU] == pytest.approx(agg["tput_per_gpu"])
    assert raw[Col.OUTPUT_TPUT_PER_GPU] == pytest.approx(agg["output_tput_per_gpu"])
    assert raw[Col.INPUT_TPUT_PER_GPU] == pytest.approx(agg["input_tput_per_gpu"])
    # 1000 / 17.393898241078155 ms = 57.4914, the aggregate's own median_intvty
    assert raw[Col.MEDIAN_INTVTY] == pytest.approx(agg["median_intvty"])
    assert raw[Col.P999_INTVTY] == pytest.approx(agg["p99.9_intvty"])
    # MTP: inter-chunk ITL (48.7 ms) exceeds TPOT (17.3 ms)
    assert raw[Col.MEAN_ITL] == agg["mean_itl"] > raw[Col.MEAN_TPOT]
    expected = {
        Col.TP: 8,
        Col.EP: 1,
        Col.DP_ATTENTION: False,
        Col.SPEC_DECODING: "mtp",
        Col.PRECISION: "int4",
        Col.FRAMEWORK: "vllm",
        Col.MODEL_PREFIX: "kimik2.5",
        Col.MODEL: "moonshotai/Kimi-K2.5",
        Col.ISL: 1024,
        Col.OSL: 1024,
        Col.RUNNER: "MI355-gbt350-odcdh5-wbb3",
    }
    assert {k: raw[k] for k in expected} == expected
    # 37068 input tokens / 40 completed requests
    assert raw[Col.MEAN_INPUT_LEN] == pytest.approx(37068 / 40)


@pytest.mark.parametrize("raw_rel", fixture_files("inferencex/raw_bench_serving/kimik2.5_*/*.json"))
def test_every_raw_file_reproduces_its_aggregate(raw_rel: str) -> None:
    # process_result.py turned exactly these raw files into the agg_ files: every latency (ms /
    # 1000) and per-GPU rate must come out identical; intvty up to float rounding.
    raw = read_point(MS, raw_rel)
    agg = doc_of(
        raw_rel.replace("raw_bench_serving/kimik2.5_mi355x_mtp_root/", "agg_fixed_seq/agg_")
    )
    shared = [k for k in agg if k in raw and isinstance(agg[k], float)]
    assert len(shared) == 3 + 5 * 5  # 3 per-GPU rates, 5 stats x (ttft, tpot, itl, e2el, intvty)
    for key in shared:
        if key.endswith("_intvty"):
            assert raw[key] == pytest.approx(agg[key], rel=1e-12), key
        else:
            assert raw[key] == agg[key], key


def test_failed_local_run_with_zero_completed_is_rejected_with_that_reason() -> None:
    src, doc = load(FAILED)
    assert MS.sniff(src, doc)
    with pytest.raises(ParseError) as info:
        MS.read(src, doc)
    assert info.value.field == "completed"
    assert "0 of 640 requests completed" in info.value.reason


def test_raw_file_without_any_gpu_count_is_kept_with_totals_and_a_warning() -> None:
    src, doc = load(LOCAL_OK)
    row = point(MS, src, doc)
    assert row[Col.NUM_GPUS] is None and row[Col.TPUT_PER_GPU] is None
    assert row[Col.TOTAL_TPUT] == pytest.approx(doc["total_token_throughput"])
    assert any("GPU count unknown" in w for w in row[Col.WARNINGS])


def test_spec_decode_keys_become_measured_acceptance() -> None:
    # The numbers of the real `vllm bench serve` console block (vllm_bench_serve_conc32.log), put
    # under the JSON keys vLLM writes them to; no captured JSON with these keys exists.
    src, doc = load(KIMI_RAW)
    doc = {
        **doc,
        "spec_decode_acceptance_rate": 44.45,
        "spec_decode_acceptance_length": 2.33,
        "spec_decode_num_drafts": 21936,
        "spec_decode_draft_tokens": 65808,
        "spec_decode_accepted_tokens": 29250,
        "spec_decode_per_position_acceptance_rates": [0.6601, 0.4153, 0.2581],
    }
    row = point(MS, src, doc)
    assert row[Col.AL_SOURCE] == "bench_json"
    assert (row[Col.SPEC_DRAFTS], row[Col.SPEC_DRAFT_TOKENS]) == (21936.0, 65808.0)
    assert row[Col.SPEC_ACCEPTED_TOKENS] == 29250.0
    assert row[Col.AL_MEASURED] == 2.33  # 1 + 29250 / 21936 = 2.3334, within 0.01: no warning
    assert row[Col.DRAFT_ACCEPTANCE_RATE] == pytest.approx(0.4445)  # percent -> fraction
    assert row[Col.ACCEPT_RATE_PER_POS] == [0.6601, 0.4153, 0.2581]
    assert not any("differs" in w for w in row[Col.WARNINGS])


def test_spec_decode_counter_spelling_and_derived_al() -> None:
    src, doc = load(KIMI_RAW)
    doc = {**doc, "spec_decode_num_drafts": 100, "spec_decode_num_accepted_tokens": 150}
    row = point(MS, src, doc)
    assert row[Col.AL_MEASURED] == pytest.approx(1 + 150 / 100)


def test_per_position_rates_in_percent_are_scaled() -> None:
    src, doc = load(KIMI_RAW)
    doc = {**doc, "spec_decode_per_position_acceptance_rates": [66.01, 41.53, 25.81]}
    row = point(MS, src, doc)
    assert row[Col.ACCEPT_RATE_PER_POS] == pytest.approx([0.6601, 0.4153, 0.2581])
    assert row[Col.WARNINGS][-1].endswith("given in percent; divided by 100")
    with pytest.raises(ParseError):
        MS.read(src, {**doc, "spec_decode_acceptance_rate": 144.5})


def test_metadata_tp_in_the_json_wins_over_the_file_name() -> None:
    src, doc = load(LOCAL_OK)
    # `--metadata tp=8` lands at the top level; then the local run has its GPU count
    row = point(MS, src, {**doc, "tp": 8})
    assert (row[Col.TP], row[Col.NUM_GPUS]) == (8, 8)
    assert row[Col.TPUT_PER_GPU] == pytest.approx(9728.399792570983 / 8)


def test_input_and_output_lens_give_the_mean_lengths() -> None:
    src, doc = load(KIMI_RAW)
    doc = {**doc, "input_lens": [1000, 1024, 900, 950], "output_lens": [1024, 0, 1000, 1000]}
    row = point(MS, src, doc)
    assert row[Col.MEAN_INPUT_LEN] == pytest.approx((1000 + 1024 + 900 + 950) / 4)
    # a failed request's output length is 0 and counts in the mean over num_prompts
    assert row[Col.MEAN_OUTPUT_LEN] == pytest.approx((1024 + 0 + 1000 + 1000) / 4)


def test_many_failures_are_kept_with_a_warning() -> None:
    src, doc = load(KIMI_RAW)
    row = point(MS, src, {**doc, "completed": 30})
    assert row[Col.ERROR_RATE] == pytest.approx(10 / 40)
    assert any("10 of 40 requests failed" in w for w in row[Col.WARNINGS])


def test_random_variant_reads_seconds_and_topology_from_the_name() -> None:
    row = read_point(RANDOM, GLM)
    assert row[Col.SCHEMA_VARIANT] == "bench_serving_random_s"
    assert (row[Col.TP], row[Col.EP], row[Col.DP_ATTENTION], row[Col.NUM_GPUS]) == (8, 1, False, 8)
    assert (row[Col.ISL], row[Col.OSL], row[Col.CONC]) == (1024, 128, 4)
    assert (row[Col.PRECISION], row[Col.FRAMEWORK]) == ("fp8", "vllm")
    assert row[Col.MODEL] == "zai-org/GLM-5-FP8"
    # no total_token_throughput: total = input + output = 1317.8212352978426 + 164.72765441223032
    total = 1317.8212352978426 + 164.72765441223032
    assert row[Col.TOTAL_TPUT] == pytest.approx(total)
    assert row[Col.TPUT_PER_GPU] == pytest.approx(total / 8)
    assert row[Col.OUTPUT_TPUT_PER_GPU] == pytest.approx(164.72765441223032 / 8)
    # already seconds: median_intvty = 1 / 0.021372462615488082 s = 46.79 tok/s/user
    assert row[Col.MEDIAN_TPOT] == pytest.approx(0.021372462615488082)
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1 / 0.021372462615488082)
    assert row[Col.P99_E2EL] == pytest.approx(3.7203497649915516)
    assert row[Col.MEAN_INPUT_LEN] == pytest.approx(40960 / 40)
    assert row[Col.WARNINGS] == [
        "from the file name: tp=8 ep=1 dp_attention=False ('tp8': TEP = TP with expert "
        "parallel, DEP = DP-attention with EP), framework=vllm, precision=fp8, isl=1024, osl=128"
    ]


@pytest.mark.parametrize(
    ("rel", "ep", "dpa"), [(TEP8, 8, False), (DEP8, 8, True), (QWEN, 1, False)]
)
def test_random_variant_parallelism_tokens(rel: str, ep: int, dpa: bool) -> None:
    row = read_point(RANDOM, rel)
    assert (row[Col.TP], row[Col.EP], row[Col.DP_ATTENTION], row[Col.NUM_GPUS]) == (8, ep, dpa, 8)
    assert row[Col.PRECISION] is None  # MiniMax and Qwen names carry no precision


def test_random_variant_with_an_unparseable_name_is_rejected() -> None:
    _, doc = load(GLM)
    src = named("inferencex/bench_serving_random/glm-5/results_run3.json")
    assert RANDOM.sniff(src, doc)
    with pytest.raises(ParseError, match="GPU count unknown"):
        RANDOM.read(src, doc)


def test_every_bench_serving_fixture_is_read_or_refused_with_a_reason() -> None:
    points: dict[str, int] = {"bench_serving_ms": 0, "bench_serving_random_s": 0, "no_gpu_count": 0}
    refused: dict[str, str] = {}
    files = fixture_files("inferencex/raw_bench_serving/**/*.json") + fixture_files(
        "inferencex/bench_serving_random/**/*.json"
    )
    for rel in files:
        src, doc = load(rel)
        claims = [r for r in (MS, RANDOM) if r.sniff(src, doc)]
        assert len(claims) == 1, rel
        try:
            row = point(claims[0], src, doc)
        except ParseError as exc:
            refused[rel] = exc.field
            continue
        points[row[Col.SCHEMA_VARIANT]] += 1
        if row[Col.NUM_GPUS] is None:
            # the ten local runs whose names and JSON carry no topology keep their totals only
            points["no_gpu_count"] += 1
            assert row[Col.TPUT_PER_GPU] is None
        else:
            assert row[Col.TPUT_PER_GPU] == pytest.approx(row[Col.TOTAL_TPUT] / row[Col.NUM_GPUS])
    assert points == {"bench_serving_ms": 29, "bench_serving_random_s": 169, "no_gpu_count": 10}
    # the failed run is refused
    assert sorted(refused.values()) == ["completed"]
    assert refused[FAILED] == "completed"


# ---- properties ---------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_documents_raise_only_contract_errors(data: st.DataObject) -> None:
    for reader, rel in ((MS, GPTOSS_16), (MS, KIMI_RAW), (RANDOM, DEP8)):
        src, doc = load(rel)
        check_only_contract_errors(reader, src, data.draw(mutated(doc)))


_pos = st.floats(min_value=1e-3, max_value=1e6, allow_nan=False)


@settings(max_examples=100, deadline=None)
@given(
    total=_pos,
    out_share=st.floats(min_value=0.01, max_value=0.99),
    tpot_ms=st.floats(min_value=0.05, max_value=5e3),
    conc=st.integers(1, 4096),
    tp=st.sampled_from([1, 2, 4, 8, 16]),
)
def test_random_valid_documents_keep_the_inferencex_formulas(
    total: float, out_share: float, tpot_ms: float, conc: int, tp: int
) -> None:
    doc: dict[str, Any] = copy.deepcopy(doc_of(KIMI_RAW))
    doc.update(total_token_throughput=total, output_throughput=total * out_share)
    doc.update(max_concurrency=conc, median_tpot_ms=tpot_ms)
    name = KIMI_RAW.replace("_tp8-", f"_tp{tp}-").replace("_conc4_", f"_conc{conc}_")
    row = point(MS, named(name), doc)
    assert row[Col.NUM_GPUS] == tp and row[Col.CONC] == conc
    assert row[Col.TPUT_PER_GPU] == pytest.approx(total / tp)
    assert row[Col.OUTPUT_TPUT_PER_GPU] == pytest.approx(total * out_share / tp)
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1000 / tpot_ms)
