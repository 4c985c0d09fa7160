"""InferenceX process_result.py aggregates: single-node v1 and the split prefill/decode v2 shape."""

from __future__ import annotations

import copy

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ingest.contract.col import Col
from ingest.errors import ParseError, SchemaError
from ingest.readers.agg_fixed import AggFixedReader
from tests.ingest.readers._support import (
    check_only_contract_errors,
    doc_of,
    fixture_files,
    load,
    mutated,
    named,
    norm,
    point,
    read_point,
)

AGG = AggFixedReader()
CONC4 = "inferencex/agg_fixed_seq/agg_kimik2.5_1k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc4_MI355-gbt350-odcdh5-wbb3.json"
CONC32 = "inferencex/agg_fixed_seq/agg_kimik2.5_8k1k_int4_vllm_tp8-ep1-dpafalse_disagg-false_spec-mtp_conc32_MI355-gbt350-odcdh5-wbb3.json"


def test_single_node_aggregate_is_taken_as_is() -> None:
    row = read_point(AGG, CONC4)
    expected = {
        Col.SCHEMA_VARIANT: "agg_fixed_v1",
        Col.HW: "mi355x",
        Col.HW_LABEL: "mi355x",
        Col.CONC: 4,
        Col.MODEL: "moonshotai/Kimi-K2.5",
        Col.MODEL_PREFIX: "kimik2.5",
        Col.FRAMEWORK: "vllm",
        Col.PRECISION: "int4",
        Col.SPEC_DECODING: "mtp",
        Col.IMAGE: "vllm/vllm-openai-rocm:v0.21.0",
        Col.ISL: 1024,
        Col.OSL: 1024,
        Col.TP: 8,
        Col.EP: 1,
        Col.PP: 1,  # older aggregates lack pp/dcp/pcp: InferenceX defaults are 1
        Col.DP_ATTENTION: False,  # the string "false"
        Col.DISAGG: False,
        Col.IS_MULTINODE: False,
        Col.NUM_GPUS: 8,  # tp * pp * pcp
        Col.RUNNER: "MI355-gbt350-odcdh5-wbb3",
        Col.INTVTY_DEFINITION: "inv_tpot_percentile",
        Col.ARM_LABEL: "TP8 EP1 | MTP | kv none",
    }
    assert {k: row[k] for k in expected} == expected
    assert row[Col.TPUT_PER_GPU] == 55.62670336516291
    # totals recovered from the per-GPU rates: 55.62670336516291 * 8 = 445.0136 tok/s
    assert row[Col.TOTAL_TPUT] == pytest.approx(55.62670336516291 * 8)
    assert row[Col.OUTPUT_TPUT] == pytest.approx(27.678011491816765 * 8)
    # median_intvty = 1000 / median_tpot_ms = 1000 / 17.393898241078155 = 57.4914
    assert row[Col.MEDIAN_INTVTY] == 57.49142521935413
    assert row[Col.MEDIAN_INTVTY] == pytest.approx(1000 / (row[Col.MEDIAN_TPOT] * 1000))
    assert row[Col.P999_TTFT] == 0.6591278487213433
    assert row[Col.P99_E2EL] == 18.32380557443248


def _v2_doc() -> dict[str, object]:
    # A multinode row built from the real one: the fixtures hold no v2 aggregate.
    doc: dict[str, object] = copy.deepcopy(doc_of(CONC32))
    for key in ("tp", "ep", "dp_attention"):
        del doc[key]
    doc.update(
        is_multinode=True,
        disagg=True,
        prefill_tp=8,
        prefill_ep=8,
        prefill_dp_attention="true",
        prefill_num_workers=1,
        decode_tp=8,
        decode_ep=8,
        decode_dp_attention="false",
        decode_num_workers=2,
        num_prefill_gpu=8,
        num_decode_gpu=16,
    )
    return doc


def test_v2_split_prefill_decode_shape() -> None:
    doc = _v2_doc()
    src = named("inferencex/agg_fixed_seq/agg_kimik2.5_8k1k_multinode.json")
    row = point(AGG, src, doc)
    assert row[Col.SCHEMA_VARIANT] == "agg_fixed_v2"
    # InferenceX rollup: tp = 8 + 8, ep = max(8, 8), dp_attention = "true" OR "false"
    assert (row[Col.TP], row[Col.EP], row[Col.DP_ATTENTION]) == (16, 8, True)
    assert (row[Col.PREFILL_DP_ATTENTION], row[Col.DECODE_NUM_WORKERS]) == (True, 2)
    assert row[Col.NUM_GPUS] == 24  # num_prefill_gpu + num_decode_gpu
    # per-GPU rates use different denominators (formats.md 2.3), so the totals do too:
    # total = tput_per_gpu * all GPUs, output per decode GPU, input per prefill GPU
    assert row[Col.TOTAL_TPUT] == pytest.approx(157.12165563281164 * 24)
    assert row[Col.OUTPUT_TPUT] == pytest.approx(17.57057269511527 * 16)
    assert row[Col.INPUT_TPUT] == pytest.approx(139.55108293769638 * 8)
    assert row[Col.TPUT_PER_GPU] == 157.12165563281164
    assert row[Col.ARM_LABEL] == "P1xTP8EP8dpa D2xTP8EP8 disagg | MTP | kv none"


def test_zero_tpot_is_rejected_by_the_contract() -> None:
    # InferenceX's own process_result.py crashes on a zero TPOT (ZeroDivisionError).
    src, doc = load(CONC4)
    res = AGG.read(src, {**doc, "median_tpot": 0.0})
    with pytest.raises(SchemaError) as info:
        norm(src, res.points[0])
    assert info.value.field == "median_tpot"


def test_dp_attention_must_be_a_boolean_string() -> None:
    src, doc = load(CONC4)
    with pytest.raises(ParseError) as info:
        AGG.read(src, {**doc, "dp_attention": "maybe"})
    assert info.value.field == "dp_attention"


def test_power_fields_are_read_when_valid() -> None:
    src, doc = load(CONC4)
    row = point(AGG, src, {**doc, "power_valid": 1, "avg_power_w": 712.5})
    assert row[Col.AVG_POWER_W] == 712.5
    row = point(AGG, src, {**doc, "power_valid": 0, "avg_power_w": 712.5})
    assert row[Col.AVG_POWER_W] is None


def test_agentic_and_raw_files_are_not_claimed() -> None:
    for rel in (
        "inferencex/agentic_agg/kimik2.7_tp8_sweep_29337493492/kimik2.7_tp8_conc16_kvdram-lmcache_fp4_vllm_tp8-pp1-dcp1-pcp1-ep1-dpafalse_disagg-false_spec-none_conc16_mi355x-amds_01.json",
        "inferencex/agentic_agg/dsr1_b200_multiturn_pareto_input/agg_dsr1_tp4_users1_offloadoff_fp4_vllm_tp4-ep4-dpafalse_disagg-false_spec-none_conc1_b200-dgxc-slurm_6.json",
        "inferencex/together_runner_baselines/b200_dsr1-fp4_1k1k_tuned_conc16.json",
    ):
        assert not AGG.sniff(*load(rel))


def test_every_aggregate_fixture_ingests() -> None:
    files = fixture_files("inferencex/agg_fixed_seq/*.json")
    assert len(files) == 3
    concs = sorted(read_point(AGG, rel)[Col.CONC] for rel in files)
    assert concs == [4, 32, 64]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_mutated_documents_raise_only_contract_errors(data: st.DataObject) -> None:
    src, doc = load(CONC32)
    check_only_contract_errors(AGG, src, data.draw(mutated(doc)))
    check_only_contract_errors(AGG, src, data.draw(mutated(_v2_doc())))


def test_the_latency_key_table_is_what_the_latency_pattern_matches() -> None:
    from ingest.contract.col import STATS
    from ingest.readers.agg_fixed import _LATENCY, _LATENCY_KEYS

    lats = ("ttft", "tpot", "itl", "e2el", "intvty", "std")
    stats = (*STATS, "std", "p50", "p99.99", "p٩٩", "P99", "")
    keys = [f"{s}_{lat}{end}" for s in stats for lat in lats for end in ("", "\n", "\n\n", " ")]
    keys += ["mean_ttft_ms", "xmean_ttft", "mean__ttft", "mean_ttft\r", "\nmean_ttft"]
    for key in keys:
        m = _LATENCY.match(key)
        want = (
            (f"{m['stat']}_{m['lat']}", m["lat"] == "intvty") if m and m["stat"] in STATS else None
        )
        assert _LATENCY_KEYS.get(key) == want, key


def test_the_runner_comes_from_the_file_name_as_parse_name_reads_it() -> None:
    from ingest.readers._names import parse_name, parse_runner

    names = [
        *fixture_files("**/*"),
        "agg_x_fp8_vllm_tp8-ep1-dpafalse_disagg-false_spec-none_conc4_h200-x_1_recipe-abc.json",
        "x_prefill-tp4_conc1x2_runner-a_3.json",
        "x_prefill-tp4_conc1x2_runner-a_3_gpus_8_ctx_2_gen_6.json",
        "a/b/",
        "a/.",
        "",
    ]
    for name in names:
        assert parse_runner(name) == parse_name(name).runner, name
